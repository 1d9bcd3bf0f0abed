//! TUI state and its reactions. Pure: no I/O, so every state renders in a test.

use super::keymap::{self, Command, Focus};
use crate::cognition::pipeline::{RouterReport, TopicReport};
use crate::cognition::router::Mode;
use crate::events::{EngineEvent, NoticeLevel, Stamped};
use crossterm::event::{Event, KeyCode, KeyEventKind, KeyModifiers, MouseEventKind};

/// What the app asks its owner to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Quit,
    /// Send a user message to the engine.
    Send(String),
    /// Stop the reply that is streaming.
    CancelReply,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatLine {
    pub role: Role,
    pub text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

/// Static facts shown in the status bar.
#[derive(Debug, Clone, Default)]
pub struct StatusInfo {
    /// e.g. "primary local/smollm2-135m-instruct (built-in) · log <path>".
    pub models: String,
}

/// The latest routing decision, as the Routing pane shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct RoutingView {
    pub mode: Mode,
    pub router: RouterReport,
    pub topic: TopicReport,
    pub fallbacks: Vec<String>,
}

pub struct App {
    pub chat: Vec<ChatLine>,
    /// The exchange whose reply is streaming into the last chat line.
    pub streaming: Option<String>,
    pub routing: Option<RoutingView>,
    pub input: String,
    pub focus: Focus,
    pub show_help: bool,
    /// Lines scrolled up from the bottom of the chat.
    pub chat_scroll: u16,
    pub notice: Option<(NoticeLevel, String)>,
    pub status: StatusInfo,
    /// Set by anything that changes what is on screen; cleared by a render.
    pub dirty: bool,
}

impl App {
    pub fn new(status: StatusInfo) -> App {
        App {
            chat: Vec::new(),
            streaming: None,
            routing: None,
            input: String::new(),
            focus: Focus::Input,
            show_help: false,
            chat_scroll: 0,
            notice: None,
            status,
            dirty: true,
        }
    }

    /// React to a terminal event.
    pub fn on_terminal(&mut self, event: Event) -> Option<Action> {
        match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => {
                self.dirty = true;
                if let Some(cmd) = keymap::command_for(key, self.focus) {
                    return self.run(cmd);
                }
                if self.focus == Focus::Input {
                    match key.code {
                        KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => self.input.push(c),
                        KeyCode::Backspace => {
                            self.input.pop();
                        }
                        _ => {}
                    }
                }
                None
            }
            Event::Paste(text) if self.focus == Focus::Input => {
                self.input.push_str(&text);
                self.dirty = true;
                None
            }
            Event::Mouse(m) => {
                match m.kind {
                    MouseEventKind::ScrollUp => self.scroll(3),
                    MouseEventKind::ScrollDown => self.scroll(-3),
                    _ => return None,
                }
                self.dirty = true;
                None
            }
            Event::Resize(..) => {
                self.dirty = true;
                None
            }
            _ => None,
        }
    }

    fn run(&mut self, cmd: Command) -> Option<Action> {
        match cmd {
            Command::Quit => return Some(Action::Quit),
            Command::Help => self.show_help = !self.show_help,
            Command::Close if self.show_help => self.show_help = false,
            Command::Close if self.streaming.is_some() => return Some(Action::CancelReply),
            Command::Close => {}
            Command::FocusNext => self.focus = self.focus.next(),
            Command::ScrollUp => self.scroll(10),
            Command::ScrollDown => self.scroll(-10),
            Command::Send => {
                let text = self.input.trim().to_string();
                if !text.is_empty() {
                    self.input.clear();
                    self.chat_scroll = 0;
                    return Some(Action::Send(text));
                }
            }
        }
        None
    }

    fn scroll(&mut self, by: i32) {
        self.chat_scroll = (i32::from(self.chat_scroll) + by).clamp(0, i32::from(u16::MAX)) as u16;
    }

    /// React to an engine event.
    pub fn on_engine(&mut self, event: &Stamped) {
        match &event.event {
            EngineEvent::UserMessage { text, .. } => self.chat.push(ChatLine { role: Role::User, text: text.clone() }),
            EngineEvent::Notice { level, message } => self.notice = Some((*level, message.clone())),
            EngineEvent::Routed { mode, router, topic, fallbacks, .. } => {
                self.routing = Some(RoutingView {
                    mode: *mode,
                    router: (**router).clone(),
                    topic: topic.clone(),
                    fallbacks: fallbacks.clone(),
                });
            }
            EngineEvent::ReplyChunk { exchange_id, text } => {
                if self.streaming.as_deref() != Some(exchange_id.as_str()) {
                    self.streaming = Some(exchange_id.clone());
                    self.chat.push(ChatLine { role: Role::Assistant, text: String::new() });
                }
                if let Some(line) = self.chat.last_mut() {
                    line.text.push_str(text);
                }
            }
            EngineEvent::ReplyDone { exchange_id, text, .. } => {
                let streamed_here = self.streaming.as_deref() == Some(exchange_id.as_str());
                self.streaming = None;
                match self.chat.last_mut() {
                    Some(line) if streamed_here => line.text = text.clone(),
                    _ if !text.is_empty() => self.chat.push(ChatLine { role: Role::Assistant, text: text.clone() }),
                    _ => {}
                }
            }
            EngineEvent::IdentityLearned { name } => {
                self.notice = Some((NoticeLevel::Info, format!("Noted: your name is {name}.")));
            }
            // Model-call telemetry feeds the status bar with the TUI issue.
            EngineEvent::LlmStart { .. }
            | EngineEvent::LlmToken { .. }
            | EngineEvent::LlmComplete { .. }
            | EngineEvent::LlmCost { .. }
            | EngineEvent::LlmFailed { .. } => return,
        }
        self.dirty = true;
    }
}
