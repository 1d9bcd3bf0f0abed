//! The key table: one source for dispatch, the hint bar and the help popup, so a key can
//! never do something the help does not say. The user's `[keys]` config section rebinds
//! entries by name; the grammar for a key ("ctrl-q", "alt-enter", "f2", "?") lives here too,
//! and the config loader calls [`check_override`] so a typo is an error naming file and line.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::collections::BTreeMap;
use std::fmt;

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

    pub fn prev(self) -> Focus {
        let i = Self::CYCLE.iter().position(|f| *f == self).unwrap_or(0);
        Self::CYCLE[(i + Self::CYCLE.len() - 1) % Self::CYCLE.len()]
    }
}

/// Where keys are being read: the topmost layer on screen, or the focused component.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    /// The message box.
    Input,
    /// The chat or a side pane.
    View,
    /// The routing audit's table.
    Audit,
    /// One audit decision in detail.
    Detail,
    Help,
    /// The first-run screen.
    Setup,
    /// The memory browser's list.
    Memory,
    /// One memory with its provenance.
    MemoryDetail,
    /// Typing in the memory browser's search box.
    MemorySearch,
    /// "Forget this memory?"
    MemoryConfirm,
    /// One uncertainty record with its choices.
    Uncertainty,
    /// One drift cycle or thought in detail.
    Drift,
    /// The persistent tasks with their plans.
    Tasks,
    /// The conversation list (F8).
    Conversations,
    /// Typing in the conversation list's search box.
    ConversationSearch,
    /// "Delete this conversation?"
    ConversationConfirm,
}

impl Context {
    /// Keys are text here, so single-character bindings from other scopes stay out.
    pub fn typing(self) -> bool {
        matches!(self, Context::Input | Context::MemorySearch | Context::ConversationSearch)
    }

    pub fn is_conversations(self) -> bool {
        matches!(self, Context::Conversations | Context::ConversationSearch | Context::ConversationConfirm)
    }

    pub fn is_memory(self) -> bool {
        matches!(self, Context::Memory | Context::MemoryDetail | Context::MemorySearch | Context::MemoryConfirm)
    }
}

/// Where a binding applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Always (checked after the active context's own bindings).
    Global,
    /// Everywhere except the message box, where the key is text.
    NotTyping,
    Only(Context),
}

impl Scope {
    /// Help popup order.
    pub const ORDER: [Scope; 18] = [
        Scope::Global,
        Scope::Only(Context::Input),
        Scope::Only(Context::View),
        Scope::NotTyping,
        Scope::Only(Context::Audit),
        Scope::Only(Context::Detail),
        Scope::Only(Context::Memory),
        Scope::Only(Context::MemorySearch),
        Scope::Only(Context::MemoryDetail),
        Scope::Only(Context::MemoryConfirm),
        Scope::Only(Context::Uncertainty),
        Scope::Only(Context::Drift),
        Scope::Only(Context::Tasks),
        Scope::Only(Context::Conversations),
        Scope::Only(Context::ConversationSearch),
        Scope::Only(Context::ConversationConfirm),
        Scope::Only(Context::Help),
        Scope::Only(Context::Setup),
    ];

    fn applies(self, ctx: Context) -> bool {
        match self {
            Scope::Global => true,
            Scope::NotTyping => !ctx.typing(),
            Scope::Only(c) => c == ctx,
        }
    }

    /// The help popup's section heading.
    pub fn heading(self) -> &'static str {
        match self {
            Scope::Global => "Everywhere",
            Scope::NotTyping => "Outside the message box",
            Scope::Only(Context::Input) => "Message box",
            Scope::Only(Context::View) => "Chat and side panes",
            Scope::Only(Context::Audit) => "Routing audit",
            Scope::Only(Context::Detail) => "Audit detail",
            Scope::Only(Context::Help) => "This help",
            Scope::Only(Context::Setup) => "First-run screen",
            Scope::Only(Context::Memory) => "Memory browser",
            Scope::Only(Context::MemorySearch) => "Memory search box",
            Scope::Only(Context::MemoryDetail) => "One memory",
            Scope::Only(Context::MemoryConfirm) => "Forget a memory?",
            Scope::Only(Context::Uncertainty) => "An uncertainty",
            Scope::Only(Context::Drift) => "A drift thought",
            Scope::Only(Context::Tasks) => "Tasks",
            Scope::Only(Context::Conversations) => "Conversations",
            Scope::Only(Context::ConversationSearch) => "Conversation search box",
            Scope::Only(Context::ConversationConfirm) => "Delete a conversation?",
        }
    }
}

