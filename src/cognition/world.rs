//! World state per topic (docs/cognition.md §4.7): the open things an ACT turn leaves behind
//! (the list being edited, the reminder just set, the task in progress, the decision pending),
//! one short line per slot, each lapsing by itself. Context assembly reads the topic's live
//! slots into the reply and into warmth (§4.1), so "and milk too" right after editing a list
//! finds the conversation warm.
//!
//! Pure: a skill's result in, the change to make out; the dispatcher writes it.

use crate::text::clip::clip;
use serde_json::Value;

/// The list slot lapses after half an hour without another edit.
pub const LIST_TTL_S: i64 = 1_800;
/// "The reminder just set" is news for an hour.
pub const REMINDER_TTL_S: i64 = 3_600;
/// A question waiting for the user's choice stays open ten minutes.
pub const DECISION_TTL_S: i64 = 600;
/// A task in progress without an end lapses after this long.
pub const TASK_TTL_S: i64 = 3_600;
/// Each slot is one short line.
pub const VALUE_MAX_CHARS: usize = 120;

/// The slots a topic's world state has.
pub const SLOTS: [&str; 4] = ["list", "reminder", "task", "decision"];

/// What one action changes in its topic's world state.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// Set `slot` to `value` until `now + ttl_s`.
    Set { slot: &'static str, value: String, ttl_s: i64 },
    /// The thing is closed (the list deleted, the reminder cancelled, the focus ended).
    Clear { slot: &'static str },
}

/// The change one action's result makes, if any. `choices` non-empty means the skill asked
/// the user to pick: that is the pending decision, whatever the skill.
pub fn change(kind: &str, ok: bool, data: &Value, choices: &[String], now: i64) -> Option<Change> {
    if !choices.is_empty() {
        let value = format!("waiting for a choice ({kind}): {}", choices.join(" / "));
        return Some(set("decision", value, DECISION_TTL_S));
    }
    if !ok {
        return None;
    }
    let s = |k: &str| data.get(k).and_then(Value::as_str);
    match kind {
        "list" => {
            let list = s("list")?;
            if data.get("deleted").and_then(Value::as_bool) == Some(true) {
                return Some(Change::Clear { slot: "list" });
            }
            let names = |k: &str| -> Vec<String> {
                data.get(k)
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
                    .unwrap_or_default()
            };
            let (added, done) = (names("added"), names("done"));
            let count = data.get("items").and_then(Value::as_array).map(Vec::len);
            let mut value = format!("editing the list {list}");
            if let Some(n) = count {
                value.push_str(&format!(" ({n} items)"));
            }
            if !added.is_empty() {
                value.push_str(&format!("; just added {}", added.join(", ")));
            } else if !done.is_empty() {
                value.push_str(&format!("; just ticked off {}", done.join(", ")));
            } else if let Some(n) = data.get("removed").and_then(Value::as_i64) {
                value.push_str(&format!("; just cleared {n} items"));
            } else if let Some(old) = s("old") {
                value.push_str(&format!("; renamed from {old}"));
            }
            Some(set("list", value, LIST_TTL_S))
        }
        "schedule" => {
            let r = data.get("reminder")?;
            let message = r.get("message").and_then(Value::as_str)?;
            let due = r.get("due_at").and_then(Value::as_str).unwrap_or("");
            match s("action") {
                Some("create") if data.get("created").and_then(Value::as_bool) == Some(true) => {
                    Some(set("reminder", format!("reminder just set: {message} (due {due})"), REMINDER_TTL_S))
                }
                Some("cancel") if data.get("cancelled").and_then(Value::as_bool) == Some(true) => {
                    Some(Change::Clear { slot: "reminder" })
                }
                _ => None,
            }
        }
        "focus" => {
            if data.get("cleared").and_then(Value::as_bool) == Some(true) {
                return Some(Change::Clear { slot: "task" });
            }
            let description = s("description")?;
            let ttl = match data.get("ends_at").and_then(Value::as_i64) {
                Some(ends) if ends > now => ends - now,
                Some(_) => return None,
                None => TASK_TTL_S,
            };
            Some(set("task", format!("in progress: {description}"), ttl))
        }
        _ => None,
    }
}

fn set(slot: &'static str, value: String, ttl_s: i64) -> Change {
    Change::Set { slot, value: clip(&value, VALUE_MAX_CHARS), ttl_s }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn value(c: Option<Change>) -> (String, String, i64) {
        match c {
            Some(Change::Set { slot, value, ttl_s }) => (slot.to_string(), value, ttl_s),
            other => panic!("expected a Set, got {other:?}"),
        }
    }

    #[test]
    fn each_skill_leaves_its_open_thing() {
        let (slot, v, ttl) = value(change(
            "list",
            true,
            &json!({"list": "groceries", "added": ["eggs", "milk"], "items": [{}, {}, {}]}),
            &[],
            0,
        ));
        assert_eq!((slot.as_str(), ttl), ("list", LIST_TTL_S));
        assert_eq!(v, "editing the list groceries (3 items); just added eggs, milk");
        let (slot, v, _) = value(change(
            "schedule",
            true,
            &json!({"action": "create", "created": true, "reminder": {"message": "call mum", "due_at": "2026-11-25T09:00"}}),
            &[],
            0,
        ));
        assert_eq!((slot.as_str(), v.as_str()), ("reminder", "reminder just set: call mum (due 2026-11-25T09:00)"));
        let (slot, v, ttl) = value(change(
            "focus",
            true,
            &json!({"description": "the report", "minutes": 45, "ends_at": 2700}),
            &[],
            100,
        ));
        assert_eq!((slot.as_str(), v.as_str(), ttl), ("task", "in progress: the report", 2600), "lapses when it ends");
        let (slot, v, ttl) = value(change("list", true, &json!({}), &["groceries".into(), "garden".into()], 0));
        assert_eq!((slot.as_str(), ttl), ("decision", DECISION_TTL_S));
        assert!(v.contains("groceries / garden"), "{v}");
    }

    #[test]
    fn closing_clears_and_reading_leaves_nothing() {
        assert_eq!(
            change("list", true, &json!({"list": "x", "deleted": true}), &[], 0),
            Some(Change::Clear { slot: "list" })
        );
        let cancel = json!({"action": "cancel", "cancelled": true, "reminder": {"message": "m", "due_at": "d"}});
        assert_eq!(change("schedule", true, &cancel, &[], 0), Some(Change::Clear { slot: "reminder" }));
        assert_eq!(
            change("focus", true, &json!({"id": 1, "cleared": true}), &[], 0),
            Some(Change::Clear { slot: "task" })
        );
        assert_eq!(change("recall", true, &json!({"hits": []}), &[], 0), None);
        assert_eq!(change("schedule", true, &json!({"action": "list", "reminders": []}), &[], 0), None);
        assert_eq!(change("list", false, &json!({"list": "x"}), &[], 0), None, "a failed action changes nothing");
        assert_eq!(change("focus", true, &json!({"active": false}), &[], 0), None);
    }

    #[test]
    fn values_stay_short() {
        let items: Vec<String> = (0..100).map(|i| format!("item number {i}")).collect();
        let (_, v, _) = value(change("list", true, &json!({"list": "big", "added": items}), &[], 0));
        assert!(v.chars().count() <= VALUE_MAX_CHARS, "{}", v.chars().count());
    }
}
