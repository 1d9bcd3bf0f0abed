//! The post-action critic (seed 001, path B; docs/cognition.md §16.1–16.3): after an action
//! that changes something, deterministic checks read the store back (did the list really
//! change? is the reminder in the future? was the item really removed?), and with an endpoint
//! the lightweight model compares the result with the request. What follows is decided here,
//! purely: nothing to do, a silent correction for a safe action, or a question for the user
//! when the action was consequential.
//!
//! The store reads are [`observe`]; everything else takes plain values.

use super::dispatch::{ActionResult, is_consequential};
use super::plan::{Action, canonical_skill};
use crate::store::{ListsRepo, RemindersRepo, StoreError};
use rusqlite::Connection;
use serde_json::{Map, Value, json};
use std::time::Duration;

/// How long the model's check may take before it is skipped (within the loop's 60 s).
pub const CRITIC_TIMEOUT: Duration = Duration::from_secs(8);
/// Fatigue one model pass adds to its iteration (parameters §5).
pub const CRITIC_PASS_COST: f64 = 0.3;
/// Longest issue text kept from the model.
pub const ISSUE_MAX_CHARS: usize = 200;

pub const CRITIC_PROMPT: &str = include_str!("../../../prompts/critic.md");

/// The action changed something the checks can read back: list edits and reminders set or
/// cancelled. Reads, clarifying questions and failed actions are not criticised.
pub fn has_effects(action: &Action, result: &ActionResult) -> bool {
    if !result.ok || !result.choices.is_empty() {
        return false;
    }
    let verb = verb(action);
    match action.kind.as_str() {
        "list" => matches!(verb, "add" | "remove" | "check" | "uncheck" | "clear" | "delete" | "rename"),
        "schedule" => matches!(verb, "create" | "cancel") && changed_reminder(result),
        _ => false,
    }
}

fn verb(action: &Action) -> &str {
    action.params.get("action").and_then(Value::as_str).unwrap_or("")
}

fn changed_reminder(r: &ActionResult) -> bool {
    r.data["created"].as_bool() == Some(true) || r.data["cancelled"].as_bool() == Some(true)
}

/// What the store holds after the action, as far as the checks need it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observed {
    /// Every list's name.
    pub lists: Vec<String>,
    /// The items (content, checked) of the list the action reports, `None` when it is gone.
    pub items: Option<Vec<(String, bool)>>,
    /// The reminder the action reports: (state, due unix seconds), `None` when it is gone.
    pub reminder: Option<(String, i64)>,
}

/// Read back what [`check`] compares.
pub fn observe(c: &Connection, result: &ActionResult) -> Result<Observed, StoreError> {
    let mut o = Observed::default();
    match result.kind.as_str() {
        "list" => {
            let lists = ListsRepo(c).names()?;
            let name = result.data["list"].as_str().unwrap_or_default();
            if let Some((id, _)) = lists.iter().find(|(_, n)| n == name) {
                let entries = ListsRepo(c).entries(*id)?;
                o.items = Some(entries.into_iter().map(|e| (e.content, e.checked)).collect());
            }
            o.lists = lists.into_iter().map(|(_, n)| n).collect();
        }
        "schedule" => {
            if let Some(id) = result.data["reminder"]["id"].as_i64() {
                o.reminder = RemindersRepo(c).get(id)?.map(|r| (r.state, r.due_ts));
            }
        }
        _ => {}
    }
    Ok(o)
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect()).unwrap_or_default()
}