/// What a key press asks for. The active layer decides what it means there (Up moves the
/// audit selection in the audit, scrolls a pane elsewhere).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Quit,
    Help,
    Audit,
    ShowLog,
    /// Underline (and dim) the words of replies the model was unsure of, or stop.
    MarkUnsure,
    FocusNext,
    FocusPrev,
    /// Esc outside popups: stop the streaming reply.
    Stop,
    /// Esc (and friends) inside a popup.
    Close,
    PageUp,
    PageDown,
    Up,
    Down,
    Top,
    Bottom,
    // The message box.
    Send,
    NewLine,
    HistoryPrev,
    HistoryNext,
    Left,
    Right,
    WordLeft,
    WordRight,
    LineStart,
    LineEnd,
    DeleteBack,
    DeleteForward,
    DeleteWord,
    ClearInput,
    // Popups.
    Open,
    Filter,
    Reload,
    Fetch,
    // The memory browser.
    Memory,
    NextLayer,
    PrevLayer,
    Search,
    Forget,
    Confirm,
    // Run a drift cycle now.
    DriftNow,
    /// Copy the reply at the bottom of the chat view (or only its code) with OSC 52.
    CopyReply,
    CopyCode,
    // The Tasks view.
    Tasks,
    // An uncertainty record's choices.
    ResolveNew,
    ResolveBoth,
    ResolveForget,
    // The conversation list.
    Conversations,
    NewConversation,
}

/// One entry of the default table. `name` is what `[keys]` in the config refers to.
#[derive(Debug)]
pub struct Binding {
    pub name: &'static str,
    pub scope: Scope,
    pub command: Command,
    pub keys: &'static [&'static str],
    pub help: &'static str,
    /// Shown in the hint bar (the rest only in the help popup).
    pub hint: bool,
}

const fn b(
    name: &'static str,
    scope: Scope,
    command: Command,
    keys: &'static [&'static str],
    help: &'static str,
    hint: bool,
) -> Binding {
    Binding { name, scope, command, keys, help, hint }
}

use Context as C;
use Scope::{Global, NotTyping, Only};

