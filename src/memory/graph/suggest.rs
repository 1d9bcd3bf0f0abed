//! The v2 router's `new_nodes` and `prune_candidates` applied (docs/cognition.md §9.4.11):
//! a suggested node is grown like neurogenesis's (deterministic id, probationary, the day's
//! budget shared with it); a prune suggestion only weakens the edges into a concept, so the
//! decay pass prunes what keeps being named and no durable node is deleted on one word.

use super::grow;
use super::routed::Routed;
use super::router::PRUNE_WEAKEN;
use super::{Activated, Graph};
use crate::store::{ConceptsRepo, RelationshipsRepo, StoreError, VecTable, VectorRepo};
use rusqlite::Connection;

/// Apply `r`'s suggestions (already checked and within the turn's budgets) and say in its
/// report what was created, weakened and refused. A new node takes the message's embedding
/// as its vector (it was suggested about this message), so later messages like it seed it.
pub fn apply(c: &Connection, a: &Activated, r: &mut Routed, embedding: &[f32], now: i64) -> Result<(), StoreError> {
    let (concepts, edges) = (ConceptsRepo(c), RelationshipsRepo(c));
    for s in std::mem::take(&mut r.new_nodes) {
        let name: String = s.name.chars().take(grow::MAX_NAME_CHARS).collect();
        let key = grow::graph_key(&name);
        if let Some(id) = concepts.by_graph_key(&key)? {
            concepts.bump_seed_count(id, now)?;
            r.report.refused.push(format!("new node {name:?}: already in the graph"));
            continue;
        }
        if concepts.grown_since(now - 86_400)? >= grow::MAX_GROWN_PER_DAY {
            r.report.refused.push(format!("new node {name:?}: over the budget of {} a day", grow::MAX_GROWN_PER_DAY));
            continue;
        }
        let id = concepts.insert_grown(&key, &name, grow::GROWN_THRESHOLD, now)?;
        if embedding.len() == crate::store::embedding_dim(c)? {
            VectorRepo(c).upsert(VecTable::Concepts, id, embedding)?;
        }
        for &from in &s.from {
            edges.insert_learned(from, id, grow::SEED_EDGE, now)?;
        }
        for &to in &s.to {
            edges.insert_learned(id, to, grow::SEED_EDGE, now)?;
        }
        r.report.created.push(name);
    }
    for p in std::mem::take(&mut r.prunes) {
        let into = edges_into(&a.graph, p.node);
        for &(edge, w) in &into {
            edges.add_weight(edge, -w * PRUNE_WEAKEN * p.confidence, false, now)?;
        }
        if !into.is_empty() {
            r.report.weakened.push(a.name(p.node).to_string());
        }
    }
    Ok(())
}

/// `(edge id, weight)` of every edge into `id`, each edge once (a symmetric edge is stored once
/// and expanded both ways).
pub fn edges_into(g: &Graph, id: i64) -> Vec<(i64, f64)> {
    let Some(&target) = g.index.get(&id) else { return Vec::new() };
    let mut out: Vec<(i64, f64)> = (0..g.len())
        .flat_map(|i| g.out[g.arcs(i)].iter())
        .filter(|o| o.target == target)
        .map(|o| (o.edge, o.weight))
        .collect();
    out.sort_by_key(|x| x.0);
    out.dedup_by_key(|x| x.0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::graph::{Edge, Node};

    #[test]
    fn edges_into_a_concept_count_a_symmetric_edge_once() {
        let g = Graph::new(
            vec![Node::new(1, "a"), Node::new(2, "b"), Node::new(3, "c")],
            &[
                Edge { id: 10, source: 1, target: 2, weight: 0.4, both: false },
                Edge { id: 11, source: 3, target: 2, weight: -0.3, both: true },
                Edge { id: 12, source: 2, target: 1, weight: 0.9, both: false },
            ],
        );
        assert_eq!(edges_into(&g, 2), vec![(10, 0.4), (11, -0.3)]);
        assert_eq!(edges_into(&g, 3), vec![(11, -0.3)], "the symmetric edge, expanded");
        assert!(edges_into(&g, 99).is_empty());
    }
}
