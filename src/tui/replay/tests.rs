use super::*;
use crate::events::{ActStep, EngineEvent, Stamped};
use crate::session::parse_log;
use chrono::{TimeZone, Utc};
use crossterm::event::{KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;

fn stamped(at_ms: i64, event: EngineEvent) -> String {
    let ts = Utc.timestamp_millis_opt(1_763_726_400_000 + at_ms).single().unwrap();
    serde_json::to_string(&Stamped { ts, event }).unwrap()
}

/// A log of two turns (text only) as the writer would produce it.
fn log() -> SessionLog {
    let header = crate::session::Header::new("digest");
    let user = |x: &str, text: &str| EngineEvent::UserMessage {
        thread_id: "t".into(),
        exchange_id: x.into(),
        text: text.into(),
    };
    let chunk = |x: &str, text: &str| EngineEvent::ReplyChunk { exchange_id: x.into(), text: text.into() };
    let done = |x: &str, text: &str| EngineEvent::ReplyDone {
        thread_id: "t".into(),
        exchange_id: x.into(),
        mode: crate::cognition::router::Mode::Respond,
        text: text.into(),
        cancelled: false,
        failed: None,
        timings_ms: None,
        reply_source: None,
    };
    let act = EngineEvent::ActIteration {
        exchange_id: "x2".into(),
        iteration: 1,
        actions: vec![ActStep {
            skill: "list".into(),
            params: "shopping: milk".into(),
            result: "added".into(),
            ok: true,
            ms: 1.0,
        }],
        elapsed_ms: 3.0,
        fatigue: 0.1,
        budget: 1.0,
        termination: Some("done".into()),
    };
    let lines = [
        serde_json::to_string(&header).unwrap(),
        stamped(0, user("x1", "first question")),
        stamped(100, chunk("x1", "first ")),
        stamped(200, chunk("x1", "answer")),
        stamped(300, done("x1", "first answer")),
        // A long idle gap: capped when played.
        stamped(600_000, user("x2", "second question")),
        stamped(600_100, act),
        stamped(600_200, done("x2", "second answer")),
        stamped(600_300, EngineEvent::ModelFetch { step: "x".into(), done: 0, total: 1, finished: false, error: None }),
    ];
    parse_log(&(lines.join("\n") + "\n")).unwrap()
}

fn screen(t: &Terminal<TestBackend>) -> String {
    let buf = t.backend().buffer();
    (0..buf.area.height).map(|y| (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect::<String>() + "\n").collect()
}

#[test]
fn steps_seeks_and_scales_time() {
    let settings = Settings::default();
    let mut p = Player::new(log(), "log");
    assert_eq!(p.len(), 7, "the model download is not part of the session");
    assert_eq!(p.turn(), (0, 2));
    let mut app = fresh(&settings);
    assert_eq!(p.gap(), Some(Duration::ZERO));
    for _ in 0..4 {
        assert!(p.step(&mut app));
    }
    assert_eq!(p.turn(), (1, 2));
    // speed 1 by default; the 10-minute gap plays as MAX_GAP, halved at ×2.
    assert_eq!(p.speed(), 1.0);
    assert_eq!(p.gap(), Some(MAX_GAP));
    p.faster();
    assert_eq!(p.gap(), Some(MAX_GAP / 2));
    assert_eq!(app.chat.messages.len(), 2, "the question and its answer");

    let next = p.turn_target(1);
    p.seek(&mut app, &settings, next);
    p.step(&mut app);
    assert_eq!(p.turn(), (2, 2));
    assert_eq!(app.chat.messages.len(), 3, "everything before turn 2, then its question");
    let back = p.turn_target(-1);
    assert_eq!(back, 0);
    p.seek(&mut app, &settings, back);
    assert!(app.chat.messages.is_empty(), "a fresh app before the first event");
    while p.step(&mut app) {}
    assert_eq!(p.gap(), None, "nothing left to play");
}

#[test]
fn keys_map_to_playback_controls() {
    let km = Keymap::default();
    let ctx = super::super::keymap::Context::View;
    let key = |c| KeyEvent::new(c, KeyModifiers::NONE);
    assert_eq!(control(&km, &key(KeyCode::Char(' ')), ctx), Control::Toggle);
    assert_eq!(control(&km, &key(KeyCode::Right), ctx), Control::Step);
    assert_eq!(control(&km, &key(KeyCode::Char('+')), ctx), Control::Faster);
    assert_eq!(control(&km, &key(KeyCode::Char('-')), ctx), Control::Slower);
    assert_eq!(control(&km, &key(KeyCode::Char(']')), ctx), Control::Turn(1));
    assert_eq!(control(&km, &key(KeyCode::Char('q')), ctx), Control::Quit);
    assert_eq!(control(&km, &KeyEvent::new(KeyCode::Char('q'), KeyModifiers::CONTROL), ctx), Control::Quit);
    assert_eq!(control(&km, &key(KeyCode::Tab), ctx), Control::App);
    assert_eq!(control(&km, &key(KeyCode::F(2)), ctx), Control::Ignore, "the audit needs a database");
    assert_eq!(control(&km, &key(KeyCode::Char('x')), ctx), Control::Ignore, "nothing to type into");
}

#[tokio::test]
async fn the_loop_steps_to_the_end_and_quits() {
    let settings = Settings::default();
    let mut p = Player::new(log(), "log");
    let mut terminal = Terminal::new(TestBackend::new(120, 30)).unwrap();
    let (tx, rx) = mpsc::channel(64);
    let key = |c| Ok(Event::Key(KeyEvent::new(c, KeyModifiers::NONE)));
    // Whatever autoplay managed first, → plays the rest one by one and stops at the end.
    for _ in 0..p.len() + 3 {
        tx.send(key(KeyCode::Right)).await.unwrap();
    }
    tx.send(key(KeyCode::Char('x'))).await.unwrap();
    tx.send(key(KeyCode::Char('q'))).await.unwrap();
    run_loop(&mut terminal, &settings, &mut p, rx).await.unwrap();
    assert_eq!(p.cursor, p.len());
    assert!(!p.playing);
    let s = screen(&terminal);
    assert!(s.contains("second answer") && s.contains("first answer"), "{s}");
    assert!(s.contains("REPLAY ■ end") && s.contains("turn 2/2"), "{s}");
    assert!(s.contains("shopping: milk"), "the ACT pane shows the iteration:\n{s}");
}

/// A logged verdict on a route plays into the Routing pane: the misroute rate and the verdict
/// line come from the `route_judged` event, not from running the detector over the messages.
#[test]
fn a_replayed_verdict_shows_in_the_routing_pane() {
    let fixture = include_str!("../../../tests/data/replay_session.jsonl");
    let mut lines: Vec<String> = fixture.lines().map(str::to_string).collect();
    let first: serde_json::Value = serde_json::from_str(&lines[2]).unwrap();
    let second: serde_json::Value = serde_json::from_str(&lines[29]).unwrap();
    let judged = format!(
        r#"{{"ts":{},"type":"route_judged","exchange_id":{},"mode":"RESPOND","by_exchange_id":{},"label":"missed_clarify","cue":"i meant","quality":0.3,"misroute":true}}"#,
        second["ts"], first["exchange_id"], second["exchange_id"]
    );
    lines.insert(30, judged);
    let settings = Settings::default();
    let mut app = fresh(&settings);
    let mut p = Player::new(parse_log(&(lines.join("\n") + "\n")).unwrap(), "log");
    while p.step(&mut app) {}
    assert_eq!(app.routing.judged, [true]);
    let text: String = app
        .routing
        .text(100)
        .lines
        .iter()
        .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect::<String>() + "\n")
        .collect();
    assert!(text.contains("misroute 100%"), "{text}");
    assert!(text.contains("last route RESPOND judged missed_clarify (i meant)"), "{text}");
}