/// Every key the program understands, in help order.
pub const BINDINGS: &[Binding] = &[
    b("quit", Global, Command::Quit, &["ctrl-q", "ctrl-c"], "quit", true),
    b("help", Global, Command::Help, &["f1"], "all keys", true),
    b("help_alt", NotTyping, Command::Help, &["?"], "all keys", false),
    b("audit", Global, Command::Audit, &["f2"], "routing audit", true),
    b("memory", Global, Command::Memory, &["f3"], "memories", true),
    b("show_log", Global, Command::ShowLog, &["f4"], "show the log and session file paths", false),
    b("mark_unsure", Global, Command::MarkUnsure, &["f5"], "mark the words a reply was unsure of (underlined)", false),
    b("drift_now", Global, Command::DriftNow, &["f6"], "run a drift cycle now (Drift pane)", false),
    b("tasks", Global, Command::Tasks, &["f7"], "background tasks and their plans", false),
    b("conversations", Global, Command::Conversations, &["f8"], "the conversation list", false),
    b("next_pane", Global, Command::FocusNext, &["tab"], "next pane", true),
    b("prev_pane", Global, Command::FocusPrev, &["backtab"], "previous pane", false),
    b("page_up", Global, Command::PageUp, &["pageup"], "scroll up a page (mouse wheel too)", false),
    b("page_down", Global, Command::PageDown, &["pagedown"], "scroll down a page", false),
    b("stop", Global, Command::Stop, &["esc"], "stop the reply", false),
    // The message box.
    b("send", Only(C::Input), Command::Send, &["enter"], "send", true),
    b("newline", Only(C::Input), Command::NewLine, &["alt-enter", "shift-enter", "ctrl-j"], "new line", true),
    b("history_prev", Only(C::Input), Command::HistoryPrev, &["up"], "previous message / line up", false),
    b("history_next", Only(C::Input), Command::HistoryNext, &["down"], "next message / line down", false),
    b("cursor_left", Only(C::Input), Command::Left, &["left"], "cursor left", false),
    b("cursor_right", Only(C::Input), Command::Right, &["right"], "cursor right", false),
    b("word_left", Only(C::Input), Command::WordLeft, &["ctrl-left", "alt-b"], "word left", false),
    b("word_right", Only(C::Input), Command::WordRight, &["ctrl-right", "alt-f"], "word right", false),
    b("line_start", Only(C::Input), Command::LineStart, &["home", "ctrl-a"], "start of line", false),
    b("line_end", Only(C::Input), Command::LineEnd, &["end", "ctrl-e"], "end of line", false),
    b("delete_back", Only(C::Input), Command::DeleteBack, &["backspace"], "delete before the cursor", false),
    b("delete_forward", Only(C::Input), Command::DeleteForward, &["delete"], "delete at the cursor", false),
    b("delete_word", Only(C::Input), Command::DeleteWord, &["ctrl-w", "alt-backspace"], "delete a word", false),
    b("clear_input", Only(C::Input), Command::ClearInput, &["ctrl-u"], "clear the message", false),
    // Chat and side panes.
    b("scroll_up", Only(C::View), Command::Up, &["up", "k"], "scroll", true),
    b("scroll_down", Only(C::View), Command::Down, &["down", "j"], "scroll", false),
    b("scroll_top", Only(C::View), Command::Top, &["home", "g"], "to the top", false),
    b("scroll_bottom", Only(C::View), Command::Bottom, &["end", "G"], "to the bottom (follow)", false),
    b("pane_open", Only(C::View), Command::Open, &["enter"], "open the selected uncertainty or drift thought", false),
    b("copy_reply", Only(C::View), Command::CopyReply, &["y"], "copy the reply at the bottom of the chat", false),
    b("copy_code", Only(C::View), Command::CopyCode, &["Y"], "copy that reply's code blocks", false),
    // Routing audit.
    b("audit_up", Only(C::Audit), Command::Up, &["up", "k"], "previous decision", false),
    b("audit_down", Only(C::Audit), Command::Down, &["down", "j"], "next decision", false),
    b("audit_open", Only(C::Audit), Command::Open, &["enter"], "details", true),
    b("audit_filter", Only(C::Audit), Command::Filter, &["m"], "filter by mode", true),
    b("audit_reload", Only(C::Audit), Command::Reload, &["r"], "reload", true),
    b("audit_tab", Only(C::Audit), Command::NextLayer, &["tab", "right"], "stats tab", true),
    b("audit_tab_back", Only(C::Audit), Command::PrevLayer, &["backtab", "left"], "the other tab", false),
    b("audit_close", Only(C::Audit), Command::Close, &["esc", "q"], "close", true),
    // Audit detail.
    b("detail_up", Only(C::Detail), Command::Up, &["up", "k"], "scroll", true),
    b("detail_down", Only(C::Detail), Command::Down, &["down", "j"], "scroll", false),
    b("detail_prev", Only(C::Detail), Command::Left, &["left", "h"], "previous decision", true),
    b("detail_next", Only(C::Detail), Command::Right, &["right", "l"], "next decision", true),
    b("detail_back", Only(C::Detail), Command::Close, &["esc", "backspace", "q"], "back to the table", true),
    // Memory browser.
    b("memory_up", Only(C::Memory), Command::Up, &["up", "k"], "previous memory", false),
    b("memory_down", Only(C::Memory), Command::Down, &["down", "j"], "next memory", false),
    b("memory_top", Only(C::Memory), Command::Top, &["home", "g"], "first memory", false),
    b("memory_bottom", Only(C::Memory), Command::Bottom, &["end", "G"], "last memory", false),
    b("memory_next_layer", Only(C::Memory), Command::NextLayer, &["tab", "right", "l"], "next layer", true),
    b("memory_prev_layer", Only(C::Memory), Command::PrevLayer, &["backtab", "left", "h"], "previous layer", false),
    b("memory_search", Only(C::Memory), Command::Search, &["/"], "search", true),
    b("memory_open", Only(C::Memory), Command::Open, &["enter"], "provenance", true),
    b("memory_forget", Only(C::Memory), Command::Forget, &["d", "delete"], "forget", true),
    b("memory_reload", Only(C::Memory), Command::Reload, &["r"], "reload", false),
    b("memory_close", Only(C::Memory), Command::Close, &["esc", "q"], "close", true),
    b("memory_search_done", Only(C::MemorySearch), Command::Open, &["enter", "down"], "keep the filter", true),
    b("memory_search_cancel", Only(C::MemorySearch), Command::Close, &["esc"], "clear the search", true),
    b("memory_search_back", Only(C::MemorySearch), Command::DeleteBack, &["backspace"], "delete a character", false),
    b("memory_search_clear", Only(C::MemorySearch), Command::ClearInput, &["ctrl-u"], "clear the text", false),
    b("memory_detail_up", Only(C::MemoryDetail), Command::Up, &["up", "k"], "scroll", true),
    b("memory_detail_down", Only(C::MemoryDetail), Command::Down, &["down", "j"], "scroll", false),
    b("memory_detail_forget", Only(C::MemoryDetail), Command::Forget, &["d", "delete"], "forget", true),
    b("memory_detail_back", Only(C::MemoryDetail), Command::Close, &["esc", "backspace", "q"], "back to list", true),
    b("memory_confirm_yes", Only(C::MemoryConfirm), Command::Confirm, &["y"], "yes, forget it", true),
    b("memory_confirm_no", Only(C::MemoryConfirm), Command::Close, &["n", "esc"], "no, keep it", true),
    // An uncertainty.
    b("uncertainty_new", Only(C::Uncertainty), Command::ResolveNew, &["1"], "the new one is right", true),
    b("uncertainty_both", Only(C::Uncertainty), Command::ResolveBoth, &["2"], "both are true", true),
    b("uncertainty_forget", Only(C::Uncertainty), Command::ResolveForget, &["3"], "forget both", true),
    b("uncertainty_close", Only(C::Uncertainty), Command::Close, &["esc", "q"], "close", true),
    // A drift thought.
    b("drift_close", Only(C::Drift), Command::Close, &["esc", "backspace", "q"], "back to the pane", true),
    // The Tasks view.
    b("tasks_up", Only(C::Tasks), Command::Up, &["up", "k"], "scroll up", false),
    b("tasks_down", Only(C::Tasks), Command::Down, &["down", "j"], "scroll down", false),
    b("tasks_reload", Only(C::Tasks), Command::Reload, &["r"], "reload", true),
    b("tasks_close", Only(C::Tasks), Command::Close, &["esc", "q"], "close", true),
    // The conversation list.
    b("conversations_up", Only(C::Conversations), Command::Up, &["up", "k"], "previous conversation", false),
    b("conversations_down", Only(C::Conversations), Command::Down, &["down", "j"], "next conversation", false),
    b("conversations_top", Only(C::Conversations), Command::Top, &["home", "g"], "newest", false),
    b("conversations_bottom", Only(C::Conversations), Command::Bottom, &["end", "G"], "oldest", false),
    b("conversations_resume", Only(C::Conversations), Command::Open, &["enter"], "resume", true),
    b("conversations_new", Only(C::Conversations), Command::NewConversation, &["n"], "new conversation", true),
    b("conversations_search", Only(C::Conversations), Command::Search, &["/"], "search", true),
    b("conversations_delete", Only(C::Conversations), Command::Forget, &["d", "delete"], "delete (forget)", true),
    b("conversations_close", Only(C::Conversations), Command::Close, &["esc", "q"], "close", true),
    b(
        "conversations_search_done",
        Only(C::ConversationSearch),
        Command::Open,
        &["enter", "down"],
        "keep the filter",
        true,
    ),
    b("conversations_search_cancel", Only(C::ConversationSearch), Command::Close, &["esc"], "clear the search", true),
    b(
        "conversations_search_back",
        Only(C::ConversationSearch),
        Command::DeleteBack,
        &["backspace"],
        "delete a character",
        false,
    ),
    b(
        "conversations_search_clear",
        Only(C::ConversationSearch),
        Command::ClearInput,
        &["ctrl-u"],
        "clear the text",
        false,
    ),
    b("conversations_confirm_yes", Only(C::ConversationConfirm), Command::Confirm, &["y"], "yes, forget it all", true),
    b("conversations_confirm_no", Only(C::ConversationConfirm), Command::Close, &["n", "esc"], "no, keep it", true),
    // Help.
    b("help_up", Only(C::Help), Command::Up, &["up", "k"], "scroll", false),
    b("help_down", Only(C::Help), Command::Down, &["down", "j"], "scroll", false),
    b("help_close", Only(C::Help), Command::Close, &["esc", "q", "?"], "close", true),
    // First run.
    b("setup_fetch", Only(C::Setup), Command::Fetch, &["enter"], "fetch the built-in models", true),
    b("setup_skip", Only(C::Setup), Command::Close, &["esc"], "skip for now", true),
];

