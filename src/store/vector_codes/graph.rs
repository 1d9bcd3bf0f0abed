//! A navigable small-world graph (HNSW) over one table's int8 rows: the search for tables too big
//! to scan whole.
//!
//! A flat scan reads every binary code (48 MB at a million 384-d rows); the coarse lists of
//! `table.rs` read fewer but lost the exact top 10 on near-duplicate data (each real sentence
//! with ~50 close variants, whose neighbours straddle many lists). A graph walks from a
//! far-away entry towards the query, one neighbourhood at a time, and keeps the `ef` nearest
//! rows seen: it follows the data however it clusters, and reads a few thousand rows a query.
//!
//! Layout: node `n` is one row as it was inserted. Its layer-0 links are `M0` slots of
//! `links0` (unused slots hold [`NONE`]); the few nodes on upper layers (one in [`M`]) keep
//! theirs in `upper`. A node keeps the table slot its row is in (`node_slot`), which the table
//! updates when it moves a row; a removed or re-embedded row's node is dead (its slot is
//! [`DEAD`]) and is skipped by every search, so a forgotten row can never be returned. The
//! graph stays navigable through the live nodes while the dead are few; the table rebuilds it
//! past [`MAX_DEAD_SHARE`].
//!
//! Similarity is cosine over the int8 rows: a query (f32) against a row with `dot_int8`, two
//! rows against each other with `dot_i8` (integer products), each divided by the norms.

use super::kernels::{dot_i8, dot_int8, dots_int8};

mod file;
pub use file::{FileError, Stamp, load, save};
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// Links a node keeps on each upper layer.
pub const M: usize = 16;
/// Links a node keeps on layer 0 (twice [`M`], as HNSW's authors advise).
pub const M0: usize = 32;
/// The breadth of the search that finds a new node's neighbours.
pub const EF_CONSTRUCTION: usize = 100;
/// The table is rebuilt once this share of its nodes is dead.
pub const MAX_DEAD_SHARE: f32 = 0.2;
/// An unused link slot.
pub const NONE: u32 = u32::MAX;
/// The slot of a dead node.
pub const DEAD: u32 = u32::MAX;

/// A node and its similarity to the query (higher is nearer); ordered by similarity, ties to
/// the smaller node.
#[derive(Clone, Copy, Debug)]
pub struct Near {
    pub sim: f32,
    pub node: u32,
}

impl PartialEq for Near {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Near {}
impl PartialOrd for Near {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Near {
    fn cmp(&self, other: &Self) -> Ordering {
        self.sim.total_cmp(&other.sim).then(other.node.cmp(&self.node))
    }
}

/// The table's rows as the graph reads them: `dim` int8 bytes and a norm per slot.
#[derive(Clone, Copy)]
pub struct Rows<'a> {
    pub rows: &'a [i8],
    pub norms: &'a [f32],
    pub dim: usize,
}

impl Rows<'_> {
    fn row(&self, slot: u32) -> &[i8] {
        &self.rows[slot as usize * self.dim..(slot as usize + 1) * self.dim]
    }

    /// The unit f32 vector of the row in `slot`.
    fn unit(&self, slot: u32) -> Vec<f32> {
        let norm = self.norms[slot as usize].max(f32::EPSILON);
        self.row(slot).iter().map(|&x| f32::from(x) / norm).collect()
    }
}

pub struct Graph {
    node_slot: Vec<u32>,
    /// Per table slot: its node (the table's slots are dense, so this is a vector).
    slot_node: Vec<u32>,
    links0: Vec<u32>,
    /// Per node: its top layer, and where its upper layers' links are in `upper` (NONE if none).
    level: Vec<u8>,
    upper_at: Vec<u32>,
    upper: Vec<Vec<Vec<u32>>>,
    entry: u32,
    top: u8,
    dead: usize,
    rng: u64,
    /// Per node: the search that last saw it (avoids clearing a visited set per search).
    seen: Vec<u32>,
    stamp: u32,
}

impl Default for Graph {
    fn default() -> Self {
        Graph::new()
    }
}

