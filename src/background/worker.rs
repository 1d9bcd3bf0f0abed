//! The two loops every background task runs in, so idling, waking, stopping and reporting
//! are written once.
//!
//! A [`QueueWorker`] drains one durable queue: claim the oldest ready job, run it, settle
//! it, and when nothing is ready wait for its poll timer, a wake-up from the registry or a
//! bus event that says such a job was just queued; shutdown ends the wait and any job in
//! flight (which then stays `running` and is requeued at the next start). A
//! [`PeriodicTask`] is a decision taken at a given `now` (the scheduler's `fire_due` is the
//! model), run by a thin loop on a timer.
//!
//! Settling: a job's success is committed by its handler in the same transaction as its
//! writes (so a crash never leaves work done but the job open), and an expected failure is
//! recorded the same way. A handler error the handler did not record (a database call that
//! failed around the work) is recorded here with [`JobsRepo::fail`], so no job is left
//! `running` until the next start.

use super::board::{RunState, Slot};
use crate::events::{EngineEvent, EventBus, Stamped};
use crate::store::{Db, Job, JobKind, JobsRepo, StoreError, now_ts};
use async_trait::async_trait;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Notify, broadcast};
use tokio_util::sync::CancellationToken;

/// How one claimed job ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ran {
    /// Done (or nothing to do); the handler closed the job with its writes.
    Done,
    /// Done, with something the user should know that did not fail the job (a memory stored
    /// without its vector). Shown as the worker's last error.
    DoneWithWarning(String),
    /// Failed; the handler recorded it (the job is retried later or left `failed`).
    Failed(String),
    /// Shutdown fired mid-job: the job stays `running`.
    Interrupted,
}

/// A worker that drains one [`JobKind`] queue.
#[async_trait]
pub trait QueueWorker: Send + Sync + 'static {
    fn kind(&self) -> JobKind;

    /// The longest it sleeps while its queue is empty.
    fn poll(&self) -> Duration;

    /// How long a job that failed outside the handler's own bookkeeping waits to be retried.
    fn retry_s(&self) -> i64 {
        30
    }

    /// Whether this bus event means a job of this kind was just committed.
    fn woken_by(&self, _event: &EngineEvent) -> bool {
        false
    }

    /// Work done before each claim (queueing a job on a timer, retrying a probe).
    async fn before_claim(&mut self, _db: &Db) -> Result<(), StoreError> {
        Ok(())
    }

    /// Run one claimed job to its end.
    async fn run(&mut self, db: &Db, job: Job, stop: &CancellationToken) -> Result<Ran, StoreError>;
}

/// A task that runs on a timer, each run a decision at the `now` it is given.
#[async_trait]
pub trait PeriodicTask: Send + 'static {
    /// How long to wait before the first run (the decay engine: until a pass is due).
    async fn first_wait(&mut self, db: &Db, now: i64) -> Result<Duration, StoreError>;

    /// The wait between runs.
    fn every(&self) -> Duration;

    /// One run at `now`. An error is logged and shown on the board; the task keeps its timer.
    async fn run(&mut self, db: &Db, now: i64) -> Result<(), StoreError>;
}

/// What a loop is given besides its task.
#[derive(Clone)]
pub struct LoopCtx {
    pub db: Db,
    pub bus: EventBus,
    pub slot: Slot,
    /// Wakes an idle queue worker at once (the registry's `wake`).
    pub wake: Arc<Notify>,
    pub stop: CancellationToken,
}

/// Claim the next job of `kind` and hand it to `run`; `Ok(None)` when the queue is empty.
/// The one-shot form of the queue loop, for callers that drive a worker step by step (the
/// headless commands and the tests).
pub async fn claim_and_run<T, F, Fut>(db: &Db, kind: JobKind, run: F) -> Result<Option<T>, StoreError>
where
    F: FnOnce(Job) -> Fut,
    Fut: std::future::Future<Output = Result<Option<T>, StoreError>>,
{
    match db.call(move |c| JobsRepo(c).claim(kind)).await? {
        Some(job) => run(job).await,
        None => Ok(None),
    }
}

