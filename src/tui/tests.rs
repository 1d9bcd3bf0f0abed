//! The app driven by synthetic events and key presses, rendered on `TestBackend` and
//! compared with reviewed snapshots: each pane's states (empty, streaming, finished, error,
//! narrow), the audit and help popups and the first-run screen.

use super::app::{Action, App, Settings};
use super::keymap::{Context, Focus, Keymap};
use super::query::ViewAnswer;
use super::setup::Places;
use super::*;
use crate::cognition::intent::{TriageMode, TriageResult, TriageSource};
use crate::cognition::pipeline::{RouterReport, TopicReport, TriageReport};
use crate::cognition::router::{Mode, ModeScores};
use crate::config::Role;
use crate::events::{ActStep, ActiveModel, EngineEvent, EventBus, NoticeLevel};
use crate::store::{AuditRow, DriftItem, RoutingRecord, UncertaintyItem};
use chrono::{DateTime, TimeZone, Utc};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};
use ratatui::backend::TestBackend;
use serde_json::json;

mod adaptive;
mod conversations;
mod copy;
mod drift;
mod forget;
mod graph;
mod memory;
mod regulator;
mod resume;
mod routing_stats;
mod tasks;

const T0: i64 = 1_763_726_400; // 2025-11-21 12:00:00 UTC

fn ts(offset_s: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(T0 + offset_s, 0).single().unwrap()
}

fn models() -> Vec<ActiveModel> {
    let m = |role, model: &str, builtin| ActiveModel { role, model: model.into(), builtin };
    vec![
        m(Role::Primary, "local/smollm2-135m-instruct", true),
        m(Role::Lightweight, "local/smollm2-135m-instruct", true),
        m(Role::Strong, "local/smollm2-135m-instruct", true),
        m(Role::Embedding, "local/all-minilm-l6-v2", true),
    ]
}

fn settings() -> Settings {
    Settings {
        keymap: Keymap::default(),
        models: models(),
        log_file: "/home/u/.local/share/chalie-tui/logs/chalie-tui.log".into(),
        session_log: "/home/u/.local/share/chalie-tui/sessions/20251121-120000-abcd1234.jsonl".into(),
        places: Places {
            config_file: "/home/u/.config/chalie-tui/config.toml".into(),
            models_dir: "/home/u/.cache/chalie-tui/models".into(),
        },
        ..Settings::default()
    }
}

/// A fresh app whose engine has started (no spinner).
fn app() -> App {
    let mut a = App::new(settings());
    a.on_engine(&ev(
        0,
        EngineEvent::ModelsResolved { roles: models(), missing_builtin: vec![], missing_builtin_bytes: 0 },
    ));
    a
}

fn ev(at: i64, event: EngineEvent) -> crate::events::Stamped {
    crate::events::Stamped { ts: ts(at), event }
}

fn draw(app: &mut App, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    super::draw(&mut t, app).unwrap();
    t.backend().to_string()
}

