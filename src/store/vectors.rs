//! Embedding storage and nearest-neighbour search: one stored copy of each vector.
//!
//! Each vector is one row of an ordinary table (`episode_vec`, … since migration 0016), as
//! int8: one byte a dimension, scaled so the vector's largest component is ±127. That keeps
//! its direction to well under a percent of cosine at a quarter of f32's size (384 bytes for
//! all-MiniLM-L6-v2, ten rows to a 4 kB page where f32 fitted two), and every reader compares
//! vectors by cosine only, so the length the scaling drops is never missed.
//!
//! [`VectorRepo::search`], which recall uses, scans the rows' binary codes first
//! ([`super::vector_codes`], kept in process) and re-scores only the nearest candidates against the int8 rows, which
//! the same in-process cache holds (a rowid lookup each cost a few µs, and a turn re-scored
//! over a thousand). [`VectorRepo::knn`] is the exact
//! reference it is measured against: sqlite-vec's `vec_distance_cosine` over every row.

use super::StoreError;
use super::vector_codes::{self, binary_code};
use rusqlite::{Connection, OptionalExtension, params};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// all-MiniLM-L6-v2's output size (the built-in embedding model): a fresh database's vector
/// tables start at it, and move to the configured model's size once it is known
/// (`super::embedding_space`).
pub const DEFAULT_EMBEDDING_DIM: usize = 384;
/// The built-in model's size, under the name the benches and tests have always used.
pub const EMBEDDING_DIM: usize = DEFAULT_EMBEDDING_DIM;

/// The vector tables, each keyed by the id of the row it embeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VecTable {
    Episodes,
    Concepts,
    Traits,
    /// Migration 0010: what the uncertainty pre-screen compares a message with, beside traits
    /// and concepts.
    Facts,
}

impl VecTable {
    pub const ALL: [VecTable; 4] = [VecTable::Episodes, VecTable::Concepts, VecTable::Traits, VecTable::Facts];

    /// The table's number in `vector_codes.tbl` (and `reembed_pending.tbl`).
    pub(crate) fn code_table(self) -> u8 {
        match self {
            VecTable::Episodes => 0,
            VecTable::Concepts => 1,
            VecTable::Traits => 2,
            VecTable::Facts => 3,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            VecTable::Episodes => "episode_vec",
            VecTable::Concepts => "concept_vec",
            VecTable::Traits => "trait_vec",
            VecTable::Facts => "fact_vec",
        }
    }
}

/// The stored form of `v`: each component scaled by `127 / max |v_i|` and rounded, as the
/// bytes of i8s (the layout sqlite-vec's `vec_int8` reads). A zero vector stays zeros.
pub fn quantize(v: &[f32]) -> Vec<u8> {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    let scale = if max > 0.0 && max.is_finite() { 127.0 / max } else { 0.0 };
    v.iter().map(|x| ((x * scale).round().clamp(-127.0, 127.0) as i8) as u8).collect()
}

/// A stored vector back as a unit vector (its direction; the length was not kept).
pub fn dequantize(blob: &[u8]) -> Vec<f32> {
    let v: Vec<f32> = blob.iter().map(|&b| f32::from(b as i8)).collect();
    let n = norm(&v);
    if n > 0.0 { v.into_iter().map(|x| x / n).collect() } else { v }
}

pub struct VectorRepo<'c>(pub &'c Connection);

