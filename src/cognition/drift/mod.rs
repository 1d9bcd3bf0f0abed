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
pub mod reconcile;
pub mod run;
pub mod schedule;
pub mod seed;
pub mod spread;
pub mod synth;
pub mod worker;

#[cfg(test)]
mod tests;

use spread::Edge;
use std::collections::HashMap;

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
/// §14.4: concepts kept after the gate.
pub const TOP_K: usize = 5;

/// The graph as activation reads it: each concept's outgoing excitatory edges.
pub type Graph = HashMap<i64, Vec<Edge>>;

/// Build [`Graph`] from edge rows (a bidirectional edge is walked both ways).
pub fn graph(rows: impl IntoIterator<Item = (i64, i64, i64, f64, bool)>) -> Graph {
    let mut g: Graph = HashMap::new();
    for (id, from, to, strength, both) in rows {
        g.entry(from).or_default().push(Edge { id, from, to, strength });
        if both {
            g.entry(to).or_default().push(Edge { id, from: to, to: from, strength });
        }
    }
    g
}

/// Spreading activation from `seed` over its 2-hop neighbourhood ([`spread`] says why it is
/// not the turn's integrate-and-fire); `weak_pass` decides each weak edge (the cycle's seeded
/// RNG). The seed is included at 1.0.
pub fn activate(seed: i64, g: &Graph, weak_pass: &mut dyn FnMut(i64) -> bool) -> Vec<(i64, f64)> {
    let mut near: Vec<Edge> = Vec::new();
    let mut seen: std::collections::HashSet<(i64, i64)> = std::collections::HashSet::new();
    let mut frontier = vec![seed];
    for _ in 0..spread::MAX_DEPTH {
        let mut next = Vec::new();
        for n in frontier {
            for e in g.get(&n).map(Vec::as_slice).unwrap_or(&[]) {
                if seen.insert((e.id, e.from)) {
                    near.push(*e);
                    next.push(e.to);
                }
            }
        }
        frontier = next;
    }
    // `spread` asks about weak edges through a `Fn`; decide them up front, in edge order, so
    // the answer depends only on the RNG's seed.
    let weak: HashMap<i64, bool> =
        near.iter().filter(|e| e.strength < spread::STRONG).map(|e| (e.id, weak_pass(e.id))).collect();
    spread::spread(&[seed], &near, spread::MAX_DEPTH, &|id| weak.get(&id).copied().unwrap_or(false))
}
