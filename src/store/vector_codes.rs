//! Binary codes of the stored embeddings: the cheap first pass of vector search.
//!
//! Sentence embeddings are L2-normalised, so the sign of each dimension keeps most of a
//! vector's direction: the Hamming distance between two sign codes tracks their angle. For
//! all-MiniLM-L6-v2 (384-d) a code is 48 bytes, ~32× less memory traffic than the 1536-byte
//! vector, and an in-process copy of them (5.6 MB at 100k rows) makes the scan a few hundred
//! microseconds; the candidates it keeps are then re-scored against their int8 rows, which the
//! cache holds beside the codes (38 MB at 100k rows of 384-d; see `VectorRepo::search`).
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
use std::sync::Mutex;

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

#[inline(always)]
pub fn hamming(a: &[u64], b: &[u64]) -> u32 {
    a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum()
}

/// The Hamming distance of every code in `codes` (`query.len()` words each) to `query`.
fn distances(codes: &[u64], query: &[u64]) -> Vec<u32> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has the instruction the function is compiled for.
        return unsafe { distances_popcnt(codes, query) };
    }
    distances_plain(codes, query)
}

#[inline(always)]
fn distances_plain(codes: &[u64], query: &[u64]) -> Vec<u32> {
    codes.chunks_exact(query.len().max(1)).map(|c| hamming(c, query)).collect()
}

/// [`distances_plain`] compiled with the popcount instruction (the default x86-64 target
/// lacks it, and counts bits with a dozen shifts and masks a word).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
unsafe fn distances_popcnt(codes: &[u64], query: &[u64]) -> Vec<u32> {
    distances_plain(codes, query)
}

