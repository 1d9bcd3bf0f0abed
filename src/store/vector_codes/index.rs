//! When a table searches through its graph ([`super::graph`]), and how the graph is built
//! without stalling the searches that need an answer now.
//!
//! Building the graph is costly (minutes of one core at a million rows), so it is built on a
//! background thread from a copy of the table's rows taken when the table passes
//! [`GRAPH_MIN_ROWS`]; the flat scan serves every search meanwhile. The table keeps running:
//! every row it adds, removes or re-embeds after the copy is noted, and when the built graph
//! is adopted (at the next search that finds it done) those rows' nodes die and their current
//! rows are inserted afresh, so the adopted graph holds exactly the table's live rows. From
//! then on each change goes straight into the graph; once [`super::graph::MAX_DEAD_SHARE`] of
//! its nodes are dead, a new one is built the same way while the old one serves.
//!
//! A table whose database is a file keeps its graph in a file beside it (`graph::file`): the
//! build thread of a process's first graph reads that back (and brings it up to date with the
//! rows) instead of building, and every graph it builds is written there.

use super::graph::{self, FileError, Graph, Rows, Stamp};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, TryRecvError};

/// A table is searched through a graph from this many rows on. In isolation the graph at the
/// breadth its size needs (`table::graph_ef`) beats the flat scan from ~100k rows (at 250k rows
/// 0.41 ms at breadth 300 against 1.66 ms; at 450k ~1.4-2.0 ms at breadth 540 against ~3 ms;
/// docs/cognition.md §9.9). But the 1M turn (`benches/turn.rs`; 450k episodes, 250k concepts)
/// with graphs from 200k rows measured 12.6 ms median (topic stage 11.3 ms) against main's 6.8
/// (topic 4.9) in alternating runs in session 24, where the searches alone predict ~4 ms: the
/// cause is not found yet (those runs time only the 20 turns after a 5-15 minute wait for the
/// graphs, see docs/architecture.md §9), so the turn's tables stay flat until it is.
pub const GRAPH_MIN_ROWS: usize = 600_000;

/// At most this many rows go into a graph one by one in a batch of changes (or when a built
/// graph is adopted); a bigger batch (an import, a re-embedding of the whole table) would stall
/// the search that reads it for seconds (each insert is a search of its own, ~0.4 ms at 1M
/// rows), so the graph is dropped and built again aside while the flat scan serves.
pub const MAX_BATCH_INSERTS: usize = 5_000;

/// A built graph comes back with the ids of the rows it was built over (live node i is row
/// ids[i]), and whether it was read back from its file rather than built.
type Built = (Graph, Vec<i64>, bool);

struct Building {
    /// In a mutex only so that a table can be read from two threads at once (a receiver cannot
    /// be shared); only `poll`, which has the table to itself, takes it.
    done: Mutex<Receiver<Built>>,
    /// Rows changed since the copy, in order of change (each id once).
    changed: Vec<i64>,
    changed_set: std::collections::HashSet<i64>,
    started: std::time::Instant,
}

pub(super) struct Index {
    graph: Option<Graph>,
    building: Option<Building>,
    min_rows: usize,
    /// Rows inserted into the graph since the last batch ended.
    batch: usize,
    /// Where the graph is kept between processes (None: the database is in memory).
    file: Option<PathBuf>,
    /// Whether the graph searches go through was read back from its file.
    restored: bool,
}

impl Index {
    pub fn new() -> Index {
        Index { graph: None, building: None, min_rows: GRAPH_MIN_ROWS, batch: 0, file: None, restored: false }
    }

    pub fn set_file(&mut self, path: PathBuf) {
        self.file = Some(path);
    }

    #[cfg(test)]
    pub fn set_min_rows(&mut self, rows: usize) {
        self.min_rows = rows;
    }

    /// Live and dead nodes of the graph searches go through, if any.
    #[cfg(test)]
    pub fn graph_counts(&self) -> Option<(usize, usize)> {
        self.graph.as_ref().map(|g| (g.nodes() - g.dead(), g.dead()))
    }

    /// Whether the graph searches go through was read back from its file, not built.
    #[cfg(test)]
    pub fn restored(&self) -> bool {
        self.graph.is_some() && self.restored
    }

    /// The graph, when searches go through one.
    pub fn graph(&mut self) -> Option<&mut Graph> {
        self.graph.as_mut()
    }

    /// Whether searches go through a graph, or the table is too small for one: false while one
    /// is being built.
    pub fn settled(&self, rows: usize) -> bool {
        self.graph.is_some() || (rows < self.min_rows && self.building.is_none())
    }

    /// Whether searches of a table of `rows` rows scan it flat and will go on doing so until it
    /// changes: no graph, none being built, and too small to want one.
    pub fn flat_only(&self, rows: usize) -> bool {
        self.graph.is_none() && self.building.is_none() && rows < self.min_rows
    }

    fn note(&mut self, id: i64) {
        if let Some(b) = &mut self.building
            && b.changed_set.insert(id)
        {
            b.changed.push(id);
        }
    }