impl Graph {
    pub fn new() -> Graph {
        Graph {
            node_slot: Vec::new(),
            slot_node: Vec::new(),
            links0: Vec::new(),
            level: Vec::new(),
            upper_at: Vec::new(),
            upper: Vec::new(),
            entry: NONE,
            top: 0,
            dead: 0,
            rng: 0x2545_F491_4F6C_DD1D,
            seen: Vec::new(),
            stamp: 0,
        }
    }

    /// Nodes ever inserted, dead ones included.
    pub fn nodes(&self) -> usize {
        self.node_slot.len()
    }

    #[cfg(test)]
    pub fn dead(&self) -> usize {
        self.dead
    }

    /// Whether so many nodes are dead that the graph should be built again.
    pub fn worn(&self) -> bool {
        self.dead as f32 > MAX_DEAD_SHARE * self.nodes().max(1) as f32
    }

    /// The row in table slot `slot` is gone: its node dies.
    pub fn remove_slot(&mut self, slot: u32) {
        if let Some(&node) = self.slot_node.get(slot as usize)
            && node != NONE
            && self.node_slot[node as usize] != DEAD
        {
            self.node_slot[node as usize] = DEAD;
            self.slot_node[slot as usize] = NONE;
            self.dead += 1;
        }
    }

    /// The table moved the row in slot `from` to slot `to` (and dropped slot `from`, its last).
    pub fn move_slot(&mut self, from: u32, to: u32) {
        let node = self.slot_node.get(from as usize).copied().unwrap_or(NONE);
        if (to as usize) < self.slot_node.len() {
            self.slot_node[to as usize] = node;
        }
        if node != NONE {
            self.node_slot[node as usize] = to;
        }
        self.slot_node.truncate(from as usize);
    }

    /// Drop trailing slots past `len` (the table shrank by its last slot without a move).
    pub fn truncate_slots(&mut self, len: usize) {
        self.slot_node.truncate(len);
    }

    /// Point a graph built over a copy of the table (live node i was row `ids[i]`) at the table
    /// as it is now (`slot_of`, `slots` rows): a node whose row is gone, or is in `changed` (its
    /// vector may differ from the copy's), dies, as does one dead already; the caller inserts
    /// the changed rows afresh.
    pub fn remap(
        &mut self,
        ids: &[i64],
        slot_of: &std::collections::HashMap<i64, u32>,
        changed: &std::collections::HashSet<i64>,
        slots: usize,
    ) {
        self.slot_node = vec![NONE; slots];
        self.dead = 0;
        for (node, id) in ids.iter().enumerate() {
            match slot_of.get(id) {
                Some(&slot)
                    if self.node_slot[node] != DEAD
                        && !changed.contains(id)
                        && (slot as usize) < slots
                        && self.slot_node[slot as usize] == NONE =>
                {
                    self.node_slot[node] = slot;
                    self.slot_node[slot as usize] = node as u32;
                }
                _ => {
                    self.node_slot[node] = DEAD;
                    self.dead += 1;
                }
            }
        }
    }

    fn links(&self, node: u32, layer: u8) -> &[u32] {
        if layer == 0 {
            let at = node as usize * M0;
            let l = &self.links0[at..at + M0];
            &l[..l.iter().position(|&x| x == NONE).unwrap_or(M0)]
        } else {
            &self.upper[self.upper_at[node as usize] as usize][layer as usize - 1]
        }
    }

    fn set_links(&mut self, node: u32, layer: u8, to: &[u32]) {
        if layer == 0 {
            let at = node as usize * M0;
            let l = &mut self.links0[at..at + M0];
            l.fill(NONE);
            l[..to.len()].copy_from_slice(to);
        } else {
            let u = &mut self.upper[self.upper_at[node as usize] as usize][layer as usize - 1];
            u.clear();
            u.extend_from_slice(to);
        }
    }

