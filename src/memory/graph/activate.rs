//! Synchronous leaky integrate-and-fire over the concept graph (seed 004, parameters §12.1,
//! docs/cognition.md §9.4.1), as a pure function over a prebuilt [`Graph`].
//!
//! The reference fires the nodes of a step one after another and applies each one's transfers
//! at once, so a node later in insertion order fires with what an earlier one just gave it and
//! the same graph gives different energies under a different insertion order. Here a step reads
//! only the previous step's state: every node over threshold fires with the potential it had
//! when the step began, and the transfers of all of them are summed afterwards.

use std::collections::HashMap;

/// Activation's knobs (parameters §12.1 defaults).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    pub max_steps: u8,
    /// Leak: an unfired node keeps `1 − decay` of its positive potential after each step.
    pub decay: f64,
    pub top_k: usize,
    /// Zero every potential before seeding (off: leftover potential helps this call).
    pub reset: bool,
    pub trace_decay: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params { max_steps: 3, decay: 0.1, top_k: 10, reset: true, trace_decay: 0.1 }
    }
}

/// A node as activation sees it: the store's row of a live concept, used as it is read.
pub use crate::store::GraphNodeRow as Node;

impl Node {
    /// A node at the reference's defaults (threshold 1, nothing stored).
    pub fn new(id: i64, name: impl Into<String>) -> Node {
        Node { id, name: name.into(), threshold: 1.0, potential: 0.0, trace: 0.0, probation: false }
    }
}

/// A stored edge. A `both` edge is walked in each direction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Edge {
    pub id: i64,
    pub source: i64,
    pub target: i64,
    pub weight: f64,
    pub both: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Out {
    pub(super) target: u32,
    pub(super) weight: f64,
    pub(super) edge: i64,
}

/// The graph in adjacency-array form: read by every activation, kept between turns and
/// patched in place as the stored graph changes (`super::patch`). Node `i`'s transfers are the
/// `span[i].len` slots from `span[i].start` of `out`, sorted by (target, edge) as a fresh build
/// sorts them; a node that outgrows its room moves to the end of `out`, leaving slots no span
/// covers, so `out` is only ever read through a span.
#[derive(Debug, Clone, Default)]
pub struct Graph {
    pub nodes: Vec<Node>,
    pub(super) index: HashMap<i64, u32>,
    pub(super) span: Vec<Span>,
    pub(super) out: Vec<Out>,
    /// Transfers in all spans.
    pub(super) transfers: usize,
    /// Node positions by their name's first word, lower-cased: built on the first
    /// [`Graph::named_in`], then kept with the graph and patched with it.
    pub(super) by_first_word: std::sync::OnceLock<HashMap<String, Vec<u32>>>,
}

/// Where one node's transfers are in `Graph::out`: `len` used of `cap` slots from `start`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Span {
    pub(super) start: u32,
    pub(super) len: u32,
    pub(super) cap: u32,
}

/// Energy put into a node before the first step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Seed {
    pub node: i64,
    pub energy: f64,
}

/// How a fired node was reached: the largest positive transfer into it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Via {
    pub from: i64,
    pub edge: i64,
    pub weight: f64,
}

/// One node that fired.
#[derive(Debug, Clone, PartialEq)]
pub struct Firing {
    pub node: i64,
    pub step: u8,
    /// Its potential when it fired.
    pub energy: f64,
    /// The seed its activation came from (itself for a seed).
    pub seed: i64,
    /// The edges from that seed to it, in order (empty for a seed).
    pub path: Vec<i64>,
    pub via: Option<Via>,
}

/// What one call did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Activation {
    /// Fired and not inhibited, by energy (then id), at most `top_k`.
    pub fired: Vec<Firing>,
    /// How many fired in all (before inhibition and `top_k`).
    pub fired_total: usize,
    /// Nodes driven below zero, with the potential they ended at, by id.
    pub inhibited: Vec<(i64, f64)>,
    /// Last firing step + 1 (0 when nothing fired).
    pub steps: u8,
    /// Every fired node's new trace (its firing energy).
    pub traces: Vec<(i64, f64)>,
    /// The step every fired node fired at (inhibited ones and those past `top_k` included).
    pub steps_of: HashMap<i64, u8>,
    /// What every other trace is multiplied by.
    pub trace_factor: f64,
    /// Positive potential left on unfired nodes (what a later call with reset off starts from).
    pub leftover: Vec<(i64, f64)>,
    /// Every reached node's highest positive potential (seeds, fired and sub-threshold nodes),
    /// by id: a graded read of how near each came to firing, for callers that weigh a
    /// neighbourhood rather than ask what fired (drift's energy gate, docs/cognition.md §14.4).
    pub peak: Vec<(i64, f64)>,
}

