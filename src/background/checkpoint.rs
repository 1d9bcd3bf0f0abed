//! The `checkpoint` worker: copies the write-ahead log back into the database between turns,
//! so no turn's commit pays for it (`store::wal` says why and how the log stays bounded).
//!
//! Every [`EVERY`] it runs one PASSIVE checkpoint, unless a user turn is in flight (a
//! `user_message` seen on the bus without its `reply_done` or `turn_failed` yet); the run
//! after the turn catches up. A checkpoint that copied the whole log starts it over at once
//! (`wal::checkpoint_and_restart`), so the log's header sync is the worker's, not the next
//! turn's first write. A checkpoint with nothing to copy costs a lock and a look at
//! the log's index, so the idle timer can be short.

use super::worker::PeriodicTask;
use crate::events::{EventBus, TurnWatch};
use crate::store::wal::{self, WalCheckpoint};
use crate::store::{Db, StoreError};
use async_trait::async_trait;
use std::time::Duration;

/// The wait between two checkpoints: a turn writes a few dozen pages, so a run copies little.
pub const EVERY: Duration = Duration::from_secs(2);

pub struct CheckpointTask {
    turns: TurnWatch,
    /// The last run's result, for the tests and the log.
    pub last: Option<WalCheckpoint>,
    /// Where the log stood when this worker last started it over (`store::wal::Restarted`).
    restarted: Option<wal::Restarted>,
}

impl CheckpointTask {
    pub fn new(bus: &EventBus) -> CheckpointTask {
        CheckpointTask { turns: bus.turns(), last: None, restarted: None }
    }
}

#[async_trait]
impl PeriodicTask for CheckpointTask {
    async fn first_wait(&mut self, db: &Db, _now: i64) -> Result<Duration, StoreError> {
        db.call(|c| wal::hand_checkpoints_to_worker(c)).await?;
        Ok(EVERY)
    }

    fn every(&self) -> Duration {
        EVERY
    }

    async fn run(&mut self, db: &Db, _now: i64) -> Result<(), StoreError> {
        if self.turns.in_flight() {
            return Ok(());
        }
        let last = self.restarted;
        let (done, restarted) = db.call(move |c| wal::checkpoint_and_restart(c, last)).await?;
        self.restarted = restarted;
        let Some(done) = done else { return Ok(()) };
        if !done.complete() {
            tracing::debug!("wal checkpoint partial: {done:?}");
        }
        self.last = Some(done);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::background::{Registry, WorkerBoard, WorkerId};
    use crate::events::EngineEvent;
    use crate::store::KvStateRepo;
    use tokio_util::sync::CancellationToken;

    /// `rows` commits of about a page each, under new keys (rewriting the same bytes writes no page).
    async fn write(db: &Db, first: usize, rows: usize) {
        db.call(move |c| {
            let blob = "x".repeat(3000);
            for i in first..first + rows {
                KvStateRepo(c).set_text("bench", &format!("k{i}"), &format!("{blob}{i}"), 0)?;
            }
            Ok(())
        })
        .await
        .unwrap();
    }

    fn wal_bytes(dir: &std::path::Path) -> u64 {
        std::fs::metadata(dir.join("chalie.db-wal")).map(|m| m.len()).unwrap_or(0)
    }

    /// The task used to drain a bus receiver only when it woke, which kept every event since
    /// its last run alive in the broadcast ring.
    #[test]
    fn the_task_holds_no_event_between_runs() {
        let bus = EventBus::new();
        let _task = CheckpointTask::new(&bus);
        for i in 0..100 {
            bus.notice(crate::events::NoticeLevel::Info, format!("n{i}"));
        }
        assert_eq!(bus.queued(), 0);
    }

    #[tokio::test]
    async fn the_worker_skips_a_turn_in_flight_and_checkpoints_after_it() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("chalie.db")).unwrap();
        let bus = EventBus::new();
        let mut task = CheckpointTask::new(&bus);
        task.first_wait(&db, 0).await.unwrap();
        write(&db, 0, 1_500).await;
        bus.emit(EngineEvent::UserMessage { thread_id: "t".into(), exchange_id: "x".into(), text: "hi".into() });
        task.run(&db, 0).await.unwrap();
        assert_eq!(task.last, None, "no checkpoint during a turn");
        bus.emit(EngineEvent::TurnFailed { exchange_id: "x".into(), error: "e".into() });
        task.run(&db, 0).await.unwrap();
        let done = task.last.expect("checkpointed after the turn");
        assert!(done.complete() && done.log_frames > 2_000, "{done:?}");
    }

    #[tokio::test]
    async fn started_by_the_registry_it_keeps_the_log_from_growing() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("chalie.db")).unwrap();
        let (bus, board, stop) = (EventBus::new(), WorkerBoard::new(), CancellationToken::new());
        let running = Registry::new(board.clone())
            .periodic(WorkerId::Checkpoint, CheckpointTask::new(&bus))
            .start(&db, &bus, &stop)
            .unwrap();
        // The worker takes the checkpoint over before its first wait.
        let deadline = tokio::time::Instant::now() + EVERY * 10;
        while db.call(|c| wal::autocheckpoint_pages(c)).await.unwrap() != wal::WAL_BACKSTOP_PAGES {
            assert!(tokio::time::Instant::now() < deadline, "the worker never took the checkpoint over");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // Past the default 1,000-page checkpoint, which the worker has switched off.
        write(&db, 0, 1_500).await;
        let grown = wal_bytes(dir.path());
        assert!(grown > 2_000 * 4096, "{grown} bytes");
        let runs = board.snapshot().iter().find(|s| s.id == WorkerId::Checkpoint).map_or(0, |s| s.runs);
        let deadline = tokio::time::Instant::now() + EVERY * 10;
        loop {
            let now = board.snapshot().iter().find(|s| s.id == WorkerId::Checkpoint).map_or(0, |s| s.runs);
            if now > runs {
                break;
            }
            assert!(tokio::time::Instant::now() < deadline, "the checkpoint worker never ran");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // Its checkpoint copied the log back: the next write starts it over and cuts the file.
        write(&db, 1_500, 1).await;
        let after = wal_bytes(dir.path());
        assert!(after <= wal::WAL_KEEP_BYTES as u64 + 64 * 1024, "{after} bytes");
        stop.cancel();
        running.join().await;
    }
}
