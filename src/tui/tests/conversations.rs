//! The conversation list (F8): what it shows, and what each key asks of the worker — resume,
//! a new conversation, search, and delete only after a yes.

use super::*;
use crate::store::{ChatRepo, Conversation};
use crate::tui::keymap::Context;

fn conv(id: &str, title: &str, last: i64, messages: i64) -> Conversation {
    Conversation { thread_id: id.into(), title: title.into(), last_at: T0 + last, messages }
}

fn rows() -> Vec<Conversation> {
    vec![
        conv("trip", "lisbon-trip", 0, 12),
        conv("rust", "borrow-checker", -3600, 4),
        conv("x", "What is   100% of\n7000?", -86_400, 1),
    ]
}

/// An app on the "trip" conversation with the list open and loaded.
fn opened() -> App {
    let mut a = app();
    user(&mut a, -10, "x1", "Plan a trip to Lisbon");
    a.thread = Some("trip".into());
    assert_eq!(a.on_terminal(key(KeyCode::F(8))), Some(Action::LoadConversations(None)));
    assert_eq!(a.context(), Context::Conversations);
    a.on_view(ViewAnswer::Conversations { search: None, rows: rows() });
    a
}

#[test]
fn conversation_list_120x30() {
    let mut a = opened();
    let screen = draw(&mut a, 120, 30);
    insta::assert_snapshot!(screen);
}

#[test]
fn the_hint_bar_comes_from_the_lists_own_bindings() {
    let mut a = opened();
    let screen = draw(&mut a, 120, 30);
    let hints = screen.lines().rev().nth(1).unwrap_or_default().to_string();
    for b in a.keymap.hints(Context::Conversations, false) {
        if b.scope != crate::tui::keymap::Scope::Global {
            assert!(hints.contains(b.help), "{} missing from {hints}", b.help);
        }
    }
    assert!(hints.contains("resume") && hints.contains("new conversation"), "{hints}");
}

#[test]
fn enter_resumes_the_selected_conversation_and_shows_its_history() {
    let mut a = opened();
    a.on_terminal(key(KeyCode::Down));
    assert_eq!(a.on_terminal(key(KeyCode::Enter)), Some(Action::ResumeConversation("rust".into())));
    assert!(a.conversations.is_none(), "the list closes");
    // The worker reads the history the way `--thread` does at start.
    let c = crate::store::open_in_memory().unwrap();
    ChatRepo(&c).append("rust", "r1", "user", "Why does the borrow checker complain?", None, None).unwrap();
    ChatRepo(&c).append("rust", "r1", "assistant", "Because of the **second** borrow.", Some("RESPOND"), None).unwrap();
    let history = ChatRepo(&c).recent("rust", 200).unwrap();
    a.on_view(ViewAnswer::Conversation { thread_id: "rust".into(), rows: history });
    let screen = draw(&mut a, 120, 30);
    assert!(screen.contains("Why does the borrow checker complain?"), "{screen}");
    assert!(!screen.contains("Plan a trip to Lisbon"), "the old conversation left the pane: {screen}");
    assert_eq!(a.thread.as_deref(), Some("rust"));
    assert_eq!(a.context(), Context::Input, "typing goes to the resumed conversation");
    // Reopened, the list marks it as this conversation.
    a.on_terminal(key(KeyCode::F(8)));
    a.on_view(ViewAnswer::Conversations { search: None, rows: rows() });
    let screen = draw(&mut a, 120, 30);
    let marked: Vec<&str> = screen.lines().filter(|l| l.contains('●') && !l.contains("this conversation")).collect();
    assert!(marked.len() == 1 && marked[0].contains("borrow-checker"), "{marked:?}");
}

#[test]
fn n_starts_a_new_conversation() {
    let mut a = opened();
    assert_eq!(a.on_terminal(key(KeyCode::Char('n'))), Some(Action::NewConversation));
    assert!(a.conversations.is_none() && a.thread.is_none());
    assert!(a.chat.messages.is_empty(), "a new conversation starts empty");
    // The first message's event names the new thread, which becomes the current one.
    a.on_engine(&ev(
        5,
        EngineEvent::UserMessage { thread_id: "new".into(), exchange_id: "n1".into(), text: "hi".into() },
    ));
    assert_eq!(a.thread.as_deref(), Some("new"));
}

