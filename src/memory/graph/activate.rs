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

#[derive(Debug, Clone, Copy, PartialEq)]
struct Out {
    target: u32,
    weight: f64,
    edge: i64,
}

/// The graph in compressed adjacency form: built once, read by every activation.
#[derive(Debug, Clone, Default)]
pub struct Graph {
    pub nodes: Vec<Node>,
    index: HashMap<i64, u32>,
    /// Node `i`'s outgoing transfers are `out[start[i]..start[i + 1]]`.
    start: Vec<u32>,
    out: Vec<Out>,
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
        let mut start = vec![0u32; nodes.len() + 1];
        for (s, _) in &arcs {
            start[*s as usize + 1] += 1;
        }
        for i in 0..nodes.len() {
            start[i + 1] += start[i];
        }
        Graph { nodes, index, start, out: arcs.into_iter().map(|(_, o)| o).collect() }
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Directed transfers (a symmetric edge counts twice).
    pub fn transfer_count(&self) -> usize {
        self.out.len()
    }

    pub fn node(&self, id: i64) -> Option<&Node> {
        self.index.get(&id).map(|&i| &self.nodes[i as usize])
    }

    /// `(target, weight, edge id)` of every transfer out of `id`.
    pub fn outgoing(&self, id: i64) -> impl Iterator<Item = (i64, f64, i64)> + '_ {
        let range =
            self.index.get(&id).map_or(0..0, |&i| self.start[i as usize] as usize..self.start[i as usize + 1] as usize);
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

const TOUCHED: u8 = 1;
const FIRED: u8 = 2;
const INHIBITED: u8 = 4;
const SEEDED: u8 = 8;

/// Run one activation from `seeds` (unknown ids are ignored; a repeated seed adds up).
pub fn activate(g: &Graph, seeds: &[Seed], p: &Params) -> Activation {
    let n = g.len();
    // Zeroed allocations are lazily mapped, so a large graph costs little beyond what is touched.
    let mut pot = vec![0.0f64; n];
    let mut flags = vec![0u8; n];
    let mut energy = vec![0.0f64; n];
    let mut step_of = vec![0u8; n];
    // The largest positive transfer in and its slot in `out` + 1 (0: none).
    let mut best = vec![0.0f64; n];
    let mut via_slot = vec![0u32; n];
    let mut via_from = vec![0u32; n];
    let mut peak = vec![0.0f64; n];
    let mut touched: Vec<u32> = Vec::new();
    let touch = |i: u32, flags: &mut [u8], touched: &mut Vec<u32>| {
        if flags[i as usize] & TOUCHED == 0 {
            flags[i as usize] |= TOUCHED;
            touched.push(i);
        }
    };
    if !p.reset {
        for (i, node) in g.nodes.iter().enumerate() {
            if node.potential != 0.0 && node.potential.is_finite() {
                pot[i] = node.potential;
                touch(i as u32, &mut flags, &mut touched);
            }
        }
    }
    for s in seeds {
        if let Some(&i) = g.index.get(&s.node)
            && s.energy.is_finite()
        {
            pot[i as usize] += s.energy;
            flags[i as usize] |= SEEDED;
            touch(i, &mut flags, &mut touched);
        }
    }
    for &i in &touched {
        peak[i as usize] = pot[i as usize].max(0.0);
    }
    let mut last_step = None;
    let mut firing: Vec<u32> = Vec::new();
    for step in 0..p.max_steps {
        firing.clear();
        firing.extend(touched.iter().copied().filter(|&i| {
            let i = i as usize;
            flags[i] & (FIRED | INHIBITED) == 0 && pot[i] >= g.nodes[i].threshold
        }));
        if firing.is_empty() {
            break;
        }
        firing.sort_unstable();
        last_step = Some(step);
        for &i in &firing {
            let i = i as usize;
            energy[i] = pot[i];
            step_of[i] = step;
            flags[i] |= FIRED;
            pot[i] = 0.0;
        }
        for &i in &firing {
            let e = energy[i as usize];
            for slot in g.start[i as usize]..g.start[i as usize + 1] {
                let o = g.out[slot as usize];
                let t = o.target as usize;
                let give = o.weight * e;
                pot[t] += give;
                if give > best[t] {
                    best[t] = give;
                    via_slot[t] = slot + 1;
                    via_from[t] = i;
                }
                touch(o.target, &mut flags, &mut touched);
            }
        }
        for &i in &touched {
            let i = i as usize;
            peak[i] = peak[i].max(pot[i]);
            if pot[i] < 0.0 {
                flags[i] |= INHIBITED;
            } else if pot[i] > 0.0 && flags[i] & FIRED == 0 {
                pot[i] *= 1.0 - p.decay;
            }
        }
    }
    let mut a = collect(g, p, &touched, &flags, &pot, &energy, &step_of, (&via_slot, &via_from), last_step);
    a.peak = touched
        .iter()
        .filter(|&&i| peak[i as usize] > 0.0)
        .map(|&i| (g.nodes[i as usize].id, peak[i as usize]))
        .collect();
    a.peak.sort_by_key(|x| x.0);
    a
}

#[allow(clippy::too_many_arguments)]
fn collect(
    g: &Graph,
    p: &Params,
    touched: &[u32],
    flags: &[u8],
    pot: &[f64],
    energy: &[f64],
    step_of: &[u8],
    via: (&[u32], &[u32]),
    last_step: Option<u8>,
) -> Activation {
    let (via_slot, via_from) = via;
    let mut a =
        Activation { trace_factor: 1.0 - p.trace_decay, steps: last_step.map_or(0, |s| s + 1), ..Default::default() };
    let mut fired: Vec<u32> = touched.iter().copied().filter(|&i| flags[i as usize] & FIRED != 0).collect();
    // Earlier steps first, so a node's path is known before anything it reached.
    fired.sort_by_key(|&i| (step_of[i as usize], i));
    let mut routes: HashMap<u32, (i64, Vec<i64>)> = HashMap::with_capacity(fired.len());
    for &i in &fired {
        let iu = i as usize;
        let id = g.nodes[iu].id;
        a.fired_total += 1;
        a.traces.push((id, energy[iu]));
        a.steps_of.insert(id, step_of[iu]);
        let via = (via_slot[iu] > 0 && flags[iu] & SEEDED == 0).then(|| {
            let o = g.out[via_slot[iu] as usize - 1];
            Via { from: g.nodes[via_from[iu] as usize].id, edge: o.edge, weight: o.weight }
        });
        let (seed, path) = match (via, routes.get(&via_from[iu])) {
            (Some(v), Some((seed, path))) => {
                let mut path = path.clone();
                path.push(v.edge);
                (*seed, path)
            }
            _ => (id, Vec::new()),
        };
        routes.insert(i, (seed, path.clone()));
        if flags[iu] & INHIBITED == 0 {
            a.fired.push(Firing { node: id, step: step_of[iu], energy: energy[iu], seed, path, via });
        }
    }
    a.fired.sort_by(|x, y| y.energy.total_cmp(&x.energy).then(x.node.cmp(&y.node)));
    a.fired.truncate(p.top_k);
    a.traces.sort_by_key(|t| t.0);
    for &i in touched {
        let iu = i as usize;
        let id = g.nodes[iu].id;
        if flags[iu] & INHIBITED != 0 {
            a.inhibited.push((id, pot[iu]));
        } else if flags[iu] & FIRED == 0 && pot[iu] > 0.0 {
            a.leftover.push((id, pot[iu]));
        }
    }
    a.inhibited.sort_by_key(|x| x.0);
    a.leftover.sort_by_key(|x| x.0);
    a
}

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
