//! The terminal front-end. It renders from the event bus and sends commands; it never
//! waits on the engine.
//!
//! - [`app`]: the state and its reactions (pure; every state renders in a test);
//! - [`view`]: layout and drawing, plus one module per component (chat, input, panes, the
//!   audit, memory, help and first-run popups, the status bar);
//! - [`keymap`]: the one key table behind dispatch, the hint bar and the help popup;
//! - `worker`: the background side that carries out the app's actions; [`query`]: the popups'
//!   database reads, answered on their own channel.

pub mod app;
pub mod approve;
pub mod audit;
pub mod chat;
pub mod clipboard;
pub mod conversations;
pub mod help;
mod highlight;
pub mod input;
pub mod keymap;
pub mod markdown;
pub mod memory;
pub mod panes;
mod panic;
pub mod query;
pub mod replay;
pub mod scroll;
pub mod setup;
pub mod status;
pub mod tasks;
mod theme;
pub mod view;
mod worker;
pub mod wrap;

use crate::events::Stamped;
use crate::runtime::Runtime;
use app::{Action, App, Settings};
use crossterm::event::{Event, KeyboardEnhancementFlags, PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags};
use ratatui::Terminal;
use ratatui::backend::Backend;
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::time::Duration;
use tokio::sync::broadcast::{self, error::TryRecvError};
use tokio::sync::mpsc;
use tokio::time::{Instant, MissedTickBehavior};

/// At most this many frames per second, however fast events arrive.
const FRAME: Duration = Duration::from_millis(16);
/// The spinner and notice clock.
const TICK: Duration = Duration::from_millis(100);

/// Draw one frame: lay out (updating caches), then render.
pub fn draw<B: Backend>(terminal: &mut Terminal<B>, app: &mut App) -> Result<(), B::Error> {
    terminal.draw(|f| {
        app.prepare(f.area());
        view::render(app, f);
    })?;
    app.dirty = false;
    Ok(())
}

/// The app's settings for this runtime: key overrides, paths, configured models.
pub fn settings(rt: &Runtime) -> Settings {
    let overrides: BTreeMap<String, Vec<String>> =
        rt.config.keys.iter().map(|(k, v)| (k.clone(), v.value.clone())).collect();
    Settings {
        keymap: keymap::Keymap::new(&overrides),
        models: status::configured_models(&rt.config),
        log_file: rt.paths.log_file().display().to_string(),
        session_log: rt.session_log.display().to_string(),
        places: setup::Places {
            config_file: rt.paths.config_file.display().to_string(),
            models_dir: rt.paths.models_dir.display().to_string(),
        },
        offset: *chrono::Local::now().offset(),
        workers: Some(rt.workers.clone()),
        pricing: rt.config.pricing.clone(),
    }
}

/// How long the TUI runs: until the user quits, or (`CHALIE_EXIT_AFTER_FIRST_FRAME=1`, what
/// the startup bench measures) only through the first frame, every start step included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Until {
    Quit,
    FirstFrame,
}

/// What [`Until::FirstFrame`] prints on stderr once that frame is drawn.
pub const FIRST_FRAME_LINE: &str = "chalie-tui: first frame drawn";

/// Run the interactive TUI; with `thread`, on that conversation (its recent history shown, new
/// messages added to it). The first frame is drawn before the models are loaded or any
/// provider is probed: the worker does both in the background and the status bar says when.
pub async fn run(rt: &Runtime, thread: Option<String>, until: Until) -> anyhow::Result<()> {
    let mut app = App::new(settings(rt));
    if let Some(t) = thread.clone() {
        let rows = rt.db.call(move |c| crate::store::ChatRepo(c).recent(&t, RESUMED_MESSAGES)).await?;
        app.chat.load(&rows, rows.len() >= RESUMED_MESSAGES);
        app.thread = thread.clone();
    }
    let engine = rt.bus.subscribe();
    if until == Until::FirstFrame && !std::io::stdout().is_terminal() {
        // No terminal to take over (a bench's pipe): the same frame, drawn into memory.
        let mut terminal = Terminal::new(ratatui::backend::TestBackend::new(120, 40))?;
        let (queries, _answers) = query::Queries::spawn(&rt.db);
        let _worker = worker::Worker::start(rt, queries, thread);
        draw(&mut terminal, &mut app)?;
        crate::errln!("{FIRST_FRAME_LINE}");
        return Ok(());
    }
    // Raw mode and the alternate screen, with a panic hook that restores the terminal before
    // the report when the interface's own thread panics (`panic`).
    let mut terminal = panic::init_terminal();
    let mut out = std::io::stdout();
    crossterm::execute!(out, crossterm::event::EnableBracketedPaste, crossterm::event::EnableMouseCapture)?;
    let (queries, answers) = query::Queries::spawn(&rt.db);
    let worker = worker::Worker::start(rt, queries, thread);
    if until == Until::FirstFrame {
        let drawn = draw(&mut terminal, &mut app).map_err(anyhow::Error::from);
        restore(&mut out, false);
        crate::errln!("{FIRST_FRAME_LINE}");
        return drawn;
    }
    // The first frame goes up before the terminal is asked anything: the keyboard query below
    // waits up to 2 s on a terminal that never answers it.
    if let Err(e) = draw(&mut terminal, &mut app) {
        restore(&mut out, false);
        return Err(e.into());
    }
    // Where the terminal can tell Shift-Enter from Enter (kitty protocol), ask it to. Before the
    // input thread starts: the query reads the terminal's answer from the same input, and keeps
    // any keys typed meanwhile for that thread.
    let enhanced = crossterm::terminal::supports_keyboard_enhancement().unwrap_or(false)
        && crossterm::execute!(out, PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES))
            .is_ok();
    let sources = Sources { input: terminal_events(), engine, answers };
    let result = run_loop(&mut terminal, &mut app, sources, |action| worker.handle(action)).await;
    restore(&mut out, enhanced);
    result
}

