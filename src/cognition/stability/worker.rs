//! The stability regulators as background tasks (`WorkerId::Router`, `WorkerId::Topics`): one
//! cycle a day each. The time of the last cycle is kept in `kv_state`, so a restart neither
//! skips a day nor runs twice in one. Routing reflection (`WorkerId::Reflection`) keeps its
//! last run the same way.

use super::reflection;
use super::routing::{DAY_S, run_cycle};
use crate::SplitMix64;
use crate::background::registry::WorkerId;
use crate::background::worker::PeriodicTask;
use crate::events::{EngineEvent, EventBus, NoticeLevel, TurnWatch};
use crate::llm::Llm;
use crate::store::{Db, JobKind, JobsRepo, KvStateRepo, StoreError};
use async_trait::async_trait;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

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

const LAST_REFLECTION: &str = "reflection_last_run";

/// Routing reflection as a background task (`WorkerId::Reflection`): every
/// [`reflection::MIN_GAP_S`] it reviews a batch of decisions with the strong model, only when
/// no user turn is in flight and every queue is empty. Not started on the built-in strong
/// model (`status` says so: [`reflection_off`]).
pub struct ReflectionTask {
    pub llm: Arc<Llm>,
    turns: TurnWatch,
    rng: SplitMix64,
}

impl ReflectionTask {
    pub fn new(llm: Arc<Llm>, bus: &EventBus, seed: u64) -> ReflectionTask {
        ReflectionTask { llm, turns: bus.turns(), rng: SplitMix64(seed) }
    }
}

/// Why reflection cannot run with `llm`, or `None` when it can.
pub fn reflection_off(llm: &Llm) -> Option<String> {
    (!reflection::available(llm)).then(|| {
        format!(
            "the strong model is {}; routing reflection needs a real one",
            llm.describe(crate::config::Role::Strong)
        )
    })
}

/// Leave `off` for `status` (or clear it); true when reflection is off.
pub fn note_off(c: &rusqlite::Connection, off: Option<String>, now: i64) -> Result<bool, StoreError> {
    let (kv, ns, name) = (KvStateRepo(c), crate::background::status::OFF_NAMESPACE, WorkerId::Reflection.name());
    match off {
        Some(why) => kv.set_text(ns, name, &why, now).map(|_| true),
        None => kv.delete(ns, name).map(|_| false),
    }
}

/// A queue holding a queued or running job, if any.
fn busy_queue(c: &rusqlite::Connection) -> Result<Option<&'static str>, StoreError> {
    for k in JobKind::ALL {
        if JobsRepo(c).depth(k)? > 0 {
            return Ok(Some(k.as_str()));
        }
    }
    Ok(None)
}

#[async_trait]
impl PeriodicTask for ReflectionTask {
    async fn first_wait(&mut self, db: &Db, now: i64) -> Result<Duration, StoreError> {
        let last = db.call(|c| KvStateRepo(c).get_text(NAMESPACE, LAST_REFLECTION)).await?;
        let last = last.and_then(|t| t.parse::<i64>().ok());
        let gap = reflection::MIN_GAP_S;
        Ok(Duration::from_secs(last.map_or(gap, |t| (t + gap - now).clamp(0, gap)) as u64))
    }

    fn every(&self) -> Duration {
        Duration::from_secs(reflection::MIN_GAP_S as u64)
    }

    async fn run(&mut self, db: &Db, now: i64) -> Result<(), StoreError> {
        if self.turns.in_flight() || db.call(|c| busy_queue(c)).await?.is_some() {
            return Ok(());
        }
        let cancel = CancellationToken::new();
        let outcome = reflection::reflect_batch(db, &self.llm, now, self.rng.next_u64(), &cancel).await?;
        tracing::debug!("routing reflection: {outcome:?}");
        db.call(move |c| KvStateRepo(c).set_text(NAMESPACE, LAST_REFLECTION, &now.to_string(), now)).await
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