fn key(code: KeyCode) -> Event {
    Event::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn ctrl(c: char) -> Event {
    Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

fn alt(code: KeyCode) -> Event {
    Event::Key(KeyEvent::new(code, KeyModifiers::ALT))
}

fn type_text(a: &mut App, s: &str) {
    for c in s.chars() {
        assert_eq!(a.on_terminal(key(KeyCode::Char(c))), None);
    }
}

fn scores(r: f64, c: f64, act: f64, ack: f64, ign: f64) -> ModeScores {
    ModeScores { respond: r, clarify: c, act, acknowledge: ack, ignore: ign }
}

fn routed(
    xid: &str,
    mode: Mode,
    s: ModeScores,
    tie: Option<[Mode; 2]>,
    used: bool,
    topic: &str,
    new: bool,
) -> EngineEvent {
    let ranked = s.ranked();
    EngineEvent::Routed {
        thread_id: "t".into(),
        exchange_id: xid.into(),
        mode,
        router: Box::new(RouterReport {
            scores: s,
            confidence: ((ranked[0].1 - ranked[1].1) / ranked[0].1.abs().max(0.001)).clamp(0.0, 1.0),
            margin: 0.31,
            effective_margin: 0.18,
            tiebreaker_used: used,
            tiebreaker_candidates: tie,
            routing_time_ms: 0.14,
            scored_mode: ranked[0].0,
            pre_routed: false,
            reason: "highest score".into(),
            previous_mode: None,
            signals: json!({}).into(),
        }),
        topic: TopicReport { switch_score: 0.8, confidence: 0.7, ..TopicReport::new(topic, new) },
        triage: Box::new(TriageReport {
            result: TriageResult::new(TriageMode::Respond, TriageSource::Heuristic, "keywords"),
            latency_ms: 0.2,
            fallback: None,
            sanity_rules: vec![],
        }),
        fallbacks: vec![],
        graph: None,
    }
}

fn user(a: &mut App, at: i64, xid: &str, text: &str) {
    a.on_engine(&ev(
        at,
        EngineEvent::UserMessage { thread_id: "t".into(), exchange_id: xid.into(), text: text.into() },
    ));
}

fn chunk(a: &mut App, at: i64, xid: &str, text: &str) {
    a.on_engine(&ev(at, EngineEvent::ReplyChunk { exchange_id: xid.into(), text: text.into() }));
}

fn done(a: &mut App, at: i64, xid: &str, mode: Mode, text: &str) {
    a.on_engine(&ev(
        at,
        EngineEvent::ReplyDone {
            thread_id: "t".into(),
            exchange_id: xid.into(),
            mode,
            text: text.into(),
            cancelled: false,
            failed: None,
            timings_ms: None,
            reply_source: None,
        },
    ));
}

const REPLY: &str = "## Making tea\n\nYou need **fresh water** and *patience*:\n\n1. Boil the water.\n2. Steep for `3 min`.\n\n```python\ndef steep(minutes):\n    return minutes * 60  # seconds\n```\n\n> Green tea prefers 80 °C.";

/// Every pane populated: a finished exchange, an ACT run, drift thoughts, uncertainties.
fn populated() -> App {
    let mut a = app();
    user(&mut a, 0, "x1", "How do I make tea?");
    a.on_engine(&ev(1, routed("x1", Mode::Respond, scores(0.62, 0.21, 0.05, 0.0, -0.3), None, false, "tea", true)));
    chunk(&mut a, 2, "x1", REPLY);
    done(&mut a, 3, "x1", Mode::Respond, REPLY);
    a.on_engine(&ev(
        3,
        EngineEvent::LlmCost {
            call_id: "c".into(),
            provider: "local".into(),
            tokens_in: 1234,
            tokens_out: 87,
            wall_ms: 2300,
        },
    ));
    a.on_engine(&ev(
        4,
        EngineEvent::ActIteration {
            exchange_id: "x0".into(),
            iteration: 1,
            actions: vec![
                ActStep {
                    skill: "list".into(),
                    params: "groceries: milk, eggs".into(),
                    result: "added 2 items".into(),
                    ok: true,
                    ms: 3.0,
                },
                ActStep {
                    skill: "recall".into(),
                    params: "tea".into(),
                    result: "no memory matched".into(),
                    ok: false,
                    ms: 41.0,
                },
            ],
            elapsed_ms: 52.0,
            fatigue: 2.6,
            budget: 10.0,
            termination: Some("empty_plan".into()),
        },
    ));
    a.on_view(ViewAnswer::Drift {
        thoughts: vec![DriftItem {
            id: 1,
            kind: "question".into(),
            content: "Does the user prefer green tea in the evening?".into(),
            topic: Some("tea".into()),
            action: Some("REFLECT".into()),
            energy: Some(0.6),
            created_at: T0 - 3600,
        }],
    });
    a.on_view(ViewAnswer::Uncertainties {
        items: vec![UncertaintyItem {
            id: "u1".into(),
            kind: "contradiction".into(),
            severity: "high".into(),
            state: "open".into(),
            memory_a: "trait:3".into(),
            memory_b: Some("trait:9".into()),
            reasoning: Some("lives in Oslo vs lives in Bergen".into()),
            surface_context: Some("home".into()),
            surfaced_count: 1,
            created_at: T0 - 60,
        }],
    });
    a
}

#[test]
fn empty_screen_120x40() {
    insta::assert_snapshot!(draw(&mut app(), 120, 40));
}

#[test]
fn starting_shows_a_spinner_and_configured_models() {
    let mut a = App::new(settings());
    assert_eq!(a.activity(), Some("starting"));
    let screen = draw(&mut a, 120, 40);
    let status = screen.lines().last().unwrap();
    assert!(status.contains("starting") && status.contains("primary/lightweight/strong"), "{status}");
}

#[test]
fn narrow_80x24_with_help_popup() {
    let mut a = app();
    a.on_terminal(key(KeyCode::F(1)));
    insta::assert_snapshot!(draw(&mut a, 80, 24));
}

#[test]
fn help_lists_every_binding_and_user_overrides() {
    let mut o = std::collections::BTreeMap::new();
    o.insert("audit".to_string(), vec!["ctrl-r".to_string()]);
    let mut a = App::new(Settings { keymap: Keymap::new(&o), ..settings() });
    a.on_terminal(key(KeyCode::F(1)));
    let text: String = help::Help::text(&a.keymap).lines.iter().map(|l| l.to_string() + "\n").collect();
    for b in keymap::BINDINGS {
        assert!(text.contains(&format!("[{}]", b.name)), "help lacks {}", b.name);
    }
    assert!(text.contains("Ctrl-R") && text.contains("routing audit"));
    // The hint bar shows the override too, and F2 no longer opens the audit.
    a.on_terminal(key(KeyCode::Esc));
    assert!(draw(&mut a, 120, 40).contains(" Ctrl-R  routing audit"));
    assert_eq!(a.on_terminal(key(KeyCode::F(2))), None);
    assert!(matches!(a.on_terminal(ctrl('r')), Some(Action::LoadAudit(None))));
}

#[test]
fn the_message_box_goes_to_the_engine_as_a_draft_each_time_it_changes() {
    let mut a = app();
    assert_eq!(a.take_draft(), None, "nothing typed yet");
    type_text(&mut a, "next May ");
    assert_eq!(a.take_draft(), Some(Action::Draft("next May".into())), "trimmed, as it would be sent");
    assert_eq!(a.take_draft(), None, "unchanged");
    type_text(&mut a, " ");
    assert_eq!(a.take_draft(), None, "the same message once trimmed");
    assert_eq!(a.on_terminal(key(KeyCode::Enter)), Some(Action::Send("next May".into())));
    assert_eq!(a.take_draft(), Some(Action::Draft(String::new())), "a sent message leaves no draft");
}

#[test]
fn typing_sends_and_shows_the_message() {
    let mut a = app();
    type_text(&mut a, "what's on my list?");
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
    bus.notice(NoticeLevel::Warn, "endpoint down: using the heuristic fallback");
    let mut e = rx.try_recv().unwrap();
    e.ts = ts(0);
    a.on_engine(&e);
    a.on_engine(&rx.try_recv().unwrap());
    insta::assert_snapshot!(draw(&mut a, 80, 24));
}

#[test]
fn multiline_input_with_alt_enter_and_history() {
    let mut a = app();
    type_text(&mut a, "first line");
    a.on_terminal(alt(KeyCode::Enter));
    type_text(&mut a, "second line");
    a.on_terminal(Event::Key(KeyEvent::new(KeyCode::Char('j'), KeyModifiers::CONTROL)));
    a.on_terminal(Event::Paste("pasted\r\nblock".into()));
    assert_eq!(a.input.text(), "first line\nsecond line\npasted\nblock");
    insta::assert_snapshot!(draw(&mut a, 80, 24));
    assert_eq!(a.on_terminal(key(KeyCode::Enter)), Some(Action::Send("first line\nsecond line\npasted\nblock".into())));
    // Up on an empty box brings the message back.
    a.on_terminal(key(KeyCode::Up));
    assert_eq!(a.input.text(), "first line\nsecond line\npasted\nblock");
}

#[test]
fn streaming_reply_with_markdown_split_across_chunks() {
    let mut a = app();
    user(&mut a, 0, "x1", "How do I make tea?");
    a.on_engine(&ev(1, routed("x1", Mode::Respond, scores(0.62, 0.21, 0.05, 0.0, -0.3), None, false, "tea", true)));
    // Split inside "**fresh water**" and inside the code fence.
    let cut = REPLY.find("```python").unwrap() + 20;
    for (i, piece) in [&REPLY[..30], &REPLY[30..cut]].into_iter().enumerate() {
        chunk(&mut a, 2 + i as i64, "x1", piece);
    }
    assert_eq!(a.activity(), Some("writing"));
    insta::assert_snapshot!(draw(&mut a, 120, 40));
    // Esc stops it.
    assert_eq!(a.on_terminal(key(KeyCode::Esc)), Some(Action::CancelReply));
}

#[test]
fn finished_reply_and_every_pane_populated_120x40() {
    let mut a = populated();
    assert_eq!(a.activity(), None);
    insta::assert_snapshot!(draw(&mut a, 120, 40));
}

#[test]
fn everything_populated_narrow_80x24() {
    insta::assert_snapshot!(draw(&mut populated(), 80, 24));
}

#[test]
fn very_narrow_terminal_hides_side_panes() {
    let mut a = populated();
    let screen = draw(&mut a, 50, 16);
    assert!(!screen.contains("Routing"), "{screen}");
    assert!(screen.contains("Chat"));
    // Tab skips the hidden panes.
    a.on_terminal(key(KeyCode::Tab));
    a.on_terminal(key(KeyCode::Tab));
    assert_eq!(a.focus, Focus::Input);
}

#[test]
fn failed_reply_and_error_notice() {
    let mut a = app();
    user(&mut a, 0, "x1", "hello?");
    a.on_engine(&ev(
        1,
        EngineEvent::ReplyDone {
            thread_id: "t".into(),
            exchange_id: "x1".into(),
            mode: Mode::Respond,
            text: "No reply this time: connection refused (primary model: ollama/qwen3:8b).".into(),
            cancelled: false,
            failed: Some("connection refused".into()),
            timings_ms: None,
            reply_source: None,
        },
    ));
    a.on_engine(&ev(
        1,
        EngineEvent::Notice {
            level: NoticeLevel::Error,
            message: "reply failed:\nconnection refused\n  at line 3".into(),
        },
    ));
    user(&mut a, 2, "x2", "again");
    a.on_engine(&ev(3, EngineEvent::TurnFailed { exchange_id: "x2".into(), error: "the database failed".into() }));
    assert_eq!(a.status.pending, 0);
    insta::assert_snapshot!(draw(&mut a, 80, 24));
}

#[test]
fn stopped_reply_and_tie_break_in_routing() {
    let mut a = app();
    user(&mut a, 0, "x1", "hmm, maybe?");
    a.on_engine(&ev(
        1,
        routed(
            "x1",
            Mode::Clarify,
            scores(0.40, 0.38, 0.1, 0.05, 0.0),
            Some([Mode::Respond, Mode::Clarify]),
            true,
            "plans",
            false,
        ),
    ));
    chunk(&mut a, 2, "x1", "Do you mean today or");
    a.on_engine(&ev(
        3,
        EngineEvent::ReplyDone {
            thread_id: "t".into(),
            exchange_id: "x1".into(),
            mode: Mode::Clarify,
            text: "Do you mean today or".into(),
            cancelled: true,
            failed: None,
            timings_ms: None,
            reply_source: None,
        },
    ));
    insta::assert_snapshot!(draw(&mut a, 100, 30));
}

#[test]
fn act_pane_follows_iterations_as_they_happen() {
    let mut a = app();
    user(&mut a, 0, "x1", "add milk to groceries");
    a.on_engine(&ev(1, routed("x1", Mode::Act, scores(0.2, 0.1, 0.7, 0.0, 0.0), None, false, "groceries", false)));
    let step = |n: u32, term: Option<&str>| EngineEvent::ActIteration {
        exchange_id: "x1".into(),
        iteration: n,
        actions: vec![ActStep {
            skill: "list".into(),
            params: "add milk".into(),
            result: format!("step {n} ok"),
            ok: true,
            ms: 2.0,
        }],
        elapsed_ms: 10.0 * f64::from(n),
        fatigue: 1.3 * f64::from(n),
        budget: 10.0,
        termination: term.map(str::to_string),
    };
    a.on_engine(&ev(2, step(1, None)));
    let mid = draw(&mut a, 120, 40);
    assert!(mid.contains("step 1 ok") && !mid.contains("stopped"), "{mid}");
    a.on_engine(&ev(3, step(2, Some("fatigue_exhausted"))));
    let end = draw(&mut a, 120, 40);
    assert!(end.contains("step 2 ok") && end.contains("stopped: fatigue exhausted"), "{end}");
}

fn audit_rows() -> Vec<AuditRow> {
    let row = |i: i64, mode: &str, tie: bool, topic: &str| AuditRow {
        id: format!("d{i}"),
        created_at: T0 - i * 60,
        topic: topic.into(),
        mode: mode.into(),
        confidence: Some(0.5 - i as f64 * 0.1),
        tiebreaker_used: tie,
        routing_time_ms: Some(0.1 + i as f64 * 0.01),
        pre_routed: mode == "ACKNOWLEDGE",
        fallback: (i == 2).then(|| "triage_timeout".into()),
        feedback: None,
        regulator: match i {
            0 => Some("low_confidence_spans".into()),
            1 => Some("circuit_break".into()),
            _ => None,
        },
    };
    vec![
        row(0, "RESPOND", false, "tea"),
        row(1, "CLARIFY", true, "plans"),
        row(2, "ACT", false, "groceries"),
        row(3, "ACKNOWLEDGE", false, "greetings"),
    ]
}

fn record(id: &str) -> RoutingRecord {
    RoutingRecord {
        id: id.into(),
        thread_id: Some("t".into()),
        topic: "plans".into(),
        exchange_id: Some("x".into()),
        selected_mode: "CLARIFY".into(),
        router_confidence: Some(0.05),
        scores: json!({"RESPOND": 0.40, "CLARIFY": 0.38, "ACT": 0.1, "ACKNOWLEDGE": 0.05, "IGNORE": 0.0}),
        pre_routed: false,
        tiebreaker_used: true,
        tiebreaker_candidates: Some(json!(["RESPOND", "CLARIFY"])),
        margin: Some(0.05),
        effective_margin: Some(0.18),
        signal_snapshot: json!({"has_question_mark": true, "vague_reference": 0.5, "derived": {"warmth": 0.25}}).into(),
        weight_snapshot: Some(json!({"version": 1, "clarify": {"vague_reference": 0.4}}).into()),
        weights_version: Some(1),
        routing_time_ms: Some(0.11),
        fallback: None,
        reasoning: Some("the tie-breaker chose CLARIFY".into()),
        feedback: Some(json!({"label": "accepted"})),
        reflection: None,
        previous_mode: Some("RESPOND".into()),
        created_at: T0 - 60,
        regulator: None,
        adaptive: None,
    }
}

#[test]
fn audit_popup_table_filter_and_detail() {
    let mut a = populated();
    assert_eq!(a.on_terminal(key(KeyCode::F(2))), Some(Action::LoadAudit(None)));
    let loading = draw(&mut a, 120, 40);
    assert!(loading.contains("Reading the audit trail"), "{loading}");
    a.on_view(ViewAnswer::Audit { mode: None, rows: audit_rows() });
    a.on_terminal(key(KeyCode::Down));
    insta::assert_snapshot!("audit_table_120x40", draw(&mut a, 120, 40));

    // Enter opens the selected decision; its detail arrives as an event.
    assert_eq!(a.on_terminal(key(KeyCode::Enter)), Some(Action::LoadDecision("d1".into())));
    a.on_view(ViewAnswer::AuditDetail { id: "d1".into(), record: Some(Box::new(record("d1"))) });
    insta::assert_snapshot!("audit_detail_120x40", draw(&mut a, 120, 40));
    // Right steps to the next decision; Esc goes back to the table, then closes.
    assert_eq!(a.on_terminal(key(KeyCode::Right)), Some(Action::LoadDecision("d2".into())));
    a.on_terminal(key(KeyCode::Esc));
    assert!(a.audit.as_ref().is_some_and(|x| x.detail.is_none()));

    // m filters by mode; an answer for a stale filter is ignored.
    assert_eq!(a.on_terminal(key(KeyCode::Char('m'))), Some(Action::LoadAudit(Some(Mode::Respond))));
    a.on_view(ViewAnswer::Audit { mode: None, rows: audit_rows() });
    assert!(a.audit.as_ref().is_some_and(|x| x.loading));
    a.on_view(ViewAnswer::Audit { mode: Some(Mode::Respond), rows: audit_rows()[..1].to_vec() });
    insta::assert_snapshot!("audit_filtered_80x24", draw(&mut a, 80, 24));
    a.on_terminal(key(KeyCode::Esc));
    assert!(a.audit.is_none());
}

#[test]
fn audit_refreshes_when_a_turn_commits_while_open() {
    let mut a = app();
    a.on_terminal(key(KeyCode::F(2)));
    a.on_view(ViewAnswer::Audit { mode: None, rows: vec![] });
    assert!(draw(&mut a, 80, 24).contains("No routing decisions recorded yet"));
    assert_eq!(a.take_audit_refresh(), None);
    a.on_engine(&ev(2, routed("x", Mode::Respond, scores(0.5, 0.1, 0.0, 0.0, 0.0), None, false, "t", true)));
    assert_eq!(a.take_audit_refresh(), None, "the decision is not committed yet");
    done(&mut a, 3, "x", Mode::Respond, "ok");
    assert_eq!(a.take_audit_refresh(), Some(Action::LoadAudit(None)));
}

#[test]
fn first_run_screen_offers_the_fetch_and_shows_progress() {
    let mut a = App::new(settings());
    a.on_engine(&ev(
        0,
        EngineEvent::ModelsResolved {
            roles: models(),
            missing_builtin: vec!["SmolLM2-135M-Instruct (chat)".into(), "all-MiniLM-L6-v2 (embeddings)".into()],
            missing_builtin_bytes: 189_709_453,
        },
    ));
    insta::assert_snapshot!("first_run_120x40", draw(&mut a, 120, 40));
    insta::assert_snapshot!("first_run_80x24", draw(&mut a, 80, 24));
    assert_eq!(a.on_terminal(key(KeyCode::Enter)), Some(Action::FetchModels));
    assert_eq!(a.on_terminal(key(KeyCode::Enter)), None, "one fetch at a time");
    a.on_engine(&ev(
        1,
        EngineEvent::ModelFetch {
            step: "extracting and checking SmolLM2-135M-Instruct.Q4_1.gguf".into(),
            done: 60_000_000,
            total: 189_709_453,
            finished: false,
            error: None,
        },
    ));
    insta::assert_snapshot!("first_run_fetching_80x24", draw(&mut a, 80, 24));
    a.on_engine(&ev(
        2,
        EngineEvent::ModelFetch { step: "done".into(), done: 1, total: 1, finished: true, error: None },
    ));
    assert!(!a.setup.visible());
    assert!(draw(&mut a, 80, 24).contains("built-in models ready"));
}

#[test]
fn first_run_failure_and_skip() {
    let mut a = App::new(settings());
    a.on_engine(&ev(
        0,
        EngineEvent::ModelsResolved { roles: models(), missing_builtin: vec!["x".into()], missing_builtin_bytes: 5 },
    ));
    a.on_terminal(key(KeyCode::Enter));
    a.on_engine(&ev(
        1,
        EngineEvent::ModelFetch {
            step: "failed".into(),
            done: 0,
            total: 5,
            finished: true,
            error: Some("pip was not found".into()),
        },
    ));
    assert!(draw(&mut a, 100, 30).contains("The fetch failed: pip was not found"));
    // Esc skips to the chat; it does not come back.
    a.on_terminal(key(KeyCode::Esc));
    assert!(!a.setup.visible());
    a.on_engine(&ev(
        2,
        EngineEvent::ModelsResolved { roles: models(), missing_builtin: vec!["x".into()], missing_builtin_bytes: 5 },
    ));
    assert!(!a.setup.visible());
}

#[test]
fn keys_move_focus_and_quit() {
    let mut a = app();
    a.on_terminal(key(KeyCode::Tab));
    assert_eq!(a.focus, Focus::Chat);
    // '?' is help outside the input box, text inside it.
    a.on_terminal(key(KeyCode::Char('?')));
    assert!(a.help.is_some());
    a.on_terminal(key(KeyCode::Esc));
    assert!(a.help.is_none());
    a.on_terminal(Event::Key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT)));
    assert_eq!(a.focus, Focus::Input);
    a.on_terminal(key(KeyCode::Char('?')));
    assert_eq!(a.input.text(), "?");
    assert_eq!(a.on_terminal(ctrl('q')), Some(Action::Quit));
    assert_eq!(a.on_terminal(ctrl('c')), Some(Action::Quit));
    // F4 shows the log path in the status bar; the help lists it too.
    a.on_terminal(key(KeyCode::F(4)));
    assert!(draw(&mut a, 120, 40).contains("log /home/u/.local/share/chalie-tui/logs/chalie-tui.log"));
    a.on_terminal(key(KeyCode::F(1)));
    let help = draw(&mut a, 120, 200);
    assert!(help.contains("log      /home/u/.local/share/chalie-tui/logs/chalie-tui.log"), "{help}");
}

