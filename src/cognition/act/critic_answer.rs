//! The user's answer to the critic's question (docs/cognition.md §16.5), pure. When the critic
//! paused a consequential action and asked, the proposal waits for one turn
//! ([`PendingFix`]); the next message either answers it plainly (yes or no, [`yes_no`]) or is
//! anything else, which plans as usual while the question lapses.

use super::plan::Action;
use serde::{Deserialize, Serialize};

/// The `kv_state` namespace of the waiting proposal, one per thread.
pub const NAMESPACE: &str = "critic_pending";
/// A question not answered within this long lapses even if the next message says "yes".
pub const PENDING_TTL_S: i64 = 3600;

/// What the critic proposed and asked about.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingFix {
    pub question: String,
    /// What a yes carries out (the model's correction, or the undoing of the action).
    pub actions: Vec<Action>,
    pub asked_at: i64,
}

/// What the next message does with a waiting proposal.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// A yes: carry these out.
    Apply(Vec<Action>),
    /// A no: leave things as they are.
    Drop,
    /// Anything else, or a proposal too old: plan the message as usual.
    Lapse,
}

const YES: &[&str] = &[
    "yes",
    "y",
    "yeah",
    "yea",
    "yep",
    "yup",
    "sure",
    "ok",
    "okay",
    "k",
    "please",
    "absolutely",
    "definitely",
    "correct",
    "right",
    "fine",
    "go",
];
const NO: &[&str] = &["no", "n", "nope", "nah", "don't", "dont", "not", "never", "leave", "keep", "cancel", "stop"];
/// Words that may follow a yes or a no without changing it ("yes please do it", "no leave it").
const FILLER: &[&str] = &[
    "please", "thanks", "thank", "you", "do", "it", "that", "ahead", "go", "change", "undo", "fix", "sure", "of",
    "course", "sounds", "good", "is", "as", "alone", "need", "to", "way", "the", "thats", "that's", "fine", "ok",
    "okay", "just", "yes", "no", "leave", "keep", "it's", "its", "right", "correct", "for",
];

/// A plain yes (Some(true)) or no (Some(false)); None for anything that says more ("yes, but
/// make it Tuesday", "no, change it to oat milk"), which the planner must read.
pub fn yes_no(text: &str) -> Option<bool> {
    let lower = text.to_lowercase();
    let words: Vec<&str> =
        lower.split(|c: char| !(c.is_alphanumeric() || c == '\'')).filter(|w| !w.is_empty()).collect();
    if words.is_empty() || words.len() > 6 || text.contains(',') && words.len() > 4 {
        return None;
    }
    // "of course", "go ahead", "do it" open a yes; "don't", "leave it" a no.
    let first = words[0];
    let polarity = match first {
        _ if NO.contains(&first) => false,
        _ if YES.contains(&first) => true,
        "of" if words.get(1) == Some(&"course") => true,
        "do" if words.get(1) == Some(&"it") => true,
        "sounds" if words.get(1) == Some(&"good") => true,
        _ => return None,
    };
    let mut saw_no = !polarity;
    for w in &words[1..] {
        if !(FILLER.contains(w) || YES.contains(w) || NO.contains(w)) {
            return None;
        }
        // "keep" and "leave" after a yes are "keep it as it is": a no in disguise.
        saw_no |= matches!(*w, "no" | "nope" | "don't" | "dont" | "not" | "leave" | "keep");
    }
    // "yes no", "sure, don't": mixed, not an answer.
    if polarity && saw_no {
        return None;
    }
    Some(polarity)
}

/// What `text`, arriving at `now`, does with `pending`.
pub fn decide(pending: &PendingFix, text: &str, now: i64) -> Answer {
    if now - pending.asked_at > PENDING_TTL_S {
        return Answer::Lapse;
    }
    match yes_no(text) {
        Some(true) if !pending.actions.is_empty() => Answer::Apply(pending.actions.clone()),
        Some(true) => Answer::Lapse,
        Some(false) => Answer::Drop,
        None => Answer::Lapse,
    }
}

/// What a yes to the critic's question carries out. A correction that only redoes the
/// action ("create call mum at 10am") would leave the wrong result beside the right one, so
/// unless it takes something away itself, the action is undone first.
pub fn proposal(action: &Action, data: &serde_json::Value, correction: &[Action]) -> Vec<Action> {
    let undoes = |a: &Action| {
        matches!(a.params.get("action").and_then(serde_json::Value::as_str), Some("remove" | "cancel" | "delete"))
    };
    if correction.is_empty() {
        return undo_of(action, data);
    }
    if correction.iter().any(undoes) {
        return correction.to_vec();
    }
    [undo_of(action, data), correction.to_vec()].concat()
}

