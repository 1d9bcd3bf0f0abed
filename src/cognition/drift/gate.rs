//! The cycle's gates (docs/cognition.md §14.2, §14.4): the reasons a cycle is skipped before
//! any seed is chosen, the energy gate over the non-seed concepts, and cooldowns.

use super::{ENERGY_GATE, FATIGUE_BUDGET, FATIGUE_WINDOW_S, MIN_RICHNESS, RECENT_EPISODE_S, TOP_K};
use std::collections::HashMap;

/// What the skip gates read, gathered by the caller at `now`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Conditions {
    /// A user turn is being answered.
    pub turn_in_flight: bool,
    /// Queues holding a queued or running job.
    pub busy_queues: Vec<String>,
    pub last_episode_at: Option<i64>,
    pub richness: f64,
    /// An open focus session.
    pub in_focus: bool,
    /// The fatigue record: `(at, energy)` of each cycle that produced a thought.
    pub fatigue: Vec<(i64, f64)>,
}

/// Why a cycle stopped without a thought.
#[derive(Debug, Clone, PartialEq)]
pub enum Skip {
    TurnInFlight,
    QueueBusy(String),
    NoRecentEpisode,
    Poor { richness: f64 },
    Focus,
    Fatigued { spent: f64 },
    NoSeed { tried: usize },
    Weak { energy: f64 },
    NothingLeft,
}

impl std::fmt::Display for Skip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Skip::TurnInFlight => write!(f, "a turn is in flight"),
            Skip::QueueBusy(q) => write!(f, "queue busy: {q}"),
            Skip::NoRecentEpisode => write!(f, "no episode in the last 168 h"),
            Skip::Poor { richness } => write!(f, "memory richness {richness:.2} < {MIN_RICHNESS}"),
            Skip::Focus => write!(f, "the user is in a focus session"),
            Skip::Fatigued { spent } => write!(f, "fatigued: {spent:.2} of {FATIGUE_BUDGET} spent in 30 min"),
            Skip::NoSeed { tried } => write!(f, "no seed concept ({tried} tries, cooled down or none)"),
            Skip::Weak { energy } => write!(f, "weak associations: energy {energy:.2} ≤ {ENERGY_GATE}"),
            Skip::NothingLeft => write!(f, "every activated concept is cooling down"),
        }
    }
}

/// The sum of the energies recorded in the fatigue window before `now`.
pub fn fatigue_spent(record: &[(i64, f64)], now: i64) -> f64 {
    record.iter().filter(|(at, _)| *at > now - FATIGUE_WINDOW_S && *at <= now).map(|(_, e)| e).sum()
}

/// The first reason to skip, in the seed's order (a turn in flight comes first: drift
/// yields to the user at once).
pub fn skip_reason(c: &Conditions, now: i64) -> Option<Skip> {
    if c.turn_in_flight {
        return Some(Skip::TurnInFlight);
    }
    if let Some(q) = c.busy_queues.first() {
        return Some(Skip::QueueBusy(q.clone()));
    }
    if c.last_episode_at.is_none_or(|t| t < now - RECENT_EPISODE_S) {
        return Some(Skip::NoRecentEpisode);
    }
    if c.richness < MIN_RICHNESS {
        return Some(Skip::Poor { richness: c.richness });
    }
    if c.in_focus {
        return Some(Skip::Focus);
    }
    let spent = fatigue_spent(&c.fatigue, now);
    if spent >= FATIGUE_BUDGET {
        return Some(Skip::Fatigued { spent });
    }
    None
}

/// The gate's value: the strongest activation of a concept other than the seed (the
/// reference counted the seed's own 1.0, so its gate never closed). 0 when nothing fired.
pub fn energy(activated: &[(i64, f64)], seed: i64) -> f64 {
    activated.iter().filter(|(id, _)| *id != seed).map(|(_, a)| *a).fold(0.0, f64::max)
}

pub fn passes(energy: f64) -> bool {
    energy > ENERGY_GATE
}

/// The non-seed concepts not cooling down at `now`, strongest first, at most [`TOP_K`].
pub fn keep(activated: &[(i64, f64)], seed: i64, cooldowns: &HashMap<i64, i64>, now: i64) -> Vec<(i64, f64)> {
    let mut v: Vec<(i64, f64)> = activated
        .iter()
        .copied()
        .filter(|(id, _)| *id != seed && cooldowns.get(id).is_none_or(|until| *until <= now))
        .collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    v.truncate(TOP_K);
    v
}

pub fn cooling(cooldowns: &HashMap<i64, i64>, id: i64, now: i64) -> bool {
    cooldowns.get(&id).is_some_and(|until| *until > now)
}
