//! TUI rendering cost and responsiveness.
//!
//! - `frame/*`: one full frame (layout + draw) at 120x40 with a long chat history (200
//!   exchanges of Markdown replies plus one 10,000-line reply) and every side pane populated:
//!   steady state, scrolled, while a reply streams (prose, and lines into an open code block),
//!   and after a resize (every message re-wrapped).
//! - `latency/keypress_while_streaming`: from a key press entering the app loop to the flushed
//!   frame that shows it, while a reply streams at 500 chunks/s into the same loop. Measured
//!   with a backend that timestamps each flush; the 16 ms frame cap is part of what it measures.

use chalie::cognition::intent::{TriageMode, TriageResult, TriageSource};
use chalie::cognition::pipeline::{RouterReport, TopicReport, TriageReport};
use chalie::cognition::router::{Mode, ModeScores};
use chalie::config::Role;
use chalie::events::{ActStep, ActiveModel, EngineEvent, EventBus, Stamped};
use chalie::store::{DriftItem, UncertaintyItem};
use chalie::tui::app::{Action, App, Settings};
use chalie::tui::query::ViewAnswer;
use chalie::tui::{Sources, draw, run_loop};
use chrono::Utc;
use criterion::{Criterion, criterion_group, criterion_main};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::{Backend, ClearType, TestBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};
use std::hint::black_box;
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn ev(event: EngineEvent) -> Stamped {
    Stamped { ts: Utc::now(), event }
}

const REPLY: &str = "## Plan\n\nHere is what I found about **your question**, with a few *caveats*:\n\n\
- first, the `config` file decides the models;\n- second, the router scores each mode;\n- third, \
the reply streams.\n\n```rust\nfn main() {\n    let x = 42; // the answer\n    println!(\"{x}\");\n}\n```\n\n\
> Quoted context that wraps over more than one line when the chat pane is narrow enough to need it.\n\n\
A closing paragraph that is long enough to wrap two or three times at a typical chat width, so the \
wrapper has real work to do on every message in the history.";

fn routed(xid: &str) -> EngineEvent {
    let scores = ModeScores { respond: 0.62, clarify: 0.21, act: 0.05, acknowledge: 0.0, ignore: -0.3 };
    EngineEvent::Routed {
        thread_id: "t".into(),
        exchange_id: xid.into(),
        mode: Mode::Respond,
        router: Box::new(RouterReport {
            scores,
            confidence: 0.66,
            margin: 0.31,
            effective_margin: 0.18,
            tiebreaker_used: false,
            tiebreaker_candidates: None,
            routing_time_ms: 0.14,
            scored_mode: Mode::Respond,
            pre_routed: false,
            reason: "highest score".into(),
            previous_mode: None,
            signals: serde_json::json!({}).into(),
        }),
        topic: TopicReport { switch_score: 0.1, confidence: 0.9, ..TopicReport::new("bench", false) },
        triage: Box::new(TriageReport {
            result: TriageResult::new(TriageMode::Respond, TriageSource::Heuristic, "bench"),
            latency_ms: 0.1,
            fallback: None,
            sanity_rules: vec![],
        }),
        fallbacks: vec![],
        graph: None,
    }
}

fn settings() -> Settings {
    let m = |role, model: &str| ActiveModel { role, model: model.into(), builtin: true };
    Settings {
        models: vec![
            m(Role::Primary, "local/smollm2-135m-instruct"),
            m(Role::Lightweight, "local/smollm2-135m-instruct"),
            m(Role::Strong, "local/smollm2-135m-instruct"),
            m(Role::Embedding, "local/all-minilm-l6-v2"),
        ],
        ..Settings::default()
    }
}

