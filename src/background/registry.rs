//! Every background task by name: the one list that starts them, stops them and shows
//! them. An engine to come (drift, regulator bookkeeping, uncertainty detection, the task
//! worker, the routing regulator) is one [`WorkerId`] variant, one line in
//! [`WorkerId::ALL`] and one `.queue(..)` or `.periodic(..)` where its group is built.
//!
//! Queues cannot be orphaned: jobs are queued by [`JobKind`], and [`worker_for`] names the
//! worker of every kind with an exhaustive match, so a kind without a worker does not
//! compile; [`Registry::require_every_queue`] refuses a group that forgot to register one.

use super::board::WorkerBoard;
use super::worker::{LoopCtx, PeriodicTask, QueueWorker, run_periodic, run_queue};
use crate::events::EventBus;
use crate::store::{Db, JobKind};
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Every background task the program has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WorkerId {
    /// Keeps the vector tables in the embedding model's space.
    Reembed,
    /// Each committed exchange becomes an episode.
    Episodic,
    /// Each committed exchange becomes gists, facts, style and traits.
    Chunker,
    /// Pending episodes become concepts.
    Semantic,
    /// Durable memories fade; short-lived rows expire.
    Decay,
    /// Due reminders fire.
    Scheduler,
    /// Idle thoughts (the drift engine, `cognition::drift`).
    Drift,
    /// Persistent tasks' cycles (`cognition::tasks`).
    Tasks,
    /// The routing stability regulator's daily cycle (`cognition::stability`).
    Router,
    /// The topic stability regulator's daily cycle (`cognition::stability::topics_cycle`).
    Topics,
    /// The strong model's review of past routing decisions at idle (`cognition::stability::reflection`).
    Reflection,
    /// Copies the write-ahead log back into the database between turns (`background::checkpoint`).
    Checkpoint,
}

impl WorkerId {
    pub const ALL: [WorkerId; 12] = [
        WorkerId::Reembed,
        WorkerId::Episodic,
        WorkerId::Chunker,
        WorkerId::Semantic,
        WorkerId::Decay,
        WorkerId::Scheduler,
        WorkerId::Drift,
        WorkerId::Tasks,
        WorkerId::Router,
        WorkerId::Topics,
        WorkerId::Reflection,
        WorkerId::Checkpoint,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            WorkerId::Reembed => "reembed",
            WorkerId::Episodic => "episodic",
            WorkerId::Chunker => "chunker",
            WorkerId::Semantic => "semantic",
            WorkerId::Decay => "decay",
            WorkerId::Scheduler => "scheduler",
            WorkerId::Drift => "drift",
            WorkerId::Tasks => "tasks",
            WorkerId::Router => "router",
            WorkerId::Topics => "topics",
            WorkerId::Reflection => "reflection",
            WorkerId::Checkpoint => "checkpoint",
        }
    }

    /// The queue it drains; `None` for a task on a timer.
    pub const fn queue(self) -> Option<JobKind> {
        match self {
            WorkerId::Reembed => Some(JobKind::Reembed),
            WorkerId::Episodic => Some(JobKind::Encode),
            WorkerId::Chunker => Some(JobKind::Chunk),
            WorkerId::Semantic => Some(JobKind::Semantic),
            WorkerId::Decay
            | WorkerId::Scheduler
            | WorkerId::Drift
            | WorkerId::Tasks
            | WorkerId::Router
            | WorkerId::Topics
            | WorkerId::Reflection
            | WorkerId::Checkpoint => None,
        }
    }
}

