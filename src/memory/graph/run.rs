//! An activation a step at a time (docs/cognition.md §9.4.1, §9.4.9): [`activate`] runs every
//! step with the stored weights; the v2 router runs the same steps and weighs each step's
//! transfers with the model's verdicts before they apply.

use super::activate::{Activation, Firing, Graph, Params, Seed, Via};
use std::collections::HashMap;

const TOUCHED: u8 = 1;
const FIRED: u8 = 2;
const INHIBITED: u8 = 4;
const SEEDED: u8 = 8;

/// Run one activation from `seeds` (unknown ids are ignored; a repeated seed adds up), every
/// transfer at its stored weight.
pub fn activate(g: &Graph, seeds: &[Seed], p: &Params) -> Activation {
    let mut run = Run::start(g, seeds, p);
    while run.fire() {
        run.spread(|_, w| w);
    }
    run.finish()
}

/// One transfer a step's firing is about to make.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Transfer {
    pub source: i64,
    pub target: i64,
    pub edge: i64,
    /// The stored weight.
    pub weight: f64,
    /// The firing node's energy.
    pub energy: f64,
}

/// An activation in progress, a step at a time, so a router can weigh a step's transfers
/// before they apply (docs/cognition.md §9.4.9). [`activate`] is this with every weight as stored.
#[derive(Debug)]
pub struct Run<'g> {
    g: &'g Graph,
    p: Params,
    s: Scratch,
    touched: Vec<u32>,
    firing: Vec<u32>,
    step: u8,
    last_step: Option<u8>,
}

impl<'g> Run<'g> {
    pub fn start(g: &'g Graph, seeds: &[Seed], p: &Params) -> Run<'g> {
        let mut r = Run {
            g,
            p: *p,
            s: Scratch::take(g.len()),
            touched: Vec::new(),
            firing: Vec::new(),
            step: 0,
            last_step: None,
        };
        if !p.reset {
            for (i, node) in g.nodes.iter().enumerate() {
                if node.potential != 0.0 && node.potential.is_finite() {
                    r.s.pot[i] = node.potential;
                    r.touch(i as u32);
                }
            }
        }
        for s in seeds {
            if let Some(&i) = g.index.get(&s.node)
                && s.energy.is_finite()
            {
                r.s.pot[i as usize] += s.energy;
                r.s.flags[i as usize] |= SEEDED;
                r.touch(i);
            }
        }
        for &i in &r.touched {
            r.s.peak[i as usize] = r.s.pot[i as usize].max(0.0);
        }
        r
    }

    fn touch(&mut self, i: u32) {
        if self.s.flags[i as usize] & TOUCHED == 0 {
            self.s.flags[i as usize] |= TOUCHED;
            self.touched.push(i);
        }
    }

    /// Fire the next step: every unfired, uninhibited node at or over its threshold, with the
    /// potential it has now. False (nothing fired) when none is, or after `max_steps`.
    pub fn fire(&mut self) -> bool {
        self.firing.clear();
        if self.step >= self.p.max_steps {
            return false;
        }
        let (g, pot, flags) = (self.g, &self.s.pot, &self.s.flags);
        self.firing.extend(self.touched.iter().copied().filter(|&i| {
            let i = i as usize;
            flags[i] & (FIRED | INHIBITED) == 0 && pot[i] >= g.nodes[i].threshold
        }));
        if self.firing.is_empty() {
            return false;
        }
        self.firing.sort_unstable();
        self.last_step = Some(self.step);
        for &i in &self.firing {
            let i = i as usize;
            self.s.energy[i] = self.s.pot[i];
            self.s.step_of[i] = self.step;
            self.s.flags[i] |= FIRED;
            self.s.pot[i] = 0.0;
        }
        true
    }

    /// The step being run (the one [`Run::fire`] just fired).
    pub fn step(&self) -> u8 {
        self.step
    }

    /// The nodes that fired this step, with their energy.
    pub fn firing(&self) -> impl Iterator<Item = (i64, f64)> + '_ {
        self.firing.iter().map(|&i| (self.g.nodes[i as usize].id, self.s.energy[i as usize]))
    }

    /// Whether `id` has fired in this call (this step included).
    pub fn has_fired(&self, id: i64) -> bool {
        self.g.index.get(&id).is_some_and(|&i| self.s.flags[i as usize] & FIRED != 0)
    }

