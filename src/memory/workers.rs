//! Every consolidation worker, started together once the engine's models are known.
//!
//! Each worker is a tokio task that claims jobs from its own durable queue (`jobs` table),
//! so a crash or a quit loses nothing: `JobsRepo::recover_interrupted` requeues what was
//! running when the process stopped. Workers never talk to each other directly; a worker
//! that produces work for another enqueues a job in the same transaction as its own write.

use crate::events::{EngineEvent, EventBus, Stamped};
use crate::llm::Llm;
use crate::store::Db;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

/// Run every memory worker until `stop` is cancelled.
pub async fn run_workers(db: Db, llm: Arc<Llm>, bus: EventBus, stop: CancellationToken) {
    // The vector tables must be in the model's space before any worker writes a vector.
    let probe_again = tokio::select! {
        r = super::reembed::reconcile(&db, &llm, &bus) => match r {
            Ok(r) => matches!(r, super::reembed::Reconciled::ProbeFailed(_)),
            Err(e) => {
                tracing::warn!("could not check the embedding model against the database: {}", crate::describe(&e));
                false
            }
        },
        _ = stop.cancelled() => return,
    };
    let reembed = super::reembed::reembed_loop(db.clone(), llm.clone(), bus.clone(), stop.clone(), probe_again);
    let episodic = super::run_episodic_worker(db.clone(), llm.clone(), bus.clone(), stop.clone());
    let semantic = super::semantic::run_semantic_worker(db.clone(), llm.clone(), bus.clone(), stop.clone());
    let decay = super::decay::run_decay_task(db.clone(), bus.clone(), stop.clone());
    let chunker = super::chunker::run_chunker_worker(db.clone(), llm.clone(), bus.clone(), stop.clone());
    tokio::join!(episodic, semantic, decay, chunker, reembed);
}

/// Sleep until `poll` has passed or a turn has committed (its `ReplyDone` means a job was
/// just queued). False when `shutdown` fired.
pub(crate) async fn wait_for_work(
    events: &mut broadcast::Receiver<Stamped>,
    shutdown: &CancellationToken,
    poll: Duration,
) -> bool {
    let sleep = tokio::time::sleep(poll);
    tokio::pin!(sleep);
    loop {
        tokio::select! {
            _ = &mut sleep => return true,
            _ = shutdown.cancelled() => return false,
            ev = events.recv() => match ev {
                Ok(s) if matches!(s.event, EngineEvent::ReplyDone { .. }) => return true,
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => {
                    return tokio::select! {
                        _ = &mut sleep => true,
                        _ = shutdown.cancelled() => false,
                    };
                }
            },
        }
    }
}
