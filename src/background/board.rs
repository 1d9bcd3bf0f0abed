//! What every background task last did, shared with whoever shows it (the F1 popup, the
//! status report). Writers are the two loops of [`super::worker`]; readers take a copy.

use super::registry::WorkerId;
use std::sync::{Arc, Mutex, MutexGuard};

/// Where a task is in its loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunState {
    /// Registered but not started (the memory workers wait for the engine's models).
    NotStarted,
    /// Waiting for work or for its timer.
    Idle,
    /// Running a job or a pass.
    Busy,
    Stopped,
}

impl RunState {
    pub const fn as_str(self) -> &'static str {
        match self {
            RunState::NotStarted => "not started",
            RunState::Idle => "idle",
            RunState::Busy => "busy",
            RunState::Stopped => "stopped",
        }
    }
}

/// One task's line.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkerStatus {
    pub id: WorkerId,
    pub state: RunState,
    /// When a job or pass last finished, successfully or not (unix seconds).
    pub last_run: Option<i64>,
    pub last_error: Option<String>,
    /// Jobs waiting or running on its queue when last counted (queue workers only).
    pub depth: Option<i64>,
    /// Jobs or passes finished since start.
    pub runs: u64,
}

impl WorkerStatus {
    fn new(id: WorkerId) -> WorkerStatus {
        WorkerStatus { id, state: RunState::NotStarted, last_run: None, last_error: None, depth: None, runs: 0 }
    }
}

/// Every task's status, one line per [`WorkerId`] whether started or not. Cloning shares it.
#[derive(Debug, Clone)]
pub struct WorkerBoard(Arc<Mutex<Vec<WorkerStatus>>>);

impl Default for WorkerBoard {
    fn default() -> Self {
        WorkerBoard(Arc::new(Mutex::new(WorkerId::ALL.into_iter().map(WorkerStatus::new).collect())))
    }
}

impl WorkerBoard {
    pub fn new() -> WorkerBoard {
        WorkerBoard::default()
    }

    /// A copy of every line, in [`WorkerId::ALL`] order.
    pub fn snapshot(&self) -> Vec<WorkerStatus> {
        self.lock().clone()
    }

    /// The writing end for one task.
    pub fn slot(&self, id: WorkerId) -> Slot {
        Slot { board: self.clone(), id }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<WorkerStatus>> {
        // A panic while holding the lock leaves plain data behind; keep showing it.
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn update(&self, id: WorkerId, f: impl FnOnce(&mut WorkerStatus)) {
        if let Some(s) = self.lock().iter_mut().find(|s| s.id == id) {
            f(s);
        }
    }
}

/// One task's writing end of the board.
#[derive(Debug, Clone)]
pub struct Slot {
    board: WorkerBoard,
    id: WorkerId,
}

impl Slot {
    pub fn id(&self) -> WorkerId {
        self.id
    }

    pub fn set_state(&self, state: RunState) {
        self.board.update(self.id, |s| s.state = state);
    }

    /// A job or pass finished at `now`; `error` is kept until the next one that fails.
    pub fn ran(&self, now: i64, error: Option<String>) {
        self.board.update(self.id, |s| {
            s.last_run = Some(now);
            s.runs += 1;
            if error.is_some() {
                s.last_error = error;
            }
        });
    }

    /// An error outside a job (the queue could not be read): shown, but not a run.
    pub fn error(&self, error: String) {
        self.board.update(self.id, |s| s.last_error = Some(error));
    }

    pub fn set_depth(&self, depth: i64) {
        self.board.update(self.id, |s| s.depth = Some(depth));
    }
}