/// Drain `worker`'s queue until `cx.stop`.
pub async fn run_queue(mut worker: Box<dyn QueueWorker>, cx: LoopCtx) {
    let kind = worker.kind();
    let name = cx.slot.id().name();
    cx.slot.set_state(RunState::Idle);
    while !cx.stop.is_cancelled() {
        // Subscribed before the claim, so an event saying a job was queued after the claim
        // looked is still seen by the idle wait; dropped while a job runs, since a receiver
        // nobody reads keeps every event sent since in the bus's ring (up to its capacity,
        // each turn's snapshots and vectors with them), and a busy worker claims again anyway.
        let mut events = Some(cx.bus.subscribe());
        if let Err(e) = worker.before_claim(&cx.db).await {
            if matches!(e, StoreError::Closed) {
                break;
            }
            tracing::warn!(worker = name, "{}", crate::describe(&e));
            cx.slot.error(crate::describe(&e));
        }
        let claimed = match cx.db.call(move |c| JobsRepo(c).claim(kind)).await {
            Ok(job) => job,
            Err(StoreError::Closed) => break,
            Err(e) => {
                tracing::warn!(worker = name, "{}", crate::describe(&e));
                cx.slot.error(crate::describe(&e));
                None
            }
        };
        let busy = match claimed {
            Some(job) => {
                events = None;
                match run_one(worker.as_mut(), &cx, job).await {
                    Some(busy) => busy,
                    None => break,
                }
            }
            None => false,
        };
        if let Ok(depth) = cx.db.call(move |c| JobsRepo(c).depth(kind)).await {
            cx.slot.set_depth(depth);
        }
        if !busy {
            let events = events.get_or_insert_with(|| cx.bus.subscribe());
            if !idle(events, &cx, worker.poll(), |e| worker.woken_by(e)).await {
                break;
            }
        }
    }
    cx.slot.set_state(RunState::Stopped);
}

/// Run one claimed job and record how it ended. `Some(true)` when the next job should be
/// claimed at once, `Some(false)` to idle first, `None` to stop.
async fn run_one(worker: &mut dyn QueueWorker, cx: &LoopCtx, job: Job) -> Option<bool> {
    let (id, name) = (job.id, cx.slot.id().name());
    cx.slot.set_state(RunState::Busy);
    // Model calls made for the job say whose they are (`llm_start.origin`).
    let ran = crate::llm::ORIGIN.scope(format!("background: {name}"), worker.run(&cx.db, job, &cx.stop)).await;
    cx.slot.set_state(RunState::Idle);
    match ran {
        Ok(Ran::Done) => cx.slot.ran(now_ts(), None),
        Ok(Ran::DoneWithWarning(w)) => cx.slot.ran(now_ts(), Some(w)),
        Ok(Ran::Failed(e)) => {
            cx.slot.ran(now_ts(), Some(e));
            return Some(false);
        }
        Ok(Ran::Interrupted) | Err(StoreError::Closed) => return None,
        Err(e) => {
            let error = crate::describe(&e);
            tracing::warn!(worker = name, job = id, "{error}");
            let (msg, retry) = (error.clone(), worker.retry_s());
            if let Err(StoreError::Closed) = cx.db.call(move |c| JobsRepo(c).fail(id, &msg, retry)).await {
                return None;
            }
            cx.slot.ran(now_ts(), Some(error));
            return Some(false);
        }
    }
    Some(true)
}

/// Sleep until `poll` has passed, the registry wakes this worker or `woken_by` accepts a bus
/// event. False when `stop` fired.
async fn idle(
    events: &mut broadcast::Receiver<Stamped>,
    cx: &LoopCtx,
    poll: Duration,
    woken_by: impl Fn(&EngineEvent) -> bool,
) -> bool {
    let sleep = tokio::time::sleep(poll);
    tokio::pin!(sleep);
    let mut bus_open = true;
    loop {
        tokio::select! {
            _ = &mut sleep => return true,
            _ = cx.stop.cancelled() => return false,
            _ = cx.wake.notified() => return true,
            ev = events.recv(), if bus_open => match ev {
                Ok(s) if woken_by(&s.event) => return true,
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => bus_open = false,
            },
        }
    }
}

/// Run `task` on its timer until `cx.stop`.
pub async fn run_periodic(mut task: Box<dyn PeriodicTask>, cx: LoopCtx) {
    let name = cx.slot.id().name();
    cx.slot.set_state(RunState::Idle);
    let first = match task.first_wait(&cx.db, now_ts()).await {
        Ok(d) => d,
        Err(StoreError::Closed) => {
            cx.slot.set_state(RunState::Stopped);
            return;
        }
        Err(_) => Duration::ZERO,
    };
    let mut wait = first;
    loop {
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = cx.stop.cancelled() => break,
        }
        cx.slot.set_state(RunState::Busy);
        let now = now_ts();
        let ran = crate::llm::ORIGIN.scope(format!("background: {name}"), task.run(&cx.db, now)).await;
        cx.slot.set_state(RunState::Idle);
        match ran {
            Ok(()) => cx.slot.ran(now, None),
            Err(StoreError::Closed) => break,
            Err(e) => {
                tracing::warn!(worker = name, "{}", crate::describe(&e));
                cx.slot.ran(now, Some(crate::describe(&e)));
            }
        }
        wait = task.every();
    }
    cx.slot.set_state(RunState::Stopped);
}
