//! `chalie-tui --thread ID`: the conversation's stored history is in the chat pane, and the
//! copy key reaches its replies like any other.

use super::*;
use crate::store::ChatRepo;
use crate::tui::chat::{EARLIER_PAGE, KEPT};
use crate::tui::query::ViewAnswer;

#[test]
fn a_resumed_conversation_shows_its_history() {
    let c = crate::store::open_in_memory().unwrap();
    ChatRepo(&c).append("trip", "x1", "user", "Plan a trip to Lisbon", None, None).unwrap();
    ChatRepo(&c).append("trip", "x1", "assistant", "Lisbon in **May** is lovely.", Some("RESPOND"), None).unwrap();
    ChatRepo(&c).append("other", "x2", "user", "Unrelated", None, None).unwrap();
    let rows = ChatRepo(&c).recent("trip", 200).unwrap();

    let mut a = app();
    a.chat.load(&rows, false);
    let screen = draw(&mut a, 120, 40);
    assert!(screen.contains("Plan a trip to Lisbon") && screen.contains("Lisbon in May is lovely."), "{screen}");
    assert!(!screen.contains("Unrelated"));
    let last = a.chat.messages.last().unwrap();
    assert_eq!((last.exchange_id.as_deref(), last.mode), (Some("x1"), Some(Mode::Respond)));
}

/// A session far longer than the pane's window: the pane keeps the last [`KEPT`] messages while
/// it follows the newest text, and scrolling up reads the rest back from the store, page by
/// page, in order, without moving what is on screen; back at the bottom it trims again.
#[test]
fn a_long_session_keeps_a_window_and_scrolling_up_reads_the_rest_from_the_store() {
    let c = crate::store::open_in_memory().unwrap();
    let repo = ChatRepo(&c);
    let question = |i: usize| format!("question number {i}");
    let answer = |i: usize| format!("answer number {i}");
    for i in 0..150 {
        let x = format!("x{i}");
        repo.append("long", &x, "user", &question(i), None, None).unwrap();
        repo.append("long", &x, "assistant", &answer(i), Some("RESPOND"), None).unwrap();
    }
    let mut a = app();
    let resumed = repo.recent("long", crate::tui::RESUMED_MESSAGES).unwrap();
    a.chat.load(&resumed, resumed.len() >= crate::tui::RESUMED_MESSAGES);
    a.thread = Some("long".into());
    // 100 turns more, live: stored as the engine stores them, shown from its events.
    for i in 150..250 {
        let x = format!("x{i}");
        repo.append("long", &x, "user", &question(i), None, None).unwrap();
        repo.append("long", &x, "assistant", &answer(i), Some("RESPOND"), None).unwrap();
        let (thread_id, exchange_id) = ("long".to_string(), x.clone());
        a.on_engine(&ev(i as i64, EngineEvent::UserMessage { thread_id, exchange_id, text: question(i) }));
        a.on_engine(&ev(
            i as i64,
            EngineEvent::ReplyDone {
                thread_id: "long".into(),
                exchange_id: x,
                mode: Mode::Respond,
                text: answer(i),
                cancelled: false,
                failed: None,
                timings_ms: None,
                reply_source: None,
            },
        ));
        draw(&mut a, 100, 30);
    }
    assert_eq!(a.chat.messages.len(), KEPT, "the window, not the session");
    let first_kept = 250 - KEPT / 2;
    assert_eq!(a.chat.messages[0].body.text(), question(first_kept));

    // Page up to the top of the window: one read of the page before it is asked, once.
    let mut asked = None;
    for _ in 0..2_000 {
        if let Some(action) = a.on_terminal(key(KeyCode::PageUp)) {
            asked = Some(action);
            break;
        }
        draw(&mut a, 100, 30);
    }
    let before = format!("x{first_kept}");
    assert_eq!(asked, Some(Action::LoadEarlierChat { thread_id: "long".into(), before: before.clone() }));
    assert_eq!(a.on_terminal(key(KeyCode::PageUp)), None, "asked once until it arrives");
    let screen = draw(&mut a, 100, 30);
    assert!(screen.lines().next().unwrap().contains("reading earlier messages"), "{screen}");
    // The rows under the pane's title row.
    let body = |s: &str| s.lines().skip(1).collect::<Vec<_>>().join("\n");

    // The pages arrive as the query serves them; the screen stays on the same rows.
    let mut before = before;
    let mut pages = 0;
    loop {
        let rows = repo.before("long", &before, EARLIER_PAGE).unwrap();
        let earlier = rows.len() == EARLIER_PAGE;
        a.on_view(ViewAnswer::EarlierChat { thread_id: "long".into(), before: before.clone(), rows, earlier });
        pages += 1;
        if pages == 1 {
            assert_eq!(body(&draw(&mut a, 100, 30)), body(&screen), "a page added above leaves the view still");
        }
        if !earlier {
            break;
        }
        // Scrolling on to the new top asks for the next page.
        let next = loop {
            if let Some(Action::LoadEarlierChat { before, .. }) = a.on_terminal(key(KeyCode::PageUp)) {
                break before;
            }
            draw(&mut a, 100, 30);
        };
        assert_eq!(Some(next.as_str()), a.chat.messages[0].exchange_id.as_deref());
        before = next;
    }
    let shown: Vec<String> = a.chat.messages.iter().map(|m| m.body.text().to_string()).collect();
    let stored: Vec<String> = repo.recent("long", 10_000).unwrap().into_iter().map(|m| m.content).collect();
    assert_eq!(shown, stored, "the whole conversation, in order, once");
    assert!(!a.chat.earlier);
    assert!(a.on_terminal(key(KeyCode::PageUp)).is_none(), "nothing before the first message");

    // Back to following the newest text: the window is trimmed again.
    for _ in 0..2_000 {
        a.on_terminal(key(KeyCode::PageDown));
        if a.chat.scroll == 0 {
            break;
        }
        draw(&mut a, 100, 30);
    }
    draw(&mut a, 100, 30);
    assert_eq!(a.chat.messages.len(), KEPT);
    assert!(a.chat.earlier);
}

/// A page that answers a window the user has left (another conversation shown meanwhile) is
/// dropped, not spliced into the wrong conversation.
#[test]
fn a_late_page_for_another_conversation_is_dropped() {
    let mut a = app();
    a.thread = Some("now".into());
    a.chat.load(&[], false);
    let row = crate::store::ChatMessage {
        id: 1,
        thread_id: "before".into(),
        exchange_id: "x0".into(),
        role: "user".into(),
        content: "from the old conversation".into(),
        mode: None,
        topic: None,
        created_at: T0,
    };
    a.on_view(ViewAnswer::EarlierChat {
        thread_id: "before".into(),
        before: "x1".into(),
        rows: vec![row],
        earlier: false,
    });
    assert!(a.chat.messages.is_empty());
}