/// What a yes to "Should I undo it?" carries out: the added items taken off their list, or the
/// reminder just set cancelled. Nothing for any other action (a yes then changes nothing).
pub fn undo_of(action: &Action, data: &serde_json::Value) -> Vec<Action> {
    let verb = action.params.get("action").and_then(serde_json::Value::as_str).unwrap_or_default();
    match (action.kind.as_str(), verb) {
        ("list", "add") => {
            let items: Vec<serde_json::Value> = data["added"].as_array().cloned().unwrap_or_default();
            match data["list"].as_str() {
                Some(list) if !items.is_empty() => {
                    vec![Action::new("list", serde_json::json!({"action": "remove", "name": list, "items": items}))]
                }
                _ => Vec::new(),
            }
        }
        ("schedule", "create") if data["created"].as_bool() == Some(true) => match data["reminder"]["id"].as_i64() {
            Some(id) => vec![Action::new("schedule", serde_json::json!({"action": "cancel", "item_id": id}))],
            None => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// The reply to an answer, from the results' summaries of what a yes carried out.
pub fn reply(answer: &Answer, done: &[String]) -> Option<String> {
    match answer {
        Answer::Apply(_) if done.is_empty() => Some("I tried, but the change could not be made.".into()),
        Answer::Apply(_) => Some(format!("Changed: {}", done.join(" "))),
        Answer::Drop => Some("Okay, I left it as it is.".into()),
        Answer::Lapse => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn plain_answers_in_many_phrasings() {
        for yes in [
            "yes",
            "Yes!",
            "yeah",
            "yep, do it",
            "sure",
            "ok",
            "Okay go ahead",
            "yes please",
            "of course",
            "do it",
            "please do",
            "sounds good",
            "yes, change it",
        ] {
            assert_eq!(yes_no(yes), Some(true), "{yes}");
        }
        for no in ["no", "No.", "nope", "nah", "no thanks", "don't", "leave it", "keep it as it is", "no, leave it"] {
            assert_eq!(yes_no(no), Some(false), "{no}");
        }
    }

    #[test]
    fn anything_that_says_more_is_not_an_answer() {
        for other in [
            "yes but make it Tuesday",
            "no, change it to oat milk",
            "what did you change?",
            "add eggs to the shopping list",
            "yes no",
            "sure, keep it",
            "",
            "okay so what's the weather tomorrow then",
            "yesterday I went out",
            "nobody asked",
        ] {
            assert_eq!(yes_no(other), None, "{other}");
        }
    }

    #[test]
    fn a_yes_applies_a_no_drops_anything_else_or_late_lapses() {
        let fix = Action::new("list", json!({"action": "remove", "name": "shopping", "items": ["milk"]}));
        let p = PendingFix { question: "Should I change it?".into(), actions: vec![fix.clone()], asked_at: 1000 };
        assert_eq!(decide(&p, "yes please", 1060), Answer::Apply(vec![fix]));
        assert_eq!(decide(&p, "no", 1060), Answer::Drop);
        assert_eq!(decide(&p, "what's on my list?", 1060), Answer::Lapse);
        assert_eq!(decide(&p, "yes", 1000 + PENDING_TTL_S + 1), Answer::Lapse, "too late");
        let nothing = PendingFix { actions: Vec::new(), ..p };
        assert_eq!(decide(&nothing, "yes", 1060), Answer::Lapse, "nothing to apply");
        assert_eq!(reply(&Answer::Drop, &[]).as_deref(), Some("Okay, I left it as it is."));
        assert!(reply(&Answer::Lapse, &[]).is_none());
    }

    #[test]
    fn undoing_a_list_addition_or_a_new_reminder() {
        let add = Action::new("list", json!({"action": "add", "name": "shopping", "items": ["milk"]}));
        let undo = undo_of(&add, &json!({"list": "shopping", "added": ["milk"]}));
        assert_eq!(undo, vec![Action::new("list", json!({"action": "remove", "name": "shopping", "items": ["milk"]}))]);
        let set = Action::new("schedule", json!({"action": "create", "message": "call mum"}));
        let undo = undo_of(&set, &json!({"created": true, "reminder": {"id": 4}}));
        assert_eq!(undo, vec![Action::new("schedule", json!({"action": "cancel", "item_id": 4}))]);
        assert!(undo_of(&set, &json!({"created": false, "reminder": {"id": 4}})).is_empty(), "nothing was set");
    }

    #[test]
    fn a_correction_that_only_redoes_undoes_the_action_first() {
        let made = Action::new("schedule", json!({"action": "create", "message": "call mum", "due_at": "9am"}));
        let data = json!({"created": true, "reminder": {"id": 7}});
        let redo = Action::new("schedule", json!({"action": "create", "message": "call mum", "due_at": "10am"}));
        let kinds = |v: Vec<Action>| -> Vec<String> {
            v.iter().map(|a| a.params["action"].as_str().unwrap_or_default().to_string()).collect()
        };
        assert_eq!(kinds(proposal(&made, &data, std::slice::from_ref(&redo))), ["cancel", "create"]);
        let cancel = Action::new("schedule", json!({"action": "cancel", "item_id": 7}));
        assert_eq!(kinds(proposal(&made, &data, &[cancel, redo])), ["cancel", "create"], "not cancelled twice");
        assert_eq!(kinds(proposal(&made, &data, &[])), ["cancel"], "no correction: a yes undoes");
    }
}