#[test]
fn long_reply_scrolls_by_page_and_wheel() {
    let mut a = app();
    user(&mut a, 0, "x1", "count");
    let body: String = (1..=10_000).map(|n| format!("- line {n}\n")).collect();
    chunk(&mut a, 1, "x1", &body);
    done(&mut a, 2, "x1", Mode::Respond, &body);
    let bottom = draw(&mut a, 80, 24);
    assert!(bottom.contains("line 10000"), "{bottom}");
    a.on_terminal(key(KeyCode::PageUp));
    let up = draw(&mut a, 80, 24);
    assert!(!up.contains("line 10000") && up.contains("more"), "{up}");
    // Scrolled back, new text does not move the view.
    user(&mut a, 3, "x2", "more");
    assert_eq!(draw(&mut a, 80, 24).lines().nth(1), up.lines().nth(1));
    // Wheel over the chat scrolls it; Home in the chat pane goes to the top.
    a.on_terminal(Event::Mouse(MouseEvent {
        kind: MouseEventKind::ScrollUp,
        column: 5,
        row: 5,
        modifiers: KeyModifiers::NONE,
    }));
    a.on_terminal(key(KeyCode::Tab));
    a.on_terminal(key(KeyCode::Home));
    let top = draw(&mut a, 80, 24);
    assert!(top.contains("count") && top.contains("line 1 "), "{top}");
    a.on_terminal(key(KeyCode::End));
    assert!(draw(&mut a, 80, 24).contains("more"));
}

