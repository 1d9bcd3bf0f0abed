//! TUI state and its reactions. Pure: no I/O, so every state renders in a test.
//!
//! Terminal events become [`Command`]s through the key table, and the topmost layer (help,
//! first-run screen, audit, then the focused component) carries them out. Components change
//! their own state and return what they need from outside as an [`Action`]; the owner of the
//! app (the loop in `tui::run`) performs it. Engine events update the components the same way.

use super::audit::{self, Audit};
use super::chat::Chat;
use super::conversations::ConversationList;
use super::help::Help;
use super::input::Input;
use super::keymap::{Command, Context, Focus, Keymap};
use super::memory::{self, MemoryBrowser};
use super::panes::act::{ActPane, Iteration};
use super::panes::drift::DriftPane;
use super::panes::routing::{Decision, Judged, RoutingPane};
use super::panes::uncertainties::UncertaintiesPane;
use super::query::ViewAnswer;
use super::scroll;
use super::setup::{Places, Setup};
use super::status::Status;
use super::view::{self, Areas};
use crate::cognition::router::Mode;
use crate::events::{ActiveModel, EngineEvent, NoticeLevel, Stamped};
use crate::llm::ChatRole;
use chrono::{FixedOffset, Offset, Utc};
use crossterm::event::{Event, KeyCode, KeyEventKind, KeyModifiers, MouseButton, MouseEventKind};
use ratatui::layout::{Position, Rect};

/// What the app asks its owner to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Quit,
    /// Send a user message to the engine.
    Send(String),
    /// The message box now holds this (trimmed, as it would be sent): the engine may decode
    /// it ahead on the built-in model.
    Draft(String),
    /// Stop the reply that is streaming.
    CancelReply,
    /// Read audit rows (newest first), optionally only one delivered mode.
    LoadAudit(Option<Mode>),
    /// Read one routing decision in full.
    LoadDecision(String),
    /// Read the last 24 h's routing statistics (the audit's stats tab).
    LoadRoutingStats,
    /// Fetch the built-in model files that are missing.
    FetchModels,
    /// Read one memory layer's rows for the browser, optionally only those matching a search.
    LoadMemory {
        layer: crate::store::MemoryLayer,
        search: Option<String>,
    },
    /// Forget one memory (the browser has asked the user first).
    ForgetMemory(crate::store::MemoryId),
    /// Read what these memories (`layer:id`) say, for the Uncertainties pane.
    LoadMemoryTexts(Vec<String>),
    /// The user settled an uncertainty record (`choice` indexes `panes::uncertainties::CHOICES`).
    ResolveUncertainty {
        id: String,
        choice: usize,
    },
    /// Run one drift cycle now.
    DriftNow,
    /// Write this escape sequence to the terminal (an OSC 52 copy).
    Copy(String),
    /// Read the persistent tasks for the Tasks view.
    LoadTasks,
    /// Read the conversation list, optionally only those with a message matching a search.
    LoadConversations(Option<String>),
    /// The chat pane was scrolled past the top of what it holds: read the page of
    /// `thread_id`'s messages before exchange `before`.
    LoadEarlierChat {
        thread_id: String,
        before: String,
    },
    /// New messages go to this conversation; read its history for the chat pane.
    ResumeConversation(String),
    /// New messages go to a new conversation.
    NewConversation,
    /// Forget a whole conversation (the list has asked the user first).
    ForgetConversation(String),
}

/// What the app needs to know about its surroundings; everything else arrives as events.
#[derive(Debug, Clone)]
pub struct Settings {
    pub keymap: Keymap,
    /// The models the config names, until the engine reports what it resolved.
    pub models: Vec<ActiveModel>,
    pub log_file: String,
    pub session_log: String,
    pub places: Places,
    /// Times are shown in this zone (fixed in tests, so snapshots do not depend on the host).
    pub offset: FixedOffset,
    /// The background tasks' board, listed in the help popup; `None` where none run.
    pub workers: Option<crate::background::WorkerBoard>,
    /// `[pricing]`, to turn the session's tokens into dollars.
    pub pricing: crate::config::pricing::Pricing,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            keymap: Keymap::default(),
            models: Vec::new(),
            log_file: String::new(),
            session_log: String::new(),
            places: Places::default(),
            offset: Utc.fix(),
            workers: None,
            pricing: Default::default(),
        }
    }
}

