//! A forget as the TUI shows it: the chat pane keeps the turn with its line redacted, and
//! the memory browser (F3), fed from the purged database the way the worker feeds it, shows
//! nothing of what was forgotten.

use super::*;
use crate::cognition::act::skill::SkillContext;
use crate::cognition::act::skills::forget;
use crate::store::{ChatRepo, MemoryLayer, Purge, list_layer, purge};

const STATEMENT: &str = "The PIN for my bank card is 4921";

#[test]
fn the_chat_line_shows_the_redaction_and_f3_shows_nothing() {
    let mut c = crate::store::open_in_memory().unwrap();
    ChatRepo(&c).append("t", "x1", "user", STATEMENT, None, None).unwrap();
    ChatRepo(&c).append("t", "x1", "assistant", "Noted.", None, None).unwrap();
    let payload = json!({"thread_id": "t", "exchange_id": "x1", "topic": "bank-card", "user_text": STATEMENT,
                         "response": "Noted.", "mode": "RESPOND", "created_at": T0});
    let draft = crate::memory::episodic::build_episode(&payload).unwrap();
    crate::memory::episodic::insert_episode(&c, &draft, None).unwrap();
    let before = list_layer(&c, MemoryLayer::Episodes, None, 50).unwrap();
    assert!(before.iter().any(|r| r.text.contains("4921")), "the test is void: {before:?}");

    // The skill resolves the request; the engine purges once the turn is committed.
    let ctx = SkillContext::new("t", "x2", "pin", chrono::Local::now());
    let params = json!({"about": "PIN", "all": false});
    let out = forget::run(&c, params.as_object().unwrap(), &ctx).unwrap();
    let plan = forget::take_pending("x2").expect("a clear-cut plan");
    let purged =
        purge(&mut c, &Purge { needles: plan.needles, exchanges: plan.exchanges, ..Purge::default() }).unwrap();

    let mut a = app();
    user(&mut a, 10, "x1", STATEMENT);
    done(&mut a, 11, "x1", Mode::Respond, "Noted.");
    user(&mut a, 20, "x2", "Actually, please forget that PIN.");
    a.on_engine(&ev(
        20,
        routed("x2", Mode::Act, scores(0.2, 0.3, 0.9, 0.1, -0.5), None, false, "pin-bank-card-4921", false),
    ));
    done(&mut a, 21, "x2", Mode::Act, &out.summary);
    assert!(draw(&mut a, 100, 30).contains("4921"), "on screen before the forget event");
    a.on_engine(&ev(30, EngineEvent::Forgotten { exchanges: purged.lines, rows: purged.rows.values().sum() }));
    let screen = draw(&mut a, 100, 30);
    assert!(!screen.contains("4921"), "{screen}");
    assert!(screen.contains("[forgotten at the user's request]"), "{screen}");
    assert!(screen.contains("Forgotten: 1 message"), "{screen}");

    assert_eq!(
        a.on_terminal(key(KeyCode::F(3))),
        Some(Action::LoadMemory { layer: MemoryLayer::Traits, search: None })
    );
    for layer in MemoryLayer::ALL {
        let rows = list_layer(&c, layer, None, 50).unwrap();
        a.on_view(ViewAnswer::Memory { layer, search: None, rows });
        let screen = draw(&mut a, 100, 30);
        assert!(!screen.contains("4921") && !screen.to_lowercase().contains("bank card"), "{layer:?}: {screen}");
        a.on_terminal(key(KeyCode::Tab));
    }
    assert!(list_layer(&c, MemoryLayer::Episodes, None, 50).unwrap().is_empty());
}
