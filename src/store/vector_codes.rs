//! Binary codes of the stored embeddings: the cheap first pass of vector search.
//!
//! Sentence embeddings are L2-normalised, so the sign of each dimension keeps most of a
//! vector's direction: the Hamming distance between two sign codes tracks their angle. For
//! all-MiniLM-L6-v2 (384-d) a code is 48 bytes, ~32× less memory traffic than the 1536-byte
//! vector, and an in-process copy of them (5.6 MB at 100k rows) makes the scan a few hundred
//! microseconds; the candidates it keeps are then re-scored against their int8 rows, which the
//! cache holds beside the codes (38 MB at 100k rows of 384-d; see `VectorRepo::search`). From
//! [`index::GRAPH_MIN_ROWS`] rows a table is searched through a navigable graph over its int8
//! rows instead ([`graph`]), built on a background thread while the flat scan serves
//! ([`index`]), and kept beside the database between processes.
//! A code has [`code_words`] words for any model size, so the scheme follows whichever
//! embedding model the database records (`super::embedding_space`).
//!
//! The codes live in `vector_codes` (migration 0002), written in the same transaction as the
//! vector, so they commit or roll back together; a refresh reads each changed row's vector with
//! its code. The in-process cache follows the table
//! through `vector_code_state`: every write bumps the table's `seq` and stamps the row with it,
//! so a cache that has seen changes up to `seq` S catches up by reading the rows with
//! seq > S (a deletion leaves its row with code NULL for exactly this). The cache is only ever
//! refreshed from committed data (outside a transaction, in one read snapshot), so a
//! rolled-back write can never leave it ahead of the database. Recreating the vector tables
//! at another size gives each table a new `epoch`, which no cached copy matches.

use super::StoreError;
use rusqlite::{Connection, DropBehavior, OptionalExtension, params};
use std::ops::Range;
use std::sync::{Arc, Mutex, RwLock};
use table::TableCodes;

pub(crate) mod aside;
mod graph;
mod huge;
mod index;
mod kernels;
pub(crate) mod table;

/// u64 words in the code of a `dim`-dimensional vector: one bit per dimension, rounded up.
pub const fn code_words(dim: usize) -> usize {
    dim.div_ceil(64)
}

/// One binary code: bit `i % 64` of word `i / 64` is set when dimension `i` is > 0.
pub type Code = Vec<u64>;

/// How many database tables' codes stay cached; a process normally has one database (three
/// tables), tests open many short-lived ones.
const CACHED_TABLES: usize = 12;

/// The sign code of `v`, [`code_words`]`(v.len())` words long. Matches sqlite-vec's
/// `vec_quantize_binary` bit for bit (for sizes it accepts), which migration 0002's backfill used.
pub fn binary_code(v: &[f32]) -> Code {
    let mut code = vec![0u64; code_words(v.len())];
    for (i, x) in v.iter().enumerate() {
        if *x > 0.0 {
            code[i / 64] |= 1 << (i % 64);
        }
    }
    code
}

