//! The memory browser (F3): what the assistant remembers, one layer per tab, searchable, each
//! memory with its reliability and where it came from, and a way to make it forget one.
//! Rows come from the database through the worker (`Action::LoadMemory`) and forgetting goes
//! the same way (`Action::ForgetMemory`); the answers arrive as events, never on the draw path.

use super::keymap::{Command, Context};
use super::panes::Scroll;
use crate::store::{MemoryId, MemoryLayer, MemoryRow};

mod draw;

/// Memories listed per load: a browser, not an export (`chalie-tui memory --json` is that).
pub const LIMIT: usize = 200;

/// What the browser asks of the app after a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Not a command the browser uses here: the app's global handling applies.
    Ignored,
    Done,
    Close,
    Load {
        layer: MemoryLayer,
        search: Option<String>,
    },
    Forget(MemoryId),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    List,
    Search,
    Detail,
    /// Asking before forgetting; `from_detail` says where No returns to.
    Confirm {
        id: MemoryId,
        from_detail: bool,
    },
}

#[derive(Debug)]
pub struct MemoryBrowser {
    pub layer: MemoryLayer,
    pub search: String,
    pub rows: Vec<MemoryRow>,
    pub loading: bool,
    mode: Mode,
    selected: usize,
    offset: usize,
    visible: usize,
    detail: Scroll,
}

impl MemoryBrowser {
    /// A browser on its first layer, with the request for that layer's rows.
    pub fn open() -> (MemoryBrowser, Reply) {
        let mut b = MemoryBrowser {
            layer: MemoryLayer::ALL[0],
            search: String::new(),
            rows: Vec::new(),
            loading: true,
            mode: Mode::List,
            selected: 0,
            offset: 0,
            visible: 1,
            detail: Scroll::default(),
        };
        let load = b.load();
        (b, load)
    }

    pub fn context(&self) -> Context {
        match self.mode {
            Mode::List => Context::Memory,
            Mode::Search => Context::MemorySearch,
            Mode::Detail => Context::MemoryDetail,
            Mode::Confirm { .. } => Context::MemoryConfirm,
        }
    }

    fn query(&self) -> Option<String> {
        let q = self.search.trim();
        (!q.is_empty()).then(|| q.to_string())
    }

    fn load(&mut self) -> Reply {
        self.loading = true;
        Reply::Load { layer: self.layer, search: self.query() }
    }

    pub fn current(&self) -> Option<&MemoryRow> {
        self.rows.get(self.selected)
    }

    /// Carry out a command in the browser's current mode.
    pub fn command(&mut self, cmd: Command) -> Reply {
        match (self.mode, cmd) {
            (Mode::Confirm { id, .. }, Command::Confirm) => {
                self.mode = Mode::List;
                Reply::Forget(id)
            }
            (Mode::Confirm { from_detail, .. }, Command::Close) => {
                self.mode = if from_detail { Mode::Detail } else { Mode::List };
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
            (Mode::Detail, Command::Close) => {
                self.mode = Mode::List;
                Reply::Done
            }
            (Mode::Detail, Command::Up | Command::Down | Command::PageUp | Command::PageDown)
            | (Mode::Detail, Command::Top | Command::Bottom) => {
                super::scroll::apply(&mut self.detail, cmd);
                Reply::Done
            }
            (Mode::List | Mode::Detail, Command::Forget) => match self.current() {
                Some(row) => {
                    self.mode = Mode::Confirm { id: row.id, from_detail: self.mode == Mode::Detail };
                    Reply::Done
                }
                None => Reply::Done,
            },
            (Mode::List, Command::Close) => Reply::Close,
            (Mode::List, Command::Up) => self.move_by(-1),
            (Mode::List, Command::Down) => self.move_by(1),
            (Mode::List, Command::PageUp) => self.move_by(-(self.page() as isize)),
            (Mode::List, Command::PageDown) => self.move_by(self.page() as isize),
            (Mode::List, Command::Top) => self.move_by(isize::MIN / 2),
            (Mode::List, Command::Bottom) => self.move_by(isize::MAX / 2),
            (Mode::List, Command::NextLayer) => self.switch(1),
            (Mode::List, Command::PrevLayer) => self.switch(MemoryLayer::ALL.len() - 1),
            (Mode::List, Command::Search) => {
                self.mode = Mode::Search;
                Reply::Done
            }
            (Mode::List, Command::Open) => {
                if self.current().is_some() {
                    self.detail = Scroll::default();
                    self.mode = Mode::Detail;
                }
                Reply::Done
            }
            (Mode::List, Command::Reload) => self.load(),
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

    fn switch(&mut self, step: usize) -> Reply {
        let i = MemoryLayer::ALL.iter().position(|l| *l == self.layer).unwrap_or(0);
        self.layer = MemoryLayer::ALL[(i + step) % MemoryLayer::ALL.len()];
        self.rows.clear();
        self.selected = 0;
        self.offset = 0;
        self.load()
    }

    /// Rows arrived; an answer to a layer or search the user has since left is dropped.
    pub fn loaded(&mut self, layer: MemoryLayer, search: Option<&str>, rows: &[MemoryRow]) {
        if layer != self.layer || search != self.query().as_deref() {
            return;
        }
        let keep = self.current().map(|r| r.id);
        self.rows = rows.to_vec();
        self.loading = false;
        self.selected = keep.and_then(|id| self.rows.iter().position(|r| r.id == id)).unwrap_or(0);
        if self.mode == Mode::Detail && self.current().map(|r| r.id) != keep {
            self.mode = Mode::List;
        }
    }

    /// A forget succeeded: the memory leaves the list (and its detail view, if open).
    pub fn forgotten(&mut self, id: MemoryId) {
        let Some(i) = self.rows.iter().position(|r| r.id == id) else { return };
        self.rows.remove(i);
        if self.selected >= self.rows.len() {
            self.selected = self.rows.len().saturating_sub(1);
        }
        if self.mode == Mode::Detail {
            self.mode = Mode::List;
        }
    }
}
