//! `chalie-tui --thread ID`: the conversation's stored history is in the chat pane, and the
//! copy key reaches its replies like any other.

use super::*;
use crate::store::ChatRepo;

#[test]
fn a_resumed_conversation_shows_its_history() {
    let c = crate::store::open_in_memory().unwrap();
    ChatRepo(&c).append("trip", "x1", "user", "Plan a trip to Lisbon", None, None).unwrap();
    ChatRepo(&c).append("trip", "x1", "assistant", "Lisbon in **May** is lovely.", Some("RESPOND"), None).unwrap();
    ChatRepo(&c).append("other", "x2", "user", "Unrelated", None, None).unwrap();
    let rows = ChatRepo(&c).recent("trip", 200).unwrap();

    let mut a = app();
    a.chat.load(&rows);
    let screen = draw(&mut a, 120, 40);
    assert!(screen.contains("Plan a trip to Lisbon") && screen.contains("Lisbon in May is lovely."), "{screen}");
    assert!(!screen.contains("Unrelated"));
    let last = a.chat.messages.last().unwrap();
    assert_eq!((last.exchange_id.as_deref(), last.mode), (Some("x1"), Some(Mode::Respond)));
}
