//! `--replay LOG`: a recorded session played back through the same [`App`] the live program
//! renders, so it looks exactly as it did: chat, routing bars, ACT iterations, drift and
//! uncertainties. No engine, model or database: the recorded events are fed to
//! [`App::on_engine`] on a timer that follows their timestamps, scaled by the speed.
//!
//! Keys: space play/pause, → one event, +/- speed, ] and [ next/previous turn, Home restart,
//! q or the quit key to leave; Tab, the scroll keys and F1 work as in the live app.

use super::app::{App, Settings};
use super::keymap::{Command, Focus, Keymap};
use crate::session::{LogIndex, SessionLog};
use crossterm::event::{Event, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::Backend;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use std::collections::BTreeMap;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// A pause longer than this (the user reading, or away) plays as this long at speed 1.
const MAX_GAP: Duration = Duration::from_secs(2);
const SPEEDS: [f64; 9] = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 64.0, 256.0];

/// Where playback is. Pure: the loop asks it what is due and tells it what was played.
pub struct Player {
    /// The events, each parsed when it is played ([`LogIndex`]).
    events: LogIndex,
    /// The next event to play.
    pub cursor: usize,
    pub playing: bool,
    speed: usize,
    pub name: String,
}

impl Player {
    /// Play a log already read whole (what [`LogIndex::from_log`] keeps of it).
    pub fn new(log: SessionLog, name: &str) -> Player {
        Player::indexed(LogIndex::from_log(log), name)
    }

    /// Play an indexed log.
    pub fn indexed(events: LogIndex, name: &str) -> Player {
        Player { events, cursor: 0, playing: true, speed: 2, name: name.to_string() }
    }

    pub fn len(&self) -> usize {
        self.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    pub fn speed(&self) -> f64 {
        SPEEDS[self.speed]
    }

    pub fn faster(&mut self) {
        self.speed = (self.speed + 1).min(SPEEDS.len() - 1);
    }

    pub fn slower(&mut self) {
        self.speed = self.speed.saturating_sub(1);
    }

    /// How many turns the log has, and how many have started so far.
    pub fn turn(&self) -> (usize, usize) {
        let turns = self.events.turns();
        (turns.partition_point(|&i| i < self.cursor), turns.len())
    }

    /// How long after the previous event the next one is due, at the current speed.
    pub fn gap(&self) -> Option<Duration> {
        if self.cursor >= self.events.len() {
            return None;
        }
        let Some(prev) = self.cursor.checked_sub(1) else {
            return Some(Duration::ZERO);
        };
        let (Some(next), Some(prev)) = (self.events.ts(self.cursor), self.events.ts(prev)) else {
            return Some(Duration::ZERO);
        };
        let real = (next - prev).to_std().unwrap_or_default().min(MAX_GAP);
        Some(real.div_f64(self.speed()))
    }

    /// Play the next event into `app`. False at the end.
    pub fn step(&mut self, app: &mut App) -> bool {
        if self.cursor >= self.events.len() {
            return false;
        }
        // A line this version cannot read plays as nothing.
        if let Some(ev) = self.events.event(self.cursor) {
            app.on_engine(&ev);
        }
        self.cursor += 1;
        true
    }

    /// Put `app` in the state just before event `target`: a fresh app (the events are not
    /// reversible) fed everything before it at once.
    pub fn seek(&mut self, app: &mut App, settings: &Settings, target: usize) {
        *app = fresh(settings);
        self.cursor = 0;
        while self.cursor < target.min(self.events.len()) {
            self.step(app);
        }
    }

    /// The event index of the start of turn `delta` turns from the current one (`]` / `[`).
    pub fn turn_target(&self, delta: isize) -> usize {
        let (started, _) = self.turn();
        // The current turn is the last started one; `[` from inside it goes to its start first.
        let current = started.checked_sub(1);
        let target = match (delta, current) {
            (d, None) if d > 0 => 0,
            (d, Some(c)) => c.saturating_add_signed(d),
            (_, None) => return 0,
        };
        self.events.turns().get(target).copied().unwrap_or(self.events.len())
    }
}

/// A new app for playback: the chat has focus (there is nothing to type), the engine counts
/// as started.
pub fn fresh(settings: &Settings) -> App {
    let mut app = App::new(settings.clone());
    app.focus = Focus::Chat;
    app.status.resolved = true;
    app
}

/// What a key does to playback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    Quit,
    Toggle,
    Step,
    Faster,
    Slower,
    Turn(isize),
    Restart,
    /// Not a playback key: the app handles it (scrolling, focus, help).
    App,
    Ignore,
}

