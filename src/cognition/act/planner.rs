//! The deterministic planner: unambiguous everyday commands turned into plans without a
//! model, so lists, reminders, focus sessions and "what did I tell you about …" work on
//! every model — the built-in 135M one rarely produces a usable plan. It runs when the
//! model's plan is invalid or empty, and only for the first iteration.

use super::plan::Action;
use super::skills::list::clean_name;
use crate::when::split_reminder;
use chrono::{DateTime, Local};
use regex::Regex;
use serde_json::json;
use std::sync::LazyLock;

/// "why did you answer like that?", "why did you say that?", "why did you ask me that?"
static WHY_ANSWER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^\s*why\s+did\s+you\s+(?:answer|say|reply|respond|ask)\b(?:\s+(?:me\s+)?(?:like\s+that|that|this|so))?\s*\??\s*$")
        .expect("valid regex")
});
/// "what have you been doing?", "what have you been up to?", "what did you do while I was away?"
static WHAT_DOING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^\s*what\s+(?:have\s+you\s+been\s+(?:doing|up\s+to)|did\s+you\s+do\s+while\s+i\s+was\s+(?:away|gone))\b.*\??\s*$")
        .expect("valid regex")
});

static LIST_ADD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(?:please\s+)?(?:can you\s+|could you\s+)?(?:add|put|stick|throw)\s+(?P<items>.+?)\s+(?:to|on|onto|in|into)\s+(?P<name>(?:my|the|our)\s+)?(?P<list>[\w' -]*?)\s*list\b")
        .expect("valid regex")
});
static LIST_REMOVE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(?:please\s+)?(?:can you\s+|could you\s+)?(?:remove|take|delete|cross|strike|drop)\s+(?P<items>.+?)\s+(?:off|from|out of)\s+(?P<name>(?:my|the|our)\s+)?(?P<list>[\w' -]*?)\s*list\b")
        .expect("valid regex")
});
static LIST_CHECK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(?:please\s+)?(?:check off|tick off|mark)\s+(?P<items>.+?)(?:\s+as done|\s+done)?(?:\s+on\s+(?:my|the)\s+(?P<list>[\w' -]*?)\s*list)?[.!]?$")
        .expect("valid regex")
});
static LIST_VIEW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:what(?:'s| is| do i have)\s+on|show(?: me)?|read(?: me)?|view|open|display)\s+(?:my|the|our)\s+(?P<list>[\w' -]*?)\s*list\b")
        .expect("valid regex")
});
/// "start task 3", "cancel task #2", "pause background task 4", "go ahead with task 1".
static TASK_CONTROL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^\s*(?:please\s+)?(?P<verb>start|confirm|begin|resume|go ahead with|cancel|stop|pause)\s+(?:the\s+)?(?:background\s+)?task\s*#?\s*(?P<id>\d+)\s*[.!]?\s*$")
        .expect("valid regex")
});
/// "keep an eye on flights to Lisbon …", "research e-bikes in the background".
static TASK_CREATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^\s*(?:please\s+)?(?:can you\s+|could you\s+)?(?P<goal>keep an eye on\s+.+|.+?\s+in the background)\s*[.!?]?\s*$")
        .expect("valid regex")
});
static REMINDER_LIST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:what|which|any|show(?: me)?|list|read)\b.*\breminders?\b|\bwhat(?:'s| is| do i have) (?:scheduled|coming up)")
        .expect("valid regex")
});
static REMINDER_CANCEL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:cancel|delete|remove|drop)\s+(?:my\s+|the\s+)?reminder\s*(?:#\s*(?P<id>\d+)|(?:to|about|for)\s+(?P<what>.+?))?[.!]?$")
        .expect("valid regex")
});
static FOCUS_SET: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:start|begin|set)\s+(?:a\s+)?focus(?:\s+session)?\s+(?:on|for)\s+(?P<what>.+?)(?:\s+for\s+(?P<n>\d+)\s*(?P<unit>minutes?|mins?|hours?|hrs?|h))?[.!]?$|^(?:help me\s+)?focus on\s+(?P<what2>.+?)(?:\s+for\s+(?P<n2>\d+)\s*(?P<unit2>minutes?|mins?|hours?|hrs?|h))?[.!]?$")
        .expect("valid regex")
});
static FOCUS_CLEAR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:end|stop|finish|clear|cancel)\s+(?:my\s+|the\s+)?focus(?:\s+session)?\b")
        .expect("valid regex")
});
static FOCUS_CHECK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:am i (?:still )?(?:in a )?focus|what am i focus(?:ed|ing) on|how(?:'s| is) my focus|focus status)",
    )
    .expect("valid regex")
});
static RECALL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:what did i (?:tell|say to) you about|what have i told you about|do you remember (?:what i said about|anything about)|what do you (?:know|remember) about)\s+(?P<q>.+?)[?.!]*$")
        .expect("valid regex")
});
static REMEMBER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(?:please\s+)?(?:remember|note|keep in mind|don't forget)(?: that)?\s+(?P<fact>.+?)[.!]*$")
        .expect("valid regex")
});