    /// The transfers this step's firings make, in slot order.
    pub fn transfers(&self) -> impl Iterator<Item = Transfer> + '_ {
        self.firing.iter().flat_map(move |&i| {
            let (g, e) = (self.g, self.s.energy[i as usize]);
            g.arcs(i as usize).map(move |slot| {
                let o = g.out[slot];
                Transfer {
                    source: g.nodes[i as usize].id,
                    target: g.nodes[o.target as usize].id,
                    edge: o.edge,
                    weight: o.weight,
                    energy: e,
                }
            })
        })
    }

    /// Apply this step's transfers, each at `weigh(transfer, stored weight)`, then mark the
    /// inhibited and leak the rest; the step is over.
    pub fn spread(&mut self, weigh: impl Fn(&Transfer, f64) -> f64) {
        let g = self.g;
        for k in 0..self.firing.len() {
            let i = self.firing[k];
            let e = self.s.energy[i as usize];
            for slot in g.arcs(i as usize) {
                let o = g.out[slot];
                let t = o.target as usize;
                let tr = Transfer {
                    source: g.nodes[i as usize].id,
                    target: g.nodes[t].id,
                    edge: o.edge,
                    weight: o.weight,
                    energy: e,
                };
                let w = weigh(&tr, o.weight);
                let give = if w.is_finite() { w * e } else { o.weight * e };
                self.s.pot[t] += give;
                if give > self.s.best[t] {
                    self.s.best[t] = give;
                    self.s.via_slot[t] = slot as u32 + 1;
                    self.s.via_from[t] = i;
                }
                self.touch(o.target);
            }
        }
        for &i in &self.touched {
            let i = i as usize;
            self.s.peak[i] = self.s.peak[i].max(self.s.pot[i]);
            if self.s.pot[i] < 0.0 {
                self.s.flags[i] |= INHIBITED;
            } else if self.s.pot[i] > 0.0 && self.s.flags[i] & FIRED == 0 {
                self.s.pot[i] *= 1.0 - self.p.decay;
            }
        }
        self.step += 1;
    }

    /// What the call did.
    pub fn finish(self) -> Activation {
        let r = &self;
        let mut a = collect(
            r.g,
            &r.p,
            &r.touched,
            &r.s.flags,
            &r.s.pot,
            &r.s.energy,
            &r.s.step_of,
            (&r.s.via_slot, &r.s.via_from),
            r.last_step,
        );
        a.peak = r
            .touched
            .iter()
            .filter(|&&i| r.s.peak[i as usize] > 0.0)
            .map(|&i| (r.g.nodes[i as usize].id, r.s.peak[i as usize]))
            .collect();
        a.peak.sort_by_key(|x| x.0);
        a
    }
}

/// A run's per-node arrays, eight of them as long as the graph. Allocating them zeroed each
/// turn cost a page fault per page touched and an unmap at the end (a million memories hold
/// hundreds of thousands of nodes), so each thread keeps one set: a run writes only the entries
/// of nodes it touches, and zeroes exactly those when it ends.
#[derive(Debug, Default)]
struct Scratch {
    pot: Vec<f64>,
    flags: Vec<u8>,
    energy: Vec<f64>,
    step_of: Vec<u8>,
    /// The largest positive transfer in and its slot in `out` + 1 (0: none).
    best: Vec<f64>,
    via_slot: Vec<u32>,
    via_from: Vec<u32>,
    peak: Vec<f64>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Option<Scratch>> = const { std::cell::RefCell::new(None) };
}

impl Scratch {
    /// Zeroed arrays of at least `n` entries: the thread's kept set if no other run holds it.
    fn take(n: usize) -> Scratch {
        let mut s = SCRATCH.with(|k| k.borrow_mut().take()).unwrap_or_default();
        if s.pot.len() < n {
            s.pot.resize(n, 0.0);
            s.flags.resize(n, 0);
            s.energy.resize(n, 0.0);
            s.step_of.resize(n, 0);
            s.best.resize(n, 0.0);
            s.via_slot.resize(n, 0);
            s.via_from.resize(n, 0);
            s.peak.resize(n, 0.0);
        }
        s
    }

    /// Zero the entries of `touched` (the only ones a run writes) and keep the set for the
    /// thread's next run.
    fn give_back(mut self, touched: &[u32]) {
        for &i in touched {
            let i = i as usize;
            self.pot[i] = 0.0;
            self.flags[i] = 0;
            self.energy[i] = 0.0;
            self.step_of[i] = 0;
            self.best[i] = 0.0;
            self.via_slot[i] = 0;
            self.via_from[i] = 0;
            self.peak[i] = 0.0;
        }
        SCRATCH.with(|k| *k.borrow_mut() = Some(self));
    }
}

impl Drop for Run<'_> {
    fn drop(&mut self) {
        std::mem::take(&mut self.s).give_back(&self.touched);
    }
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
