//! The one generic dispatcher: a skill name to its function, and the result shape every
//! action produces. No skill-specific branches anywhere else.

use super::plan::Action;
use super::skill::{SkillContext, SkillError, SkillFn};
use super::skills;
use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The skills this build can run, in the order the ACT prompt lists them.
pub const IMPLEMENTED: &[&str] =
    &["recall", "memorize", "introspect", "associate", "autobiography", "list", "schedule", "focus"];

/// Skills whose result is a self-contained card for the user (a confirmation, a list, an
/// error about a list): when every action of a turn is a card, no reply text is generated.
pub const CARD_SKILLS: &[&str] = &["list", "schedule", "focus", "memorize"];

/// Actions whose effect the user would want to confirm when it rests on a doubtful memory:
/// anything that schedules or cancels, and list changes that lose items.
pub fn is_consequential(a: &Action) -> bool {
    let action = a.params.get("action").and_then(Value::as_str).unwrap_or("");
    match a.kind.as_str() {
        "schedule" => action != "list",
        "list" => matches!(action, "remove" | "clear" | "delete" | "rename"),
        _ => false,
    }
}

/// The first memory recalled earlier in this turn that is marked uncertain or contradicted.
pub fn unreliable_basis<'a>(history: impl IntoIterator<Item = &'a ActionResult>) -> Option<String> {
    history.into_iter().filter(|r| r.kind == "recall" && r.ok).find_map(|r| {
        r.data["hits"].as_array()?.iter().find_map(|h| {
            let state = h["reliability"].as_str()?;
            matches!(state, "uncertain" | "contradicted")
                .then(|| format!("{} ({state})", h["text"].as_str().unwrap_or_default()))
        })
    })
}

pub fn skill_fn(name: &str) -> Option<SkillFn> {
    Some(match name {
        "recall" => skills::memory::recall,
        "memorize" => skills::memory::memorize,
        "introspect" => skills::memory::introspect,
        "associate" => skills::associate::run,
        "autobiography" => skills::autobiography::run,
        "list" => skills::list::run,
        "schedule" => skills::schedule::run,
        "focus" => skills::focus::run,
        _ => return None,
    })
}

/// What one action did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionResult {
    #[serde(rename = "type")]
    pub kind: String,
    pub ok: bool,
    /// One line for the planner's history, the reply and the ACT pane.
    pub summary: String,
    pub data: Value,
    pub ms: f64,
    pub card: bool,
    /// What the user is asked to choose between when the action was ambiguous and did nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
}

/// Run one action synchronously (on the database thread). `previous` is the summary of the
/// action before it in the same plan: a string parameter `"$previous"` is replaced by it,
/// which is how one action's output feeds the next.
pub fn dispatch(c: &Connection, action: &Action, ctx: &SkillContext, previous: Option<&str>) -> ActionResult {
    let clock = std::time::Instant::now();
    let mut params = action.params.clone();
    if let Some(prev) = previous {
        for v in params.values_mut() {
            if v.as_str() == Some("$previous") {
                *v = Value::String(prev.to_string());
            }
        }
    }
    let card = CARD_SKILLS.contains(&action.kind.as_str());
    let outcome = match skill_fn(&action.kind) {
        Some(f) => f(c, &params, ctx),
        None => Err(SkillError::NotFound(format!("the `{}` skill is not available in this build", action.kind))),
    };
    let ms = clock.elapsed().as_secs_f64() * 1000.0;
    match outcome {
        Ok(out) => ActionResult {
            kind: action.kind.clone(),
            ok: true,
            summary: out.summary,
            data: out.data,
            ms,
            card,
            choices: out.choices,
        },
        Err(e) => ActionResult {
            kind: action.kind.clone(),
            ok: false,
            summary: match &e {
                SkillError::NotFound(what) => format!("{}.", capitalise(what)),
                other => format!("The {} action failed: {}.", action.kind, crate::describe(other)),
            },
            data: json!({"error": e.to_string()}),
            ms,
            card,
            choices: Vec::new(),
        },
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Local;

    #[test]
    fn chains_and_reports_errors() {
        let c = crate::store::open_in_memory().unwrap();
        let ctx = SkillContext { thread_id: "t".into(), exchange_id: "x".into(), topic: "t".into(), now: Local::now() };
        let r = dispatch(
            &c,
            &Action::new("list", json!({"action": "add", "name": "x", "items": "$previous"})),
            &ctx,
            Some("eggs"),
        );
        assert!(r.ok && r.card, "{r:?}");
        assert_eq!(r.data["added"], json!(["eggs"]));
        let r = dispatch(&c, &Action::new("persistent_task", json!({})), &ctx, None);
        assert!(!r.ok);
        assert!(r.summary.contains("not available"));
        let r = dispatch(&c, &Action::new("list", json!({"action": "view", "name": "nope"})), &ctx, None);
        assert!(!r.ok && r.card);
    }

    #[test]
    fn doubtful_memories_gate_consequential_actions() {
        let c = crate::store::open_in_memory().unwrap();
        let ctx = SkillContext { thread_id: "t".into(), exchange_id: "x".into(), topic: "t".into(), now: Local::now() };
        crate::store::TurnRepo(&c).set_explicit_trait("dentist", "Tuesday at 10", "general").unwrap();
        let recall = Action::new("recall", json!({"query": "dentist"}));
        let reliable = dispatch(&c, &recall, &ctx, None);
        assert_eq!(unreliable_basis([&reliable]), None);
        crate::store::fixtures::Fixture(&c).set("user_traits", "reliability = 'contradicted'", "", []);
        let doubtful = dispatch(&c, &recall, &ctx, None);
        assert_eq!(unreliable_basis([&doubtful]).as_deref(), Some("dentist: Tuesday at 10 (contradicted)"));
        assert!(is_consequential(&Action::new("schedule", json!({"action": "create"}))));
        assert!(!is_consequential(&Action::new("schedule", json!({"action": "list"}))));
        assert!(is_consequential(&Action::new("list", json!({"action": "clear"}))));
        assert!(!is_consequential(&Action::new("list", json!({"action": "add"}))));
    }
}