/// The plan for a request to forget something, if `text` is one. Forgetting is planned
/// deterministically on every model, before the model is asked: a model paraphrasing what to
/// forget could widen or miss it, and its plan would carry the secret through one more call.
pub fn forget_plan(text: &str) -> Option<Vec<Action>> {
    use crate::memory::forget::{Target, parse_request};
    let params = match parse_request(text)? {
        Target::Last => json!({"target": "last"}),
        Target::About { subject, all } => json!({"about": subject, "all": all}),
    };
    Some(vec![Action::new("forget", params)])
}

/// How much of a message's material (a piped block, a paste under the request) an action
/// carries along.
pub const MATERIAL_CHARS: usize = 500;

/// The request and the material under it: the first paragraph is the request, anything after
/// the first blank line (`git diff | chalie-tui ask "review this"` puts the piped text
/// there) is material. Phrase matching reads the request only, so a pasted log cannot turn a
/// command into no command, nor a paste into a command.
pub fn split_material(text: &str) -> (&str, Option<&str>) {
    let text = text.trim();
    let cut = text.find("\n\n").or_else(|| text.find("\r\n\r\n"));
    match cut {
        Some(i) => {
            let material = text[i..].trim();
            (text[..i].trim(), (!material.is_empty()).then_some(material))
        }
        None => (text, None),
    }
}

/// The plan for `text`, if its request is one of the unambiguous commands; the material under
/// the request rides along as each action's `material` parameter.
pub fn plan(text: &str, now: DateTime<Local>) -> Option<Vec<Action>> {
    let (request, material) = split_material(text);
    let mut actions = plan_request(request, now)?;
    if let Some(m) = material {
        let m = crate::text::clip::clip(m, MATERIAL_CHARS);
        for a in &mut actions {
            a.params.insert("material".into(), json!(m));
        }
    }
    Some(actions)
}