impl Graph {
    /// Build from nodes and stored edges: a `both` edge becomes two transfers; self-loops and
    /// edges to unknown nodes are skipped.
    pub fn new(nodes: Vec<Node>, edges: &[Edge]) -> Graph {
        let index: HashMap<i64, u32> = nodes.iter().enumerate().map(|(i, n)| (n.id, i as u32)).collect();
        let mut arcs: Vec<(u32, Out)> = Vec::with_capacity(edges.len() * 2);
        for e in edges {
            let (Some(&s), Some(&t)) = (index.get(&e.source), index.get(&e.target)) else { continue };
            if s == t || !e.weight.is_finite() {
                continue;
            }
            arcs.push((s, Out { target: t, weight: e.weight, edge: e.id }));
            if e.both {
                arcs.push((t, Out { target: s, weight: e.weight, edge: e.id }));
            }
        }
        arcs.sort_by_key(|(s, o)| (*s, o.target, o.edge));
        let mut span = vec![Span::default(); nodes.len()];
        for (s, _) in &arcs {
            span[*s as usize].len += 1;
        }
        let mut at = 0u32;
        for sp in &mut span {
            *sp = Span { start: at, len: sp.len, cap: sp.len };
            at += sp.len;
        }
        let transfers = arcs.len();
        Graph {
            nodes,
            index,
            span,
            out: arcs.into_iter().map(|(_, o)| o).collect(),
            transfers,
            by_first_word: std::sync::OnceLock::new(),
        }
    }

    /// The slots of `out` holding node position `i`'s transfers.
    pub(super) fn arcs(&self, i: usize) -> std::ops::Range<usize> {
        let s = self.span[i];
        s.start as usize..(s.start + s.len) as usize
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Directed transfers (a symmetric edge counts twice).
    pub fn transfer_count(&self) -> usize {
        self.transfers
    }

    pub fn node(&self, id: i64) -> Option<&Node> {
        self.index.get(&id).map(|&i| &self.nodes[i as usize])
    }

    /// `(target, weight, edge id)` of every transfer out of `id`.
    pub fn outgoing(&self, id: i64) -> impl Iterator<Item = (i64, f64, i64)> + '_ {
        let range = self.index.get(&id).map_or(0..0, |&i| self.arcs(i as usize));
        self.out[range].iter().map(|o| (self.nodes[o.target as usize].id, o.weight, o.edge))
    }

    /// Keep a call's results as the graph's state (traces, leftover potential).
    pub fn apply(&mut self, a: &Activation) {
        for n in &mut self.nodes {
            n.trace *= a.trace_factor;
            n.potential = 0.0;
        }
        for (id, t) in &a.traces {
            if let Some(&i) = self.index.get(id) {
                self.nodes[i as usize].trace = *t;
            }
        }
        for (id, p) in &a.leftover {
            if let Some(&i) = self.index.get(id) {
                self.nodes[i as usize].potential = *p;
            }
        }
    }
}

pub use super::run::{Run, Transfer, activate};

/// Seeds from the nearest concepts (parameters §12.3 "seeding from embeddings"): the best
/// `MAX_SEEDS` with similarity ≥ `SEED_MIN_SIM`, energy `(sim / best) · SEED_ENERGY`.
pub fn seeds_from_similarity(nearest: &[(i64, f64)]) -> Vec<Seed> {
    let mut kept: Vec<(i64, f64)> =
        nearest.iter().copied().filter(|(_, s)| *s >= SEED_MIN_SIM && s.is_finite()).collect();
    kept.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    kept.truncate(MAX_SEEDS);
    let best = kept.first().map_or(1.0, |k| k.1);
    kept.into_iter().map(|(node, s)| Seed { node, energy: s / best * SEED_ENERGY }).collect()
}

pub const MAX_SEEDS: usize = 10;
pub const SEED_MIN_SIM: f64 = 0.25;
pub const SEED_ENERGY: f64 = 2.0;