    fn sim(&self, q: &[f32], node: u32, rows: Rows) -> Option<f32> {
        let slot = self.node_slot[node as usize];
        (slot != DEAD).then(|| dot_int8(q, rows.row(slot)) / rows.norms[slot as usize].max(f32::EPSILON))
    }

    /// Cosine of two live nodes' rows.
    fn sim_nodes(&self, a: u32, b: u32, rows: Rows) -> f32 {
        let (sa, sb) = (self.node_slot[a as usize], self.node_slot[b as usize]);
        let dot = dot_i8(rows.row(sa), rows.row(sb)) as f32;
        dot / (rows.norms[sa as usize] * rows.norms[sb as usize]).max(f32::EPSILON)
    }

    /// A live node to start from: the entry, or (if it died) the live node on the highest layer.
    fn live_entry(&mut self) -> Option<u32> {
        if self.entry != NONE && self.node_slot[self.entry as usize] != DEAD {
            return Some(self.entry);
        }
        let best = (0..self.nodes() as u32)
            .filter(|&n| self.node_slot[n as usize] != DEAD)
            .max_by_key(|&n| (self.level[n as usize], Reverse(n)))?;
        self.entry = best;
        self.top = self.level[best as usize];
        Some(best)
    }

    /// Walk layer `layer` from `from` to the node nearest `q` (one step at a time).
    fn greedy(&self, q: &[f32], mut from: Near, layer: u8, rows: Rows) -> Near {
        loop {
            let mut best = from;
            for &n in self.links(from.node, layer) {
                if let Some(sim) = self.sim(q, n, rows)
                    && sim > best.sim
                {
                    best = Near { sim, node: n };
                }
            }
            if best.node == from.node {
                return from;
            }
            from = best;
        }
    }