fn plan_request(text: &str, now: DateTime<Local>) -> Option<Vec<Action>> {
    let t = text.trim();
    if let Some(p) = forget_plan(t) {
        return Some(p);
    }
    if let Some(c) = TASK_CONTROL.captures(t) {
        let action = match c["verb"].to_ascii_lowercase().as_str() {
            "cancel" | "stop" => "cancel",
            "pause" => "pause",
            _ => "confirm",
        };
        return Some(vec![Action::new("persistent_task", json!({"action": action, "id": c["id"].to_string()}))]);
    }
    if let Some(c) = TASK_CREATE.captures(t) {
        let goal = c["goal"].trim();
        let goal = goal.strip_suffix("in the background").map_or(goal, str::trim);
        return Some(vec![Action::new("persistent_task", json!({"action": "create", "goal": goal}))]);
    }
    if let Some((what, when)) = split_reminder(t, now) {
        let mut params = json!({"action": "create", "message": what, "due_at": crate::when::iso(when.due)});
        if let Some(r) = when.recurrence {
            params["recurrence"] = json!(r.as_str());
        }
        return Some(vec![Action::new("schedule", params)]);
    }
    if let Some(c) = REMINDER_CANCEL.captures(t) {
        let mut params = json!({"action": "cancel"});
        if let Some(id) = c.name("id") {
            params["item_id"] = json!(id.as_str());
        } else if let Some(what) = c.name("what") {
            params["message"] = json!(what.as_str().trim());
        } else {
            return None;
        }
        return Some(vec![Action::new("schedule", params)]);
    }
    if REMINDER_LIST.is_match(t) {
        return Some(vec![Action::new("schedule", json!({"action": "list"}))]);
    }
    for (re, action) in [(&*LIST_ADD, "add"), (&*LIST_REMOVE, "remove"), (&*LIST_CHECK, "check"), (&*LIST_VIEW, "view")]
    {
        if let Some(c) = re.captures(t) {
            let mut params = json!({"action": action});
            if let Some(items) = c.name("items") {
                params["items"] = json!(split_items(items.as_str()));
            }
            // "the list" names no list: the skill then uses the most recently touched one.
            if let Some(name) = c.name("list").map(|m| m.as_str().trim()).filter(|s| !s.is_empty()) {
                params["name"] = json!(clean_name(name));
            }
            return Some(vec![Action::new("list", params)]);
        }
    }
    if FOCUS_CLEAR.is_match(t) {
        return Some(vec![Action::new("focus", json!({"action": "clear"}))]);
    }
    if FOCUS_CHECK.is_match(t) {
        return Some(vec![Action::new("focus", json!({"action": "check"}))]);
    }
    if let Some(c) = FOCUS_SET.captures(t) {
        let what = c.name("what").or(c.name("what2")).map_or("", |m| m.as_str()).trim();
        let n = c.name("n").or(c.name("n2")).and_then(|m| m.as_str().parse::<i64>().ok());
        let unit = c.name("unit").or(c.name("unit2")).map_or("m", |m| m.as_str());
        let mut params = json!({"action": "set", "description": what});
        if let Some(n) = n {
            params["minutes"] = json!(if unit.starts_with('h') { n * 60 } else { n });
        }
        return Some(vec![Action::new("focus", params)]);
    }
    if WHY_ANSWER.is_match(t) {
        return Some(vec![Action::new("introspect", json!({"about": "last_answer"}))]);
    }
    if WHAT_DOING.is_match(t) {
        return Some(vec![Action::new("introspect", json!({"about": "activity"}))]);
    }
    if let Some(c) = RECALL.captures(t) {
        return Some(vec![Action::new("recall", json!({"query": c["q"].trim()}))]);
    }
    if let Some(c) = REMEMBER.captures(t) {
        return Some(vec![Action::new(
            "memorize",
            json!({"facts": [{"key": "note", "value": c["fact"].trim()}], "durable": true}),
        )]);
    }
    None
}

