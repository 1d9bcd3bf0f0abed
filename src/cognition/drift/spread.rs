//! The drift cycle's spreading activation (seed 000's default mode network, docs/cognition.md
//! §14.4): breadth-first to depth 2 from one seed; a child gets parent × 0.7, scaled by a strong
//! edge's weight; a weak edge (< 0.5) passes only when the cycle's RNG lets it (probability
//! 0.15, unscaled); values under 0.3 are dropped; each concept keeps its maximum.
//!
//! Why not the turn's leaky integrate-and-fire (`memory::graph::activate`): its energies are
//! potentials against a firing threshold of 1.0, so a neighbour either fires (≥ 1.0) or is not
//! reported, and the drift's energy gate (0.4 over the non-seed concepts) would only ask "did
//! anything fire". The gate needs graded energies in [0, 1], which this spread gives.

use std::collections::{HashMap, HashSet, VecDeque};

/// Each step keeps this share of its parent's energy.
pub const DECAY: f64 = 0.7;
/// Edges at least this strong always pass, scaled by their weight.
pub const STRONG: f64 = 0.5;
/// The chance that a weak edge passes.
pub const WEAK_PASS: f64 = 0.15;
/// Energies under this are dropped.
pub const FLOOR: f64 = 0.3;
/// Steps from the seed.
pub const MAX_DEPTH: u32 = 2;

/// One excitatory edge, as the spread walks it (a two-way edge appears once per direction).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Edge {
    pub id: i64,
    pub from: i64,
    pub to: i64,
    pub strength: f64,
}

/// Spread from `seeds` (each included at 1.0); `weak_pass(edge_id)` decides each weak edge.
/// Sorted by energy, then id, so the result does not depend on hash order.
pub fn spread(seeds: &[i64], edges: &[Edge], depth: u32, weak_pass: &dyn Fn(i64) -> bool) -> Vec<(i64, f64)> {
    let mut out: HashMap<i64, f64> = seeds.iter().map(|&s| (s, 1.0)).collect();
    let mut queue: VecDeque<(i64, f64, u32)> = seeds.iter().map(|&s| (s, 1.0, 0)).collect();
    let mut visited: HashSet<i64> = seeds.iter().copied().collect();
    while let Some((node, act, d)) = queue.pop_front() {
        if d >= depth.min(MAX_DEPTH) {
            continue;
        }
        for e in edges.iter().filter(|e| e.from == node) {
            let mut child = act * DECAY;
            if e.strength >= STRONG {
                child *= e.strength;
            } else if !weak_pass(e.id) {
                continue;
            }
            if child < FLOOR {
                continue;
            }
            let best = out.entry(e.to).or_insert(0.0);
            *best = best.max(child);
            if visited.insert(e.to) {
                queue.push_back((e.to, child, d + 1));
            }
        }
    }
    let mut v: Vec<(i64, f64)> = out.into_iter().collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(id: i64, from: i64, to: i64, strength: f64) -> Edge {
        Edge { id, from, to, strength }
    }

    #[test]
    fn energy_decays_scales_and_stops_at_depth_two() {
        let edges = [e(1, 1, 2, 1.0), e(2, 2, 3, 0.8), e(3, 3, 4, 1.0), e(4, 1, 5, 0.2)];
        let got = spread(&[1], &edges, 2, &|_| false);
        assert_eq!(got[0], (1, 1.0), "the seed is included at 1.0");
        assert!((got[1].1 - 0.7).abs() < 1e-9);
        assert!((got.iter().find(|x| x.0 == 3).unwrap().1 - 0.7 * 0.7 * 0.8).abs() < 1e-9);
        assert!(got.iter().all(|x| x.0 != 4), "depth 2 stops before node 4");
        assert!(got.iter().all(|x| x.0 != 5), "a weak edge that does not pass");
        let with_weak = spread(&[1], &edges, 2, &|_| true);
        assert!((with_weak.iter().find(|x| x.0 == 5).unwrap().1 - 0.7).abs() < 1e-9, "passes unscaled");
    }
}