/// A key with its modifiers, as the config and the help popup spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chord {
    pub code: KeyCode,
    pub ctrl: bool,
    pub alt: bool,
    pub shift: bool,
}

impl Chord {
    /// Parse "ctrl-q", "Alt+Enter", "f2", "?", "G", "pgup". Names are case-insensitive;
    /// a single character is taken as typed ("G" is shift-g).
    pub fn parse(spec: &str) -> Result<Chord, String> {
        let spec = spec.trim();
        if spec.is_empty() {
            return Err("an empty key".into());
        }
        let (mut ctrl, mut alt, mut shift) = (false, false, false);
        let mut rest = spec;
        loop {
            let lower = rest.to_ascii_lowercase();
            let Some((prefix, after)) = ["ctrl-", "ctrl+", "control-", "alt-", "alt+", "meta-", "shift-", "shift+"]
                .iter()
                .find(|p| lower.starts_with(**p) && rest.len() > p.len())
                .map(|p| (*p, &rest[p.len()..]))
            else {
                break;
            };
            match prefix.trim_end_matches(['-', '+']) {
                "ctrl" | "control" => ctrl = true,
                "alt" | "meta" => alt = true,
                _ => shift = true,
            }
            rest = after;
        }
        let mut chars = rest.chars();
        let code = match (chars.next(), chars.next()) {
            (Some(c), None) => KeyCode::Char(if ctrl || alt { c.to_ascii_lowercase() } else { c }),
            _ => match rest.to_ascii_lowercase().as_str() {
                "enter" | "return" => KeyCode::Enter,
                "esc" | "escape" => KeyCode::Esc,
                "tab" => KeyCode::Tab,
                "backtab" => KeyCode::BackTab,
                "backspace" | "bs" => KeyCode::Backspace,
                "delete" | "del" => KeyCode::Delete,
                "insert" | "ins" => KeyCode::Insert,
                "home" => KeyCode::Home,
                "end" => KeyCode::End,
                "pageup" | "pgup" => KeyCode::PageUp,
                "pagedown" | "pgdn" => KeyCode::PageDown,
                "up" => KeyCode::Up,
                "down" => KeyCode::Down,
                "left" => KeyCode::Left,
                "right" => KeyCode::Right,
                "space" => KeyCode::Char(' '),
                f if f.starts_with('f') => match f[1..].parse::<u8>() {
                    Ok(n @ 1..=12) => KeyCode::F(n),
                    _ => return Err(format!("unknown key `{spec}`")),
                },
                _ => {
                    return Err(format!(
                        "unknown key `{spec}` (use a character, a name like enter, esc, tab, up, pageup, f1, \
                         optionally prefixed with ctrl-, alt- or shift-)"
                    ));
                }
            },
        };
        // Terminals send shift-tab as BackTab and shift-x as "X": spell them that way.
        Ok(match code {
            KeyCode::Tab if shift => Chord { code: KeyCode::BackTab, ctrl, alt, shift: false },
            KeyCode::Char(c) if shift && !ctrl && !alt => {
                Chord { code: KeyCode::Char(c.to_ascii_uppercase()), ctrl, alt, shift: false }
            }
            _ => Chord { code, ctrl, alt, shift },
        })
    }

