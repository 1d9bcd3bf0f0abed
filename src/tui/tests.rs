use super::app::{Action, App, StatusInfo};
use super::*;
use crate::events::{EngineEvent, EventBus};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;

fn app() -> App {
    App::new(StatusInfo { models: "primary local/smollm2-135m-instruct · log /tmp/chalie.log".into() })
}

fn draw(app: &App, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| render(app, f)).unwrap();
    t.backend().to_string()
}

fn key(code: KeyCode) -> Event {
    Event::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn ctrl(c: char) -> Event {
    Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

#[test]
fn empty_screen_120x40() {
    insta::assert_snapshot!(draw(&app(), 120, 40));
}

#[test]
fn narrow_80x24_with_help_popup() {
    let mut a = app();
    a.on_terminal(key(KeyCode::F(1)));
    insta::assert_snapshot!(draw(&a, 80, 24));
}

#[test]
fn typing_sends_and_shows_the_message() {
    let mut a = app();
    for c in "what's on my list?".chars() {
        assert_eq!(a.on_terminal(key(KeyCode::Char(c))), None);
    }
    assert_eq!(a.on_terminal(key(KeyCode::Enter)), Some(Action::Send("what's on my list?".into())));
    assert!(a.input.is_empty());
    // An empty input sends nothing.
    assert_eq!(a.on_terminal(key(KeyCode::Enter)), None);
    let bus = EventBus::new();
    let mut rx = bus.subscribe();
    bus.emit(EngineEvent::UserMessage {
        thread_id: "t".into(),
        exchange_id: "x".into(),
        text: "what's on my list?".into(),
    });
    bus.notice(crate::events::NoticeLevel::Warn, "endpoint down: using the heuristic fallback");
    a.on_engine(&rx.try_recv().unwrap());
    a.on_engine(&rx.try_recv().unwrap());
    insta::assert_snapshot!(draw(&a, 80, 24));
}

#[test]
fn keys_move_focus_and_quit() {
    let mut a = app();
    a.on_terminal(key(KeyCode::Tab));
    assert_eq!(a.focus, keymap::Focus::Chat);
    // '?' is help outside the input box, text inside it.
    a.on_terminal(key(KeyCode::Char('?')));
    assert!(a.show_help);
    a.on_terminal(key(KeyCode::Esc));
    assert!(!a.show_help);
    assert_eq!(a.on_terminal(ctrl('q')), Some(Action::Quit));
    assert_eq!(a.on_terminal(ctrl('c')), Some(Action::Quit));
}

#[tokio::test]
async fn loop_drains_input_renders_and_quits() {
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    let mut a = app();
    let bus = EventBus::new();
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    for ev in "hi".chars().map(|c| key(KeyCode::Char(c))).chain([key(KeyCode::Enter), ctrl('q')]) {
        tx.send(Ok(ev)).await.unwrap();
    }
    let mut actions = Vec::new();
    run_loop(&mut terminal, &mut a, rx, bus.subscribe(), |action| {
        actions.push(action.clone());
        action != Action::Quit
    })
    .await
    .unwrap();
    assert_eq!(actions, vec![Action::Send("hi".into()), Action::Quit]);
}