impl std::fmt::Display for WorkerId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The worker that claims `kind`'s jobs.
pub const fn worker_for(kind: JobKind) -> WorkerId {
    match kind {
        JobKind::Encode => WorkerId::Episodic,
        JobKind::Chunk => WorkerId::Chunker,
        JobKind::Semantic => WorkerId::Semantic,
        JobKind::Reembed => WorkerId::Reembed,
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RegistryError {
    #[error("no worker claims the {0} queue")]
    Unclaimed(JobKind),
    #[error("{0} is registered twice")]
    Duplicate(WorkerId),
    #[error("{id} is registered with a worker of the {got} queue")]
    WrongQueue { id: WorkerId, got: JobKind },
    #[error("{0} is a queue worker, not a timer (or the other way round)")]
    WrongShape(WorkerId),
}

enum Task {
    Queue(Box<dyn QueueWorker>),
    Periodic(Box<dyn PeriodicTask>),
}

/// A group of tasks to start together, reporting to one board.
pub struct Registry {
    board: WorkerBoard,
    entries: Vec<(WorkerId, Task)>,
}

impl Registry {
    pub fn new(board: WorkerBoard) -> Registry {
        Registry { board, entries: Vec::new() }
    }

    pub fn queue(mut self, id: WorkerId, worker: impl QueueWorker) -> Registry {
        self.entries.push((id, Task::Queue(Box::new(worker))));
        self
    }

    pub fn periodic(mut self, id: WorkerId, task: impl PeriodicTask) -> Registry {
        self.entries.push((id, Task::Periodic(Box::new(task))));
        self
    }

    /// Keep only `id`'s entry (one worker started alone, as tests do).
    pub fn only(mut self, id: WorkerId) -> Registry {
        self.entries.retain(|(e, _)| *e == id);
        self
    }

    /// What this group holds, in registration order.
    pub fn ids(&self) -> Vec<WorkerId> {
        self.entries.iter().map(|(id, _)| *id).collect()
    }

    /// Err when some [`JobKind`] has no worker in this group: whatever queues it would
    /// never be drained.
    pub fn require_every_queue(&self) -> Result<(), RegistryError> {
        let claimed: Vec<JobKind> = self
            .entries
            .iter()
            .filter_map(|(_, t)| match t {
                Task::Queue(w) => Some(w.kind()),
                Task::Periodic(_) => None,
            })
            .collect();
        match JobKind::ALL.into_iter().find(|k| !claimed.contains(k)) {
            Some(kind) => Err(RegistryError::Unclaimed(kind)),
            None => Ok(()),
        }
    }

    fn validate(&self) -> Result<(), RegistryError> {
        let mut seen = Vec::new();
        for (id, task) in &self.entries {
            if seen.contains(id) {
                return Err(RegistryError::Duplicate(*id));
            }
            seen.push(*id);
            match (task, id.queue()) {
                (Task::Queue(w), Some(q)) if w.kind() != q => {
                    return Err(RegistryError::WrongQueue { id: *id, got: w.kind() });
                }
                (Task::Queue(_), None) | (Task::Periodic(_), Some(_)) => return Err(RegistryError::WrongShape(*id)),
                _ => {}
            }
        }
        Ok(())
    }

    /// Spawn every task; they run until `stop` is cancelled. Must be called inside the
    /// tokio runtime.
    pub fn start(self, db: &Db, bus: &EventBus, stop: &CancellationToken) -> Result<Running, RegistryError> {
        self.validate()?;
        let mut handles = Vec::new();
        let mut wakes = HashMap::new();
        for (id, task) in self.entries {
            let wake = Arc::new(Notify::new());
            wakes.insert(id, wake.clone());
            // Workers and timed tasks wait behind any turn's database work (`Db::background`).
            let cx =
                LoopCtx { db: db.background(), bus: bus.clone(), slot: self.board.slot(id), wake, stop: stop.clone() };
            handles.push(match task {
                Task::Queue(w) => tokio::spawn(run_queue(w, cx)),
                Task::Periodic(t) => tokio::spawn(run_periodic(t, cx)),
            });
        }
        Ok(Running { handles, wakes })
    }
}

/// A started group.
pub struct Running {
    handles: Vec<JoinHandle<()>>,
    wakes: HashMap<WorkerId, Arc<Notify>>,
}

impl Running {
    /// Wake an idle queue worker now (its job was just queued); a no-op for one not here.
    pub fn wake(&self, id: WorkerId) {
        if let Some(n) = self.wakes.get(&id) {
            n.notify_one();
        }
    }

    /// Wait for every task to stop (after the stop token was cancelled).
    pub async fn join(self) {
        for h in self.handles {
            if let Err(e) = h.await {
                tracing::warn!("a background task ended abnormally: {e}");
            }
        }
    }
}
