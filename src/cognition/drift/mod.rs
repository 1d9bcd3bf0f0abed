//! The drift engine (seed 000's default mode network): while the user is idle, a seed concept
//! is chosen, activation spreads from it, and when the neighbourhood is strong enough a
//! thought is written and routed to one action (docs/cognition.md §14).
//!
//! The stages are pure functions over plain structs ([`gate`], [`seed`], [`synth`],
//! [`actions`], [`schedule`]), driven with a seeded RNG and an injected `now`; [`run`] does the
//! cycle's I/O (the database thread, the lightweight model, the bus) and [`worker`] runs it on
//! its timer.

pub mod actions;
pub mod comm;
pub mod cycle;
pub mod gate;
pub mod propose;
pub mod reconcile;
pub mod run;
pub mod schedule;
pub mod seed;
pub mod suggest;
pub mod synth;
pub mod worker;

#[cfg(test)]
mod tests;

use crate::memory::graph::{self, Graph, Params, Seed};

/// §14.1: base interval between cycles (seconds).
pub const INTERVAL_S: u64 = 300;
/// §14.2: an episode must exist this recently (seconds).
pub const RECENT_EPISODE_S: i64 = 168 * 3600;
/// §14.2: memory richness below this skips the cycle.
pub const MIN_RICHNESS: f64 = 0.1;
/// §14.2: the fatigue window and budget.
pub const FATIGUE_WINDOW_S: i64 = 30 * 60;
pub const FATIGUE_BUDGET: f64 = 2.5;
/// §14.2: probability of a self-reflection cycle when noteworthy self-model items exist.
pub const SELF_REFLECTION_P: f64 = 0.20;
/// §14.4: the energy gate (over the non-seed concepts).
pub const ENERGY_GATE: f64 = 0.4;
/// §14.4: cooldown on the seed and the activated concepts (seconds).
pub const COOLDOWN_S: i64 = 3600;
/// §14.4: the strength a decaying seed gains once its thought is stored (capped at 10).
pub const DECAYING_RESCUE: f64 = 0.1;
/// §14.4: concepts kept after the gate.
pub const TOP_K: usize = 5;

/// §14.4: drift's energy per unit of drive. A direct neighbour over an edge of weight `w`
/// from a seed fired at its threshold has drive `w`, and under seed 000's spread it had energy
/// `0.7·w`; scaling by the same 0.7 keeps the 0.4 gate, the 2.5 fatigue budget and the 0.5
/// strong-signal line meaning what the seed's numbers meant.
pub const HOP: f64 = 0.7;

/// Drift's run of the graph's one activation (the turn's leaky integrate-and-fire, §9.4):
/// the seed gets its own threshold, so it fires once with the least energy that does, and
/// every reached node that was not inhibited is read by its drive — its peak potential over
/// its threshold, at most 1 — times [`HOP`]. By energy, then id; the seed is included.
pub fn activate(seed: i64, g: &Graph) -> Vec<(i64, f64)> {
    let Some(node) = g.node(seed) else { return Vec::new() };
    let energy = node.threshold.max(f64::MIN_POSITIVE);
    let a = graph::activate::activate(g, &[Seed { node: seed, energy }], &Params::default());
    let mut v: Vec<(i64, f64)> = a
        .peak
        .iter()
        .filter(|(id, _)| a.inhibited.binary_search_by_key(id, |x| x.0).is_err())
        .filter_map(|&(id, p)| {
            let th = g.node(id)?.threshold;
            (th > 0.0).then(|| (id, HOP * (p / th).min(1.0)))
        })
        .collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    v
}
