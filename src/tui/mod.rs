//! The terminal front-end. It renders from the event bus and sends commands; it never
//! waits on the engine.

pub mod app;
pub mod keymap;
mod view;

use crate::cognition::pipeline::Engine;
use crate::events::{NoticeLevel, Stamped};
use crate::runtime::Runtime;
use app::{Action, App, StatusInfo};
use crossterm::event::Event;
use ratatui::Terminal;
use ratatui::backend::Backend;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::OnceCell;
use tokio::sync::broadcast::{self, error::TryRecvError};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

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
    let conversation = Conversation::start(rt);
    let result =
        run_loop(&mut terminal, &mut app, terminal_events(), engine, |action| conversation.handle(rt, action)).await;
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

/// The conversation's background side: messages are stored in arrival order by one task
/// (so none is lost while a reply is being written) and answered in that order by another.
struct Conversation {
    intake: mpsc::UnboundedSender<String>,
    /// The running turn's cancel token (Esc stops a streaming reply).
    current: Arc<Mutex<CancellationToken>>,
}

impl Conversation {
    fn start(rt: &Runtime) -> Conversation {
        let (intake_tx, mut intake_rx) = mpsc::unbounded_channel::<String>();
        let (turn_tx, mut turn_rx) = mpsc::unbounded_channel::<(String, String, String)>();
        let current = Arc::new(Mutex::new(CancellationToken::new()));
        let engine: Arc<OnceCell<Arc<Engine>>> = Arc::new(OnceCell::new());

        // Start the engine right away (model probe, weights) so the first reply is not late.
        let (rt_init, cell) = (rt.clone(), engine.clone());
        tokio::spawn(async move {
            if let Err(e) = cell.get_or_try_init(|| rt_init.start_engine()).await {
                rt_init.bus.notice(NoticeLevel::Error, format!("cannot start the engine: {e:#}"));
            }
        });

        let rt_in = rt.clone();
        tokio::spawn(async move {
            let mut thread: Option<String> = None;
            while let Some(text) = intake_rx.recv().await {
                match rt_in.intake(thread.clone(), text.clone()).await {
                    Ok((t, xid)) => {
                        thread = Some(t.clone());
                        if turn_tx.send((t, xid, text)).is_err() {
                            return;
                        }
                    }
                    Err(e) => rt_in
                        .bus
                        .notice(NoticeLevel::Error, format!("could not save the message: {}", crate::describe(&e))),
                }
            }
        });

        let (rt_turn, cur) = (rt.clone(), current.clone());
        tokio::spawn(async move {
            while let Some((thread, xid, text)) = turn_rx.recv().await {
                let engine = match engine.get_or_try_init(|| rt_turn.start_engine()).await {
                    Ok(e) => e.clone(),
                    Err(e) => {
                        rt_turn.bus.notice(NoticeLevel::Error, format!("message saved, but no engine: {e:#}"));
                        continue;
                    }
                };
                let token = CancellationToken::new();
                if let Ok(mut c) = cur.lock() {
                    *c = token.clone();
                }
                if let Err(e) = engine.turn(&thread, &xid, &text, &token).await {
                    rt_turn.bus.notice(NoticeLevel::Error, format!("the turn failed: {e:#}"));
                }
            }
        });
        Conversation { intake: intake_tx, current }
    }

    /// Carry out an app action. Returns false to quit.
    fn handle(&self, rt: &Runtime, action: Action) -> bool {
        match action {
            Action::Quit => false,
            Action::Send(text) => {
                if self.intake.send(text).is_err() {
                    rt.bus.notice(NoticeLevel::Error, "the conversation task has stopped; restart chalie-tui");
                }
                true
            }
            Action::CancelReply => {
                if let Ok(c) = self.current.lock() {
                    c.cancel();
                }
                true
            }
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