/// The bytes stored in `vector_codes.code` (little-endian words, so byte `i / 8` holds
/// dimension `i` at bit `i % 8`).
pub fn code_bytes(code: &[u64]) -> Vec<u8> {
    code.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Append the code stored as `b` to `out` when it is `words` words long.
fn push_code(out: &mut Vec<u64>, b: &[u8], words: usize) -> bool {
    if b.len() != words * 8 {
        return false;
    }
    out.extend(b.chunks_exact(8).map(|chunk| {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        u64::from_le_bytes(word)
    }));
    true
}

pub use kernels::hamming;

/// The Hamming distance of every code in `codes` (`query.len()` words each) to `query`.
fn distances(codes: &[u64], query: &[u64]) -> Vec<u16> {
    let mut out = Vec::new();
    kernels::hamming_all(codes, query, &mut out);
    out
}

/// The positions of the `n` codes nearest `query` by Hamming distance (ties to the earlier
/// position), in no particular order. `codes` holds the codes back to back, `query.len()`
/// words each. A counting pass over the possible distances finds the cut-off, so this is
/// linear in the number of codes whatever `n` is.
pub fn nearest_codes(codes: &[u64], query: &[u64], n: usize) -> Vec<usize> {
    let words = query.len().max(1);
    if n >= codes.len() / words {
        return (0..codes.len() / words).collect();
    }
    select_nearest(&distances(codes, query), words * 64, n).into_iter().map(|i| i as usize).collect()
}

/// The positions of the `n` smallest of `dist` (each at most `max`), ties to the earlier
/// position, in no particular order. Linear in `dist.len()` whatever `n` is: a count of the
/// rows at each distance finds the cut-off. Over many rows the count is taken from a sample
/// first ([`select_within_sampled_bound`]), and the full count only when the sample misled.
fn select_nearest(dist: &[u16], max: usize, n: usize) -> Vec<u32> {
    if n >= dist.len() {
        return (0..dist.len() as u32).collect();
    }
    let max = max.min(u16::MAX.into());
    if let Some(out) = select_within_sampled_bound(dist, max, n) {
        return out;
    }
    let bins = max + 1;
    // Four histograms filled in turn, summed after: rows at one distance often come in runs,
    // and with one histogram each increment would wait for the last one's store.
    let mut counts = vec![0u32; 4 * bins];
    {
        let (h01, h23) = counts.split_at_mut(2 * bins);
        let ((h0, h1), (h2, h3)) = (h01.split_at_mut(bins), h23.split_at_mut(bins));
        let mut rows = dist.chunks_exact(4);
        for d in &mut rows {
            h0[usize::from(d[0]).min(max)] += 1;
            h1[usize::from(d[1]).min(max)] += 1;
            h2[usize::from(d[2]).min(max)] += 1;
            h3[usize::from(d[3]).min(max)] += 1;
        }
        for &d in rows.remainder() {
            h0[usize::from(d).min(max)] += 1;
        }
    }
    let (cut, below) = cut_off(|d| (0..4).map(|h| counts[h * bins + d] as usize).sum(), n, max);
    take_nearest(&within(dist, cut, n), dist, cut, n - below, n)
}

/// One row in this many is counted for [`select_within_sampled_bound`]'s estimate.
const SAMPLE_STRIDE: usize = 16;

/// [`select_nearest`] through a bound on the cut-off taken from a sample: count the distances
/// of every [`SAMPLE_STRIDE`]th row, take the distance below which twice the sample's share of
/// `n` lies, pick every row within it (a few times `n`), and find the exact cut-off among
/// those. Every row nearer than the cut-off, and every row at it, is within the bound whenever
/// the bound holds `n` rows, so the answer is the full count's, ties and all; `None` when it
/// holds fewer (the sample was not like the rest) or the rows are too few to sample. The full
/// count of a 65k-row part of a flat scan was a third of its time beside the scan itself
/// (`perf` of the 1M turn's search thread).
fn select_within_sampled_bound(dist: &[u16], max: usize, n: usize) -> Option<Vec<u32>> {
    if n == 0 || dist.len() < 32 * n {
        return None;
    }
    let mut counts = vec![0u32; max + 1];
    for &d in dist.iter().step_by(SAMPLE_STRIDE) {
        counts[usize::from(d).min(max)] += 1;
    }
    let (bound, _) = cut_off(|d| counts[d] as usize, (2 * n).div_ceil(SAMPLE_STRIDE) + 8, max);
    let picked = within(dist, bound, 4 * n);
    if picked.len() < n {
        return None;
    }
    counts.fill(0);
    for &i in &picked {
        counts[usize::from(dist[i as usize]).min(max)] += 1;
    }
    let (cut, below) = cut_off(|d| counts[d] as usize, n, max);
    Some(take_nearest(&picked, dist, cut, n - below, n))
}

/// The least distance `cut` at which at least `n` rows lie at or below it, given the rows at
/// each distance up to `max` (`at`), and how many lie below it; `max` when fewer than `n` rows
/// are counted in all.
fn cut_off(at: impl Fn(usize) -> usize, n: usize, max: usize) -> (u16, usize) {
    let (mut cut, mut below) = (0usize, 0usize);
    while cut < max && below + at(cut) < n {
        below += at(cut);
        cut += 1;
    }
    (cut as u16, below)
}

/// The positions of the rows of `dist` at or below `bound`, in order (room kept for `expected`).
fn within(dist: &[u16], bound: u16, expected: usize) -> Vec<u32> {
    let mut picked = Vec::with_capacity(expected);
    kernels::within(dist, bound, &mut picked);
    picked
}

/// Of the rows at `picked` (in position order), every one nearer than `cut` and the first
/// `at_cut` exactly at it: the `n` nearest.
fn take_nearest(picked: &[u32], dist: &[u16], cut: u16, mut at_cut: usize, n: usize) -> Vec<u32> {
    let mut out = Vec::with_capacity(n);
    for &i in picked {
        let d = dist[i as usize];
        if d < cut || (d == cut && at_cut > 0) {
            at_cut -= usize::from(d == cut);
            out.push(i);
        }
    }
    out
}

/// Record the code of row `id` of table `tbl` (None: the row was deleted). Call in the same
/// transaction as the vector write.
pub(crate) fn record(c: &Connection, tbl: u8, id: i64, code: Option<&[u64]>) -> Result<(), StoreError> {
    let seq: i64 = c
        .prepare_cached("UPDATE vector_code_state SET seq = seq + 1 WHERE tbl = ?1 RETURNING seq")?
        .query_row(params![tbl], |r| r.get(0))?;
    c.prepare_cached("INSERT OR REPLACE INTO vector_codes (tbl, id, code, seq) VALUES (?1, ?2, ?3, ?4)")?
        .execute(params![tbl, id, code.map(code_bytes), seq])?;
    Ok(())
}

/// The process's table copies. Each copy has its own lock, so two tables are searched at
/// once (recall's tables on the vector search thread and the database thread, `aside`), and
/// the parts of one table's flat scan are read at once ([`nearest_in_part`]); the cache's
/// lock only guards the list and is never held while a copy is searched.
#[derive(Default)]
struct Cache {
    tables: Vec<Slot>,
    clock: u64,
}

/// One cached table copy with what finds it without taking its lock.
struct Slot {
    epoch: i64,
    dim: usize,
    last_used: u64,
    table: Arc<RwLock<TableCodes>>,
}

static CACHE: Mutex<Cache> = Mutex::new(Cache { tables: Vec::new(), clock: 0 });

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn write<T>(m: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    m.write().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn read<T>(m: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    m.read().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The `k` rows of table `tbl` (whose vectors are in `vec_table`) nearest `query`: the `n`
/// with the nearest codes, re-scored against their int8 vectors (`(id, 1 − cos)`, nearest
/// first); a table of at most `n` rows is re-scored whole, which is the exact search over its
/// int8 rows, in process (sqlite-vec's brute force took 0.75 ms at 1k rows). `None` when the
/// caller should search exactly: the cache cannot answer for this connection's view (it is
/// inside a transaction that changed the codes, or that started before the cache's latest
/// refresh).
pub(crate) fn nearest(
    c: &Connection,
    tbl: u8,
    vec_table: &str,
    query: &[f32],
    k: usize,
    n: usize,
) -> Result<Option<Vec<(i64, f32)>>, StoreError> {
    Ok(ready(c, tbl, vec_table, query.len())?.and_then(|r| nearest_in(&r, query, k, n)))
}

/// A cached table copy caught up with one connection's view of the database: what
/// [`nearest_in`] searches, on any thread, with no connection.
#[derive(Clone)]
pub(crate) struct Ready {
    table: Arc<RwLock<TableCodes>>,
    seq: i64,
    dim: usize,
}

/// Catch the cached copy of table `tbl` (`dim`-d) up with this connection's view, loading it
/// the first time, so that a search can run later, on any thread ([`nearest_in`]); `None`
/// when the caller should search exactly (see [`nearest`]).
pub(crate) fn ready(c: &Connection, tbl: u8, vec_table: &str, dim: usize) -> Result<Option<Ready>, StoreError> {
    let in_transaction = !c.is_autocommit();
    // Outside a transaction, read the state and the changes in one snapshot. It ends with a
    // COMMIT (nothing to write), not a ROLLBACK, which would abort a caller's pending reads.
    let _snapshot = if in_transaction {
        None
    } else {
        let mut tx = c.unchecked_transaction()?;
        tx.set_drop_behavior(DropBehavior::Commit);
        Some(tx)
    };
    let Some((seq, epoch)) = c
        .prepare_cached("SELECT seq, epoch FROM vector_code_state WHERE tbl = ?1")?
        .query_row(params![tbl], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))
        .optional()?
    else {
        return Ok(None);
    };
    let mut cache = lock(&CACHE);
    cache.clock += 1;
    let clock = cache.clock;
    let slot = cache.tables.iter().position(|t| t.epoch == epoch && t.dim == dim);
    let table = match slot {
        Some(i) => {
            let shared = Arc::clone(&cache.tables[i].table);
            let mut table = write(&shared);
            if table.seq != seq && in_transaction {
                return Ok(None);
            }
            if table.seq < seq {
                catch_up(c, &mut table, tbl, vec_table, seq)?;
            } else if table.seq > seq {
                // The copy is ahead of this view (the state was rewritten): load it afresh.
                *table = load(c, tbl, vec_table, epoch, seq, dim)?;
            }
            drop(table);
            cache.tables[i].last_used = clock;
            shared
        }
        None if in_transaction => return Ok(None),
        None => {
            let shared = Arc::new(RwLock::new(load(c, tbl, vec_table, epoch, seq, dim)?));
            if cache.tables.len() >= CACHED_TABLES
                && let Some(oldest) = (0..cache.tables.len()).min_by_key(|&j| cache.tables[j].last_used)
            {
                cache.tables.swap_remove(oldest);
            }
            cache.tables.push(Slot { epoch, dim, last_used: clock, table: Arc::clone(&shared) });
            shared
        }
    };
    Ok(Some(Ready { table, seq, dim }))
}

/// Apply the changes of table `tbl` after the copy's `seq`, up to `seq`.
fn catch_up(c: &Connection, table: &mut TableCodes, tbl: u8, vec_table: &str, seq: i64) -> Result<(), StoreError> {
    let mut stmt = c.prepare_cached(&format!(
        "SELECT c.id, c.code, v.embedding FROM vector_codes c LEFT JOIN {vec_table} v ON v.id = c.id
         WHERE c.tbl = ?1 AND c.seq > ?2"
    ))?;
    let mut rows = stmt.query(params![tbl, table.seq])?;
    while let Some(r) = rows.next()? {
        let bytes = r.get_ref(1)?.as_blob_or_null().map_err(rusqlite::Error::from)?;
        let row = r.get_ref(2)?.as_blob_or_null().map_err(rusqlite::Error::from)?;
        table.apply(r.get(0)?, bytes, row);
    }
    table.seq = seq;
    table.reindex_if_grown();
    Ok(())
}

/// [`nearest`] over the copy `ready` names, as it was when it was caught up. `None` when the
/// copy has moved on since (another connection's search caught it up further): its answer
/// would not be the caller's view, so the caller searches again itself.
pub(crate) fn nearest_in(ready: &Ready, query: &[f32], k: usize, n: usize) -> Option<Vec<(i64, f32)>> {
    let mut table = write(&ready.table);
    (table.seq == ready.seq && query.len() == ready.dim).then(|| table.nearest(query, k, n))
}

/// Rows a part of a big table's flat scan covers: a 450k-row table is seven parts, so the two
/// threads that search recall's tables (`aside`) share its scan instead of one waiting for the
/// other (docs/architecture.md §9). Tests split small tables.
const PART_ROWS: usize = if cfg!(test) { 64 } else { 65_536 };

/// The row ranges [`nearest_in`] over the copy `ready` names may be split into, each scanned by
/// [`nearest_in_part`] on any thread and the whole finished by [`nearest_of_parts`]; `None`
/// when the search is one piece of work (see `TableCodes::parts`) or the copy has moved on.
pub(crate) fn parts(ready: &Ready, query: &[f32], k: usize, n: usize) -> Option<Vec<Range<usize>>> {
    let table = read(&ready.table);
    (table.seq == ready.seq && query.len() == ready.dim).then(|| table.parts(query, k, n, PART_ROWS)).flatten()
}

/// The `n` slots of `rows` whose codes are nearest `code` (the query's [`binary_code`]), with
/// their distances; `None` when the copy has moved on since `ready`.
pub(crate) fn nearest_in_part(ready: &Ready, code: &[u64], rows: Range<usize>, n: usize) -> Option<Vec<(u16, u32)>> {
    let table = read(&ready.table);
    let fits = table.seq == ready.seq && code.len() == code_words(ready.dim) && rows.end <= table.row_count();
    fits.then(|| table.nearest_codes_in(code, rows, n))
}

/// [`nearest_in`]'s answer from what [`nearest_in_part`] found in every part; `None` when the
/// copy has moved on since `ready`.
pub(crate) fn nearest_of_parts(
    ready: &Ready,
    query: &[f32],
    k: usize,
    n: usize,
    found: Vec<(u16, u32)>,
) -> Option<Vec<(i64, f32)>> {
    let mut table = write(&ready.table);
    (table.seq == ready.seq && query.len() == ready.dim).then(|| table.nearest_of_parts(query, k, n, found))
}

/// Whether the cached copy of table `tbl` (`dim`-d) searches at full speed: through its graph,
/// or flat because it is too small for one. False while its graph is being built, or when the
/// cache holds no copy of the table (before its first search).
pub(crate) fn index_settled(c: &Connection, tbl: u8, dim: usize) -> Result<bool, StoreError> {
    let Some(epoch) = c
        .prepare_cached("SELECT epoch FROM vector_code_state WHERE tbl = ?1")?
        .query_row(params![tbl], |r| r.get::<_, i64>(0))
        .optional()?
    else {
        return Ok(false);
    };
    let table = lock(&CACHE).tables.iter().find(|t| t.epoch == epoch && t.dim == dim).map(|t| Arc::clone(&t.table));
    Ok(table.is_some_and(|t| write(&t).index_settled()))
}

/// Where the graph of table `tbl` of the database at `db` is kept.
fn graph_file(db: &str, tbl: u8) -> std::path::PathBuf {
    std::path::PathBuf::from(format!("{db}-vgraph{tbl}"))
}

fn load(c: &Connection, tbl: u8, vec_table: &str, epoch: i64, seq: i64, dim: usize) -> Result<TableCodes, StoreError> {
    let mut t = TableCodes::new(epoch, seq, dim);
    // The graph of a big table is kept beside the database file (not for one in memory).
    if let Some(db) = c.path().filter(|p| !p.is_empty()) {
        t.set_graph_file(graph_file(db, tbl));
    }
    let mut stmt = c.prepare_cached(&format!(
        "SELECT c.id, c.code, v.embedding FROM vector_codes c JOIN {vec_table} v ON v.id = c.id
         WHERE c.tbl = ?1 AND c.code IS NOT NULL ORDER BY c.id"
    ))?;
    let mut rows = stmt.query(params![tbl])?;
    while let Some(r) = rows.next()? {
        let bytes = r.get_ref(1)?.as_blob_or_null().map_err(rusqlite::Error::from)?;
        let row = r.get_ref(2)?.as_blob_or_null().map_err(rusqlite::Error::from)?;
        t.apply(r.get(0)?, bytes, row);
    }
    t.reindex_if_grown();
    Ok(t)
}

#[cfg(test)]
mod tests;
