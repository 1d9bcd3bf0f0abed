//! Every consolidation worker, started together once the engine's models are known.
//!
//! Each worker is a tokio task that claims jobs from its own durable queue (`jobs` table),
//! so a crash or a quit loses nothing: `JobsRepo::recover_interrupted` requeues what was
//! running when the process stopped. Workers never talk to each other directly; a worker
//! that produces work for another enqueues a job in the same transaction as its own write.

use crate::events::EventBus;
use crate::llm::Llm;
use crate::store::Db;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Run every memory worker until `stop` is cancelled.
pub async fn run_workers(db: Db, llm: Arc<Llm>, bus: EventBus, stop: CancellationToken) {
    let episodic = super::run_episodic_worker(db.clone(), llm.clone(), bus.clone(), stop.clone());
    tokio::join!(episodic);
}
