//! The terminal front-end. It renders from the event bus and sends commands; it never
//! waits on the engine.

pub mod app;
pub mod keymap;
mod view;

use crate::events::{NoticeLevel, Stamped};
use crate::runtime::Runtime;
use app::{Action, App, StatusInfo};
use crossterm::event::Event;
use ratatui::Terminal;
use ratatui::backend::Backend;
use std::time::Duration;
use tokio::sync::broadcast::{self, error::TryRecvError};
use tokio::sync::mpsc;
use tokio::time::Instant;

/// At most this many frames per second, however fast events arrive.
const FRAME: Duration = Duration::from_millis(16);

pub use view::render;

/// Run the interactive TUI until the user quits.
pub async fn run(rt: &Runtime) -> anyhow::Result<()> {
    let status = StatusInfo {
        models: format!(
            "primary {} · lightweight {} · embedding {} · log {}",
            rt.config.models.primary,
            rt.config.models.lightweight,
            rt.config.models.embedding,
            rt.paths.log_file().display()
        ),
    };
    let mut app = App::new(status);
    let engine = rt.bus.subscribe();
    // ratatui::init enters raw mode and the alternate screen, and installs a panic
    // hook that restores the terminal before the panic report is printed.
    let mut terminal = ratatui::init();
    crossterm::execute!(
        std::io::stdout(),
        crossterm::event::EnableBracketedPaste,
        crossterm::event::EnableMouseCapture
    )?;
    let result = run_loop(&mut terminal, &mut app, terminal_events(), engine, |action| handle(rt, action)).await;
    let _ = crossterm::execute!(
        std::io::stdout(),
        crossterm::event::DisableBracketedPaste,
        crossterm::event::DisableMouseCapture
    );
    ratatui::restore();
    result
}

/// Terminal input, read on its own thread. A plain blocking reader is simpler and
/// more predictable than an async event stream, and lets the loop drain input
/// with `try_recv` before each render.
fn terminal_events() -> mpsc::Receiver<std::io::Result<Event>> {
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

/// Carry out an app action against the runtime. Returns false to quit.
fn handle(rt: &Runtime, action: Action) -> bool {
    match action {
        Action::Quit => false,
        Action::Send(text) => {
            let db = rt.clone();
            tokio::spawn(async move {
                match db.intake(None, text).await {
                    Ok(_) => db.bus.notice(
                        NoticeLevel::Warn,
                        "Message saved. This build has no cognition pipeline yet, so no reply will come.",
                    ),
                    Err(e) => db
                        .bus
                        .notice(NoticeLevel::Error, format!("could not save the message: {}", crate::describe(&e))),
                }
            });
            true
        }
    }
}

/// The main loop, generic over the backend so tests drive it with `TestBackend`.
///
/// Drains every pending terminal and engine event, then renders at most once per
/// frame, and only when something changed.
pub async fn run_loop<B, F>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    mut input: mpsc::Receiver<std::io::Result<Event>>,
    mut engine: broadcast::Receiver<Stamped>,
    mut on_action: F,
) -> anyhow::Result<()>
where
    B: Backend,
    B::Error: Send + Sync + 'static,
    F: FnMut(Action) -> bool,
{
    let mut last_frame = Instant::now() - FRAME;
    loop {
        if app.dirty && last_frame.elapsed() >= FRAME {
            terminal.draw(|f| view::render(app, f))?;
            app.dirty = false;
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
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    tracing::warn!(missed = n, "UI fell behind the event bus");
                }
                Err(broadcast::error::RecvError::Closed) => return Ok(()),
            },
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
                Err(TryRecvError::Lagged(_)) => continue,
                Err(TryRecvError::Empty | TryRecvError::Closed) => break,
            }
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
