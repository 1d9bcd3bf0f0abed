//! The conversation list (F8): the conversations to come back to, newest first, with their
//! title (first topic, else the start of the first message), last message time and size.
//! Enter resumes one in the running TUI (as `--thread ID` does at start), `n` starts a new
//! one, `/` searches every message, `d` deletes one after asking — a forget of the whole
//! thread (`memory::forget::conversation`). Rows and the resumed history come through the
//! popups' reads (`super::query`); nothing here touches the database.

use super::app::{Action, App};
use super::chat::Chat;
use super::keymap::{Command, Context};
use crate::store::{ChatMessage, Conversation};

mod draw;

/// Conversations listed per load (`chalie-tui conversations --limit` reaches further back).
pub const LIMIT: usize = 200;

/// What the list asks of the app after a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Not a command the list uses here: the app's global handling applies.
    Ignored,
    Done,
    Close,
    Load(Option<String>),
    Resume(String),
    New,
    Delete(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Mode {
    List,
    Search,
    Confirm(String),
}

#[derive(Debug)]
pub struct ConversationList {
    pub rows: Vec<Conversation>,
    pub search: String,
    pub loading: bool,
    mode: Mode,
    selected: usize,
    offset: usize,
    visible: usize,
}

impl ConversationList {
    /// A list with the request for its rows.
    pub fn open() -> (ConversationList, Reply) {
        let mut l = ConversationList {
            rows: Vec::new(),
            search: String::new(),
            loading: true,
            mode: Mode::List,
            selected: 0,
            offset: 0,
            visible: 1,
        };
        let load = l.load();
        (l, load)
    }

    pub fn context(&self) -> Context {
        match self.mode {
            Mode::List => Context::Conversations,
            Mode::Search => Context::ConversationSearch,
            Mode::Confirm(_) => Context::ConversationConfirm,
        }
    }

    fn query(&self) -> Option<String> {
        let q = self.search.trim();
        (!q.is_empty()).then(|| q.to_string())
    }

    fn load(&mut self) -> Reply {
        self.loading = true;
        Reply::Load(self.query())
    }

    pub fn current(&self) -> Option<&Conversation> {
        self.rows.get(self.selected)
    }

    /// Carry out a command in the list's current mode.
    pub fn command(&mut self, cmd: Command) -> Reply {
        match (&self.mode, cmd) {
            (Mode::Confirm(id), Command::Confirm) => {
                let id = id.clone();
                self.mode = Mode::List;
                self.rows.retain(|r| r.thread_id != id);
                self.selected = self.selected.min(self.rows.len().saturating_sub(1));
                Reply::Delete(id)
            }
            (Mode::Confirm(_), Command::Close) => {
                self.mode = Mode::List;
                Reply::Done
            }
            (Mode::Search, Command::DeleteBack) => {
                self.search.pop();
                self.load()
            }
            (Mode::Search, Command::ClearInput) => {
                self.search.clear();
                self.load()
            }
            (Mode::Search, Command::Open) => {
                self.mode = Mode::List;
                Reply::Done
            }
            (Mode::Search, Command::Close) => {
                self.mode = Mode::List;
                if self.search.is_empty() {
                    return Reply::Done;
                }
                self.search.clear();
                self.load()
            }
            (Mode::List, Command::Close) => Reply::Close,
            (Mode::List, Command::Up) => self.move_by(-1),
            (Mode::List, Command::Down) => self.move_by(1),
            (Mode::List, Command::PageUp) => self.move_by(-(self.page() as isize)),
            (Mode::List, Command::PageDown) => self.move_by(self.page() as isize),
            (Mode::List, Command::Top) => self.move_by(isize::MIN / 2),
            (Mode::List, Command::Bottom) => self.move_by(isize::MAX / 2),
            (Mode::List, Command::Search) => {
                self.mode = Mode::Search;
                Reply::Done
            }
            (Mode::List, Command::Open) => self.current().map_or(Reply::Done, |c| Reply::Resume(c.thread_id.clone())),
            (Mode::List, Command::NewConversation) => Reply::New,
            (Mode::List, Command::Forget) => {
                if let Some(c) = self.current() {
                    self.mode = Mode::Confirm(c.thread_id.clone());
                }
                Reply::Done
            }
            _ => Reply::Ignored,
        }
    }

    /// Text typed into the search box (the list follows each keystroke).
    pub fn type_text(&mut self, text: &str) -> Reply {
        if self.mode != Mode::Search {
            return Reply::Ignored;
        }
        self.search.extend(text.chars().filter(|c| !c.is_control()));
        self.selected = 0;
        self.load()
    }

    fn page(&self) -> usize {
        self.visible.saturating_sub(1).max(1)
    }

    fn move_by(&mut self, by: isize) -> Reply {
        let last = self.rows.len().saturating_sub(1);
        self.selected = self.selected.saturating_add_signed(by).min(last);
        Reply::Done
    }

    /// Rows arrived; an answer to a search the user has since changed is dropped.
    pub fn loaded(&mut self, search: Option<&str>, rows: &[Conversation]) {
        if search != self.query().as_deref() {
            return;
        }
        let keep = self.current().map(|c| c.thread_id.clone());
        self.rows = rows.to_vec();
        self.loading = false;
        self.selected = keep.and_then(|id| self.rows.iter().position(|r| r.thread_id == id)).unwrap_or(0);
    }
}

/// The app's side: opening the list and carrying out its replies.
impl App {
    /// F8: open the list (asking for its rows) or close it.
    pub(super) fn toggle_conversations(&mut self) -> Option<Action> {
        if self.conversations.take().is_some() || self.setup.visible() {
            return None;
        }
        self.audit = None;
        self.memory = None;
        let (list, load) = ConversationList::open();
        self.conversations = Some(list);
        self.conversations_reply(load)
    }

    pub(super) fn conversations_reply(&mut self, reply: Reply) -> Option<Action> {
        match reply {
            Reply::Ignored | Reply::Done => None,
            Reply::Close => {
                self.conversations = None;
                None
            }
            Reply::Load(search) => Some(Action::LoadConversations(search)),
            Reply::Resume(id) => {
                self.conversations = None;
                Some(Action::ResumeConversation(id))
            }
            Reply::New => {
                self.conversations = None;
                self.show_conversation(None, &[]);
                Some(Action::NewConversation)
            }
            Reply::Delete(id) => {
                if self.thread.as_deref() == Some(id.as_str()) {
                    self.show_conversation(None, &[]);
                }
                Some(Action::ForgetConversation(id))
            }
        }
    }

    pub(super) fn type_conversation_search(&mut self, text: &str) -> Option<Action> {
        let reply = self.conversations.as_mut()?.type_text(text);
        self.conversations_reply(reply)
    }

    /// The chat pane shows `rows` of `thread` (`None`: a new conversation, empty).
    pub(super) fn show_conversation(&mut self, thread: Option<String>, rows: &[ChatMessage]) {
        let hide_unsure = self.chat.hide_unsure;
        self.chat = Chat::default();
        self.chat.hide_unsure = hide_unsure;
        self.chat.load(rows, rows.len() >= super::RESUMED_MESSAGES);
        self.thread = thread;
        self.focus = super::keymap::Focus::Input;
    }
}
