//! The memory group: every queue's worker and the decay engine, started together once the
//! engine's models are known (they share them, so no model is loaded twice).
//!
//! Each worker here only says what its job means and what the user should hear about it;
//! claiming, idling, waking and stopping are `background::worker`'s. Workers never talk to
//! each other directly: one that produces work for another queues a job in the same
//! transaction as its own write.

use super::{chunker, decay, episodic, reembed, semantic};
use crate::background::status::{StatusReport, report};
use crate::background::worker::{PeriodicTask, QueueWorker, Ran};
use crate::background::{Registry, RegistryError, WorkerBoard, WorkerId, WorkerStatus};
use crate::events::{EngineEvent, EventBus, NoticeLevel};
use crate::llm::Llm;
use crate::store::{Db, Job, JobKind, StoreError, now_ts};
use async_trait::async_trait;
use rusqlite::Connection;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// A committed turn's `ReplyDone` means its encode and chunk jobs were just queued.
fn turn_committed(event: &EngineEvent) -> bool {
    matches!(event, EngineEvent::ReplyDone { .. })
}

/// Each committed exchange becomes an episode.
pub struct EpisodicWorker {
    llm: Arc<Llm>,
    bus: EventBus,
    told_embed: bool,
}

#[async_trait]
impl QueueWorker for EpisodicWorker {
    fn kind(&self) -> JobKind {
        crate::store::ENCODE_QUEUE
    }
    fn poll(&self) -> Duration {
        episodic::POLL
    }
    fn retry_s(&self) -> i64 {
        episodic::RETRY_S
    }
    fn woken_by(&self, event: &EngineEvent) -> bool {
        turn_committed(event)
    }
    async fn run(&mut self, db: &Db, job: Job, stop: &CancellationToken) -> Result<Ran, StoreError> {
        use episodic::Processed;
        Ok(match episodic::process(db, &self.llm, job, stop).await? {
            None => Ran::Interrupted,
            Some(Processed::Stored { embed_error: Some(e), .. }) => {
                if !self.told_embed {
                    self.told_embed = true;
                    self.bus.notice(NoticeLevel::Warn, format!("memories are being stored without embeddings: {e}"));
                }
                Ran::DoneWithWarning(e)
            }
            Some(Processed::Failed { error, permanent, .. }) => {
                if permanent {
                    self.bus
                        .notice(NoticeLevel::Warn, format!("an exchange could not be stored as an episode: {error}"));
                }
                Ran::Failed(error)
            }
            Some(Processed::Stored { .. } | Processed::Skipped { .. }) => Ran::Done,
        })
    }
}

/// Each committed exchange becomes gists, facts, a style observation and traits.
pub struct ChunkerWorker {
    llm: Arc<Llm>,
    bus: EventBus,
    told_fallback: bool,
}

#[async_trait]
impl QueueWorker for ChunkerWorker {
    fn kind(&self) -> JobKind {
        crate::store::CHUNK_QUEUE
    }
    fn poll(&self) -> Duration {
        chunker::POLL
    }
    fn retry_s(&self) -> i64 {
        chunker::RETRY_S
    }
    fn woken_by(&self, event: &EngineEvent) -> bool {
        turn_committed(event)
    }
    async fn run(&mut self, db: &Db, job: Job, stop: &CancellationToken) -> Result<Ran, StoreError> {
        use chunker::Processed;
        Ok(match chunker::process(db, &self.llm, job, stop).await? {
            None => Ran::Interrupted,
            Some(Processed::Stored { fallback: Some(why), .. }) => {
                if !self.told_fallback {
                    self.told_fallback = true;
                    self.bus.notice(
                        NoticeLevel::Info,
                        format!("memory extraction uses its rules: the model failed ({why})"),
                    );
                }
                Ran::DoneWithWarning(format!("the model failed, rules used: {why}"))
            }
            Some(Processed::Failed { error, permanent, .. }) => {
                if permanent {
                    self.bus.notice(NoticeLevel::Warn, format!("an exchange could not be stored in memory: {error}"));
                }
                Ran::Failed(error)
            }
            Some(Processed::Stored { .. } | Processed::Skipped { .. }) => Ran::Done,
        })
    }
}

/// Pending episodes become concepts; before each claim it queues the idle fallback's job.
pub struct SemanticWorker {
    llm: Arc<Llm>,
    bus: EventBus,
}

