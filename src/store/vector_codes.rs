//! Binary codes of the stored embeddings: the cheap first pass of vector search.
//!
//! all-MiniLM-L6-v2 embeddings are L2-normalised, so the sign of each dimension keeps most of
//! a vector's direction: the Hamming distance between two 384-bit sign codes tracks their
//! angle. Scanning 48-byte codes is ~32× less memory traffic than 1536-byte vectors, and an
//! in-process copy of them (5.6 MB at 100k rows) makes the scan a few hundred microseconds;
//! the candidates it keeps are then re-scored exactly (see `VectorRepo::search`).
//!
//! The codes live in `vector_codes` (migration 0002), written in the same transaction as the
//! vector, so they commit or roll back together. The in-process cache follows the table
//! through `vector_code_state`: every write bumps the table's `seq` and stamps the row with it,
//! so a cache that has seen changes up to `seq` S catches up by reading the rows with
//! seq > S (a deletion leaves its row with code NULL for exactly this). The cache is only ever
//! refreshed from committed data (outside a transaction, in one read snapshot), so a
//! rolled-back write can never leave it ahead of the database.

use super::StoreError;
use super::vectors::EMBEDDING_DIM;
use rusqlite::{Connection, DropBehavior, OptionalExtension, params};
use std::sync::Mutex;

/// u64 words in one code.
pub const CODE_WORDS: usize = EMBEDDING_DIM / 64;
/// One binary code: bit `i % 64` of word `i / 64` is set when dimension `i` is > 0.
pub type Code = [u64; CODE_WORDS];

/// How many database tables' codes stay cached; a process normally has one database (three
/// tables), tests open many short-lived ones.
const CACHED_TABLES: usize = 12;

/// The sign code of `v` (which must have [`EMBEDDING_DIM`] dimensions). Matches sqlite-vec's
/// `vec_quantize_binary` bit for bit, which the migration's backfill uses.
pub fn binary_code(v: &[f32]) -> Code {
    let mut code = [0u64; CODE_WORDS];
    for (i, x) in v.iter().take(EMBEDDING_DIM).enumerate() {
        if *x > 0.0 {
            code[i / 64] |= 1 << (i % 64);
        }
    }
    code
}

/// The bytes stored in `vector_codes.code` (little-endian words, so byte `i / 8` holds
/// dimension `i` at bit `i % 8`).
pub fn code_bytes(code: &Code) -> Vec<u8> {
    code.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn code_from_bytes(b: &[u8]) -> Option<Code> {
    if b.len() != CODE_WORDS * 8 {
        return None;
    }
    let mut code = [0u64; CODE_WORDS];
    for (w, chunk) in code.iter_mut().zip(b.chunks_exact(8)) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        *w = u64::from_le_bytes(word);
    }
    Some(code)
}

pub fn hamming(a: &Code, b: &Code) -> u32 {
    a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum()
}

