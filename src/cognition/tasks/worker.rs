//! The task worker as a background task (`WorkerId::Tasks`): a cycle every interval ± 30 %
//! (docs/cognition.md §17.3). Like drift, it stays out of a user's turn: it does not start
//! while one is in flight, and a progress message waits for a moment outside quiet hours.

use super::cycle::{Moment, run_cycle};
use crate::SplitMix64;
use crate::background::worker::PeriodicTask;
use crate::cognition::drift::schedule::{is_quiet, jittered_s};
use crate::cognition::drift::worker::local_offset_s;
use crate::config::{DriftSettings, TaskSettings};
use crate::events::{EventBus, TurnWatch};
use crate::llm::Llm;
use crate::store::{Db, StoreError};
use async_trait::async_trait;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

pub struct TaskWorker {
    pub llm: Arc<Llm>,
    pub bus: EventBus,
    pub settings: TaskSettings,
    /// Quiet hours come from `[drift]`: one rule for when the assistant may speak unasked.
    pub quiet: DriftSettings,
    turns: TurnWatch,
    rng: SplitMix64,
    next: Duration,
}

impl TaskWorker {
    pub fn new(llm: Arc<Llm>, bus: EventBus, settings: TaskSettings, quiet: DriftSettings, seed: u64) -> TaskWorker {
        let turns = bus.turns();
        let mut rng = SplitMix64(seed);
        let next = Duration::from_secs(jittered_s(settings.interval_s, &mut rng));
        TaskWorker { llm, bus, settings, quiet, turns, rng, next }
    }
}

#[async_trait]
impl PeriodicTask for TaskWorker {
    async fn first_wait(&mut self, _db: &Db, _now: i64) -> Result<Duration, StoreError> {
        Ok(self.next)
    }

    fn every(&self) -> Duration {
        self.next
    }

    async fn run(&mut self, db: &Db, now: i64) -> Result<(), StoreError> {
        self.next = Duration::from_secs(jittered_s(self.settings.interval_s, &mut self.rng));
        if !self.settings.enabled || self.turns.in_flight() {
            return Ok(());
        }
        let quiet = is_quiet(now, local_offset_s(), self.quiet.quiet_start, self.quiet.quiet_end);
        let moment = Moment { may_speak: !quiet };
        let next_run_at = now + self.next.as_secs() as i64;
        let report =
            run_cycle(db, Some(&self.llm), &self.bus, now, next_run_at, moment, &CancellationToken::new()).await?;
        if let Some(r) = report {
            tracing::info!(task = r.task_id, cycle = r.cycle, coverage = r.coverage, "task cycle");
        }
        Ok(())
    }
}