/// "eggs, milk and a loaf of bread" → ["eggs", "milk", "a loaf of bread"].
pub fn split_items(raw: &str) -> Vec<String> {
    raw.split(',')
        .flat_map(|part| part.split(" and ").flat_map(|p| p.split(" & ")))
        .map(|s| s.trim().trim_start_matches("and ").trim().trim_matches(|c: char| c == '"' || c == '\''))
        .map(|s| s.strip_prefix("some ").unwrap_or(s).trim())
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn now() -> DateTime<Local> {
        Local.with_ymd_and_hms(2026, 11, 21, 10, 0, 0).single().expect("a valid local time")
    }

    fn one(text: &str) -> Action {
        let mut p = plan(text, now()).unwrap_or_else(|| panic!("no plan for {text:?}"));
        assert_eq!(p.len(), 1);
        p.remove(0)
    }

    #[test]
    fn list_commands() {
        let a = one("add eggs, milk and bread to my shopping list");
        assert_eq!((a.kind.as_str(), &a.params["action"]), ("list", &json!("add")));
        assert_eq!(a.params["name"], "shopping");
        assert_eq!(a.params["items"], json!(["eggs", "milk", "bread"]));
        let a = one("Can you put some olive oil on the grocery list?");
        assert_eq!(a.params["items"], json!(["olive oil"]));
        assert_eq!(a.params["name"], "grocery");
        let a = one("take milk off the list");
        assert_eq!((a.params["action"].as_str(), a.params.get("name")), (Some("remove"), None));
        let a = one("remove eggs from my shopping list");
        assert_eq!(a.params["items"], json!(["eggs"]));
        let a = one("what's on my shopping list?");
        assert_eq!((a.params["action"].as_str(), a.params["name"].as_str()), (Some("view"), Some("shopping")));
        let a = one("what's on my list");
        assert_eq!(a.params.get("name"), None, "no name: the skill uses the latest list");
        let a = one("check off bread");
        assert_eq!(a.params["action"], "check");
    }

    #[test]
    fn focus_recall_and_memorize() {
        let a = one("start a focus session on the quarterly report for 45 minutes");
        assert_eq!(a.kind, "focus");
        assert_eq!(a.params["description"], "the quarterly report");
        assert_eq!(a.params["minutes"], 45);
        assert_eq!(one("focus on writing for 2 hours").params["minutes"], 120);
        assert_eq!(one("end my focus session").params["action"], "clear");
        assert_eq!(one("what did I tell you about my sister?").params["query"], "my sister");
        let a = one("remember that my sister lives in Porto");
        assert_eq!(a.kind, "memorize");
        assert_eq!(a.params["facts"][0]["value"], "my sister lives in Porto");
    }

    #[test]
    fn questions_about_itself_are_introspection() {
        for q in ["why did you answer like that?", "Why did you say that", "why did you ask me that?"] {
            let a = one(q);
            assert_eq!((a.kind.as_str(), &a.params["about"]), ("introspect", &json!("last_answer")), "{q}");
        }
        for q in ["what have you been doing?", "What have you been up to lately?", "what did you do while I was away?"]
        {
            assert_eq!(one(q).params["about"], "activity", "{q}");
        }
        assert!(
            plan("why did you choose Lisbon for the trip?", now()).is_none(),
            "a question about a choice in the world"
        );
    }

    #[test]
    fn reminders_carry_an_iso_due_time() {
        let a = one("remind me to call mum tomorrow at 9am");
        assert_eq!(a.kind, "schedule");
        assert_eq!(a.params["message"], "call mum");
        assert_eq!(a.params["due_at"], "2026-11-22T09:00");
    }

    #[test]
    fn reminder_list_and_cancel() {
        assert_eq!(one("what reminders do I have?").params["action"], "list");
        assert_eq!(one("show me my reminders").params["action"], "list");
        let a = one("cancel my reminder to call mum");
        assert_eq!((a.params["action"].as_str(), a.params["message"].as_str()), (Some("cancel"), Some("call mum")));
        assert_eq!(one("delete reminder #4").params["item_id"], "4");
    }

    #[test]
    fn ordinary_messages_get_no_plan() {
        for t in ["what is the capital of France?", "I love my shopping trips", "tell me about lists in Python"] {
            assert!(plan(t, now()).is_none(), "{t}");
        }
    }

    #[test]
    fn background_tasks_are_asked_for_and_steered_in_plain_words() {
        let a = one("keep an eye on flights to Lisbon under 120 euros for May");
        assert_eq!((a.kind.as_str(), a.params["action"].as_str()), ("persistent_task", Some("create")));
        assert_eq!(a.params["goal"], "keep an eye on flights to Lisbon under 120 euros for May");
        assert_eq!(
            one("research the best e-bike for my commute in the background").params["goal"],
            "research the best e-bike for my commute"
        );
        let a = one("start task 3");
        assert_eq!((a.params["action"].as_str(), a.params["id"].as_str()), (Some("confirm"), Some("3")));
        assert_eq!(one("cancel task #2").params["action"], "cancel");
        assert_eq!(one("pause background task 4").params["action"], "pause");
        assert!(plan("what is a background task?", now()).is_none());
    }

    #[test]
    fn piped_material_neither_hides_nor_makes_a_command() {
        let a = one("Keep an eye on flights to Lisbon under 120 euros\n\nthe kettle is broken");
        assert_eq!(a.params["goal"], "Keep an eye on flights to Lisbon under 120 euros");
        assert_eq!(a.params["material"], "the kettle is broken");
        assert!(plan("review this\n\nadd eggs to my shopping list", now()).is_none(), "a paste is no command");
        assert_eq!(split_material("  just a request  "), ("just a request", None));
        assert_eq!(split_material("ask\r\n\r\n body "), ("ask", Some("body")));
    }
}