    /// Whether a key event is this chord. Shift is part of a typed character ("?" arrives
    /// with or without SHIFT depending on the terminal), so characters compare ctrl and alt
    /// only; BackTab likewise always carries shift.
    pub fn matches(&self, key: &KeyEvent) -> bool {
        let m = key.modifiers;
        let (ctrl, alt, shift) =
            (m.contains(KeyModifiers::CONTROL), m.contains(KeyModifiers::ALT), m.contains(KeyModifiers::SHIFT));
        let code = match key.code {
            KeyCode::Char(c) if ctrl || alt => KeyCode::Char(c.to_ascii_lowercase()),
            other => other,
        };
        if code != self.code || ctrl != self.ctrl || alt != self.alt {
            return false;
        }
        matches!(code, KeyCode::Char(_) | KeyCode::BackTab) || shift == self.shift
    }
}

impl fmt::Display for Chord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ctrl {
            f.write_str("Ctrl-")?;
        }
        if self.alt {
            f.write_str("Alt-")?;
        }
        if self.shift {
            f.write_str("Shift-")?;
        }
        match self.code {
            KeyCode::Char(' ') => f.write_str("Space"),
            KeyCode::Char(c) if self.ctrl || self.alt => write!(f, "{}", c.to_ascii_uppercase()),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::F(n) => write!(f, "F{n}"),
            KeyCode::Enter => f.write_str("Enter"),
            KeyCode::Esc => f.write_str("Esc"),
            KeyCode::Tab => f.write_str("Tab"),
            KeyCode::BackTab => f.write_str("Shift-Tab"),
            KeyCode::Backspace => f.write_str("Backspace"),
            KeyCode::Delete => f.write_str("Del"),
            KeyCode::Insert => f.write_str("Ins"),
            KeyCode::Home => f.write_str("Home"),
            KeyCode::End => f.write_str("End"),
            KeyCode::PageUp => f.write_str("PgUp"),
            KeyCode::PageDown => f.write_str("PgDn"),
            KeyCode::Up => f.write_str("↑"),
            KeyCode::Down => f.write_str("↓"),
            KeyCode::Left => f.write_str("←"),
            KeyCode::Right => f.write_str("→"),
            other => write!(f, "{other:?}"),
        }
    }
}

