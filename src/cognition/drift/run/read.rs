//! What a cycle reads (docs/cognition.md §14.2–§14.4, §14.7): the engine's remembered state and
//! the snapshot the pure stages run on. Reading the graph is most of a snapshot's cost
//! (docs/cognition.md §14.7) and drift runs while nothing changes it, so the graph comes through
//! the engine's version-keyed cache ([`crate::memory::graph::GraphCache`]).

use super::super::cycle::Snapshot;
use super::super::gate::Conditions;
use super::super::seed::{Concept, Episode, Pool};
use super::{KV, Options, State};
use crate::store::{DriftRepo, FocusSessionsRepo, JobKind, JobsRepo, KvStateRepo, StoreError};
use rusqlite::Connection;

pub(super) fn load_state(c: &Connection) -> Result<State, StoreError> {
    Ok(KvStateRepo(c).get_text(KV.0, KV.1)?.and_then(|s| serde_json::from_str(&s).ok()).unwrap_or_default())
}

pub(super) fn save_state(c: &Connection, s: &State, now: i64) -> Result<(), StoreError> {
    KvStateRepo(c).set_text(KV.0, KV.1, &serde_json::to_string(s)?, now)
}

/// Read everything the pure stages need.
pub fn snapshot(c: &Connection, now: i64, o: &Options) -> Result<(Snapshot, State), StoreError> {
    let mut state = load_state(c)?;
    state.cooldowns.retain(|_, until| *until > now);
    state.fatigue.retain(|(at, _)| *at > now - super::super::FATIGUE_WINDOW_S);
    let drift = DriftRepo(c);
    let busy_queues = JobKind::ALL
        .into_iter()
        .filter(|k| JobsRepo(c).depth(*k).is_ok_and(|d| d > 0))
        .map(|k| k.as_str().to_string())
        .collect();
    let episodes_n = crate::store::EpisodesRepo(c).live_count()?;
    let concepts_n = crate::store::ConceptsRepo(c).live_count()?;
    let traits_n = crate::store::TraitsRepo(c).count()?;
    let warmth = crate::memory::decay::current_warmth(c, now)?;
    let conditions = Conditions {
        turn_in_flight: o.turn_in_flight,
        busy_queues,
        last_episode_at: drift.last_episode_at()?,
        richness: crate::memory::decay::richness(episodes_n, concepts_n, traits_n, warmth),
        in_focus: FocusSessionsRepo(c).active(now)?.is_some(),
        fatigue: state.fatigue.clone(),
    };
    let concepts = drift
        .concepts()?
        .into_iter()
        .map(|(id, name, strength, confidence, last, src)| Concept {
            id,
            name,
            strength,
            confidence,
            last_reinforced_at: last,
            sources: serde_json::from_str(&src).unwrap_or_default(),
        })
        .collect();
    let episodes = drift
        .episodes_since(now - 7 * 86_400, 200)?
        .into_iter()
        .map(|(id, gist, topic, salience, created_at)| Episode { id, gist, topic, salience, created_at })
        .collect();
    let pool = Pool {
        concepts,
        episodes,
        topics: drift.topic_counts(now - 7 * 86_400)?,
        last_insight_at: state.last_insight_at,
        interval_s: o.interval_s,
        utc_offset_s: o.utc_offset_s,
    };
    let graph = o.graph_cache.graph(c)?;
    // The self-model the turn reads (docs/cognition.md §4.8), with no regulator break (drift
    // has no turn), most severe first; then drift's own state, which the self-model cannot see.
    let budget = crate::cognition::act::plan::ActLimits::default().fatigue_budget;
    let mut self_items: Vec<String> =
        crate::cognition::self_model::assess(&crate::store::self_readings(c, now)?, None, budget)
            .into_iter()
            .map(|i| i.detail)
            .collect();
    if state.comm.breaker_open(now) {
        self_items.push("my last messages went unanswered, so I am holding back".to_string());
    }
    let snap = Snapshot { conditions, pool, graph, cooldowns: state.cooldowns.clone(), self_items };
    Ok((snap, state))
}