/// The dot product of `q` with an int8 row, in eight lanes so that it compiles to vector
/// instructions (one running sum is a chain the compiler may not reorder).
fn dot_int8(q: &[f32], row: &[i8]) -> f32 {
    let mut lanes = [0f32; 8];
    let (qc, rc) = (q.chunks_exact(8), row.chunks_exact(8));
    let tail: f32 = qc.remainder().iter().zip(rc.remainder()).map(|(a, &b)| a * f32::from(b)).sum();
    for (qs, rs) in qc.zip(rc) {
        for ((lane, a), &b) in lanes.iter_mut().zip(qs).zip(rs) {
            *lane += a * f32::from(b);
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// The positions of the `n` codes nearest `query` by Hamming distance (ties to the earlier
/// position), in no particular order. `codes` holds the codes back to back, `query.len()`
/// words each. A counting pass over the possible distances finds the cut-off, so this is
/// linear in the number of codes whatever `n` is.
pub fn nearest_codes(codes: &[u64], query: &[u64], n: usize) -> Vec<usize> {
    let words = query.len().max(1);
    let count = codes.len() / words;
    if n >= count {
        return (0..count).collect();
    }
    let dist = distances(codes, query);
    let mut histogram = vec![0usize; words * 64 + 1];
    for &d in &dist {
        histogram[d as usize] += 1;
    }
    let (mut cut, mut below) = (0usize, 0usize);
    while below + histogram[cut] < n {
        below += histogram[cut];
        cut += 1;
    }
    // Everything closer than `cut`, then the first `n - below` rows exactly at it.
    let mut at_cut = n - below;
    let mut out = Vec::with_capacity(n);
    for (i, &d) in dist.iter().enumerate() {
        let d = d as usize;
        if d < cut {
            out.push(i);
        } else if d == cut && at_cut > 0 {
            out.push(i);
            at_cut -= 1;
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

/// One table's codes as of change `seq`, sorted by id, `words` words each, back to back, with
/// each row's stored int8 vector (`dim` bytes each, in the same order) and its length, so that
/// re-scoring the candidates reads no page of the database.
struct TableCodes {
    epoch: i64,
    seq: i64,
    words: usize,
    dim: usize,
    ids: Vec<i64>,
    codes: Vec<u64>,
    rows: Vec<i8>,
    norms: Vec<f32>,
    last_used: u64,
}

impl TableCodes {
    fn new(epoch: i64, seq: i64, dim: usize) -> TableCodes {
        let words = code_words(dim);
        TableCodes {
            epoch,
            seq,
            words,
            dim,
            ids: Vec::new(),
            codes: Vec::new(),
            rows: Vec::new(),
            norms: Vec::new(),
            last_used: 0,
        }
    }

    /// Apply one change read from `vector_codes` with the row's stored vector: a code of
    /// another width, a NULL code or a missing vector removes the row.
    fn apply(&mut self, id: i64, bytes: Option<&[u8]>, row: Option<&[u8]>) {
        let (w, d) = (self.words, self.dim);
        let mut code = Vec::with_capacity(w);
        let valid = bytes.is_some_and(|b| push_code(&mut code, b, w)) && row.is_some_and(|r| r.len() == d);
        let entry = valid.then_some(code).zip(row);
        match (self.ids.binary_search(&id), entry) {
            (Ok(i), Some((code, row))) => {
                self.codes[i * w..(i + 1) * w].copy_from_slice(&code);
                self.rows.splice(i * d..(i + 1) * d, row.iter().map(|&b| b as i8));
                self.norms[i] = int8_norm(row);
            }
            (Ok(i), None) => {
                self.ids.remove(i);
                self.codes.drain(i * w..(i + 1) * w);
                self.rows.drain(i * d..(i + 1) * d);
                self.norms.remove(i);
            }
            (Err(i), Some((code, row))) => {
                self.ids.insert(i, id);
                self.codes.splice(i * w..i * w, code);
                self.rows.splice(i * d..i * d, row.iter().map(|&b| b as i8));
                self.norms.insert(i, int8_norm(row));
            }
            (Err(_), None) => {}
        }
    }

    /// The `k` nearest of the `n` rows with the nearest codes, re-scored against their int8
    /// vectors: `(id, 1 − cos)`, nearest first, ties to the smaller id.
    fn nearest(&self, query: &[f32], k: usize, n: usize) -> Vec<(i64, f32)> {
        let d = self.dim;
        let query_norm = query.iter().map(|x| x * x).sum::<f32>().sqrt();
        let mut scored: Vec<(i64, f32)> = nearest_codes(&self.codes, &binary_code(query), n)
            .into_iter()
            .map(|p| {
                let dot = dot_int8(query, &self.rows[p * d..(p + 1) * d]);
                let denom = query_norm * self.norms[p];
                (self.ids[p], if denom > 0.0 { 1.0 - dot / denom } else { 1.0 })
            })
            .collect();
        scored.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        scored.truncate(k);
        scored
    }
}

fn int8_norm(row: &[u8]) -> f32 {
    row.iter().map(|&b| f32::from(b as i8).powi(2)).sum::<f32>().sqrt()
}

#[derive(Default)]
struct Cache {
    tables: Vec<TableCodes>,
    clock: u64,
}

static CACHE: Mutex<Cache> = Mutex::new(Cache { tables: Vec::new(), clock: 0 });

/// Below this many rows per candidate the exact brute force is cheaper than re-scoring
/// candidates one lookup each (measured: 1k rows, 400 candidates: exact 0.75 ms, prefilter 1.65 ms).
const EXACT_ROWS_PER_CANDIDATE: usize = 4;

/// The `k` rows of table `tbl` (whose vectors are in `vec_table`) nearest `query`: the `n`
/// with the nearest codes, re-scored against their int8 vectors (`(id, 1 − cos)`, nearest
/// first). `None` when the caller should search exactly: the table is small, or the cache
/// cannot answer for this connection's view (it is inside a transaction that changed the
/// codes, or that started before the cache's latest refresh).
pub(crate) fn nearest(
    c: &Connection,
    tbl: u8,
    vec_table: &str,
    query: &[f32],
    k: usize,
    n: usize,
) -> Result<Option<Vec<(i64, f32)>>, StoreError> {
    let in_transaction = !c.is_autocommit();
    // Outside a transaction, read the state and the changes in one snapshot. It ends with a
    // COMMIT (nothing to write), not a ROLLBACK, which would abort a caller's pending reads.
    let snapshot = if in_transaction {
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
    let mut cache = CACHE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    cache.clock += 1;
    let clock = cache.clock;
    let dim = query.len();
    let slot = cache.tables.iter().position(|t| t.epoch == epoch && t.dim == dim);
    let fresh = slot.is_some_and(|i| cache.tables[i].seq == seq);
    if in_transaction && !fresh {
        return Ok(None);
    }
    let i = match slot {
        Some(i) if fresh => i,
        Some(i) if cache.tables[i].seq < seq => {
            let since = cache.tables[i].seq;
            let table = &mut cache.tables[i];
            let mut stmt = c.prepare_cached(&format!(
                "SELECT c.id, c.code, v.embedding FROM vector_codes c LEFT JOIN {vec_table} v ON v.id = c.id
                 WHERE c.tbl = ?1 AND c.seq > ?2"
            ))?;
            let mut rows = stmt.query(params![tbl, since])?;
            while let Some(r) = rows.next()? {
                let bytes = r.get_ref(1)?.as_blob_or_null().map_err(rusqlite::Error::from)?;
                let row = r.get_ref(2)?.as_blob_or_null().map_err(rusqlite::Error::from)?;
                table.apply(r.get(0)?, bytes, row);
            }
            table.seq = seq;
            i
        }
        _ => {
            let loaded = load(c, tbl, vec_table, epoch, seq, dim)?;
            match slot {
                Some(i) => {
                    cache.tables[i] = loaded;
                    i
                }
                None => {
                    if cache.tables.len() >= CACHED_TABLES
                        && let Some(oldest) = (0..cache.tables.len()).min_by_key(|&j| cache.tables[j].last_used)
                    {
                        cache.tables.swap_remove(oldest);
                    }
                    cache.tables.push(loaded);
                    cache.tables.len() - 1
                }
            }
        }
    };
    let table = &mut cache.tables[i];
    table.last_used = clock;
    if table.ids.len() <= n.saturating_mul(EXACT_ROWS_PER_CANDIDATE) {
        return Ok(None);
    }
    let found = table.nearest(query, k, n);
    drop(cache);
    drop(snapshot);
    Ok(Some(found))
}

fn load(c: &Connection, tbl: u8, vec_table: &str, epoch: i64, seq: i64, dim: usize) -> Result<TableCodes, StoreError> {
    let mut t = TableCodes::new(epoch, seq, dim);
    let mut stmt = c.prepare_cached(&format!(
        "SELECT c.id, c.code, v.embedding FROM vector_codes c JOIN {vec_table} v ON v.id = c.id
         WHERE c.tbl = ?1 AND c.code IS NOT NULL ORDER BY c.id"
    ))?;
    let mut rows = stmt.query(params![tbl])?;
    while let Some(r) = rows.next()? {
        let (Some(bytes), Some(row)) = (
            r.get_ref(1)?.as_blob_or_null().map_err(rusqlite::Error::from)?,
            r.get_ref(2)?.as_blob_or_null().map_err(rusqlite::Error::from)?,
        ) else {
            continue;
        };
        if row.len() == dim && push_code(&mut t.codes, bytes, t.words) {
            t.ids.push(r.get(0)?);
            t.rows.extend(row.iter().map(|&b| b as i8));
            t.norms.push(int8_norm(row));
        }
    }
    Ok(t)
}

#[cfg(test)]
mod tests;