/// The positions of the `n` codes nearest `query` by Hamming distance (ties to the earlier
/// position), in no particular order. A counting pass over the 385 possible distances finds
/// the cut-off, so this is linear in the number of codes whatever `n` is.
pub fn nearest_codes(codes: &[Code], query: &Code, n: usize) -> Vec<usize> {
    if n >= codes.len() {
        return (0..codes.len()).collect();
    }
    let dist: Vec<u16> = codes.iter().map(|c| hamming(c, query) as u16).collect();
    let mut histogram = [0usize; EMBEDDING_DIM + 1];
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
pub(crate) fn record(c: &Connection, tbl: u8, id: i64, code: Option<&Code>) -> Result<(), StoreError> {
    let seq: i64 = c
        .prepare_cached("UPDATE vector_code_state SET seq = seq + 1 WHERE tbl = ?1 RETURNING seq")?
        .query_row(params![tbl], |r| r.get(0))?;
    c.prepare_cached("INSERT OR REPLACE INTO vector_codes (tbl, id, code, seq) VALUES (?1, ?2, ?3, ?4)")?
        .execute(params![tbl, id, code.map(code_bytes), seq])?;
    Ok(())
}

/// One table's codes as of change `seq`, sorted by id.
struct TableCodes {
    epoch: i64,
    seq: i64,
    ids: Vec<i64>,
    codes: Vec<Code>,
    last_used: u64,
}

impl TableCodes {
    fn apply(&mut self, id: i64, code: Option<Code>) {
        match (self.ids.binary_search(&id), code) {
            (Ok(i), Some(code)) => self.codes[i] = code,
            (Ok(i), None) => {
                self.ids.remove(i);
                self.codes.remove(i);
            }
            (Err(i), Some(code)) => {
                self.ids.insert(i, id);
                self.codes.insert(i, code);
            }
            (Err(_), None) => {}
        }
    }
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

/// The ids of the `n` rows of table `tbl` whose codes are nearest `query`, or `None` when the
/// caller should search exactly: the table is small, or the cache cannot answer for this
/// connection's view (it is inside a transaction that changed the codes, or that started
/// before the cache's latest refresh).
pub(crate) fn candidates(c: &Connection, tbl: u8, query: &Code, n: usize) -> Result<Option<Vec<i64>>, StoreError> {
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
    let slot = cache.tables.iter().position(|t| t.epoch == epoch);
    let fresh = slot.is_some_and(|i| cache.tables[i].seq == seq);
    if in_transaction && !fresh {
        return Ok(None);
    }
    let i = match slot {
        Some(i) if fresh => i,
        Some(i) if cache.tables[i].seq < seq => {
            let since = cache.tables[i].seq;
            let table = &mut cache.tables[i];
            let mut stmt = c.prepare_cached("SELECT id, code FROM vector_codes WHERE tbl = ?1 AND seq > ?2")?;
            let mut rows = stmt.query(params![tbl, since])?;
            while let Some(r) = rows.next()? {
                let code = r.get_ref(1)?.as_blob_or_null().map_err(rusqlite::Error::from)?.and_then(code_from_bytes);
                table.apply(r.get(0)?, code);
            }
            table.seq = seq;
            i
        }
        _ => {
            let loaded = load(c, tbl, epoch, seq)?;
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
    let ids = nearest_codes(&table.codes, query, n).into_iter().map(|p| table.ids[p]).collect();
    drop(cache);
    drop(snapshot);
    Ok(Some(ids))
}

fn load(c: &Connection, tbl: u8, epoch: i64, seq: i64) -> Result<TableCodes, StoreError> {
    let mut ids = Vec::new();
    let mut codes = Vec::new();
    let mut stmt =
        c.prepare_cached("SELECT id, code FROM vector_codes WHERE tbl = ?1 AND code IS NOT NULL ORDER BY id")?;
    let mut rows = stmt.query(params![tbl])?;
    while let Some(r) = rows.next()? {
        if let Some(code) = r.get_ref(1)?.as_blob_or_null().map_err(rusqlite::Error::from)?.and_then(code_from_bytes) {
            ids.push(r.get(0)?);
            codes.push(code);
        }
    }
    Ok(TableCodes { epoch, seq, ids, codes, last_used: 0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_match_sqlite_vec_quantisation() {
        let c = super::super::open_in_memory().unwrap();
        let mut rng = crate::SplitMix64(5);
        let v: Vec<f32> = (0..EMBEDDING_DIM).map(|_| rng.next_f64() as f32 - 0.5).collect();
        let blob: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        let theirs: Vec<u8> = c.query_row("SELECT vec_quantize_binary(?1)", [blob], |r| r.get(0)).unwrap();
        assert_eq!(theirs, code_bytes(&binary_code(&v)));
        assert_eq!(code_from_bytes(&theirs), Some(binary_code(&v)));
    }

    #[test]
    fn nearest_codes_keeps_the_closest_and_breaks_ties_by_position() {
        let q = [0u64; CODE_WORDS];
        let with_bits = |n: u32| {
            let mut c = [0u64; CODE_WORDS];
            c[0] = (1u64 << n) - 1;
            c
        };
        let codes = [with_bits(5), with_bits(1), with_bits(3), with_bits(1), with_bits(0), with_bits(3)];
        let mut got = nearest_codes(&codes, &q, 4);
        got.sort_unstable();
        assert_eq!(got, [1, 2, 3, 4], "distances 0, 1, 1 and the first 3");
        assert_eq!(nearest_codes(&codes, &q, 10).len(), codes.len());
        assert!(nearest_codes(&codes, &q, 0).is_empty());
    }
}
