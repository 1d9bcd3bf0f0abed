//! The decay engine: durable memories fade unless used, short-lived rows expire.
//!
//! [`run_decay_once`] is one pass at a given time (tests drive it with a fake clock); the
//! decay task (`super::workers`) runs it when due ([`INTERVAL`] after the previous
//! pass, counted across restarts) and every [`INTERVAL`] after. Each pass is one
//! transaction.
//!
//! - Richness gate (docs/cognition.md §9.10): `0.35·min(episodes/50,1) + 0.25·min(concepts/30,1) +
//!   0.20·min(traits/10,1) + 0.20·warmth`; below 0.1 nothing decays, below 0.3 only episodes
//!   and traits. TTL expiry is not decay and runs regardless (a sparse memory is protected from
//!   fading, not from its short-lived rows reaching their `expires_at`).
//! - Episodes (docs/cognition.md §9.10): when activation > 0.1 and not accessed for > 1 h, `activation =
//!   max(0.1, activation·exp(−r·h))`, r = 0.05 × the reliability multiplier. `h` is the time
//!   since the later of the last access and the previous pass, not since the last access:
//!   applying the whole time since access at every pass would compound (a 3 h old episode
//!   would be decayed by 2 h, then by 2.5 h, …). Over many passes the product is exactly
//!   `exp(−r·hours_since_access)`.
//! - Concepts (docs/cognition.md §9.10): when strength > 0.2 and not accessed for > 1 h, `strength = max(0.2,
//!   strength − 0.03·(1 − decay_resistance)·mult)` per 30-minute period.
//! - Traits (docs/cognition.md §9.10): `eff = base_decay/log2(max(count,1) + 1)`, ×1.5 if inferred, × mult,
//!   per period, down to the category's floor.
//!
//! Per-period steps are scaled by the periods elapsed since the previous pass (at most
//! [`MAX_PERIODS`]; 1 on the very first pass), so restarting the program often neither
//! speeds up nor skips forgetting. A trait at its floor for 7 days is deleted (unless it is the
//! user's own unchallenged statement: [`kept_at_floor`]), and so is a
//! concept that is not `reliable` (docs/cognition.md §10: unreliable memories are left to decay away);
//! every deletion writes a `memory_deletions` row with a JSON snapshot, drops the vector
//! and resolves the memory's open uncertainties as `decayed`.

use crate::store::StoreError;
use rusqlite::Connection;
use serde::Serialize;
use std::time::Duration;

pub const INTERVAL: Duration = Duration::from_secs(1800);
/// One decay period, the unit of the per-pass concept and trait steps (seconds).
pub const PERIOD_S: i64 = 1800;
/// A pass after a long gap applies at most a day of periods.
pub const MAX_PERIODS: f64 = 48.0;
/// Memories used within this long are not decayed (seconds).
pub const ACCESS_GRACE_S: i64 = 3600;
pub const EPISODE_RATE: f64 = 0.05;
pub const ACTIVATION_FLOOR: f64 = 0.1;
pub const CONCEPT_STEP: f64 = 0.03;
pub const STRENGTH_FLOOR: f64 = 0.2;
pub const INFERRED_FACTOR: f64 = 1.5;
/// Time at the floor after which a trait (or an unreliable concept) is deleted (seconds).
pub const AT_FLOOR_S: i64 = 7 * 86_400;
const EPS: f64 = 1e-9;

/// docs/cognition.md §9.10: how much faster a memory in this state decays.
pub fn reliability_multiplier(reliability: &str) -> f64 {
    match reliability {
        "uncertain" => 1.5,
        "contradicted" => 2.0,
        "superseded" => 3.0,
        _ => 1.0,
    }
}

/// docs/cognition.md §9.10 Richness.
pub fn richness(episodes: i64, concepts: i64, traits: i64, warmth: f64) -> f64 {
    let part = |n: i64, full: f64| (n as f64 / full).clamp(0.0, 1.0);
    0.35 * part(episodes, 50.0)
        + 0.25 * part(concepts, 30.0)
        + 0.20 * part(traits, 10.0)
        + 0.20 * warmth.clamp(0.0, 1.0)
}

/// Which decay a pass runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Gate {
    Skip,
    EpisodesAndTraits,
    All,
}

pub fn gate(richness: f64) -> Gate {
    if richness < 0.1 {
        Gate::Skip
    } else if richness < 0.3 {
        Gate::EpisodesAndTraits
    } else {
        Gate::All
    }
}

/// Decay periods since the previous pass (see the module docs).
/// How long until the next pass is due: [`INTERVAL`] after the previous one, now if none ran.
pub fn until_due(last_pass: Option<i64>, now: i64) -> Duration {
    let elapsed = last_pass.map_or(u64::MAX, |t| u64::try_from(now - t).unwrap_or(0));
    INTERVAL.saturating_sub(Duration::from_secs(elapsed))
}

