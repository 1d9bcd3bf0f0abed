//! The key table: one source for dispatch, the hint bar and the help popup.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Which part of the screen has focus; the hint bar shows that part's keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Input,
    Chat,
    Routing,
    Act,
    Drift,
    Uncertainties,
}

impl Focus {
    pub const CYCLE: [Focus; 6] =
        [Focus::Input, Focus::Chat, Focus::Routing, Focus::Act, Focus::Drift, Focus::Uncertainties];

    pub fn next(self) -> Focus {
        let i = Self::CYCLE.iter().position(|f| *f == self).unwrap_or(0);
        Self::CYCLE[(i + 1) % Self::CYCLE.len()]
    }
}

/// What a key press asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Quit,
    Send,
    FocusNext,
    Help,
    Close,
    ScrollUp,
    ScrollDown,
}

/// Where a binding applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Global,
    Input,
    Panes,
}

pub struct Binding {
    pub keys: &'static str,
    pub help: &'static str,
    pub command: Command,
    pub scope: Scope,
    /// Shown in the hint bar (the rest only in the help popup).
    pub hint: bool,
}

pub const BINDINGS: &[Binding] = &[
    Binding { keys: "Enter", help: "send message", command: Command::Send, scope: Scope::Input, hint: true },
    Binding { keys: "Tab", help: "next pane", command: Command::FocusNext, scope: Scope::Global, hint: true },
    Binding { keys: "PgUp/PgDn", help: "scroll chat", command: Command::ScrollUp, scope: Scope::Global, hint: false },
    Binding { keys: "↑/↓", help: "scroll", command: Command::ScrollDown, scope: Scope::Panes, hint: true },
    Binding { keys: "?", help: "help", command: Command::Help, scope: Scope::Panes, hint: true },
    Binding { keys: "F1", help: "help", command: Command::Help, scope: Scope::Global, hint: true },
    Binding { keys: "Esc", help: "close popup", command: Command::Close, scope: Scope::Global, hint: false },
    Binding { keys: "Ctrl-Q/Ctrl-C", help: "quit", command: Command::Quit, scope: Scope::Global, hint: true },
];

/// The bindings active for a focus, in table order.
pub fn active(focus: Focus) -> impl Iterator<Item = &'static Binding> {
    BINDINGS.iter().filter(move |b| match b.scope {
        Scope::Global => true,
        Scope::Input => focus == Focus::Input,
        Scope::Panes => focus != Focus::Input,
    })
}

/// Map a key press to a command, given the focus. Plain characters in the input box
/// are text, not commands.
pub fn command_for(key: KeyEvent, focus: Focus) -> Option<Command> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let cmd = match key.code {
        KeyCode::Char('q' | 'c') if ctrl => Command::Quit,
        KeyCode::F(1) => Command::Help,
        KeyCode::Char('?') if focus != Focus::Input => Command::Help,
        KeyCode::Esc => Command::Close,
        KeyCode::Tab => Command::FocusNext,
        KeyCode::Enter if focus == Focus::Input => Command::Send,
        KeyCode::PageUp => Command::ScrollUp,
        KeyCode::PageDown => Command::ScrollDown,
        KeyCode::Up if focus != Focus::Input => Command::ScrollUp,
        KeyCode::Down if focus != Focus::Input => Command::ScrollDown,
        _ => return None,
    };
    Some(cmd)
}
