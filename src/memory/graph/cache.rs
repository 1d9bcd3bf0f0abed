//! The graph a turn activates, kept between turns (docs/cognition.md §9.4.7). Loading it reads
//! every live concept and edge (~280 ms at 1M memories); the graph's version (bumped by
//! triggers on every write that changes what activation reads, migrations 0013 and 0020) says
//! when the copy is stale, and the graph log (migration 0020) names the rows each bump changed,
//! so a copy behind by a few writes (a turn's learning: a handful of edge weights, a grown node)
//! re-reads just those rows and is patched in place (`super::patch`). A full load happens at
//! the first call, and when the log cannot bring the copy up to date (too far behind, a pruned
//! log, a concept leaving the graph).

use super::activate::Graph;
use super::load;
use crate::store::{GraphLogRepo, StoreError};
use rusqlite::{Connection, DropBehavior};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// Writes past which a full load replaces patching: reading that many rows one by one costs
/// about what the bulk read of a 100k-memory graph does.
pub(super) const MAX_PATCH: usize = 2048;

/// One engine's copy of the graph, with the version and log entry it is up to date with.
#[derive(Debug, Default)]
pub struct GraphCache {
    slot: Mutex<Option<Kept>>,
    loads: AtomicU64,
    patches: AtomicU64,
}

#[derive(Debug)]
struct Kept {
    version: i64,
    seq: i64,
    graph: Arc<Graph>,
}

impl GraphCache {
    pub fn new() -> GraphCache {
        GraphCache::default()
    }

    /// The live graph: the kept copy when the stored version has not moved since it was read,
    /// patched with the rows the log names when it has, else a fresh load (kept for the next
    /// call). A database without the version row (a forget that cleared it) is loaded every
    /// time. Outside a transaction the reads share one snapshot, so the copy is exactly the
    /// state its version and log position name.
    ///
    /// The copy's traces and potentials are those of its load (or of the row's last logged
    /// change): activation with reset on (every turn's) reads neither, and firing writes them
    /// without bumping the version.
    pub fn graph(&self, c: &Connection) -> Result<Arc<Graph>, StoreError> {
        // A read-only snapshot ends with COMMIT (nothing to write), not a ROLLBACK, which would
        // abort a caller's pending reads.
        let snapshot = if c.is_autocommit() {
            let mut tx = c.unchecked_transaction()?;
            tx.set_drop_behavior(DropBehavior::Commit);
            Some(tx)
        } else {
            None
        };
        let log = GraphLogRepo(c);
        let mark = log.mark()?;
        let Some(version) = mark.version else {
            self.loads.fetch_add(1, Ordering::Relaxed);
            return Ok(Arc::new(load(c)?));
        };
        let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(k) = slot.as_ref()
            && k.version == version
            && k.seq == mark.seq
        {
            return Ok(Arc::clone(&k.graph));
        }
        if let Some(k) = slot.take()
            && let Some(patched) = patch(&log, k, version, mark.seq)?
        {
            *slot = Some(Kept { version, seq: mark.seq, graph: Arc::clone(&patched) });
            self.patches.fetch_add(1, Ordering::Relaxed);
            return Ok(patched);
        }
        let g = Arc::new(load(c)?);
        *slot = Some(Kept { version, seq: mark.seq, graph: Arc::clone(&g) });
        self.loads.fetch_add(1, Ordering::Relaxed);
        drop(slot);
        drop(snapshot);
        Ok(g)
    }

    /// How many times the whole graph was read from the database.
    pub fn loads(&self) -> u64 {
        self.loads.load(Ordering::Relaxed)
    }

    /// How many times the kept copy was brought up to date from the graph log instead.
    pub fn patches(&self) -> u64 {
        self.patches.load(Ordering::Relaxed)
    }
}

/// `kept` brought to `version` / log entry `seq` by the log's entries since its own, or None
/// when they cannot: not exactly one entry per version step (a pruned log, a version row reset
/// by a forget), too many, or a change [`Graph::patch`] does not do in place. The copy is
/// patched in place when nothing else holds it (the turn's usual case), else a clone is.
fn patch(log: &GraphLogRepo<'_>, kept: Kept, version: i64, seq: i64) -> Result<Option<Arc<Graph>>, StoreError> {
    let steps = version - kept.version;
    if steps <= 0 || seq <= kept.seq || steps as usize > MAX_PATCH {
        return Ok(None);
    }
    let changes = log.since(kept.seq, MAX_PATCH)?;
    if changes.len() as i64 != steps {
        return Ok(None);
    }
    let mut graph = kept.graph;
    Ok(Arc::make_mut(&mut graph).patch(log, &changes)?.then_some(graph))
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