pub fn periods(last_pass: Option<i64>, now: i64) -> f64 {
    last_pass.map_or(1.0, |t| ((now - t) as f64 / PERIOD_S as f64).clamp(0.0, MAX_PERIODS))
}

/// Hours of episode decay this pass applies, or `None` when the episode was used within the
/// last hour.
pub fn episode_decay_hours(last_access: i64, last_pass: Option<i64>, now: i64) -> Option<f64> {
    if now - last_access <= ACCESS_GRACE_S {
        return None;
    }
    let from = last_pass.map_or(last_access, |p| p.max(last_access));
    let hours = (now - from) as f64 / 3600.0;
    (hours > 0.0).then_some(hours)
}

pub fn decay_activation(activation: f64, hours: f64, multiplier: f64) -> f64 {
    (activation * (-EPISODE_RATE * multiplier * hours).exp()).max(ACTIVATION_FLOOR)
}

pub fn decay_strength(strength: f64, decay_resistance: f64, multiplier: f64, periods: f64) -> f64 {
    let step = CONCEPT_STEP * (1.0 - decay_resistance.clamp(0.0, 1.0)) * multiplier * periods;
    (strength - step).max(STRENGTH_FLOOR)
}

/// `(base_decay, floor)` per trait category (docs/cognition.md §9.10); unknown categories decay as `general`.
pub fn trait_params(category: &str) -> (f64, f64) {
    match category {
        "core" => (0.010, 0.30),
        "relationship" => (0.010, 0.25),
        "physical" => (0.015, 0.20),
        "communication_style" | "behavioral_pattern" => (0.005, 0.20),
        "micro_preference" => (0.015, 0.15),
        _ => (0.020, 0.10),
    }
}

/// A trait's confidence after `periods`; one already at or below its floor stays put.
pub fn decay_confidence(confidence: f64, count: i64, category: &str, inferred: bool, mult: f64, periods: f64) -> f64 {
    let (base, floor) = trait_params(category);
    if confidence <= floor + EPS {
        return confidence;
    }
    let eff = base / ((count.max(1) + 1) as f64).log2() * if inferred { INFERRED_FACTOR } else { 1.0 } * mult;
    (confidence - eff * periods).max(floor)
}

/// Whether a trait stays at its floor instead of being deleted after [`AT_FLOOR_S`]: the
/// user's own statement that nothing has challenged (their name, an allergy). It fades out
/// of context like any trait, but only the user (`memory forget`) or a contradiction
/// removes it; silently forgetting what someone told you is worse than keeping it.
pub fn kept_at_floor(source: &str, reliability: &str) -> bool {
    source == "explicit" && reliability == "reliable"
}

/// Whether a memory at its floor since `at_floor_since` is due for deletion.
pub fn due_for_deletion(at_floor_since: Option<i64>, now: i64) -> bool {
    at_floor_since.is_some_and(|t| now - t >= AT_FLOOR_S)
}

/// What one pass did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DecayReport {
    pub richness: f64,
    pub gate: Option<Gate>,
    pub episodes_decayed: usize,
    pub concepts_decayed: usize,
    pub traits_decayed: usize,
    pub traits_deleted: usize,
    pub concepts_deleted: usize,
    pub relationships_deleted: usize,
    pub expired: usize,
    pub uncertainties_decayed: usize,
    /// Learned graph edges pruned below |w| 0.05 (docs/cognition.md §9.4.4).
    pub graph_edges_pruned: usize,
    /// Probationary grown nodes past their probation (docs/cognition.md §9.4.5).
    pub grown_nodes_expired: usize,
}

impl DecayReport {
    /// A line for the user when durable memories were forgotten (expiry is routine: none).
    pub fn forgotten_notice(&self) -> Option<String> {
        let plural = |n: usize, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
        let mut parts = Vec::new();
        if self.traits_deleted > 0 {
            parts.push(plural(self.traits_deleted, "trait"));
        }
        if self.concepts_deleted > 0 {
            parts.push(plural(self.concepts_deleted, "concept"));
        }
        (!parts.is_empty()).then(|| format!("forgot {} that had faded (kept in memory_deletions)", parts.join(" and ")))
    }
}

mod pass;
pub use super::workers::run_decay_task;
pub use pass::current_warmth;

/// One decay pass at `now`, in one transaction.
pub fn run_decay_once(c: &mut Connection, now: i64) -> Result<DecayReport, StoreError> {
    pass::run(c, now)
}

/// When the previous pass ran (unix seconds), counted across restarts.
pub fn last_pass(c: &Connection) -> Result<Option<i64>, StoreError> {
    pass::last_pass(c)
}

#[cfg(test)]
mod tests;