/// The deterministic check: `Ok(what was confirmed)` or `Err(what is wrong)`. `now` is unix
/// seconds.
pub fn check(action: &Action, result: &ActionResult, seen: &Observed, now: i64) -> Result<String, String> {
    let d = &result.data;
    match (action.kind.as_str(), verb(action)) {
        ("list", v) => {
            let list = d["list"].as_str().unwrap_or_default();
            let has = |item: &str| seen.items.as_ref().and_then(|i| i.iter().find(|(c, _)| c == item).map(|(_, k)| *k));
            let missing_list = || Err(format!("the list {list} does not exist after the change"));
            match v {
                "delete" if seen.lists.iter().any(|n| n == list) => Err(format!("the list {list} is still there")),
                "delete" => Ok(format!("the list {list} is gone")),
                _ if seen.items.is_none() => missing_list(),
                "add" => match strings(&d["added"]).into_iter().find(|i| has(i).is_none()) {
                    Some(i) => Err(format!("{i} is not on {list} after adding it")),
                    None => Ok(format!("{list} holds what was added")),
                },
                "remove" => match strings(&d["done"]).into_iter().find(|i| has(i).is_some()) {
                    Some(i) => Err(format!("{i} is still on {list}")),
                    None => Ok(format!("removed items are off {list}")),
                },
                "check" | "uncheck" => {
                    let want = v == "check";
                    match strings(&d["done"]).into_iter().find(|i| has(i) != Some(want)) {
                        Some(i) => Err(format!("{i} is not {v}ed on {list}")),
                        None => Ok(format!("{list} shows the items {v}ed")),
                    }
                }
                "clear" if seen.items.as_ref().is_some_and(|i| !i.is_empty()) => {
                    Err(format!("{list} still has items after clearing"))
                }
                "clear" => Ok(format!("{list} is empty")),
                "rename" => match d["old"].as_str() {
                    Some(old) if seen.lists.iter().any(|n| n == old) => {
                        Err(format!("the old name {old} is still there"))
                    }
                    _ => Ok(format!("the list is called {list}")),
                },
                _ => Ok(String::new()),
            }
        }
        ("schedule", v) => {
            let id = d["reminder"]["id"].as_i64().unwrap_or_default();
            match (v, &seen.reminder) {
                (_, None) => Err(format!("reminder #{id} is not stored")),
                ("create", Some((state, _))) if state != "pending" => Err(format!("reminder #{id} is {state}")),
                ("create", Some((_, due))) if *due <= now => Err(format!("reminder #{id} is not in the future")),
                ("create", Some(_)) => Ok(format!("reminder #{id} is pending and in the future")),
                ("cancel", Some((state, _))) if state != "cancelled" => Err(format!("reminder #{id} is still {state}")),
                _ => Ok(format!("reminder #{id} is cancelled")),
            }
        }
        _ => Ok(String::new()),
    }
}

/// The model's verdict, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub verified: bool,
    /// `minor` or `major` (logged; the action's consequence decides what follows).
    pub severity: String,
    pub issue: String,
    /// Actions that put it right, each of the criticised action's skill.
    pub correction: Vec<Action>,
}

/// The critic's strict JSON (parameters §5), with `correction` as actions of the same skill
/// so that a correction can be carried out rather than only described.
pub fn schema() -> Value {
    json!({
        "type": "object",
        "required": ["verified"],
        "properties": {
            "verified": {"type": "boolean"},
            "severity": {"type": "string", "enum": ["minor", "major"]},
            "issue": {"type": "string"},
            "correction": {}
        }
    })
}

/// The critic's request: the user's words, the action and what it did.
pub fn request(text: &str, action: &Action, result: &ActionResult) -> crate::llm::ChatRequest {
    use crate::llm::{ChatRequest, Message, ResponseFormat};
    let user = format!(
        "Request: {text}\nAction: {} {}\nResult: {}",
        action.kind,
        Value::Object(action.params.clone()),
        crate::text::clip::clip(&result.summary, 300)
    );
    let mut req = ChatRequest::new(vec![Message::system(CRITIC_PROMPT.trim()), Message::user(user)]);
    req.max_tokens = 200;
    req.temperature = 0.0;
    req.logprobs = false;
    req.format = ResponseFormat::JsonSchema { name: "critic".into(), schema: schema() };
    req
}

/// Read the model's object. A correction of another skill, or one that is not an action, makes
/// the verdict invalid (the check is then skipped, as for junk).
pub fn parse(v: &Value, action: &Action) -> Result<Verdict, String> {
    let verified = v.get("verified").and_then(Value::as_bool).ok_or("no boolean `verified`")?;
    let severity = v.get("severity").and_then(Value::as_str).unwrap_or("minor");
    if !matches!(severity, "minor" | "major") {
        return Err(format!("severity `{severity}` is not minor or major"));
    }
    let issue = v.get("issue").and_then(Value::as_str).unwrap_or_default();
    let issue = crate::text::clip::clip(issue.trim(), ISSUE_MAX_CHARS).to_string();
    let correction = match v.get("correction") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(s)) if s.trim().is_empty() => Vec::new(),
        Some(Value::String(s)) => {
            let inner: Value = serde_json::from_str(s).map_err(|_| "the correction is prose, not an action")?;
            actions(&inner, action)?
        }
        Some(other) => actions(other, action)?,
    };
    if !verified && issue.is_empty() {
        return Err("not verified, but no issue given".into());
    }
    Ok(Verdict {
        verified,
        severity: severity.to_string(),
        issue,
        correction: if verified { Vec::new() } else { correction },
    })
}