impl VectorRepo<'_> {
    /// Store (or replace) the embedding of row `id`.
    pub fn upsert(&self, table: VecTable, id: i64, embedding: &[f32]) -> Result<(), StoreError> {
        check_dim(self.0, embedding)?;
        self.0
            .prepare_cached(&format!("INSERT OR REPLACE INTO {} (id, embedding) VALUES (?1, ?2)", table.name()))?
            .execute(params![id, quantize(embedding)])?;
        vector_codes::record(self.0, table.code_table(), id, Some(&binary_code(embedding)))
    }

    /// Remove the embedding of row `id` (with its code, in the caller's transaction).
    pub fn delete(&self, table: VecTable, id: i64) -> Result<(), StoreError> {
        self.0.prepare_cached(&format!("DELETE FROM {} WHERE id = ?1", table.name()))?.execute(params![id])?;
        vector_codes::record(self.0, table.code_table(), id, None)
    }

    /// [`VectorRepo::delete`] for a forget. The vector is an ordinary row, and the connection
    /// runs with `secure_delete` on, so deleting it already zeroes its bytes in the file; this
    /// stays a name of its own so a forget says what it needs.
    pub fn wipe(&self, table: VecTable, id: i64) -> Result<(), StoreError> {
        self.delete(table, id)
    }

    /// Whether row `id` has an embedding.
    pub fn contains(&self, table: VecTable, id: i64) -> Result<bool, StoreError> {
        let sql = format!("SELECT EXISTS (SELECT 1 FROM {} WHERE id = ?1)", table.name());
        Ok(self.0.prepare_cached(&sql)?.query_row(params![id], |r| r.get(0))?)
    }

    /// How many embeddings `table` holds.
    pub fn count(&self, table: VecTable) -> Result<i64, StoreError> {
        Ok(self.0.query_row(&format!("SELECT COUNT(*) FROM {}", table.name()), [], |r| r.get(0))?)
    }

    /// Whether `table` holds no embedding: one row read, where [`VectorRepo::count`] walks them all.
    pub fn is_empty(&self, table: VecTable) -> Result<bool, StoreError> {
        let sql = format!("SELECT NOT EXISTS (SELECT 1 FROM {})", table.name());
        Ok(self.0.prepare_cached(&sql)?.query_row([], |r| r.get(0))?)
    }

    /// The stored vector of row `id` as a unit vector ([`dequantize`]).
    pub fn get(&self, table: VecTable, id: i64) -> Result<Option<Vec<f32>>, StoreError> {
        let sql = format!("SELECT embedding FROM {} WHERE id = ?1", table.name());
        let blob: Option<Vec<u8>> = self.0.prepare_cached(&sql)?.query_row(params![id], |r| r.get(0)).optional()?;
        Ok(blob.map(|b| dequantize(&b)))
    }

    /// The `k` nearest rows by cosine distance, nearest first: `(id, distance)`. Exact over
    /// the stored rows: sqlite-vec compares the (quantised) query with every one.
    pub fn knn(&self, table: VecTable, query: &[f32], k: usize) -> Result<Vec<(i64, f32)>, StoreError> {
        check_dim(self.0, query)?;
        let mut stmt = self.0.prepare_cached(&format!(
            "SELECT id, vec_distance_cosine(vec_int8(embedding), vec_int8(?1)) AS d FROM {} ORDER BY d, id LIMIT ?2",
            table.name()
        ))?;
        let rows = stmt.query_map(params![quantize(query), k as i64], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The `k` nearest rows by cosine distance, nearest first, like [`VectorRepo::knn`] but
    /// approximate: the [`candidate_count`] rows with the nearest binary codes are re-scored
    /// against their stored rows. Falls back to `knn` when the code cache cannot answer (see
    /// [`vector_codes`]), so it never returns a row the exact search would not have seen.
    pub fn search(&self, table: VecTable, query: &[f32], k: usize) -> Result<Vec<(i64, f32)>, StoreError> {
        self.search_with(table, query, k, candidate_count(k))
    }

    /// [`VectorRepo::search`] re-scoring `candidates` rows (for measuring recall against it).
    pub fn search_with(
        &self,
        table: VecTable,
        query: &[f32],
        k: usize,
        candidates: usize,
    ) -> Result<Vec<(i64, f32)>, StoreError> {
        check_dim(self.0, query)?;
        let n = candidates.max(k);
        match vector_codes::nearest(self.0, table.code_table(), table.name(), query, k, n)? {
            Some(found) => Ok(found),
            None => self.knn(table, query, k),
        }
    }

    /// [`VectorRepo::search`] of each of `tables`, started on the vector search thread
    /// (`vector_codes::aside`) so the caller's thread can do other reads meanwhile; the
    /// answers are as of this call. [`StartedSearch::finish`] collects them, searching there
    /// any table (or part of a big table's flat scan) the thread has not begun yet, so both
    /// threads search until the last part is done.
    pub fn start_search(&self, tables: &[VecTable], query: &[f32], k: usize) -> Result<StartedSearch, StoreError> {
        check_dim(self.0, query)?;
        let n = candidate_count(k);
        let mut jobs = Vec::with_capacity(tables.len());
        for &table in tables {
            let ready = vector_codes::ready(self.0, table.code_table(), table.name(), query.len())?;
            let parts = ready.as_ref().and_then(|r| vector_codes::parts(r, query, k, n)).unwrap_or_default();
            jobs.push(TableSearch {
                table,
                ready,
                claimed: AtomicBool::new(false),
                left: AtomicUsize::new(parts.len()),
                parts: parts.into_iter().map(Part::new).collect(),
                found: OnceLock::new(),
            });
        }
        let shared = Arc::new(Searches { query: query.to_vec(), code: binary_code(query), k, n, jobs });
        let on_thread = Arc::clone(&shared);
        let aside = vector_codes::aside::run(move || on_thread.jobs.iter().for_each(|j| j.run(&on_thread, false)));
        Ok(StartedSearch { shared, aside })
    }

    /// Whether searches of `table` run at full speed in this process: through its graph, or
    /// flat because it is too small for one (`vector_codes::index`). False while the graph is
    /// being built in the background (the flat scan answers meanwhile) and before the table's
    /// first search. For benches and tools that want to measure the settled search.
    pub fn index_settled(&self, table: VecTable) -> Result<bool, StoreError> {
        let dim = super::embedding_space::embedding_dim(self.0)?;
        vector_codes::index_settled(self.0, table.code_table(), dim)
    }

    /// Load `table`'s in-process copy (or catch it up) now, as its first search would: a table
    /// only the uncertainty pre-screen searches (traits, facts) is otherwise loaded by the first
    /// statement a process sees, which then waits for it (0.05-0.4 s at 1M memories).
    pub fn warm(&self, table: VecTable) -> Result<(), StoreError> {
        let dim = super::embedding_space::embedding_dim(self.0)?;
        vector_codes::ready(self.0, table.code_table(), table.name(), dim)?;
        Ok(())
    }
}

/// Searches begun by [`VectorRepo::start_search`].
pub struct StartedSearch {
    shared: Arc<Searches>,
    aside: vector_codes::aside::Aside<()>,
}

/// What the search thread and the caller share: the query (with its binary code) and one
/// search per table.
struct Searches {
    query: Vec<f32>,
    code: Vec<u64>,
    k: usize,
    n: usize,
    jobs: Vec<TableSearch>,
}

/// One table's search, done whole by whichever thread claims it first, or in parts
/// (`vector_codes::parts`), each claimed by either thread; the thread that scans the last
/// part finishes the search.
struct TableSearch {
    table: VecTable,
    ready: Option<vector_codes::Ready>,
    /// The whole search's claim (a search without parts).
    claimed: AtomicBool,
    parts: Vec<Part>,
    /// Parts not scanned yet.
    left: AtomicUsize,
    /// `None` inside: the cached copy could not answer for the caller's view.
    found: OnceLock<Option<Neighbours>>,
}

/// Some rows of a big table's flat scan.
struct Part {
    rows: Range<usize>,
    claimed: AtomicBool,
    /// The `(distance, slot)` candidates of these rows; `None` inside as for the table.
    found: OnceLock<Option<Vec<(u16, u32)>>>,
}

impl Part {
    fn new(rows: Range<usize>) -> Part {
        Part { rows, claimed: AtomicBool::new(false), found: OnceLock::new() }
    }
}

/// `(id, distance)` pairs, nearest first.
type Neighbours = Vec<(i64, f32)>;

impl TableSearch {
    /// Search the table, or the parts of it no other thread has claimed (the last first when
    /// `backwards`: the search thread works from the front, the caller from the back).
    fn run(&self, s: &Searches, backwards: bool) {
        if self.parts.is_empty() {
            if !self.claimed.swap(true, Ordering::AcqRel) {
                let found = self.ready.as_ref().and_then(|r| vector_codes::nearest_in(r, &s.query, s.k, s.n));
                let _ = self.found.set(found);
            }
            return;
        }
        let scan = |part: &Part| {
            if part.claimed.swap(true, Ordering::AcqRel) {
                return;
            }
            let ready = self.ready.as_ref();
            let _ =
                part.found.set(ready.and_then(|r| vector_codes::nearest_in_part(r, &s.code, part.rows.clone(), s.n)));
            if self.left.fetch_sub(1, Ordering::AcqRel) == 1 {
                let _ = self.found.set(self.join_parts(s));
            }
        };
        if backwards { self.parts.iter().rev().for_each(scan) } else { self.parts.iter().for_each(scan) }
    }

    /// The search's answer from its scanned parts.
    fn join_parts(&self, s: &Searches) -> Option<Neighbours> {
        let mut found = Vec::with_capacity(self.parts.len() * s.n);
        for part in &self.parts {
            found.extend_from_slice(part.found.get()?.as_ref()?);
        }
        vector_codes::nearest_of_parts(self.ready.as_ref()?, &s.query, s.k, s.n, found)
    }
}

impl StartedSearch {
    /// Each table's `(id, distance)` neighbours, nearest first, in the order the tables were
    /// given. The tables (and parts) the search thread has not begun are searched here
    /// meanwhile (the last first: the thread takes them from the front). A table the cached
    /// copy could not answer for (it moved on, the cache could not serve the caller's view, or
    /// the search failed) is searched here, on `c`, as [`VectorRepo::search`] would.
    pub fn finish(self, c: &Connection) -> Result<Vec<Neighbours>, StoreError> {
        let StartedSearch { shared, aside } = self;
        shared.jobs.iter().rev().for_each(|j| j.run(&shared, true));
        // Wait for the thread only while a search it claimed is unanswered: one it has not come
        // to yet (it is busy with older work) was taken here, and it will find nothing to do.
        if shared.jobs.iter().any(|j| j.found.get().is_none()) {
            // Whatever it answers, the thread is done with the searches it claimed.
            let _ = aside.wait();
        }
        let mut out = Vec::with_capacity(shared.jobs.len());
        for job in &shared.jobs {
            out.push(match job.found.get() {
                Some(Some(found)) => found.clone(),
                _ => VectorRepo(c).search(job.table, &shared.query, shared.k)?,
            });
        }
        Ok(out)
    }
}

/// Candidates re-scored per query for `k` neighbours, chosen by recall against `knn` measured
/// with `examples/vector_prefilter_eval.rs`: on 20k clustered synthetic vectors 200 / 300 / 400
/// candidates give recall@10 0.928 / 0.996 / 1.000 and recall@50 0.860 / 0.984 / 1.000; on 6k
/// all-MiniLM-L6-v2 sentence embeddings 100 / 200 give recall@50 0.982 / 0.998. Re-scoring the
/// int8 rows, on 19.6k real sentences of the shared data 400 candidates find 0.995 of the
/// exact f32 top 10 (`docs/cognition.md §9.9`).
pub fn candidate_count(k: usize) -> usize {
    k.saturating_mul(CANDIDATES_PER_NEIGHBOUR).max(MIN_CANDIDATES)
}

/// See [`candidate_count`].
pub const CANDIDATES_PER_NEIGHBOUR: usize = 8;
/// See [`candidate_count`].
pub const MIN_CANDIDATES: usize = 400;

fn norm(v: &[f32]) -> f32 {
    v.iter().map(|x| x * x).sum::<f32>().sqrt()
}

/// The tables hold vectors of the recorded size only; anything else is refused before it is stored.
fn check_dim(c: &Connection, v: &[f32]) -> Result<(), StoreError> {
    let expected = super::embedding_space::embedding_dim(c)?;
    if v.len() == expected { Ok(()) } else { Err(StoreError::Dimension { expected, got: v.len() }) }
}

/// Migration 0016's data move: each `{table}_f32` copy left by an older schema goes, quantised,
/// into its table, and is dropped, in one transaction. Nothing to do once they are gone.
pub(crate) fn finish_int8_move(conn: &mut Connection) -> Result<(), StoreError> {
    for table in VecTable::ALL {
        let old = format!("{}_f32", table.name());
        let exists: bool = conn
            .prepare_cached("SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1)")?
            .query_row([&old], |r| r.get(0))?;
        if !exists {
            continue;
        }
        let tx = conn.transaction()?;
        {
            let mut read = tx.prepare(&format!("SELECT id, embedding FROM {old}"))?;
            let mut write =
                tx.prepare(&format!("INSERT OR REPLACE INTO {} (id, embedding) VALUES (?1, ?2)", table.name()))?;
            let mut rows = read.query([])?;
            while let Some(row) = rows.next()? {
                let id: i64 = row.get(0)?;
                let blob = row.get_ref(1)?.as_blob().map_err(rusqlite::Error::from)?;
                let v: Vec<f32> = blob.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
                write.execute(params![id, quantize(&v)])?;
            }
        }
        tx.execute_batch(&format!("DROP TABLE {old}"))?;
        tx.commit()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