    /// The `ef` live nodes nearest `q` found on `layer` from `entry`, nearest first.
    fn search_layer(&mut self, q: &[f32], entry: Near, ef: usize, layer: u8, rows: Rows) -> Vec<Near> {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.seen.fill(0);
            self.stamp = 1;
        }
        let mut seen = std::mem::take(&mut self.seen);
        seen.resize(self.nodes(), 0);
        let stamp = self.stamp;
        seen[entry.node as usize] = stamp;
        let mut todo = BinaryHeap::from([entry]);
        let mut found = BinaryHeap::from([Reverse(entry)]);
        let (mut slots, mut nodes) = (Vec::with_capacity(M0), Vec::with_capacity(M0));
        while let Some(c) = todo.pop() {
            let worst = found.peek().map_or(f32::MIN, |r| r.0.sim);
            if found.len() >= ef && c.sim < worst {
                break;
            }
            slots.clear();
            nodes.clear();
            for &n in self.links(c.node, layer) {
                if seen[n as usize] == stamp {
                    continue;
                }
                seen[n as usize] = stamp;
                let slot = self.node_slot[n as usize];
                if slot != DEAD {
                    slots.push(slot);
                    nodes.push(n);
                }
            }
            let dots = dots_int8(q, rows.rows, &slots);
            for ((&n, &slot), dot) in nodes.iter().zip(&slots).zip(dots) {
                let sim = dot / rows.norms[slot as usize].max(f32::EPSILON);
                let worst = found.peek().map_or(f32::MIN, |r| r.0.sim);
                if found.len() < ef || sim > worst {
                    let near = Near { sim, node: n };
                    todo.push(near);
                    found.push(Reverse(near));
                    if found.len() > ef {
                        found.pop();
                    }
                }
            }
        }
        self.seen = seen;
        let mut out: Vec<Near> = found.into_iter().map(|r| r.0).collect();
        out.sort_by(|a, b| b.cmp(a));
        out
    }

    /// The `ef` (at least) live nodes nearest the unit query `q`, nearest first, as
    /// `(table slot, cosine)`.
    pub fn search(&mut self, q: &[f32], ef: usize, rows: Rows) -> Vec<(u32, f32)> {
        let Some(entry) = self.live_entry() else { return Vec::new() };
        let Some(sim) = self.sim(q, entry, rows) else { return Vec::new() };
        let mut ep = Near { sim, node: entry };
        for layer in (1..=self.top).rev() {
            ep = self.greedy(q, ep, layer, rows);
        }
        self.search_layer(q, ep, ef.max(1), 0, rows)
            .into_iter()
            .map(|n| (self.node_slot[n.node as usize], n.sim))
            .collect()
    }

    fn draw_level(&mut self) -> u8 {
        // xorshift64*: deterministic, so a rebuilt graph is the same graph.
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        let r = self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D);
        let u = ((r >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        ((-u.ln() / (M as f64).ln()) as u8).min(15)
    }

    /// Of `cands` (nearest first), up to `m` that are each nearer the base than any kept before
    /// them (HNSW's heuristic: links that point in different directions, so that a cluster of
    /// near-duplicates does not take every link); then the nearest of the rest, up to `m`.
    fn select(&self, cands: &[Near], m: usize, rows: Rows) -> Vec<u32> {
        let mut kept: Vec<u32> = Vec::with_capacity(m);
        let mut skipped: Vec<u32> = Vec::new();
        for c in cands {
            if kept.len() >= m {
                break;
            }
            if kept.iter().all(|&k| self.sim_nodes(c.node, k, rows) < c.sim) {
                kept.push(c.node);
            } else {
                skipped.push(c.node);
            }
        }
        let room = m.saturating_sub(kept.len());
        kept.extend(skipped.into_iter().take(room));
        kept
    }

    /// Add the row in table slot `slot` (the newest slot, or one the table reuses).
    pub fn insert(&mut self, slot: u32, rows: Rows) {
        let node = self.nodes() as u32;
        let level = self.draw_level();
        self.node_slot.push(slot);
        if self.slot_node.len() <= slot as usize {
            self.slot_node.resize(slot as usize + 1, NONE);
        }
        self.slot_node[slot as usize] = node;
        super::huge::reserve(&mut self.links0, M0);
        self.links0.extend(std::iter::repeat_n(NONE, M0));
        self.level.push(level);
        if level > 0 {
            self.upper_at.push(self.upper.len() as u32);
            self.upper.push(vec![Vec::new(); level as usize]);
        } else {
            self.upper_at.push(NONE);
        }
        self.seen.push(0);
        let entry = if self.entry == NONE { None } else { self.live_entry().filter(|&e| e != node) };
        let Some(entry) = entry else {
            self.entry = node;
            self.top = level;
            return;
        };
        let q = rows.unit(slot);
        let mut ep = Near { sim: self.sim(&q, entry, rows).unwrap_or(f32::MIN), node: entry };
        for layer in (level.saturating_add(1)..=self.top).rev() {
            ep = self.greedy(&q, ep, layer, rows);
        }
        for layer in (0..=level.min(self.top)).rev() {
            let found = self.search_layer(&q, ep, EF_CONSTRUCTION, layer, rows);
            let m = if layer == 0 { M0 } else { M };
            let chosen = self.select(&found, m, rows);
            self.set_links(node, layer, &chosen);
            for &c in &chosen {
                self.link_back(c, node, layer, m, rows);
            }
            if let Some(&best) = found.first() {
                ep = best;
            }
        }
        if level > self.top {
            self.entry = node;
            self.top = level;
        }
    }

    /// Add a link from `from` to `to` on `layer`, pruning `from`'s links back to `m` by the
    /// heuristic when full (dead links go first).
    fn link_back(&mut self, from: u32, to: u32, layer: u8, m: usize, rows: Rows) {
        let mut links: Vec<u32> = self.links(from, layer).to_vec();
        if links.contains(&to) {
            return;
        }
        links.retain(|&n| self.node_slot[n as usize] != DEAD);
        links.push(to);
        if links.len() > m {
            let mut near: Vec<Near> =
                links.iter().map(|&n| Near { sim: self.sim_nodes(from, n, rows), node: n }).collect();
            near.sort_by(|a, b| b.cmp(a));
            links = self.select(&near, m, rows);
        }
        self.set_links(from, layer, &links);
    }
}