/// The playback key table; the live app's quit key quits here too.
pub fn control(keymap: &Keymap, key: &crossterm::event::KeyEvent, ctx: super::keymap::Context) -> Control {
    if key.kind == KeyEventKind::Release {
        return Control::Ignore;
    }
    let plain = !key.modifiers.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
    match key.code {
        KeyCode::Char(' ') if plain => return Control::Toggle,
        KeyCode::Right => return Control::Step,
        KeyCode::Char('+' | '=') if plain => return Control::Faster,
        KeyCode::Char('-') if plain => return Control::Slower,
        KeyCode::Char(']') if plain => return Control::Turn(1),
        KeyCode::Char('[') if plain => return Control::Turn(-1),
        KeyCode::Home => return Control::Restart,
        KeyCode::Char('q') if plain => return Control::Quit,
        _ => {}
    }
    match keymap.command(key, ctx) {
        Some(Command::Quit) => Control::Quit,
        Some(
            Command::Help
            | Command::ShowLog
            | Command::MarkUnsure
            | Command::FocusNext
            | Command::FocusPrev
            | Command::Close
            | Command::PageUp
            | Command::PageDown
            | Command::Up
            | Command::Down
            | Command::Top
            | Command::Bottom,
        ) => Control::App,
        _ => Control::Ignore,
    }
}

/// The playback bar, drawn over the key hints row.
pub fn render_bar(frame: &mut ratatui::Frame, area: Rect, player: &Player) {
    let (turn, turns) = player.turn();
    let state = if player.cursor >= player.len() {
        "■ end"
    } else if player.playing {
        "▶ playing"
    } else {
        "‖ paused"
    };
    let line = Line::from(vec![
        Span::styled(format!(" REPLAY {state} "), Style::default().add_modifier(Modifier::REVERSED)),
        Span::raw(format!(
            " ×{} · turn {turn}/{turns} · event {}/{} · space play/pause · → step · +/- speed · [ ] turn · Home restart · q quit",
            player.speed(),
            player.cursor,
            player.len()
        )),
    ]);
    frame.render_widget(Paragraph::new(line), area);
}

/// Draw the app with the playback bar.
pub fn draw<B: Backend>(terminal: &mut Terminal<B>, app: &mut App, player: &Player) -> Result<(), B::Error> {
    terminal.draw(|f| {
        app.prepare(f.area());
        super::view::render(app, f);
        render_bar(f, app.areas.hints, player);
    })?;
    app.dirty = false;
    Ok(())
}

/// The playback loop, generic over the backend so tests drive it with `TestBackend`.
pub async fn run_loop<B>(
    terminal: &mut Terminal<B>,
    settings: &Settings,
    player: &mut Player,
    mut input: mpsc::Receiver<std::io::Result<Event>>,
) -> anyhow::Result<()>
where
    B: Backend,
    B::Error: Send + Sync + 'static,
{
    let mut app = fresh(settings);
    let mut last = Instant::now();
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    loop {
        if app.dirty {
            draw(terminal, &mut app, player)?;
        }
        let due = player.gap().filter(|_| player.playing).map(|g| last + g);
        tokio::select! {
            ev = input.recv() => {
                let ev = match ev {
                    Some(ev) => ev?,
                    None => return Ok(()),
                };
                let Event::Key(key) = ev else {
                    if matches!(ev, Event::Resize(..) | Event::Mouse(_)) {
                        app.on_terminal(ev);
                    }
                    continue;
                };
                app.dirty = true;
                match control(&app.keymap, &key, app.context()) {
                    Control::Quit => return Ok(()),
                    Control::Toggle => player.playing = !player.playing,
                    Control::Step => {
                        player.playing = false;
                        player.step(&mut app);
                    }
                    Control::Faster => player.faster(),
                    Control::Slower => player.slower(),
                    Control::Turn(d) => {
                        let target = player.turn_target(d);
                        player.seek(&mut app, settings, target);
                        // Show the user message itself, not the moment before it.
                        player.step(&mut app);
                    }
                    Control::Restart => player.seek(&mut app, settings, 0),
                    Control::App => {
                        if app.on_terminal(Event::Key(key)) == Some(super::app::Action::Quit) {
                            return Ok(());
                        }
                    }
                    Control::Ignore => app.dirty = false,
                }
                last = Instant::now();
            }
            _ = sleep_until(due), if due.is_some() => {
                player.step(&mut app);
                last = due.unwrap_or_else(Instant::now).max(Instant::now() - Duration::from_millis(250));
            }
            _ = tick.tick(), if app.needs_tick() => app.tick(),
        }
    }
}

async fn sleep_until(due: Option<Instant>) {
    if let Some(due) = due {
        tokio::time::sleep_until(due).await;
    }
}

/// Play `log` in the terminal until the user quits.
pub async fn run(log: LogIndex, name: &str, key_overrides: &BTreeMap<String, Vec<String>>) -> anyhow::Result<()> {
    let settings = Settings {
        keymap: Keymap::new(key_overrides),
        session_log: name.to_string(),
        offset: *chrono::Local::now().offset(),
        ..Settings::default()
    };
    let mut player = Player::indexed(log, name);
    let mut terminal = super::panic::init_terminal();
    let result = run_loop(&mut terminal, &settings, &mut player, super::terminal_events()).await;
    ratatui::restore();
    result
}

#[cfg(test)]
mod tests;