fn actions(v: &Value, original: &Action) -> Result<Vec<Action>, String> {
    let items: Vec<&Value> = match v {
        Value::Array(a) => a.iter().collect(),
        one => vec![one],
    };
    items
        .into_iter()
        .map(|a| {
            let obj = a.as_object().ok_or("a correction is not an object")?;
            let kind = canonical_skill(obj.get("type").and_then(Value::as_str).ok_or("a correction has no `type`")?);
            if kind != original.kind {
                return Err(format!("a correction uses `{kind}`, not `{}`", original.kind));
            }
            let params: Map<String, Value> = match obj.get("params") {
                Some(Value::Object(p)) => p.clone(),
                _ => obj.iter().filter(|(k, _)| k.as_str() != "type").map(|(k, v)| (k.clone(), v.clone())).collect(),
            };
            Ok(Action { kind: kind.to_string(), params })
        })
        .collect()
}

/// What follows the checks.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Nothing wrong was found (or nothing could be checked).
    Fine,
    /// A safe action went wrong in a way these actions repair: run them without asking.
    Correct(Vec<Action>),
    /// A consequential action may be wrong: stop and ask the user this.
    Ask(String),
    /// Wrong with no repair to run: the result is marked and the reply says so.
    Flag(String),
}

/// Decide from the deterministic check and the model's verdict (if it ran). A correction
/// runs silently only when the action and every corrective action are safe, or the
/// corrective action only takes back what this action itself added.
pub fn resolve(
    action: &Action,
    result: &ActionResult,
    det: &Result<String, String>,
    model: Option<&Verdict>,
) -> Outcome {
    let consequential = is_consequential(action);
    if let Err(problem) = det {
        return if consequential {
            Outcome::Ask(question(result, problem, &[]))
        } else {
            Outcome::Flag(problem.clone())
        };
    }
    let Some(v) = model.filter(|v| !v.verified) else { return Outcome::Fine };
    let safe_fix = !v.correction.is_empty()
        && v.correction.iter().all(|fix| !is_consequential(fix) || undoes(fix, action, result));
    match (consequential, safe_fix) {
        (false, true) => Outcome::Correct(v.correction.clone()),
        (false, false) if v.correction.is_empty() => Outcome::Flag(v.issue.clone()),
        _ => Outcome::Ask(question(result, &v.issue, &v.correction)),
    }
}

/// A list `remove` of only items the criticised `add` put on the same list.
fn undoes(fix: &Action, action: &Action, result: &ActionResult) -> bool {
    let same_list = fix.params.get("name").and_then(Value::as_str).map(super::skills::list::clean_name)
        == result.data["list"].as_str().map(str::to_string);
    let added = strings(&result.data["added"]);
    let items = match fix.params.get("items") {
        Some(Value::String(s)) => vec![s.clone()],
        Some(v) => strings(v),
        None => Vec::new(),
    };
    fix.kind == "list"
        && action.kind == "list"
        && verb(action) == "add"
        && verb(fix) == "remove"
        && same_list
        && !items.is_empty()
        && items.iter().all(|i| added.contains(i))
}

/// The question a consequential action's doubt becomes.
pub fn question(result: &ActionResult, issue: &str, fix: &[Action]) -> String {
    let done = result.summary.trim_end_matches('.');
    let mut q = format!("Done: {done}. But a check says: {}.", issue.trim_end_matches('.'));
    if fix.is_empty() {
        q.push_str(" Should I undo it?");
    } else {
        let what: Vec<String> = fix.iter().map(describe).collect();
        q.push_str(&format!(" Should I change it: {}?", what.join(", then ")));
    }
    q
}

/// "add oat milk to shopping", "create call mum at 2026-11-25T10:00": a fix in words.
fn describe(a: &Action) -> String {
    let p = |k: &str| match a.params.get(k) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(v)) => v.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", "),
        Some(Value::Number(n)) => format!("#{n}"),
        _ => String::new(),
    };
    let parts = [p("action"), p("items"), p("message"), p("item_id")];
    let mut out: Vec<String> = parts.into_iter().filter(|s| !s.is_empty()).collect();
    for (k, word) in [("name", "on"), ("due_at", "at"), ("new_name", "to")] {
        let v = p(k);
        if !v.is_empty() {
            out.push(format!("{word} {v}"));
        }
    }
    out.join(" ")
}

#[cfg(test)]
mod tests;