#[async_trait]
impl QueueWorker for SemanticWorker {
    fn kind(&self) -> JobKind {
        semantic::SEMANTIC_QUEUE
    }
    fn poll(&self) -> Duration {
        semantic::POLL
    }
    fn retry_s(&self) -> i64 {
        semantic::RETRY_S
    }
    async fn before_claim(&mut self, db: &Db) -> Result<(), StoreError> {
        db.call(|c| semantic::enqueue_if_idle(c, now_ts())).await.map(|_| ())
    }
    async fn run(&mut self, db: &Db, job: Job, stop: &CancellationToken) -> Result<Ran, StoreError> {
        use semantic::Processed;
        Ok(match semantic::process(db, &self.llm, job, stop).await? {
            None => Ran::Interrupted,
            Some(Processed::Done { counts, by_model, embed_error, .. }) => {
                tracing::info!(?counts, by_model, "semantic consolidation");
                embed_error.map_or(Ran::Done, Ran::DoneWithWarning)
            }
            Some(Processed::Failed { error, permanent, .. }) => {
                if permanent {
                    self.bus.notice(
                        NoticeLevel::Warn,
                        format!("episodes could not be consolidated into concepts: {error}"),
                    );
                }
                Ran::Failed(error)
            }
        })
    }
}

/// Re-embeds every vector after a model change. When the start's probe could not reach the
/// model, it probes again every [`reembed::PROBE_RETRY`] until it can.
pub struct ReembedWorker {
    llm: Arc<Llm>,
    bus: EventBus,
    probe_again: bool,
    last_probe: Instant,
}

#[async_trait]
impl QueueWorker for ReembedWorker {
    fn kind(&self) -> JobKind {
        reembed::REEMBED_QUEUE
    }
    fn poll(&self) -> Duration {
        reembed::POLL
    }
    fn retry_s(&self) -> i64 {
        reembed::RETRY_S
    }
    async fn before_claim(&mut self, db: &Db) -> Result<(), StoreError> {
        if self.probe_again && self.last_probe.elapsed() >= reembed::PROBE_RETRY {
            self.last_probe = Instant::now();
            let again = reembed::reconcile(db, &self.llm, &self.bus).await;
            self.probe_again = matches!(again, Ok(reembed::Reconciled::ProbeFailed(_)));
        }
        Ok(())
    }
    async fn run(&mut self, db: &Db, job: Job, stop: &CancellationToken) -> Result<Ran, StoreError> {
        Ok(match reembed::process(db, &self.llm, &self.bus, job, stop).await? {
            None => Ran::Interrupted,
            Some(reembed::Batch::Failed(e)) => Ran::Failed(e),
            Some(_) => Ran::Done,
        })
    }
}

/// Runs a decay pass when one is due, then every [`decay::INTERVAL`].
pub struct DecayTask {
    bus: EventBus,
}

#[async_trait]
impl PeriodicTask for DecayTask {
    async fn first_wait(&mut self, db: &Db, now: i64) -> Result<Duration, StoreError> {
        // Every process start (each `ask` included) would otherwise run a pass on the database
        // thread its first turn needs; wait until the schedule says one is due.
        let last = db.call(|c| decay::last_pass(c)).await?;
        Ok(decay::until_due(last, now))
    }
    fn every(&self) -> Duration {
        decay::INTERVAL
    }
    async fn run(&mut self, db: &Db, now: i64) -> Result<(), StoreError> {
        let report = db.call(move |c| decay::run_decay_once(c, now)).await?;
        tracing::debug!(?report, "decay pass");
        if let Some(line) = report.forgotten_notice() {
            self.bus.notice(NoticeLevel::Info, line);
        }
        Ok(())
    }
}

/// The memory group over `llm`. `probe_again`: the start's embedding probe failed.
pub fn registry(board: WorkerBoard, llm: Arc<Llm>, bus: &EventBus, probe_again: bool) -> Registry {
    let reembed = ReembedWorker { llm: llm.clone(), bus: bus.clone(), probe_again, last_probe: Instant::now() };
    Registry::new(board)
        .queue(WorkerId::Reembed, reembed)
        .queue(WorkerId::Episodic, EpisodicWorker { llm: llm.clone(), bus: bus.clone(), told_embed: false })
        .queue(WorkerId::Chunker, ChunkerWorker { llm: llm.clone(), bus: bus.clone(), told_fallback: false })
        .queue(WorkerId::Semantic, SemanticWorker { llm, bus: bus.clone() })
        .periodic(WorkerId::Decay, DecayTask { bus: bus.clone() })
}

/// Run every memory worker until `stop` is cancelled, reporting to `board`.
pub async fn run_memory_group(
    db: Db,
    llm: Arc<Llm>,
    bus: EventBus,
    stop: CancellationToken,
    board: WorkerBoard,
) -> Result<(), RegistryError> {
    // The vector tables must be in the model's space before any worker writes a vector.
    let probe_again = tokio::select! {
        r = reembed::reconcile(&db, &llm, &bus) => match r {
            Ok(r) => matches!(r, reembed::Reconciled::ProbeFailed(_)),
            Err(e) => {
                tracing::warn!("could not check the embedding model against the database: {}", crate::describe(&e));
                false
            }
        },
        _ = stop.cancelled() => return Ok(()),
    };
    let group = registry(board, llm, &bus, probe_again);
    group.require_every_queue()?;
    group.start(&db, &bus, &stop)?.join().await;
    Ok(())
}

