//! Bringing a kept [`Graph`] up to date with the rows the graph log names
//! (`store::GraphLogRepo`, migration 0020), instead of reading every concept and edge again.
//!
//! Each logged row is re-read as it is now, so applying an entry twice, or an older entry after
//! a newer one, leaves the same graph: the result is the graph a fresh [`super::load`] would
//! build, transfer for transfer and in the same order (nodes by id, each node's transfers by
//! target then edge). What cannot be patched in place (a concept leaving the graph, or joining
//! it below the highest id, which would shift every position after it) answers `false`, and
//! the caller loads afresh: forgets, decay's expiry and a revived concept, not a turn's writes.

use super::activate::{Graph, Out, Span};
use super::learn::first_word;
use crate::store::{EdgeRow, GraphChange, GraphLogRepo, GraphNodeRow, StoreError};
use std::collections::{HashMap, HashSet};

/// A node as [`Graph::shape`] compares it: id, name, threshold, probation, transfers.
#[cfg(test)]
pub(super) type NodeShape = (i64, String, f64, bool, Vec<(i64, f64, i64)>);

/// Slots a node gets when it first outgrows its room (then twice what it had).
const MIN_ROOM: u32 = 4;

impl Graph {
    /// Apply `changes`, re-reading each changed row through `log`. `Ok(false)`: one of them
    /// needs a full load, and `self` is left part-way (the caller drops it).
    pub(super) fn patch(&mut self, log: &GraphLogRepo<'_>, changes: &[GraphChange]) -> Result<bool, StoreError> {
        let mut nodes: HashSet<i64> = HashSet::new();
        let mut edges: HashMap<i64, Vec<(i64, i64)>> = HashMap::new();
        for ch in changes {
            match *ch {
                GraphChange::Concept { id, old_id } => {
                    if old_id.is_some_and(|old| old != id) {
                        return Ok(false);
                    }
                    nodes.insert(id);
                }
                GraphChange::Edge { id, old_ends } => edges.entry(id).or_default().extend(old_ends),
            }
        }
        // Concepts first (in id order, so new ones append in order), then the edges they meet.
        let mut nodes: Vec<i64> = nodes.into_iter().collect();
        nodes.sort_unstable();
        let mut added = Vec::new();
        for id in nodes {
            match (self.index.get(&id).copied(), log.node(id)?) {
                (Some(i), Some((row, true))) => self.set_node(i, row),
                (Some(_), _) => return Ok(false),
                (None, Some((row, true))) => {
                    if self.nodes.last().is_some_and(|n| n.id >= id) {
                        return Ok(false);
                    }
                    self.push_node(row);
                    added.push(id);
                }
                (None, _) => {}
            }
        }
        for id in added {
            for e in log.edges_of(id)? {
                self.put_edge(e.id, &[], Some(&e));
            }
        }
        let mut edges: Vec<(i64, Vec<(i64, i64)>)> = edges.into_iter().collect();
        edges.sort_unstable_by_key(|e| e.0);
        for (id, old) in edges {
            let row = log.edge(id)?;
            self.put_edge(id, &old, row.as_ref());
        }
        self.compact_if_sparse();
        Ok(true)
    }

    fn set_node(&mut self, i: u32, row: GraphNodeRow) {
        let old = std::mem::replace(&mut self.nodes[i as usize], row);
        let new = &self.nodes[i as usize];
        if old.name != new.name
            && let Some(index) = self.by_first_word.get_mut()
        {
            if let Some(at) = first_word(&old.name).and_then(|w| index.get_mut(&w)) {
                at.retain(|&j| j != i);
            }
            if let Some(w) = first_word(&new.name) {
                index.entry(w).or_default().push(i);
            }
        }
    }