/// Give the terminal back as it was found.
fn restore(out: &mut std::io::Stdout, enhanced: bool) {
    if enhanced {
        let _ = crossterm::execute!(out, PopKeyboardEnhancementFlags);
    }
    let _ = crossterm::execute!(out, crossterm::event::DisableBracketedPaste, crossterm::event::DisableMouseCapture);
    ratatui::restore();
}

/// How much of a resumed conversation the chat pane shows.
pub(crate) const RESUMED_MESSAGES: usize = 200;

/// Terminal input, read on its own thread. A plain blocking reader is simpler and
/// more predictable than an async event stream, and lets the loop drain input
/// with `try_recv` before each render.
pub(crate) fn terminal_events() -> mpsc::Receiver<std::io::Result<Event>> {
    let (tx, rx) = mpsc::channel(1024);
    std::thread::Builder::new()
        .name("chalie-input".into())
        .spawn(move || {
            loop {
                let ev = crossterm::event::read();
                let failed = ev.is_err();
                if tx.blocking_send(ev).is_err() || failed {
                    return;
                }
            }
        })
        .map(|_| ())
        .unwrap_or_else(|e| tracing::error!("cannot start the input thread: {e}"));
    rx
}

/// What the main loop listens to: the terminal, the engine's events, and the answers to the
/// app's own database reads.
pub struct Sources {
    pub input: mpsc::Receiver<std::io::Result<Event>>,
    pub engine: broadcast::Receiver<Stamped>,
    pub answers: mpsc::UnboundedReceiver<query::ViewAnswer>,
}

/// The main loop, generic over the backend so tests drive it with `TestBackend`.
///
/// Drains every pending terminal event, engine event and read answer, then renders at most
/// once per frame, and only when something changed.
pub async fn run_loop<B, F>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    sources: Sources,
    mut on_action: F,
) -> anyhow::Result<()>
where
    B: Backend,
    B::Error: Send + Sync + 'static,
    F: FnMut(Action) -> bool,
{
    let Sources { mut input, mut engine, mut answers } = sources;
    let mut last_frame = Instant::now() - FRAME;
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
    loop {
        if app.dirty && last_frame.elapsed() >= FRAME {
            draw(terminal, app)?;
            last_frame = Instant::now();
        }
        let next_frame = last_frame + FRAME;
        tokio::select! {
            ev = input.recv() => match ev {
                Some(Ok(ev)) => if !dispatch(app, ev, &mut on_action) { return Ok(()) },
                Some(Err(e)) => return Err(e.into()),
                None => return Ok(()),
            },
            ev = engine.recv() => match ev {
                Ok(ev) => app.on_engine(&ev),
                Err(broadcast::error::RecvError::Lagged(n)) => app.on_lagged(n),
                Err(broadcast::error::RecvError::Closed) => return Ok(()),
            },
            Some(answer) = answers.recv() => app.on_view(answer),
            _ = tick.tick(), if app.needs_tick() => app.tick(),
            _ = tokio::time::sleep_until(next_frame), if app.dirty => {}
        }
        // Drain whatever else is already waiting before the next render.
        while let Ok(ev) = input.try_recv() {
            if !dispatch(app, ev?, &mut on_action) {
                return Ok(());
            }
        }
        loop {
            match engine.try_recv() {
                Ok(ev) => app.on_engine(&ev),
                Err(TryRecvError::Lagged(n)) => app.on_lagged(n),
                Err(TryRecvError::Empty | TryRecvError::Closed) => break,
            }
        }
        while let Ok(answer) = answers.try_recv() {
            app.on_view(answer);
        }
        if let Some(action) = app.take_audit_refresh()
            && !on_action(action)
        {
            return Ok(());
        }
        if let Some(action) = app.take_memory_texts()
            && !on_action(action)
        {
            return Ok(());
        }
        if let Some(action) = app.take_draft()
            && !on_action(action)
        {
            return Ok(());
        }
    }
}

fn dispatch<F: FnMut(Action) -> bool>(app: &mut App, ev: Event, on_action: &mut F) -> bool {
    match app.on_terminal(ev) {
        Some(action) => on_action(action),
        None => true,
    }
}

#[cfg(test)]
mod tests;