/// Is `name = keys` a valid `[keys]` entry? The error says what is wrong, for the config
/// loader to prefix with the file and line.
pub fn check_override(name: &str, keys: &[String]) -> Result<(), String> {
    if !BINDINGS.iter().any(|b| b.name == name) {
        let known: Vec<&str> = BINDINGS.iter().map(|b| b.name).collect();
        return Err(format!("[keys] has no binding named `{name}` (known: {})", known.join(", ")));
    }
    if keys.is_empty() {
        return Err(format!("[keys] {name} lists no key"));
    }
    for k in keys {
        Chord::parse(k).map_err(|e| format!("[keys] {name}: {e}"))?;
    }
    Ok(())
}

/// Every `[keys]` entry of the config, checked; the error names the file and line of the first
/// bad one. The config reads the entries; the key map, which knows the bindings, checks them.
pub fn check_config(config: &crate::config::Config) -> Result<(), crate::config::ConfigError> {
    for (name, keys) in &config.keys {
        check_override(name, &keys.value)
            .map_err(|message| crate::config::ConfigError::Invalid { at: keys.at.clone(), message })?;
    }
    Ok(())
}

/// One binding with its effective keys.
#[derive(Debug, Clone)]
pub struct Live {
    pub name: &'static str,
    pub scope: Scope,
    pub command: Command,
    pub chords: Vec<Chord>,
    /// "Ctrl-Q/Ctrl-C".
    pub label: String,
    /// The first key alone ("Ctrl-Q"), for the hint bar where room is short.
    pub short: String,
    pub help: &'static str,
    pub hint: bool,
}

/// The effective key table: defaults with the user's overrides applied.
#[derive(Debug, Clone)]
pub struct Keymap {
    pub bindings: Vec<Live>,
}

impl Default for Keymap {
    fn default() -> Self {
        Keymap::new(&BTreeMap::new())
    }
}

impl Keymap {
    /// Apply `overrides` (binding name → keys, already checked by the config loader). A key
    /// the user gives to one binding is taken away from every other binding that could see
    /// it in the same context, so a rebinding never leaves two meanings for one key.
    pub fn new(overrides: &BTreeMap<String, Vec<String>>) -> Keymap {
        let parse_all = |keys: &mut dyn Iterator<Item = &str>| -> Vec<Chord> {
            keys.filter_map(|k| match Chord::parse(k) {
                Ok(c) => Some(c),
                Err(e) => {
                    tracing::warn!("ignoring key binding: {e}");
                    None
                }
            })
            .collect()
        };
        let mut bindings: Vec<Live> = BINDINGS
            .iter()
            .map(|b| Live {
                name: b.name,
                scope: b.scope,
                command: b.command,
                chords: parse_all(&mut b.keys.iter().copied()),
                label: String::new(),
                short: String::new(),
                help: b.help,
                hint: b.hint,
            })
            .collect();
        let mut user = Vec::new();
        for (name, keys) in overrides {
            if let Some(i) = bindings.iter().position(|b| b.name == name) {
                bindings[i].chords = parse_all(&mut keys.iter().map(String::as_str));
                user.push(i);
            }
        }
        for &i in &user {
            let (scope, chords) = (bindings[i].scope, bindings[i].chords.clone());
            for (j, other) in bindings.iter_mut().enumerate() {
                if j != i && !user.contains(&j) && overlaps(scope, other.scope) {
                    other.chords.retain(|c| !chords.contains(c));
                }
            }
        }
        for b in &mut bindings {
            b.label = b.chords.iter().map(Chord::to_string).collect::<Vec<_>>().join("/");
            b.short = b.chords.first().map(Chord::to_string).unwrap_or_default();
        }
        Keymap { bindings }
    }

