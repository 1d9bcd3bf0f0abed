//! The one way a task comes into being (docs/cognition.md §17.1), shared by the chat skill and
//! drift's PLAN action so both obey the same merge rule and open-task limit.

use super::{EXPIRY_S, MAX_OPEN, duplicate_of};
use crate::store::{NewTask, StoreError, TasksRepo};
use crate::vocab::tasks::TaskState;
use rusqlite::Connection;

/// What a request to create a task came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Created {
    /// A new task, awaiting the user's go-ahead.
    New { id: i64 },
    /// The goal repeats an open task's, which is kept instead.
    Merged { id: i64, goal: String, state: TaskState },
}

#[derive(Debug, thiserror::Error)]
pub enum CreateError {
    #[error("{MAX_OPEN} background tasks are open already; cancel one first (chalie-tui tasks cancel ID)")]
    Full,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A proposed task: what it is for, and where it came from.
pub struct Proposal<'a> {
    pub goal: &'a str,
    pub priority: i64,
    /// The chat thread its messages go to; none means the latest thread.
    pub thread_id: Option<&'a str>,
    /// What proposed it when it was not the user (e.g. `drift thought #12`).
    pub origin: Option<&'a str>,
}

/// Creates `p` as a task awaiting confirmation, unless an open task has nearly the same goal
/// (then that one is returned) or [`MAX_OPEN`] are open.
pub fn create(c: &Connection, p: &Proposal<'_>, now: i64) -> Result<Created, CreateError> {
    let repo = TasksRepo(c);
    let open = repo.list(false)?;
    if let Some(id) = duplicate_of(p.goal, open.iter().map(|t| (t.id, t.goal.as_str()))) {
        let (goal, state) = open
            .iter()
            .find(|t| t.id == id)
            .map_or((p.goal.to_string(), TaskState::Pending), |t| (t.goal.clone(), t.state));
        return Ok(Created::Merged { id, goal, state });
    }
    if open.len() >= MAX_OPEN {
        return Err(CreateError::Full);
    }
    let new = NewTask {
        goal: p.goal,
        state: TaskState::AwaitingConfirmation,
        priority: p.priority.clamp(1, 10),
        thread_id: p.thread_id,
        origin: p.origin,
        created_at: now,
        expires_at: now + EXPIRY_S,
    };
    Ok(Created::New { id: repo.insert(&new)? })
}
