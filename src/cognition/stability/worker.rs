//! The stability regulators as background tasks (`WorkerId::Router`, `WorkerId::Topics`): one
//! cycle a day each. The time of the last cycle is kept in `kv_state`, so a restart neither
//! skips a day nor runs twice in one.

use super::routing::{DAY_S, run_cycle};
use crate::background::worker::PeriodicTask;
use crate::events::{EngineEvent, EventBus, NoticeLevel};
use crate::store::{Db, KvStateRepo, StoreError};
use async_trait::async_trait;
use std::collections::BTreeSet;
use std::time::Duration;

const NAMESPACE: &str = "stability";
const LAST_CYCLE: &str = "routing_last_cycle";
const TOPICS_LAST_CYCLE: &str = "topics_last_cycle";

pub struct RoutingRegulatorTask {
    pub bus: EventBus,
    /// The config's `[router.weights]` names.
    pub pinned: BTreeSet<String>,
}

/// How long until the next cycle is due, given the last one.
pub fn wait_s(last: Option<i64>, now: i64) -> i64 {
    last.map_or(DAY_S, |t| (t + DAY_S - now).clamp(0, DAY_S))
}

#[async_trait]
impl PeriodicTask for RoutingRegulatorTask {
    async fn first_wait(&mut self, db: &Db, now: i64) -> Result<Duration, StoreError> {
        let last = db.call(|c| KvStateRepo(c).get_text(NAMESPACE, LAST_CYCLE)).await?;
        let last = last.and_then(|t| t.parse::<i64>().ok());
        Ok(Duration::from_secs(wait_s(last, now).max(0) as u64))
    }

    fn every(&self) -> Duration {
        Duration::from_secs(DAY_S as u64)
    }

    async fn run(&mut self, db: &Db, now: i64) -> Result<(), StoreError> {
        let pinned = self.pinned.clone();
        let report = db
            .call(move |c| {
                let r = run_cycle(c, &pinned, now, false);
                KvStateRepo(c).set_text(NAMESPACE, LAST_CYCLE, &now.to_string(), now)?;
                Ok(r)
            })
            .await?;
        match report {
            Ok(r) => {
                if let Some(version) = r.new_version {
                    self.bus.emit(EngineEvent::RouterWeightsChanged {
                        version,
                        author: super::routing::AUTHOR.into(),
                        reason: super::routing::summary(&r),
                    });
                }
            }
            Err(e) => tracing::warn!("routing regulator cycle failed: {e}"),
        }
        Ok(())
    }
}

/// The topic stability regulator's daily cycle. A new version is announced as a notice (the
/// `topic_params` and `topic_adjustments` tables are the audit).
pub struct TopicRegulatorTask {
    pub bus: EventBus,
}

#[async_trait]
impl PeriodicTask for TopicRegulatorTask {
    async fn first_wait(&mut self, db: &Db, now: i64) -> Result<Duration, StoreError> {
        let last = db.call(|c| KvStateRepo(c).get_text(NAMESPACE, TOPICS_LAST_CYCLE)).await?;
        let last = last.and_then(|t| t.parse::<i64>().ok());
        Ok(Duration::from_secs(wait_s(last, now).max(0) as u64))
    }

    fn every(&self) -> Duration {
        Duration::from_secs(DAY_S as u64)
    }

    async fn run(&mut self, db: &Db, now: i64) -> Result<(), StoreError> {
        let report = db
            .call(move |c| {
                let r = super::topics_cycle::run_cycle(c, &BTreeSet::new(), now, false);
                KvStateRepo(c).set_text(NAMESPACE, TOPICS_LAST_CYCLE, &now.to_string(), now)?;
                Ok(r)
            })
            .await?;
        match report {
            Ok(r) => {
                if let Some(version) = r.new_version {
                    let why = super::topics_cycle::reason(&r.plan.actions);
                    self.bus.notice(NoticeLevel::Info, format!("topic parameters v{version} (regulator): {why}"));
                }
            }
            Err(e) => tracing::warn!("topic regulator cycle failed: {e}"),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_next_cycle_is_a_day_after_the_last() {
        assert_eq!(super::wait_s(None, 1000), 86_400);
        assert_eq!(super::wait_s(Some(1000), 1000 + 3600), 86_400 - 3600);
        assert_eq!(super::wait_s(Some(1000), 1000 + 3 * 86_400), 0, "overdue: at once");
    }
}