    /// The command for a key in a context: the context's own bindings first, then those for
    /// everywhere but the message box, then global ones.
    pub fn command(&self, key: &KeyEvent, ctx: Context) -> Option<Command> {
        let hit =
            |scope: Scope| self.bindings.iter().find(|b| b.scope == scope && b.chords.iter().any(|c| c.matches(key)));
        let not_typing = (!ctx.typing()).then(|| hit(Scope::NotTyping)).flatten();
        hit(Scope::Only(ctx)).or(not_typing).or_else(|| hit(Scope::Global)).map(|b| b.command)
    }

    /// What the hint bar shows in a context: the context's hinted keys, then the global ones;
    /// while a reply streams, the key that stops it comes first.
    pub fn hints(&self, ctx: Context, streaming: bool) -> impl Iterator<Item = &Live> {
        let stop = self.bindings.iter().filter(move |b| streaming && b.command == Command::Stop);
        let own = self.bindings.iter().filter(move |b| b.hint && b.scope != Scope::Global && b.scope.applies(ctx));
        let global = self.bindings.iter().filter(|b| b.hint && b.scope == Scope::Global);
        stop.chain(own).chain(global).filter(|b| !b.chords.is_empty())
    }

    /// The first key of the first binding for a command in a context ("Alt-Enter"), for prose.
    pub fn key_for(&self, command: Command, ctx: Context) -> Option<&str> {
        self.bindings.iter().find(|b| b.command == command && b.scope.applies(ctx)).map(|b| b.short.as_str())
    }
}