#[test]
fn slash_searches_every_conversation_and_esc_clears() {
    let mut a = opened();
    assert_eq!(a.on_terminal(key(KeyCode::Char('/'))), None);
    assert_eq!(a.context(), Context::ConversationSearch);
    assert_eq!(a.on_terminal(key(KeyCode::Char('b'))), Some(Action::LoadConversations(Some("b".into()))));
    assert_eq!(a.on_terminal(key(KeyCode::Char('o'))), Some(Action::LoadConversations(Some("bo".into()))));
    // 'n' and 'd' are text here, not commands.
    assert_eq!(a.on_terminal(key(KeyCode::Char('n'))), Some(Action::LoadConversations(Some("bon".into()))));
    assert_eq!(a.on_terminal(key(KeyCode::Backspace)), Some(Action::LoadConversations(Some("bo".into()))));
    // An answer to an older search is dropped; the current one replaces the rows.
    a.on_view(ViewAnswer::Conversations { search: Some("b".into()), rows: vec![] });
    assert_eq!(a.conversations.as_ref().unwrap().rows.len(), 3);
    a.on_view(ViewAnswer::Conversations { search: Some("bo".into()), rows: vec![rows()[1].clone()] });
    let screen = draw(&mut a, 120, 30);
    assert!(
        screen.contains("search: bo") && screen.contains("borrow-checker") && !screen.contains("lisbon"),
        "{screen}"
    );
    assert_eq!(a.on_terminal(key(KeyCode::Esc)), Some(Action::LoadConversations(None)));
    assert_eq!(a.context(), Context::Conversations);
    assert!(a.conversations.as_ref().unwrap().search.is_empty());
    assert_eq!(a.on_terminal(key(KeyCode::Esc)), None);
    assert!(a.conversations.is_none(), "Esc again closes the list");
}

#[test]
fn d_asks_first_and_n_keeps_everything() {
    let mut a = opened();
    a.on_terminal(key(KeyCode::Down));
    assert_eq!(a.on_terminal(key(KeyCode::Char('d'))), None, "nothing is deleted before the answer");
    assert_eq!(a.context(), Context::ConversationConfirm);
    let screen = draw(&mut a, 120, 30);
    assert!(screen.contains("Delete this conversation?") && screen.contains("borrow-checker"), "{screen}");
    assert_eq!(a.on_terminal(key(KeyCode::Char('n'))), None, "n on the question is no");
    assert_eq!(a.context(), Context::Conversations);
    assert_eq!(a.conversations.as_ref().unwrap().rows, rows(), "every conversation kept");
    assert_eq!(a.on_terminal(key(KeyCode::Char('d'))), None);
    assert_eq!(a.on_terminal(key(KeyCode::Esc)), None);
    assert_eq!(a.conversations.as_ref().unwrap().rows.len(), 3, "Esc is no too");

    assert_eq!(a.on_terminal(key(KeyCode::Char('d'))), None);
    assert_eq!(a.on_terminal(key(KeyCode::Char('y'))), Some(Action::ForgetConversation("rust".into())));
    let left: Vec<String> = a.conversations.as_ref().unwrap().rows.iter().map(|c| c.thread_id.clone()).collect();
    assert_eq!(left, ["trip", "x"]);
    assert_eq!(a.thread.as_deref(), Some("trip"), "another conversation's deletion leaves this one");
    assert!(!a.chat.messages.is_empty());
}

#[test]
fn deleting_this_conversation_empties_the_chat() {
    let mut a = opened();
    a.on_terminal(key(KeyCode::Char('d')));
    assert_eq!(a.on_terminal(key(KeyCode::Char('y'))), Some(Action::ForgetConversation("trip".into())));
    assert!(a.thread.is_none() && a.chat.messages.is_empty());
}
