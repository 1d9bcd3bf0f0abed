//! The concept graph as seed 004's activation graph (docs/cognition.md §9.4): the semantic
//! worker's concepts are the nodes, their signed relationships the edges. A turn, the
//! `associate` skill, `chalie-tui graph --activate` and the drift engine all go through
//! [`activate`]; the dynamics are the pure [`activate::activate`] over a [`Graph`].

pub mod activate;
pub mod cache;
pub mod context;
pub mod grow;
pub mod learn;
pub mod mode;
mod patch;
pub mod routed;
pub mod router;
pub mod run;
pub mod suggest;
pub mod turn;

pub use activate::{Activation, Edge, Firing, Graph, Node, Params, Seed, Via, seeds_from_similarity};
pub use cache::{GraphCache, GraphHandle};
pub use mode::{GraphMode, GraphTurnStats};

use crate::store::{ConceptsRepo, RelationshipsRepo, StoreError, VecTable, VectorRepo};
use rusqlite::Connection;
use std::sync::Arc;

/// Where an activation starts.
#[derive(Debug, Clone, Copy)]
pub enum Cue<'a> {
    /// A message's embedding: the nearest concepts, energy by similarity.
    Embedding(&'a [f32]),
    /// Named concepts (`associate`, drift): each seeded at `energy`.
    Concepts(&'a [i64], f64),
    /// Seeds given outright.
    Seeds(&'a [Seed]),
}

/// One activation with the graph it ran on (for names and edges).
#[derive(Debug, Clone, Default)]
pub struct Activated {
    /// Shared with the engine's [`GraphCache`] when the turn's graph came from it.
    pub graph: Arc<Graph>,
    pub seeds: Vec<Seed>,
    pub activation: Activation,
}

impl Activated {
    /// A node's name (empty for an unknown id).
    pub fn name(&self, id: i64) -> &str {
        self.graph.node(id).map_or("", |n| n.name.as_str())
    }
}

/// The one entry point: read the live graph, seed it from `cue`, run [`activate::activate`].
/// Nothing is written; a turn persists what fired with [`persist`]. A cue that finds no
/// concept gives an empty activation.
pub fn activate(c: &Connection, cue: Cue<'_>, params: &Params) -> Result<Activated, StoreError> {
    activate_on(c, Arc::new(load(c)?), cue, params)
}

/// [`activate`] over a graph already read (a turn's, from its [`GraphCache`]).
pub fn activate_on(c: &Connection, graph: Arc<Graph>, cue: Cue<'_>, params: &Params) -> Result<Activated, StoreError> {
    let seeds = match cue {
        Cue::Embedding(e) => nearest_seeds(c, e)?,
        Cue::Concepts(ids, energy) => ids.iter().map(|&node| Seed { node, energy }).collect(),
        Cue::Seeds(s) => s.to_vec(),
    };
    let activation = activate::activate(&graph, &seeds, params);
    Ok(Activated { graph, seeds, activation })
}

/// The live graph: every live concept and every edge between two of them.
pub fn load(c: &Connection) -> Result<Graph, StoreError> {
    let nodes = ConceptsRepo(c).graph_nodes()?;
    let edges: Vec<Edge> = RelationshipsRepo(c)
        .graph_edges()?
        .into_iter()
        .map(|e| Edge { id: e.id, source: e.source, target: e.target, weight: e.weight, both: e.bidirectional })
        .collect();
    Ok(Graph::new(nodes, &edges))
}

/// Seeds for a message: its nearest concepts by cosine similarity.
pub fn nearest_seeds(c: &Connection, embedding: &[f32]) -> Result<Vec<Seed>, StoreError> {
    let v = VectorRepo(c);
    if v.is_empty(VecTable::Concepts)? {
        return Ok(Vec::new());
    }
    let near = v.search(VecTable::Concepts, embedding, activate::MAX_SEEDS)?;
    let sims: Vec<(i64, f64)> = near.into_iter().map(|(id, d)| (id, 1.0 - f64::from(d))).collect();
    Ok(seeds_from_similarity(&sims))
}

/// Keep what a turn's activation did: traces decay, fired nodes get their trace and count.
pub fn persist(c: &Connection, a: &Activation, now: i64) -> Result<(), StoreError> {
    ConceptsRepo(c).save_activation(a.trace_factor, &a.traces, &a.leftover, now)
}

#[cfg(test)]
mod tests;