    /// Row `id` was added in `slot`.
    pub fn inserted(&mut self, id: i64, slot: u32, rows: Rows) {
        self.note(id);
        if let Some(g) = &mut self.graph {
            self.batch += 1;
            if self.batch > MAX_BATCH_INSERTS {
                self.graph = None;
            } else {
                g.insert(slot, rows);
            }
        }
    }

    /// Row `id` left `slot`, and the table's last slot `last` moved into it (unless it was the last).
    pub fn removed(&mut self, id: i64, slot: u32, last: u32) {
        self.note(id);
        if let Some(g) = &mut self.graph {
            g.remove_slot(slot);
            if slot < last {
                g.move_slot(last, slot);
            } else {
                g.truncate_slots(last as usize);
            }
        }
    }

    /// After a batch of changes: start a build if the table needs a graph (or a fresh one) and
    /// none is under way. `ids` are the table's row ids by slot, `stamp` what they are.
    pub fn maintain(&mut self, ids: &[i64], rows: Rows, stamp: Stamp) {
        self.batch = 0;
        // A table that shrank to well under the threshold goes back to the flat scan (half
        // of it, so that one hovering at the threshold is not built again and again).
        if ids.len() < self.min_rows / 2 {
            self.graph = None;
            self.building = None;
            return;
        }
        let wanted = match &self.graph {
            None => ids.len() >= self.min_rows,
            Some(g) => g.worn(),
        };
        if self.building.is_some() || !wanted {
            return;
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let copy = (ids.to_vec(), rows.rows.to_vec(), rows.norms.to_vec(), rows.dim);
        let file = self.file.clone();
        // A worn graph is built afresh; a table without one may find it on disk.
        let restore = self.graph.is_none();
        let spawned = std::thread::Builder::new().name("vector-graph".into()).spawn(move || {
            let (ids, data, norms, dim) = copy;
            let rows = Rows { rows: &data, norms: &norms, dim };
            let restored = file.as_deref().filter(|_| restore).and_then(|path| restore_from(path, &ids, rows, stamp));
            let built = restored.unwrap_or_else(|| {
                let mut g = Graph::new();
                for slot in 0..ids.len() as u32 {
                    g.insert(slot, rows);
                }
                if let Some(path) = &file {
                    keep(path, &g, &ids, rows, stamp);
                }
                (g, ids, false)
            });
            // The table may be gone by now (evicted, process ending): then nobody listens.
            let _ = tx.send(built);
        });
        // Without a thread the flat scan keeps serving; the next batch tries again.
        if spawned.is_ok() {
            self.building = Some(Building {
                done: Mutex::new(rx),
                changed: Vec::new(),
                changed_set: Default::default(),
                started: std::time::Instant::now(),
            });
        }
    }

    /// Adopt the graph being built if it is done (`wait`: block until it is). `slot_of` maps
    /// each live row id to its slot now. True when a graph was adopted.
    pub fn poll(&mut self, wait: bool, slot_of: &HashMap<i64, u32>, rows: Rows) -> bool {
        let Some(b) = &mut self.building else { return false };
        let done = b.done.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner());
        let built = if wait { done.recv().map_err(|_| TryRecvError::Disconnected) } else { done.try_recv() };
        let (mut graph, ids, restored) = match built {
            Ok(built) => built,
            Err(TryRecvError::Empty) => return false,
            // The builder died (it cannot, short of a panic): build again at the next batch.
            Err(TryRecvError::Disconnected) => {
                self.building = None;
                return false;
            }
        };
        let Some(b) = self.building.take() else { return false };
        if b.changed.len() > MAX_BATCH_INSERTS {
            // Too much changed while it was built: the next batch starts another build.
            return false;
        }
        graph.remap(&ids, slot_of, &b.changed_set, rows.norms.len());
        for id in &b.changed {
            if let Some(&slot) = slot_of.get(id) {
                graph.insert(slot, rows);
            }
        }
        tracing::info!(
            rows = rows.norms.len(),
            restored,
            secs = b.started.elapsed().as_secs_f64(),
            "vector graph ready"
        );
        self.graph = Some(graph);
        self.restored = restored;
        true
    }
}

/// The graph kept in `path`, brought up to date with the table's rows (`ids` by slot), unless
/// there is none usable or so much changed since it was kept that a fresh build is better.
fn restore_from(path: &std::path::Path, ids: &[i64], rows: Rows, stamp: Stamp) -> Option<Built> {
    let stored = match graph::load(path, stamp) {
        Ok(stored) => stored,
        Err(FileError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            tracing::warn!(path = %path.display(), "vector graph not restored, building it again: {e}");
            return None;
        }
    };
    let (g, node_ids, changed) = stored.restore(ids, rows);
    if g.worn() {
        return None;
    }
    // Keep what the inserts cost, unless it was next to nothing.
    if changed * 100 > g.nodes() {
        keep(path, &g, ids, rows, stamp);
    }
    Some((g, node_ids, true))
}

/// Write the graph to `path` for the next process; a failure only costs that process a build.
fn keep(path: &std::path::Path, g: &Graph, ids: &[i64], rows: Rows, stamp: Stamp) {
    if let Err(e) = graph::save(path, g, ids, rows, stamp) {
        tracing::warn!(path = %path.display(), "vector graph not kept: {e}");
    }
}
