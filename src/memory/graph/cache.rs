//! The graph a turn activates, kept between turns (docs/cognition.md §9.4.7). Loading it reads
//! every live concept and edge; the graph's version (bumped by triggers on every write that
//! changes what activation reads, migration 0012) says when the copy is stale, so a turn after
//! one that wrote nothing to the graph skips the load.

use super::activate::Graph;
use super::load;
use crate::store::{KvStateRepo, StoreError};
use rusqlite::Connection;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// One engine's copy of the graph and the version it was loaded at.
#[derive(Debug, Default)]
pub struct GraphCache {
    slot: Mutex<Option<(i64, Arc<Graph>)>>,
    loads: AtomicU64,
}

impl GraphCache {
    pub fn new() -> GraphCache {
        GraphCache::default()
    }

    /// The live graph: the kept copy when the stored version has not moved since it was read,
    /// else a fresh load (kept for the next call). A database without the version row (a
    /// forget that cleared it) is loaded every time.
    ///
    /// The copy's traces and potentials are those of its load: activation with reset on (every
    /// turn's) reads neither, and firing writes them without bumping the version.
    pub fn graph(&self, c: &Connection) -> Result<Arc<Graph>, StoreError> {
        let Some(version) = KvStateRepo(c).graph_version()? else {
            self.loads.fetch_add(1, Ordering::Relaxed);
            return Ok(Arc::new(load(c)?));
        };
        let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((v, g)) = slot.as_ref()
            && *v == version
        {
            return Ok(Arc::clone(g));
        }
        let g = Arc::new(load(c)?);
        *slot = Some((version, Arc::clone(&g)));
        self.loads.fetch_add(1, Ordering::Relaxed);
        Ok(g)
    }

    /// How many times the graph was read from the database.
    pub fn loads(&self) -> u64 {
        self.loads.load(Ordering::Relaxed)
    }
}

/// Where a caller outside the turn (a skill, a drift cycle) gets the graph: the engine's
/// [`GraphCache`] when it was handed one, else a fresh load each time (a one-off command, a
/// test). Equal when both name the same cache, so the structs that carry it stay comparable.
#[derive(Debug, Clone, Default)]
pub struct GraphHandle(Option<Arc<GraphCache>>);

impl GraphHandle {
    pub fn new(cache: Arc<GraphCache>) -> GraphHandle {
        GraphHandle(Some(cache))
    }

    /// The live graph, through the cache when there is one.
    pub fn graph(&self, c: &Connection) -> Result<Arc<Graph>, StoreError> {
        match &self.0 {
            Some(cache) => cache.graph(c),
            None => Ok(Arc::new(load(c)?)),
        }
    }

    pub fn cache(&self) -> Option<&Arc<GraphCache>> {
        self.0.as_ref()
    }
}

impl PartialEq for GraphHandle {
    fn eq(&self, other: &GraphHandle) -> bool {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        }
    }
}