pub struct App {
    /// An MCP tool waiting for the user's go-ahead (the confirm prompt).
    pub approval: Option<super::approve::Asked>,
    pub keymap: Keymap,
    pub focus: Focus,
    pub chat: Chat,
    pub input: Input,
    pub routing: RoutingPane,
    pub act: ActPane,
    pub drift: DriftPane,
    pub uncertainties: UncertaintiesPane,
    /// The uncertainty record open in its detail popup (Enter on the pane).
    pub uncertainty: Option<String>,
    /// The Drift pane's selected entry is open in its detail popup (Enter on the pane).
    pub drift_open: bool,
    /// The Tasks view (F7), when open: its text, and its scroll.
    pub tasks: Option<super::tasks::TasksView>,
    pub audit: Option<Audit>,
    pub memory: Option<MemoryBrowser>,
    /// The conversation list (F8).
    pub conversations: Option<ConversationList>,
    /// The conversation new messages go to, once known (`--thread`, a resume, a sent message).
    pub thread: Option<String>,
    pub help: Option<Help>,
    pub setup: Setup,
    pub status: Status,
    pub offset: FixedOffset,
    pub workers: Option<crate::background::WorkerBoard>,
    /// Screen areas from the last `prepare`, for drawing and mouse hit-testing.
    pub areas: Areas,
    /// Set by anything that changes what is on screen; cleared by a render.
    pub dirty: bool,
    /// The message box's text as last handed over ([`App::take_draft`]).
    draft: String,
}

impl App {
    pub fn new(settings: Settings) -> App {
        let status = Status {
            models: settings.models,
            log_file: settings.log_file,
            session_log: settings.session_log,
            pricing: settings.pricing,
            ..Status::default()
        };
        App {
            approval: None,
            keymap: settings.keymap,
            focus: Focus::Input,
            chat: Chat::default(),
            input: Input::default(),
            routing: RoutingPane::default(),
            act: ActPane::default(),
            drift: DriftPane::default(),
            uncertainties: UncertaintiesPane::default(),
            uncertainty: None,
            drift_open: false,
            tasks: None,
            audit: None,
            memory: None,
            conversations: None,
            thread: None,
            help: None,
            setup: Setup::new(settings.places),
            status,
            offset: settings.offset,
            workers: settings.workers,
            areas: Areas::default(),
            dirty: true,
            draft: String::new(),
        }
    }

    /// Where keys go now: the topmost layer, else the focused component.
    pub fn context(&self) -> Context {
        if self.help.is_some() {
            Context::Help
        } else if self.setup.visible() {
            Context::Setup
        } else if let Some(a) = &self.audit {
            if a.detail.is_some() { Context::Detail } else { Context::Audit }
        } else if let Some(m) = &self.memory {
            m.context()
        } else if let Some(l) = &self.conversations {
            l.context()
        } else if self.uncertainty.is_some() {
            Context::Uncertainty
        } else if self.drift_open {
            Context::Drift
        } else if self.tasks.is_some() {
            Context::Tasks
        } else if self.focus == Focus::Input {
            Context::Input
        } else {
            Context::View
        }
    }

    /// Something is in progress (the spinner turns, so the loop keeps ticking).
    pub fn working(&self) -> bool {
        self.status.pending > 0 || self.setup.fetching() || !self.status.resolved
    }