/// [`run_memory_group`] with a board nobody reads (tests, headless tools).
pub async fn run_workers(db: Db, llm: Arc<Llm>, bus: EventBus, stop: CancellationToken) {
    if let Err(e) = run_memory_group(db, llm, bus, stop, WorkerBoard::new()).await {
        tracing::error!("memory workers not started: {e}");
    }
}

/// One worker of the group alone, until `stop` (tests drive a single queue this way).
async fn run_alone(id: WorkerId, db: Db, llm: Arc<Llm>, bus: EventBus, stop: CancellationToken) {
    let group = registry(WorkerBoard::new(), llm, &bus, false).only(id);
    match group.start(&db, &bus, &stop) {
        Ok(running) => running.join().await,
        Err(e) => tracing::error!("{id} not started: {e}"),
    }
}

/// The episodic worker alone.
pub async fn run_episodic_worker(db: Db, llm: Arc<Llm>, bus: EventBus, stop: CancellationToken) {
    run_alone(WorkerId::Episodic, db, llm, bus, stop).await;
}

/// The chunker worker alone.
pub async fn run_chunker_worker(db: Db, llm: Arc<Llm>, bus: EventBus, stop: CancellationToken) {
    run_alone(WorkerId::Chunker, db, llm, bus, stop).await;
}

/// The semantic worker alone.
pub async fn run_semantic_worker(db: Db, llm: Arc<Llm>, bus: EventBus, stop: CancellationToken) {
    run_alone(WorkerId::Semantic, db, llm, bus, stop).await;
}

/// The re-embed worker alone ([`reembed::reconcile`], which queues its jobs, is the caller's).
pub async fn run_reembed_worker(db: Db, llm: Arc<Llm>, bus: EventBus, stop: CancellationToken) {
    run_alone(WorkerId::Reembed, db, llm, bus, stop).await;
}

/// The decay engine alone: a pass when due, then every [`decay::INTERVAL`].
pub async fn run_decay_task(db: Db, bus: EventBus, stop: CancellationToken) {
    let group = Registry::new(WorkerBoard::new()).periodic(WorkerId::Decay, DecayTask { bus: bus.clone() });
    match group.start(&db, &bus, &stop) {
        Ok(running) => running.join().await,
        Err(e) => tracing::error!("decay not started: {e}"),
    }
}

/// The status report (`chalie-tui status`, F1) with what only the memory layer can read:
/// when the decay engine last ran, recorded across restarts.
pub fn status_report(c: &Connection, live: Option<&[WorkerStatus]>, now: i64) -> Result<StatusReport, StoreError> {
    let mut r = report(c, live, now)?;
    if let Some(line) = r.lines.iter_mut().find(|l| l.id == WorkerId::Decay && l.last_run.is_none()) {
        line.last_run = decay::last_pass(c)?;
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::open_in_memory;

    #[test]
    fn the_memory_group_claims_every_queue() {
        let bus = EventBus::new();
        let llm = Arc::new(Llm::new(bus.clone(), crate::config::Config::defaults().llm, []));
        let group = registry(WorkerBoard::new(), llm.clone(), &bus, false);
        assert_eq!(group.require_every_queue(), Ok(()));
        let ids = group.ids();
        assert!(
            WorkerId::ALL
                .iter()
                .filter(|w| {
                    !matches!(
                        w,
                        WorkerId::Scheduler
                            | WorkerId::Drift
                            | WorkerId::Tasks
                            | WorkerId::Router
                            | WorkerId::Topics
                            | WorkerId::Reflection
                            | WorkerId::Checkpoint
                    )
                })
                .all(|w| ids.contains(w)),
            "{ids:?}"
        );
        let partial = registry(WorkerBoard::new(), llm, &bus, false).only(WorkerId::Episodic);
        assert_eq!(partial.require_every_queue(), Err(RegistryError::Unclaimed(JobKind::Chunk)));
    }

    #[test]
    fn the_status_report_knows_the_last_decay_pass() {
        let mut c = open_in_memory().unwrap();
        let before = status_report(&c, None, 1_000).unwrap();
        assert!(before.to_string().lines().any(|l| l.starts_with("decay") && l.contains("never")), "{before}");
        decay::run_decay_once(&mut c, 1_000).unwrap();
        let after = status_report(&c, None, 1_060).unwrap();
        assert!(after.to_string().lines().any(|l| l.starts_with("decay") && l.contains("1m ago")), "{after}");
    }
}