#[test]
fn lagging_behind_the_bus_is_shown_and_healed() {
    let mut a = app();
    user(&mut a, 0, "x1", "hi");
    chunk(&mut a, 1, "x1", "Hel");
    a.on_lagged(12);
    assert!(draw(&mut a, 100, 24).contains("some streamed text was skipped"));
    done(&mut a, 2, "x1", Mode::Respond, "Hello there!");
    let s = draw(&mut a, 100, 24);
    assert!(s.contains("Hello there!") && !s.contains("skipped"), "{s}");
}

#[tokio::test]
async fn loop_drains_input_renders_and_quits() {
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    let mut a = app();
    let bus = EventBus::new();
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    for ev in "hi".chars().map(|c| key(KeyCode::Char(c))).chain([key(KeyCode::Enter), key(KeyCode::F(2)), ctrl('q')]) {
        tx.send(Ok(ev)).await.unwrap();
    }
    let mut actions = Vec::new();
    let (_answers_tx, answers) = mpsc::unbounded_channel();
    run_loop(&mut terminal, &mut a, Sources { input: rx, engine: bus.subscribe(), answers }, |action| {
        actions.push(action.clone());
        action != Action::Quit
    })
    .await
    .unwrap();
    assert_eq!(actions, vec![Action::Send("hi".into()), Action::LoadAudit(None), Action::Quit]);
}