    /// What the spinner says.
    pub fn activity(&self) -> Option<&'static str> {
        if self.setup.fetching() {
            Some("fetching models")
        } else if self.chat.is_streaming() {
            Some("writing")
        } else if self.status.pending > 0 {
            Some("thinking")
        } else if !self.status.resolved {
            Some("starting")
        } else {
            None
        }
    }

    /// Whether the loop should call [`App::tick`] (spinner or a notice to expire).
    pub fn needs_tick(&self) -> bool {
        self.working() || self.status.notice.is_some() || self.setup.fetching()
    }

    /// 100 ms passed.
    pub fn tick(&mut self) {
        if self.status.tick(self.working()) {
            self.dirty = true;
        }
    }

    /// React to a terminal event.
    pub fn on_terminal(&mut self, event: Event) -> Option<Action> {
        match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => {
                self.dirty = true;
                // A tool waiting for the go-ahead takes y/a/n/Esc before anything else.
                if let Some(asked) = &self.approval
                    && let Some(answer) = super::approve::key(key.code)
                {
                    asked.answer(answer);
                    self.approval = None;
                    return None;
                }
                let ctx = self.context();
                if let Some(cmd) = self.keymap.command(&key, ctx) {
                    return self.run(cmd, ctx);
                }
                let plain = !key.modifiers.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
                match (ctx, key.code) {
                    (Context::MemorySearch, KeyCode::Char(c)) if plain => return self.type_search(&c.to_string()),
                    (Context::ConversationSearch, KeyCode::Char(c)) if plain => {
                        return self.type_conversation_search(&c.to_string());
                    }
                    (Context::Input, KeyCode::Char(c)) if plain => {
                        let mut b = [0u8; 4];
                        self.input.insert(c.encode_utf8(&mut b));
                    }
                    // Typing while a pane has focus goes to the message box.
                    (Context::View, KeyCode::Char(c)) if plain => {
                        self.focus = Focus::Input;
                        let mut b = [0u8; 4];
                        self.input.insert(c.encode_utf8(&mut b));
                    }
                    _ => {}
                }
                None
            }
            Event::Paste(text) => {
                if self.context() == Context::MemorySearch {
                    self.dirty = true;
                    return self.type_search(text.lines().next().unwrap_or_default());
                }
                if self.context() == Context::ConversationSearch {
                    self.dirty = true;
                    return self.type_conversation_search(text.lines().next().unwrap_or_default());
                }
                if matches!(self.context(), Context::Input | Context::View) {
                    self.focus = Focus::Input;
                    self.input.insert(&text);
                    self.dirty = true;
                }
                None
            }
            Event::Mouse(m) => {
                let at = Position { x: m.column, y: m.row };
                match m.kind {
                    MouseEventKind::ScrollUp => self.wheel(at, -3),
                    MouseEventKind::ScrollDown => self.wheel(at, 3),
                    MouseEventKind::Down(MouseButton::Left) => self.click(at),
                    _ => return None,
                }
                self.dirty = true;
                if m.kind == MouseEventKind::ScrollUp { self.earlier_chat() } else { None }
            }
            Event::Resize(..) => {
                self.dirty = true;
                None
            }
            _ => None,
        }
    }

    fn run(&mut self, cmd: Command, ctx: Context) -> Option<Action> {
        if ctx.is_memory()
            && let Some(m) = &mut self.memory
        {
            match m.command(cmd) {
                memory::Reply::Ignored => {}
                reply => return self.memory_reply(reply),
            }
        }
        if ctx.is_conversations()
            && let Some(l) = &mut self.conversations
        {
            match l.command(cmd) {
                super::conversations::Reply::Ignored => {}
                reply => return self.conversations_reply(reply),
            }
        }
        match cmd {
            Command::Quit => return Some(Action::Quit),
            Command::Help => {
                self.help = if self.help.is_some() { None } else { Some(self.help_with_files()) };
            }
            Command::Audit => return self.toggle_audit(),
            Command::Memory => return self.toggle_memory(),
            Command::Conversations => return self.toggle_conversations(),
            Command::ShowLog => self.status.show_log = !self.status.show_log,
            Command::MarkUnsure => self.chat.hide_unsure = !self.chat.hide_unsure,
            Command::FocusNext => self.cycle_focus(Focus::next),
            Command::FocusPrev => self.cycle_focus(Focus::prev),
            Command::Stop => {
                if self.chat.is_streaming() || self.status.pending > 0 {
                    return Some(Action::CancelReply);
                }
                self.status.notice = None;
                self.status.show_log = false;
            }
            Command::Close => match ctx {
                Context::Help => self.help = None,
                Context::Uncertainty => self.uncertainty = None,
                Context::Drift => self.drift_open = false,
                Context::Tasks => self.tasks = None,
                Context::Setup => self.setup.dismiss(),
                Context::Audit | Context::Detail => {
                    if let Some(a) = &mut self.audit
                        && a.back() == Some(audit::Request::Close)
                    {
                        self.audit = None;
                    }
                }
                _ => {}
            },
            Command::Fetch => return self.setup.fetch().then_some(Action::FetchModels),
            Command::DriftNow => return Some(Action::DriftNow),
            Command::CopyReply | Command::CopyCode => return self.copy(cmd == Command::CopyCode),
            Command::Tasks if self.tasks.is_some() => self.tasks = None,
            Command::Tasks | Command::Reload if cmd == Command::Tasks || ctx == Context::Tasks => {
                self.tasks.get_or_insert_with(super::tasks::TasksView::default);
                return Some(Action::LoadTasks);
            }
            Command::Up | Command::Down if ctx == Context::Tasks => {
                if let Some(t) = &mut self.tasks {
                    t.scroll(if cmd == Command::Up { -1 } else { 1 });
                }
            }
            Command::ResolveNew | Command::ResolveBoth | Command::ResolveForget if ctx == Context::Uncertainty => {
                let id = self.uncertainty.take()?;
                let choice = match cmd {
                    Command::ResolveNew => 0,
                    Command::ResolveBoth => 1,
                    _ => 2,
                };
                return Some(Action::ResolveUncertainty { id, choice });
            }
            Command::Open if ctx == Context::View && self.focus == Focus::Uncertainties => {
                self.uncertainty = self.uncertainties.selected_item().map(|u| u.id.clone());
            }
            Command::Open if ctx == Context::View && self.focus == Focus::Drift => {
                self.drift_open = self.drift.has_selection();
            }
            Command::Up | Command::Down if ctx == Context::View && self.focus == Focus::Drift => {
                self.drift.select(if cmd == Command::Up { -1 } else { 1 });
            }
            Command::Up | Command::Down if ctx == Context::View && self.focus == Focus::Uncertainties => {
                self.uncertainties.select(if cmd == Command::Up { -1 } else { 1 });
            }
            Command::PageUp | Command::PageDown | Command::Up | Command::Down | Command::Top | Command::Bottom => {
                self.scroll(cmd, ctx);
                return self.earlier_chat();
            }
            Command::Open
            | Command::Filter
            | Command::Reload
            | Command::Left
            | Command::Right
            | Command::NextLayer
            | Command::PrevLayer
                if matches!(ctx, Context::Audit | Context::Detail) =>
            {
                let a = self.audit.as_mut()?;
                let req = match cmd {
                    Command::Open => a.open_selected(),
                    Command::Filter => Some(a.cycle_filter()),
                    Command::Reload => Some(a.reload()),
                    Command::NextLayer | Command::PrevLayer => a.switch_tab(),
                    Command::Left => a.step(-1),
                    _ => a.step(1),
                };
                return match req? {
                    audit::Request::Load(m) => Some(Action::LoadAudit(m)),
                    audit::Request::Detail(id) => Some(Action::LoadDecision(id)),
                    audit::Request::Stats => Some(Action::LoadRoutingStats),
                    audit::Request::Close => {
                        self.audit = None;
                        None
                    }
                };
            }
            _ if ctx == Context::Input => {
                if let Some(text) = self.input.handle(cmd) {
                    self.chat.to_bottom();
                    return Some(Action::Send(text));
                }
            }
            _ => {}
        }
        None
    }

    /// Tab / Shift-Tab, skipping panes a narrow screen hides.
    fn cycle_focus(&mut self, step: fn(Focus) -> Focus) {
        self.focus = step(self.focus);
        if self.areas.routing.width == 0 && self.areas.screen.width > 0 {
            while !matches!(self.focus, Focus::Input | Focus::Chat) {
                self.focus = step(self.focus);
            }
        }
    }

    /// F2: open the audit (asking for its rows) or close it.
    fn toggle_audit(&mut self) -> Option<Action> {
        // Under the first-run screen it could not be seen or used.
        if self.audit.take().is_some() || self.setup.visible() {
            return None;
        }
        let mut audit = Audit::open(None);
        audit.reflection_off = self.status.models.iter().any(|m| m.role == crate::config::Role::Strong && m.builtin);
        let filter = audit.filter;
        self.audit = Some(audit);
        Some(Action::LoadAudit(filter))
    }

    /// Help lists this session's files under the keys (they used to have only a key of their own).
    fn help_with_files(&self) -> Help {
        let s = &self.status;
        let files = [("log", &s.log_file), ("session", &s.session_log)];
        let mut help =
            Help::with_files(files.iter().filter(|(_, p)| !p.is_empty()).map(|(k, p)| format!("{k:<8} {p}")).collect());
        if let Some(board) = &self.workers {
            let now = crate::store::now_ts();
            help.workers = crate::background::StatusReport::from_board(&board.snapshot(), now).rows();
        }
        help
    }

    /// F3: open the memory browser (asking for its first layer) or close it.
    fn toggle_memory(&mut self) -> Option<Action> {
        if self.memory.take().is_some() || self.setup.visible() {
            return None;
        }
        self.audit = None;
        let (browser, load) = MemoryBrowser::open();
        self.memory = Some(browser);
        self.memory_reply(load)
    }

    fn memory_reply(&mut self, reply: memory::Reply) -> Option<Action> {
        match reply {
            memory::Reply::Ignored | memory::Reply::Done => None,
            memory::Reply::Close => {
                self.memory = None;
                None
            }
            memory::Reply::Load { layer, search } => Some(Action::LoadMemory { layer, search }),
            memory::Reply::Forget(id) => Some(Action::ForgetMemory(id)),
        }
    }

    fn type_search(&mut self, text: &str) -> Option<Action> {
        let reply = self.memory.as_mut()?.type_text(text);
        self.memory_reply(reply)
    }

    /// Scroll whatever the context points at.
    fn scroll(&mut self, cmd: Command, ctx: Context) {
        match ctx {
            Context::Help => {
                if let Some(h) = &mut self.help {
                    scroll::apply(&mut h.scroll, cmd);
                }
            }
            Context::Audit | Context::Detail => {
                if let Some(a) = &mut self.audit {
                    scroll::apply(a, cmd);
                }
            }
            // The memory browser scrolls itself (see `run`).
            Context::Setup
            | Context::Memory
            | Context::MemoryDetail
            | Context::MemorySearch
            | Context::MemoryConfirm
            | Context::Conversations
            | Context::ConversationSearch
            | Context::ConversationConfirm
            | Context::Uncertainty
            | Context::Drift => {}
            Context::Tasks => {
                if let Some(t) = &mut self.tasks {
                    let page = 10;
                    match cmd {
                        Command::PageUp => t.scroll(-page),
                        Command::PageDown => t.scroll(page),
                        Command::Top => t.top = 0,
                        _ => {}
                    }
                }
            }
            // PageUp/PageDown from the message box scroll the chat.
            Context::Input => self.scroll_focus(Focus::Chat, cmd),
            Context::View => self.scroll_focus(self.focus, cmd),
        }
    }

    fn scroll_focus(&mut self, focus: Focus, cmd: Command) {
        if focus == Focus::Chat || focus == Focus::Input {
            scroll::apply(&mut self.chat, cmd);
            return;
        }
        let s = match focus {
            Focus::Routing => &mut self.routing.scroll,
            Focus::Act => &mut self.act.scroll,
            Focus::Drift => &mut self.drift.scroll,
            _ => &mut self.uncertainties.scroll,
        };
        scroll::apply(s, cmd);
    }

    /// The chat was scrolled to the top of what it holds: read the page before it.
    fn earlier_chat(&mut self) -> Option<Action> {
        let thread_id = self.thread.clone()?;
        if !matches!(self.context(), Context::Input | Context::View) {
            return None;
        }
        self.chat.wants_earlier().map(|before| Action::LoadEarlierChat { thread_id, before })
    }

    /// The component under the mouse.
    fn focus_at(&self, at: Position) -> Option<Focus> {
        let a = &self.areas;
        [
            (a.chat, Focus::Chat),
            (a.input, Focus::Input),
            (a.routing, Focus::Routing),
            (a.act, Focus::Act),
            (a.drift, Focus::Drift),
            (a.uncertainties, Focus::Uncertainties),
        ]
        .into_iter()
        .find(|(r, _)| r.contains(at))
        .map(|(_, f)| f)
    }

    fn wheel(&mut self, at: Position, rows: i32) {
        let cmd = if rows < 0 { Command::Up } else { Command::Down };
        for _ in 0..rows.unsigned_abs() {
            match self.context() {
                ctx @ (Context::Help | Context::Audit | Context::Detail) => self.scroll(cmd, ctx),
                ctx if ctx.is_memory() => {
                    if let Some(m) = &mut self.memory {
                        m.command(cmd);
                    }
                }
                ctx if ctx.is_conversations() => {
                    if let Some(l) = &mut self.conversations {
                        l.command(cmd);
                    }
                }
                Context::Setup => {}
                _ => {
                    if let Some(f) = self.focus_at(at) {
                        self.scroll_focus(if f == Focus::Input { Focus::Chat } else { f }, cmd);
                    }
                }
            }
        }
    }

    fn click(&mut self, at: Position) {
        if matches!(self.context(), Context::Input | Context::View)
            && let Some(f) = self.focus_at(at)
        {
            self.focus = f;
        }
    }

    /// React to an engine event.
    pub fn on_engine(&mut self, event: &Stamped) {
        let at = event.ts;
        match &event.event {
            EngineEvent::UserMessage { thread_id, exchange_id, text } => {
                self.thread = Some(thread_id.clone());
                self.chat.push_user(exchange_id, text, at);
                self.status.pending += 1;
            }
            EngineEvent::Notice { level, message } => self.status.notice(*level, message),
            EngineEvent::Routed { exchange_id, mode, router, topic, fallbacks, graph, .. } => {
                self.chat.set_mode(exchange_id, *mode);
                if *mode == Mode::Act {
                    self.act.start(exchange_id, &topic.name);
                }
                self.routing.record(*mode, router.tiebreaker_candidates.is_some());
                self.routing.latest = Some(Decision {
                    exchange_id: exchange_id.clone(),
                    mode: *mode,
                    router: (**router).clone(),
                    topic: topic.clone(),
                    fallbacks: fallbacks.clone(),
                    reply_source: None,
                    regulator: None,
                    graph: graph.as_deref().cloned(),
                });
                self.routing.scroll.to_top();
            }
            EngineEvent::ReplyChunk { exchange_id, text } => self.chat.chunk(exchange_id, text, at),
            EngineEvent::ReplyDone { exchange_id, mode, text, cancelled, failed, reply_source, .. } => {
                self.chat.done(exchange_id, *mode, text, *cancelled, failed.as_deref(), at);
                if let Some(d) = self.routing.latest.as_mut().filter(|d| d.exchange_id == *exchange_id) {
                    d.reply_source = *reply_source;
                }
                self.status.pending = self.status.pending.saturating_sub(1);
                // The turn's routing decision is committed now (not yet at `Routed`).
                if let Some(a) = &mut self.audit {
                    a.stale = true;
                }
            }
            EngineEvent::IdentityLearned { name } => {
                self.status.notice(NoticeLevel::Info, &format!("Noted: your name is {name}."));
            }
            EngineEvent::ReminderFired { message, due_at, late, .. } => {
                let when = if *late { format!("was due {due_at}") } else { format!("due {due_at}") };
                self.chat.push(ChatRole::System, &format!("⏰ Reminder: {message} ({when})"), at);
            }
            EngineEvent::LlmCost { call_id, provider, tokens_in, tokens_out, wall_ms, .. } => {
                self.status.cost(call_id, provider, *tokens_in, *tokens_out, *wall_ms);
            }
            EngineEvent::Regulated { exchange_id, report } => {
                if let Some(d) = self.routing.latest.as_mut().filter(|d| d.exchange_id == *exchange_id) {
                    d.regulator = Some(report.clone());
                }
                self.chat.set_regulator(exchange_id, report);
            }
            // Priced when its cost arrives (see `Status::cost`).
            EngineEvent::LlmStart { call_id, provider, model, .. } => {
                self.status.call_started(call_id, provider, model);
                return;
            }
            EngineEvent::LlmFailed { call_id, will_retry: false, .. } => {
                self.status.call_failed(call_id);
                return;
            }
            // Streamed tokens arrive as ReplyChunk; failures worth telling come as notices.
            EngineEvent::LlmToken { .. }
            | EngineEvent::LlmComplete { .. }
            | EngineEvent::LlmEmbedded { .. }
            | EngineEvent::LlmFailed { .. } => return,
            EngineEvent::ModelsResolved { roles, missing_builtin, missing_builtin_bytes } => {
                self.status.models = roles.clone();
                self.status.resolved = true;
                self.setup.resolved(missing_builtin, *missing_builtin_bytes);
            }
            EngineEvent::ModelFetch { step, done, total, finished, error } => {
                self.setup.progress(step, *done, *total, *finished, error.as_deref());
                if *finished && error.is_none() {
                    self.status.notice(NoticeLevel::Info, "built-in models ready");
                }
            }
            EngineEvent::Reembed { done, total, .. } => {
                let text = if done < total {
                    format!("re-embedding memories {done}/{total}")
                } else {
                    format!("re-embedded {total} memories for the new embedding model")
                };
                self.status.notice(NoticeLevel::Info, &text);
            }
            EngineEvent::ActIteration { exchange_id, iteration, actions, elapsed_ms, fatigue, budget, termination } => {
                self.act.iteration(
                    exchange_id,
                    Iteration {
                        n: *iteration,
                        actions: actions.clone(),
                        elapsed_ms: *elapsed_ms,
                        fatigue: *fatigue,
                        budget: *budget,
                        termination: termination.clone(),
                    },
                );
            }
            EngineEvent::DriftThought { thought } => self.drift.thought(thought),
            EngineEvent::DriftCycle { cycle } => self.drift.cycle(cycle),
            EngineEvent::TaskMessage { text, .. } => self.chat.push(ChatRole::Assistant, text, at),
            EngineEvent::RouteJudged { mode, label, cue, misroute, .. } => {
                self.routing.judged(Judged {
                    mode: *mode,
                    label: label.clone(),
                    cue: cue.clone(),
                    misroute: *misroute,
                });
            }
            EngineEvent::RouterWeightsChanged { version, author, reason } => {
                self.status.notice(NoticeLevel::Info, &format!("router weights v{version} by {author}: {reason}"));
            }
            EngineEvent::UncertaintyChanged { item } => {
                self.uncertainties.now = self.uncertainties.now.max(at.timestamp());
                self.uncertainties.changed(item);
            }
            EngineEvent::TurnFailed { error, .. } => {
                self.chat.push(
                    ChatRole::System,
                    &format!("No reply: {error}. Your message is saved; send it again."),
                    at,
                );
                self.status.pending = self.status.pending.saturating_sub(1);
            }
            EngineEvent::Forgotten { exchanges, .. } => {
                self.chat.forget(exchanges);
                // The panes' topic names may be made of the forgotten words.
                self.routing.latest = None;
                self.act.forget_topic();
            }
            EngineEvent::MemoryForgotten { id, error: None } => {
                if let Some(m) = &mut self.memory {
                    m.forgotten(*id);
                }
                self.status.notice(NoticeLevel::Info, &format!("Forgot {id}."));
            }
            EngineEvent::MemoryForgotten { id, error: Some(e) } => {
                self.status.notice(NoticeLevel::Error, &format!("Could not forget {id}: {e}"));
            }
        }
        self.dirty = true;
    }

    /// An answer to one of the app's database reads (see [`super::query`]).
    pub fn on_view(&mut self, answer: ViewAnswer) {
        match answer {
            ViewAnswer::Audit { mode, rows } => {
                if let Some(a) = &mut self.audit {
                    a.loaded(mode, &rows);
                }
            }
            ViewAnswer::RoutingStats { stats } => {
                if let Some(a) = &mut self.audit {
                    a.stats_loaded(*stats);
                }
            }
            ViewAnswer::AuditDetail { id, record } => {
                if let Some(a) = &mut self.audit {
                    a.detail_loaded(&id, record.as_deref());
                }
            }
            ViewAnswer::Memory { layer, search, rows } => {
                if let Some(m) = &mut self.memory {
                    m.loaded(layer, search.as_deref(), &rows);
                }
            }
            ViewAnswer::Conversations { search, rows } => {
                if let Some(l) = &mut self.conversations {
                    l.loaded(search.as_deref(), &rows);
                }
            }
            ViewAnswer::Conversation { thread_id, rows } => self.show_conversation(Some(thread_id), &rows),
            // An answer for a conversation no longer shown (the user switched) is dropped.
            ViewAnswer::EarlierChat { thread_id, before, rows, earlier } => {
                if self.thread.as_deref() == Some(thread_id.as_str()) {
                    self.chat.prepend(&rows, earlier, &before);
                }
            }
            ViewAnswer::Drift { thoughts } => self.drift.loaded(&thoughts),
            ViewAnswer::Approval(asked) => self.approval = Some(asked),
            ViewAnswer::Uncertainties { items } => self.uncertainties.loaded(&items),
            ViewAnswer::MemoryTexts { texts } => self.uncertainties.texts_loaded(&texts),
            ViewAnswer::Tasks { tasks } => {
                if let Some(t) = &mut self.tasks {
                    t.loaded(tasks);
                }
            }
            ViewAnswer::Failed { what, error } => {
                self.status.notice(NoticeLevel::Error, &format!("could not read {what}: {error}"));
            }
        }
        self.dirty = true;
    }

    /// The UI fell behind the bus and `missed` events were dropped.
    pub fn on_lagged(&mut self, missed: u64) {
        if self.chat.is_streaming() {
            self.chat.gap = true;
        }
        tracing::warn!(missed, "UI fell behind the event bus");
        self.dirty = true;
    }

    /// Lay the screen out and bring caches up to date for `area`; `render` then only draws.
    pub fn prepare(&mut self, area: Rect) {
        self.areas = view::layout(self, area);
    }

    /// An audit reload is due (decisions arrived while it was open): returns the action.
    /// The Uncertainties pane's memories whose text has not been read yet.
    pub fn take_memory_texts(&mut self) -> Option<Action> {
        let missing = self.uncertainties.take_missing();
        (!missing.is_empty()).then_some(Action::LoadMemoryTexts(missing))
    }

    /// The message box's text, when it changed since the last call (a sent message leaves it
    /// empty): the worker hands it to the engine once typing pauses.
    pub fn take_draft(&mut self) -> Option<Action> {
        let text = self.input.text().trim();
        if text == self.draft {
            return None;
        }
        self.draft = text.to_string();
        Some(Action::Draft(self.draft.clone()))
    }

    pub fn take_audit_refresh(&mut self) -> Option<Action> {
        let a = self.audit.as_mut()?;
        if a.stale && a.detail.is_none() {
            a.stale = false;
            return Some(match a.reload() {
                audit::Request::Stats => Action::LoadRoutingStats,
                _ => Action::LoadAudit(a.filter),
            });
        }
        None
    }
}
