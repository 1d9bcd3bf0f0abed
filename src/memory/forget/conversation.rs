//! Deleting a conversation from the TUI's list (F8, `d`): the same forget as "forget the
//! last thing I said", applied to every line of the thread at once. Each exchange goes with
//! what was derived from it (episodes, traits learned from it, queued jobs), every string the
//! user typed there is purged wherever it was copied, and the lines read "[forgotten at the
//! user's request]" — which takes the conversation out of the list
//! (`ChatRepo::conversations`). There is no second deleter: this builds a [`Plan`] and hands
//! it to `store::purge`.

use super::{Line, Plan, plan_of};
use crate::store::{self, Purge, Purged, StoreError};
use rusqlite::Connection;

/// What the deletion did, and the strings the log files must lose too (for
/// `text::privacy::hand_over`; never put on the bus).
#[derive(Debug, Clone, PartialEq)]
pub struct ForgottenConversation {
    pub purged: Purged,
    pub needles: Vec<String>,
}

/// The plan for a whole thread's lines (`(exchange_id, role, text)`): every exchange, with
/// the user's own words as the strings to hunt.
pub fn thread_plan(thread_id: &str, lines: &[(String, String, String)]) -> Plan {
    let user: Vec<Line> = lines
        .iter()
        .filter(|(_, role, text)| role == "user" && text != store::FORGOTTEN_LINE)
        .map(|(x, _, text)| Line { exchange_id: x.clone(), thread_id: thread_id.to_string(), text: text.clone() })
        .collect();
    let mut plan = plan_of(&user.iter().collect::<Vec<_>>(), Vec::new());
    // An exchange with no user line left (an earlier forget, a reminder) still goes whole.
    plan.exchanges = lines.iter().map(|(x, _, _)| x.clone()).collect();
    plan.exchanges.sort();
    plan.exchanges.dedup();
    plan
}

/// Forget every line of `thread_id` and what was derived from it.
pub fn forget_conversation(conn: &mut Connection, thread_id: &str) -> Result<ForgottenConversation, StoreError> {
    let plan = thread_plan(thread_id, &store::thread_lines(conn, thread_id)?);
    let purge = Purge {
        needles: plan.needles.clone(),
        exchanges: plan.exchanges,
        kind: "conversation".into(),
        row: None,
        block_only: Vec::new(),
        trait_slots: plan.slots,
    };
    let purged = store::purge(conn, &purge)?;
    Ok(ForgottenConversation { purged, needles: plan.needles })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{ChatRepo, MemoryLayer, list_layer};
    use serde_json::json;

    #[test]
    fn a_deleted_conversation_loses_its_lines_episodes_and_place_in_the_list() {
        let mut c = crate::store::open_in_memory().unwrap();
        let repo = ChatRepo(&c);
        repo.append("trip", "x1", "user", "My passport number is K1234567", None, Some("passport")).unwrap();
        repo.append("trip", "x1", "assistant", "Noted, K1234567.", Some("RESPOND"), None).unwrap();
        repo.append("other", "x9", "user", "Remind me about the dentist", None, None).unwrap();
        let payload = json!({"thread_id": "trip", "exchange_id": "x1", "topic": "passport",
                             "user_text": "My passport number is K1234567", "response": "Noted, K1234567.",
                             "mode": "RESPOND", "created_at": 1_763_726_400});
        let draft = crate::memory::episodic::build_episode(&payload).unwrap();
        crate::memory::episodic::insert_episode(&c, &draft, None).unwrap();
        assert!(!list_layer(&c, MemoryLayer::Episodes, None, 50).unwrap().is_empty(), "the test is void");

        let out = forget_conversation(&mut c, "trip").unwrap();
        assert_eq!(out.purged.lines, ["x1"]);
        assert!(out.needles.iter().any(|n| n.contains("K1234567")), "{:?}", out.needles);
        let lines = store::thread_lines(&c, "trip").unwrap();
        assert_eq!(lines.len(), 2, "the lines stay, redacted");
        assert!(lines.iter().all(|(_, _, t)| t == store::FORGOTTEN_LINE), "{lines:?}");
        assert!(list_layer(&c, MemoryLayer::Episodes, None, 50).unwrap().is_empty());
        let left: Vec<String> =
            ChatRepo(&c).conversations(None, 10).unwrap().into_iter().map(|c| c.thread_id).collect();
        assert_eq!(left, ["other"], "the other conversation is untouched");
        assert_eq!(store::thread_lines(&c, "other").unwrap()[0].2, "Remind me about the dentist");
    }

    #[test]
    fn the_plan_covers_every_exchange_and_only_the_users_words() {
        let l = |x: &str, role: &str, t: &str| (x.to_string(), role.to_string(), t.to_string());
        let lines = [
            l("x1", "user", "I live in Ljubljana"),
            l("x1", "assistant", "Lovely city, Zagreb is close"),
            l("x2", "system", "Reminder fired"),
        ];
        let plan = thread_plan("t", &lines);
        assert_eq!(plan.exchanges, ["x1", "x2"]);
        assert!(plan.needles.iter().any(|n| n.contains("Ljubljana")), "{:?}", plan.needles);
        assert!(!plan.needles.iter().any(|n| n.contains("Zagreb")), "{:?}", plan.needles);
    }
}