fn overlaps(a: Scope, b: Scope) -> bool {
    match (a, b) {
        (Scope::Global, _) | (_, Scope::Global) => true,
        (Scope::NotTyping, Scope::Only(c)) | (Scope::Only(c), Scope::NotTyping) => !c.typing(),
        (Scope::NotTyping, Scope::NotTyping) => true,
        (Scope::Only(x), Scope::Only(y)) => x == y,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, m: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, m)
    }

    #[test]
    fn every_default_key_parses_and_names_are_unique() {
        for b in BINDINGS {
            for k in b.keys {
                assert!(Chord::parse(k).is_ok(), "{}: {k}", b.name);
            }
            assert_eq!(BINDINGS.iter().filter(|o| o.name == b.name).count(), 1, "{}", b.name);
        }
    }

    #[test]
    fn grammar() {
        let c = Chord::parse("Ctrl+Q").unwrap();
        assert_eq!((c.code, c.ctrl, c.alt), (KeyCode::Char('q'), true, false));
        assert_eq!(Chord::parse("alt-enter").unwrap().to_string(), "Alt-Enter");
        assert_eq!(Chord::parse("F12").unwrap().code, KeyCode::F(12));
        assert_eq!(Chord::parse("-").unwrap().code, KeyCode::Char('-'));
        assert_eq!(Chord::parse("ctrl--").unwrap().code, KeyCode::Char('-'));
        assert_eq!(Chord::parse("shift-tab").unwrap().code, KeyCode::BackTab);
        assert!(Chord::parse("f13").is_err());
        assert!(Chord::parse("hyper-x").is_err());
        assert!(Chord::parse("").is_err());
    }

    #[test]
    fn dispatch_by_context() {
        let k = Keymap::default();
        let ctrl_c = key(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(k.command(&ctrl_c, Context::Input), Some(Command::Quit));
        let q = key(KeyCode::Char('?'), KeyModifiers::SHIFT);
        assert_eq!(k.command(&q, Context::Input), None, "? is text in the message box");
        assert_eq!(k.command(&q, Context::View), Some(Command::Help));
        assert_eq!(k.command(&q, Context::Help), Some(Command::Close));
        let up = key(KeyCode::Up, KeyModifiers::NONE);
        assert_eq!(k.command(&up, Context::Input), Some(Command::HistoryPrev));
        assert_eq!(k.command(&up, Context::Audit), Some(Command::Up));
        let esc = key(KeyCode::Esc, KeyModifiers::NONE);
        assert_eq!(k.command(&esc, Context::Input), Some(Command::Stop));
        assert_eq!(k.command(&esc, Context::Audit), Some(Command::Close));
        let alt_enter = key(KeyCode::Enter, KeyModifiers::ALT);
        assert_eq!(k.command(&alt_enter, Context::Input), Some(Command::NewLine));
        let enter = key(KeyCode::Enter, KeyModifiers::NONE);
        assert_eq!(k.command(&enter, Context::Input), Some(Command::Send));
        let big_g = key(KeyCode::Char('G'), KeyModifiers::SHIFT);
        assert_eq!(k.command(&big_g, Context::View), Some(Command::Bottom));
        let backtab = key(KeyCode::BackTab, KeyModifiers::SHIFT);
        assert_eq!(k.command(&backtab, Context::View), Some(Command::FocusPrev));
    }

    #[test]
    fn overrides_replace_keys_and_take_them_from_others() {
        let mut o = BTreeMap::new();
        o.insert("audit".to_string(), vec!["ctrl-r".to_string()]);
        o.insert("send".to_string(), vec!["ctrl-s".to_string(), "enter".to_string()]);
        o.insert("quit".to_string(), vec!["ctrl-x".to_string()]);
        let k = Keymap::new(&o);
        let f2 = key(KeyCode::F(2), KeyModifiers::NONE);
        assert_eq!(k.command(&f2, Context::Input), None);
        let ctrl_r = key(KeyCode::Char('r'), KeyModifiers::CONTROL);
        assert_eq!(k.command(&ctrl_r, Context::View), Some(Command::Audit));
        assert_eq!(k.command(&key(KeyCode::Char('s'), KeyModifiers::CONTROL), Context::Input), Some(Command::Send));
        assert_eq!(k.command(&key(KeyCode::Char('q'), KeyModifiers::CONTROL), Context::Input), None);
        let quit = k.bindings.iter().find(|b| b.name == "quit").unwrap();
        assert_eq!(quit.label, "Ctrl-X");
        // The hint bar shows the new keys.
        assert!(k.hints(Context::Input, false).any(|b| b.short == "Ctrl-R" && b.command == Command::Audit));
    }

    #[test]
    fn check_override_explains() {
        assert!(check_override("quit", &["ctrl-q".into()]).is_ok());
        assert!(check_override("qiut", &["ctrl-q".into()]).unwrap_err().contains("no binding named `qiut`"));
        assert!(check_override("quit", &["ctrl-qq".into()]).unwrap_err().contains("unknown key"));
        assert!(check_override("quit", &[]).is_err());
    }

    #[test]
    fn keys_section_rebinds_and_errors_name_file_and_line() {
        use crate::config::{Config, ConfigError};
        let user = |text: &str| -> Result<Config, ConfigError> {
            Config::from_user_toml(std::path::Path::new("/home/u/.config/chalie-tui/config.toml"), text)
                .and_then(|c| c.checked(&[check_config]))
        };
        assert!(Config::defaults().keys.is_empty());
        let c = user("[keys]\nquit = \"ctrl-x\"\nnewline = [\"alt-enter\", \"ctrl-j\"]\n").unwrap();
        assert_eq!(c.keys["quit"].value, ["ctrl-x"]);
        assert_eq!(c.keys["newline"].value, ["alt-enter", "ctrl-j"]);
        assert_eq!(c.keys["newline"].at.line, 3);

        let err = user("[keys]\nquit = \"ctrl-x\"\nqiut = \"ctrl-q\"\n").unwrap_err().to_string();
        assert!(err.starts_with("/home/u/.config/chalie-tui/config.toml:3: "), "{err}");
        assert!(err.contains("qiut"), "{err}");
        let err = user("\n[keys]\naudit = \"hyper-f2\"\n").unwrap_err().to_string();
        assert!(err.starts_with("/home/u/.config/chalie-tui/config.toml:3: "), "{err}");
        assert!(err.contains("unknown key `hyper-f2`"), "{err}");
        // A wrong type is a parse error with the line, like every other key.
        let err = user("[keys]\nquit = 3\n").unwrap_err().to_string();
        assert!(err.contains("config.toml:2"), "{err}");
    }
}