/// A long history: 200 exchanges, one 10,000-line reply, every side pane populated.
fn populated() -> App {
    let mut app = App::new(settings());
    let models = settings().models;
    app.on_engine(&ev(EngineEvent::ModelsResolved {
        roles: models,
        missing_builtin: vec![],
        missing_builtin_bytes: 0,
    }));
    for i in 0..200 {
        let xid = format!("x{i}");
        app.on_engine(&ev(EngineEvent::UserMessage {
            thread_id: "t".into(),
            exchange_id: xid.clone(),
            text: format!("question number {i}: what does the router do with this message?"),
        }));
        app.on_engine(&ev(routed(&xid)));
        let text = if i == 100 {
            (1..=10_000).map(|n| format!("- line {n} of a very long reply\n")).collect()
        } else {
            REPLY.to_string()
        };
        app.on_engine(&ev(EngineEvent::ReplyChunk { exchange_id: xid.clone(), text: text.clone() }));
        app.on_engine(&ev(EngineEvent::ReplyDone {
            thread_id: "t".into(),
            exchange_id: xid,
            mode: Mode::Respond,
            text,
            cancelled: false,
            failed: None,
            timings_ms: None,
            reply_source: None,
        }));
    }
    app.on_engine(&ev(EngineEvent::ActIteration {
        exchange_id: "x199".into(),
        iteration: 1,
        actions: vec![ActStep {
            skill: "recall".into(),
            params: "tea".into(),
            result: "3 memories".into(),
            ok: true,
            ms: 12.0,
        }],
        elapsed_ms: 40.0,
        fatigue: 1.0,
        budget: 10.0,
        termination: Some("empty_plan".into()),
    }));
    let now = Utc::now().timestamp();
    app.on_view(ViewAnswer::Drift {
        thoughts: (0..20)
            .map(|i| DriftItem {
                id: i,
                kind: "question".into(),
                content: format!("background thought number {i} about something the user said"),
                topic: Some("bench".into()),
                action: Some("REFLECT".into()),
                energy: Some(0.5),
                created_at: now - i * 60,
            })
            .collect(),
    });
    app.on_view(ViewAnswer::Uncertainties {
        items: (0..10)
            .map(|i| UncertaintyItem {
                id: format!("u{i}"),
                kind: "contradiction".into(),
                severity: ["critical", "high", "medium", "low"][i % 4].into(),
                state: "open".into(),
                memory_a: format!("trait:{i}"),
                memory_b: Some(format!("trait:{}", i + 10)),
                reasoning: Some("two memories disagree".into()),
                surface_context: Some("home".into()),
                surfaced_count: 0,
                created_at: now,
            })
            .collect(),
    });
    app
}

fn frames(c: &mut Criterion) {
    let mut g = c.benchmark_group("frame");
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).expect("test backend");

    let mut app = populated();
    draw(&mut terminal, &mut app).expect("draw");
    g.bench_function("120x40_long_history", |b| b.iter(|| draw(&mut terminal, black_box(&mut app))));

    // Scrolling through the 10,000-line reply: every frame shows different rows.
    let mut up = true;
    g.bench_function("120x40_scrolling", |b| {
        b.iter(|| {
            let key = if up { KeyCode::PageUp } else { KeyCode::PageDown };
            app.on_terminal(Event::Key(KeyEvent::new(key, KeyModifiers::NONE)));
            if app.chat.scroll > 9_000 {
                up = false;
            } else if app.chat.scroll == 0 {
                up = true;
            }
            draw(&mut terminal, &mut app)
        })
    });

    // A reply streaming prose: each frame appends a word (a new paragraph every 80 words).
    let mut app = populated();
    app.on_engine(&ev(EngineEvent::UserMessage { thread_id: "t".into(), exchange_id: "s".into(), text: "go".into() }));
    app.on_engine(&ev(EngineEvent::ReplyChunk { exchange_id: "s".into(), text: REPLY.into() }));
    draw(&mut terminal, &mut app).expect("draw");
    let mut words = 0u64;
    g.bench_function("120x40_streaming_prose", |b| {
        b.iter(|| {
            words += 1;
            let text = if words.is_multiple_of(80) { "word.\n\n" } else { "word " };
            app.on_engine(&ev(EngineEvent::ReplyChunk { exchange_id: "s".into(), text: text.into() }));
            draw(&mut terminal, &mut app)
        })
    });

    // A long code block still open: each frame adds a line to it.
    let mut app = populated();
    app.on_engine(&ev(EngineEvent::UserMessage { thread_id: "t".into(), exchange_id: "s".into(), text: "go".into() }));
    let code: String = std::iter::once("```rust\n".to_string())
        .chain((0..500).map(|i| format!("let v{i} = compute({i}); // step\n")))
        .collect();
    app.on_engine(&ev(EngineEvent::ReplyChunk { exchange_id: "s".into(), text: code }));
    draw(&mut terminal, &mut app).expect("draw");
    g.bench_function("120x40_streaming_into_code_block", |b| {
        b.iter(|| {
            app.on_engine(&ev(EngineEvent::ReplyChunk {
                exchange_id: "s".into(),
                text: "let more = 1; // line\n".into(),
            }));
            draw(&mut terminal, &mut app)
        })
    });

    // A resize re-wraps the whole history once.
    let mut app = populated();
    let mut wide = Terminal::new(TestBackend::new(121, 40)).expect("test backend");
    let mut flip = false;
    g.bench_function("resize_rewrap_all", |b| {
        b.iter(|| {
            flip = !flip;
            if flip { draw(&mut wide, &mut app) } else { draw(&mut terminal, &mut app) }
        })
    });
    g.finish();
}