#[tokio::test]
async fn loop_renders_engine_events_while_streaming() {
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    let mut a = app();
    let bus = EventBus::new();
    let rx_engine = bus.subscribe();
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    let producer = bus.clone();
    tokio::spawn(async move {
        producer.emit(EngineEvent::UserMessage { thread_id: "t".into(), exchange_id: "x".into(), text: "go".into() });
        for w in ["streamed ", "reply ", "arrives"] {
            producer.emit(EngineEvent::ReplyChunk { exchange_id: "x".into(), text: w.into() });
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        tokio::time::sleep(std::time::Duration::from_millis(40)).await;
        tx.send(Ok(ctrl('q'))).await.unwrap();
    });
    let (_answers_tx, answers) = mpsc::unbounded_channel();
    let sources = Sources { input: rx, engine: rx_engine, answers };
    run_loop(&mut terminal, &mut a, sources, |action| action != Action::Quit).await.unwrap();
    assert!(terminal.backend().to_string().contains("streamed reply arrives"));
}

#[test]
fn the_routing_pane_names_who_wrote_the_reply() {
    let mut a = app();
    user(&mut a, 0, "x1", "What am I allergic to?");
    a.on_engine(&ev(1, routed("x1", Mode::Respond, scores(0.62, 0.21, 0.05, 0.0, -0.3), None, false, "allergy", true)));
    assert!(!draw(&mut a, 120, 40).contains("reply by"), "nothing is said before the reply is done");
    let text = "You're allergic to peanuts. (From memory: allergy peanuts, well established.)";
    chunk(&mut a, 2, "x1", text);
    a.on_engine(&ev(
        3,
        EngineEvent::ReplyDone {
            thread_id: "t".into(),
            exchange_id: "x1".into(),
            mode: Mode::Respond,
            text: text.into(),
            cancelled: false,
            failed: None,
            timings_ms: None,
            reply_source: Some(crate::cognition::reply::ReplySource::Memory),
        },
    ));
    let screen = draw(&mut a, 120, 40);
    assert!(screen.contains("reply by memory"), "{screen}");
}

#[test]
fn re_embedding_progress_shows_in_the_status_bar() {
    let mut a = app();
    let reembed = |done, total| EngineEvent::Reembed { model: "ollama/nomic-embed-text".into(), done, total };
    a.on_engine(&ev(1, reembed(120, 450)));
    assert!(draw(&mut a, 100, 24).contains("re-embedding memories 120/450"));
    a.on_engine(&ev(2, reembed(450, 450)));
    assert!(draw(&mut a, 100, 24).contains("re-embedded 450 memories"));
}

#[test]
fn the_uncertainties_pane_lists_records_live_and_opens_one_to_resolve() {
    let mut a = populated();
    assert_eq!(
        a.take_memory_texts(),
        Some(Action::LoadMemoryTexts(vec!["trait:3".into(), "trait:9".into()])),
        "the memories' text is read, not carried"
    );
    assert_eq!(a.take_memory_texts(), None, "asked once");
    a.on_view(ViewAnswer::MemoryTexts {
        texts: vec![
            ("trait:3".into(), Some("location: Oslo".into())),
            ("trait:9".into(), Some("location: Bergen".into())),
        ],
    });
    let live = UncertaintyItem {
        id: "u2".into(),
        kind: "contradiction".into(),
        severity: "critical".into(),
        state: "open".into(),
        memory_a: "trait:4".into(),
        memory_b: Some("trait:5".into()),
        reasoning: Some("two values for the same gym".into()),
        surface_context: Some("gym".into()),
        surfaced_count: 0,
        created_at: T0 - 7200,
    };
    a.on_engine(&ev(0, EngineEvent::UncertaintyChanged { item: live.clone() }));
    assert_eq!(a.uncertainties.items[0].id, "u2", "critical first");
    a.on_view(ViewAnswer::MemoryTexts {
        texts: vec![("trait:4".into(), Some("gym: Fitness First".into())), ("trait:5".into(), None)],
    });
    a.focus = Focus::Uncertainties;
    a.on_terminal(key(KeyCode::Down));
    assert_eq!(a.uncertainties.selected, 1);
    insta::assert_snapshot!("uncertainties_pane_120x40", draw(&mut a, 120, 40));
    assert_eq!(a.on_terminal(key(KeyCode::Enter)), None);
    assert_eq!(a.uncertainty.as_deref(), Some("u1"));
    insta::assert_snapshot!("uncertainty_detail_120x40", draw(&mut a, 120, 40));
    assert_eq!(
        a.on_terminal(key(KeyCode::Char('1'))),
        Some(Action::ResolveUncertainty { id: "u1".into(), choice: 0 }),
        "the new one is right"
    );
    assert!(a.uncertainty.is_none());
    let resolved = UncertaintyItem { state: "resolved".into(), ..live };
    a.on_engine(&ev(1, EngineEvent::UncertaintyChanged { item: resolved }));
    assert_eq!(a.uncertainties.items.len(), 1, "a resolved record leaves the list");
}