    fn push_node(&mut self, row: GraphNodeRow) {
        let i = self.nodes.len() as u32;
        if let (Some(index), Some(w)) = (self.by_first_word.get_mut(), first_word(&row.name)) {
            index.entry(w).or_default().push(i);
        }
        self.index.insert(row.id, i);
        self.nodes.push(row);
        self.span.push(Span { start: self.out.len() as u32, len: 0, cap: 0 });
    }

    /// Edge `id` as `row` says it is now (None: gone): its transfers are taken out wherever it
    /// was (`old` ends) or is, and put back where it is, as [`Graph::new`] would place them.
    fn put_edge(&mut self, id: i64, old: &[(i64, i64)], row: Option<&EdgeRow>) {
        let mut ends: Vec<i64> = old.iter().flat_map(|&(a, b)| [a, b]).collect();
        ends.extend(row.iter().flat_map(|e| [e.source, e.target]));
        ends.sort_unstable();
        ends.dedup();
        for end in ends {
            if let Some(&i) = self.index.get(&end) {
                self.remove_transfers(i as usize, id);
            }
        }
        let Some(e) = row else { return };
        let (Some(&s), Some(&t)) = (self.index.get(&e.source), self.index.get(&e.target)) else { return };
        if s == t || !e.weight.is_finite() {
            return;
        }
        self.insert_transfer(s as usize, Out { target: t, weight: e.weight, edge: id });
        if e.bidirectional {
            self.insert_transfer(t as usize, Out { target: s, weight: e.weight, edge: id });
        }
    }

    fn remove_transfers(&mut self, i: usize, edge: i64) {
        let range = self.arcs(i);
        let (start, mut kept) = (range.start, range.start);
        for slot in range {
            if self.out[slot].edge != edge {
                self.out[kept] = self.out[slot];
                kept += 1;
            }
        }
        let removed = self.span[i].len as usize - (kept - start);
        self.span[i].len = (kept - start) as u32;
        self.transfers -= removed;
    }

    fn insert_transfer(&mut self, i: usize, o: Out) {
        if self.span[i].len == self.span[i].cap {
            self.grow_room(i);
        }
        let range = self.arcs(i);
        let at = range.start + self.out[range.clone()].partition_point(|x| (x.target, x.edge) < (o.target, o.edge));
        self.out.copy_within(at..range.end, at + 1);
        self.out[at] = o;
        self.span[i].len += 1;
        self.transfers += 1;
    }

    /// Move node `i`'s transfers to the end of `out` with twice the room.
    fn grow_room(&mut self, i: usize) {
        let range = self.arcs(i);
        let cap = (self.span[i].cap * 2).max(MIN_ROOM);
        let start = self.out.len();
        self.out.extend_from_within(range.clone());
        self.out.resize(start + cap as usize, Out::default());
        self.span[i] = Span { start: start as u32, len: range.len() as u32, cap };
    }

    /// Once most of `out` is rooms left behind or unused, pack it again (each node's
    /// transfers in place, room = what it uses).
    fn compact_if_sparse(&mut self) {
        if self.out.len() <= 2 * self.transfers + 4096 {
            return;
        }
        let mut out = Vec::with_capacity(self.transfers);
        for i in 0..self.span.len() {
            let range = self.arcs(i);
            let start = out.len() as u32;
            out.extend_from_slice(&self.out[range]);
            self.span[i] = Span { start, len: out.len() as u32 - start, cap: out.len() as u32 - start };
        }
        self.out = out;
    }

    /// What a fresh build of the same rows must equal: each node's id, name, threshold and
    /// probation, then its transfers in order (`(target id, weight, edge)`). Traces and
    /// potentials are left out: the kept copy holds those of its load (see `GraphCache`).
    #[cfg(test)]
    pub(super) fn shape(&self) -> Vec<NodeShape> {
        self.nodes
            .iter()
            .map(|n| (n.id, n.name.clone(), n.threshold, n.probation, self.outgoing(n.id).collect()))
            .collect()
    }
}

#[cfg(test)]
mod tests;