/// TestBackend that reports each flush: when, and whether the marker is on screen.
struct Probe {
    inner: TestBackend,
    flushes: mpsc::Sender<(Instant, bool)>,
}

const MARK: &str = "¤";

impl Backend for Probe {
    type Error = <TestBackend as Backend>::Error;
    fn draw<'a, I: Iterator<Item = (u16, u16, &'a Cell)>>(&mut self, content: I) -> Result<(), Self::Error> {
        self.inner.draw(content)
    }
    fn hide_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.hide_cursor()
    }
    fn show_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.show_cursor()
    }
    fn get_cursor_position(&mut self) -> Result<Position, Self::Error> {
        self.inner.get_cursor_position()
    }
    fn set_cursor_position<P: Into<Position>>(&mut self, p: P) -> Result<(), Self::Error> {
        self.inner.set_cursor_position(p)
    }
    fn clear(&mut self) -> Result<(), Self::Error> {
        self.inner.clear()
    }
    fn clear_region(&mut self, t: ClearType) -> Result<(), Self::Error> {
        self.inner.clear_region(t)
    }
    fn size(&self) -> Result<Size, Self::Error> {
        self.inner.size()
    }
    fn window_size(&mut self) -> Result<WindowSize, Self::Error> {
        self.inner.window_size()
    }
    fn flush(&mut self) -> Result<(), Self::Error> {
        let shown = self.inner.buffer().content().iter().any(|c| c.symbol() == MARK);
        let _ = self.flushes.send((Instant::now(), shown));
        self.inner.flush()
    }
}

fn latency(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let mut g = c.benchmark_group("latency");
    g.sample_size(30).measurement_time(Duration::from_secs(20));
    g.bench_function("keypress_while_streaming", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async move {
                let (flush_tx, flush_rx) = mpsc::channel();
                let mut terminal =
                    Terminal::new(Probe { inner: TestBackend::new(120, 40), flushes: flush_tx }).expect("probe");
                let mut app = populated();
                let bus = EventBus::new();
                let engine_rx = bus.subscribe();
                let (key_tx, key_rx) = tokio::sync::mpsc::channel(16);
                // The reply: 500 chunks a second, for as long as the measurement runs.
                let streamer = bus.clone();
                let stream = tokio::spawn(async move {
                    streamer.emit(EngineEvent::UserMessage {
                        thread_id: "t".into(),
                        exchange_id: "s".into(),
                        text: "go".into(),
                    });
                    let mut tick = tokio::time::interval(Duration::from_millis(2));
                    loop {
                        tick.tick().await;
                        streamer
                            .emit(EngineEvent::ReplyChunk { exchange_id: "s".into(), text: "streamed words ".into() });
                    }
                });
                // The app loop on its own task, as in the program.
                let ui = tokio::spawn(async move {
                    let (_answers_tx, answers) = tokio::sync::mpsc::unbounded_channel();
                    let sources = Sources { input: key_rx, engine: engine_rx, answers };
                    let _ = run_loop(&mut terminal, &mut app, sources, |a| a != Action::Quit).await;
                });
                let key = |code, m| Ok(Event::Key(KeyEvent::new(code, m)));
                let mut total = Duration::ZERO;
                for i in 0..iters {
                    // Spread presses over the frame period, like a person typing.
                    tokio::time::sleep(Duration::from_micros(3_000 + (i * 7_919) % 17_000)).await;
                    while flush_rx.try_recv().is_ok() {}
                    let sent = Instant::now();
                    let _ = key_tx.send(key(KeyCode::Char('¤'), KeyModifiers::NONE)).await;
                    let shown_at = wait_for(&flush_rx, true).await;
                    total += shown_at.saturating_duration_since(sent);
                    let _ = key_tx.send(key(KeyCode::Char('u'), KeyModifiers::CONTROL)).await;
                    wait_for(&flush_rx, false).await;
                }
                let _ = key_tx.send(key(KeyCode::Char('q'), KeyModifiers::CONTROL)).await;
                let _ = ui.await;
                stream.abort();
                total
            })
        })
    });
    g.finish();
}

/// The time of the first flush whose screen has (or lacks) the marker.
async fn wait_for(flushes: &mpsc::Receiver<(Instant, bool)>, shown: bool) -> Instant {
    loop {
        match flushes.try_recv() {
            Ok((at, s)) if s == shown => return at,
            Ok(_) => {}
            Err(_) => tokio::time::sleep(Duration::from_micros(100)).await,
        }
    }
}

criterion_group!(benches, frames, latency);
criterion_main!(benches);
