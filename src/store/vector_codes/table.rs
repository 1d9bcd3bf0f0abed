//! One vector table held in process: every live row's int8 vector and binary code, by slot,
//! with the graph that searches it once it is big (`super::index`).
//!
//! Below the graph's threshold a search scans every binary code (Hamming distance, ~2 µs per
//! thousand rows at 384-d) and re-scores the nearest against their int8 rows; a big table's
//! scan is shared by two threads in parts (`TableCodes::parts`). Coarse-quantiser lists
//! (IVF) were tried for the big tables and removed (session 24): on the 1M bench of real
//! MiniLM vectors they made the vector search 0.32 ms but found only 0.829 of the exact f32 top
//! 10 (0.918 probing a tenth of the rows; re-scoring more, more k-means, filing rows in two
//! lists did not mend it), because the exact neighbours of a held-out sentence are spread over
//! many lists; the graph keeps 0.95 (docs/cognition.md §9.9 has the figures).

use super::graph::{Rows, Stamp};
use super::index::Index;
use super::kernels::{dots_int8, hamming_all};
use super::{binary_code, code_words};
use std::collections::HashMap;
use std::ops::Range;

/// The graph's search breadth for a search that would re-score `n` candidates in a flat scan of
/// `rows` rows: `n` times 3 per million rows, growing by only 1 per million past 500k rows, and
/// never under a quarter of `n` (so 300 / 600 / 1000 for the usual 400 candidates at 250k /
/// 500k / 1M rows, 100 below 83k). A bigger graph needs a wider search to keep the same share of
/// the exact top 10: on the bench's data (~50 close variants of each sentence, whose neighbours
/// fill a narrow search with one sentence's variants) the smallest breadth keeping 0.95 of the
/// exact f32 top 10 on the queries it was tuned on was 300 at 250k rows, 600 at 500k and 1000 at
/// 1M; held-out queries found 0.988 / 0.986 / 0.975 there (docs/cognition.md §9.9).
pub fn graph_ef(n: usize, rows: usize) -> usize {
    let per_mille = (rows / 333).min(1_500 + rows / 1_000).max(250);
    n.saturating_mul(per_mille) / 1_000
}

thread_local! {
    /// Each thread's flat-scan distances, kept between searches: a fresh buffer of a big
    /// table's size cost the first touch of its pages on every search.
    static DISTANCES: std::cell::RefCell<Vec<u16>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// One table's rows as of change `seq`, `words` code words and `dim` int8 bytes each.
pub(super) struct TableCodes {
    pub epoch: i64,
    pub seq: i64,
    pub dim: usize,
    words: usize,
    /// Per slot: the row id, its int8 vector, its length and its code.
    ids: Vec<i64>,
    rows: Vec<i8>,
    norms: Vec<f32>,
    codes: Vec<u64>,
    slot_of: HashMap<i64, u32>,
    /// The graph that searches big tables (`super::index`).
    index: Index,
    /// The last search's whole re-scored shortlist, nearest first: a turn searches the
    /// concepts three times with the message's embedding and the same shortlist size (recall's
    /// 50, the graph's seeds 10, growth's novelty 1), and each answer is a prefix of it.
    memo: Option<Memo>,
}

/// See `TableCodes::memo`: valid while the table is unchanged (any `apply` drops it).
struct Memo {
    n: usize,
    /// The largest `k` the shortlist answers (a graph's breadth can be under `n`).
    depth: usize,
    query: Vec<f32>,
    scored: Vec<(i64, f32)>,
}

impl TableCodes {
    pub fn new(epoch: i64, seq: i64, dim: usize) -> TableCodes {
        TableCodes {
            epoch,
            seq,
            dim,
            words: code_words(dim),
            ids: Vec::new(),
            rows: Vec::new(),
            norms: Vec::new(),
            codes: Vec::new(),
            slot_of: HashMap::new(),
            index: Index::new(),
            memo: None,
        }
    }

    /// Keep the table's graph in `path` between processes (`super::graph::file`).
    pub fn set_graph_file(&mut self, path: std::path::PathBuf) {
        self.index.set_file(path);
    }

    /// What the rows are: the graph file written from them must match it.
    fn stamp(&self) -> Stamp {
        Stamp { epoch: self.epoch, seq: self.seq, dim: self.dim }
    }

    /// The table with a graph from `rows` rows on (tests: a graph at a size they can build).
    #[cfg(test)]
    pub fn with_graph_min_rows(mut self, rows: usize) -> TableCodes {
        self.index.set_min_rows(rows);
        self
    }

    /// Block until a graph being built is adopted (tests: so that the next search uses it).
    #[cfg(test)]
    pub fn wait_for_graph(&mut self) -> bool {
        let rows = Rows { rows: &self.rows, norms: &self.norms, dim: self.dim };
        self.memo = None;
        self.index.poll(true, &self.slot_of, rows)
    }

    /// Whether the graph searches go through was read back from its file, not built.
    #[cfg(test)]
    pub fn graph_restored(&self) -> bool {
        self.index.restored()
    }

    /// Live and dead nodes of the graph searches go through, if any.
    #[cfg(test)]
    pub fn graph_counts(&self) -> Option<(usize, usize)> {
        self.index.graph_counts()
    }

    /// Whether searches go through a graph, or the table is too small to want one (false while
    /// one is being built); adopts a finished build.
    pub fn index_settled(&mut self) -> bool {
        self.adopt_built_graph();
        self.index.settled(self.row_count())
    }

    /// Adopt a graph whose build has finished (the next search uses it), or start another if
    /// the one built had fallen too far behind.
    fn adopt_built_graph(&mut self) {
        let rows = Rows { rows: &self.rows, norms: &self.norms, dim: self.dim };
        if self.index.poll(false, &self.slot_of, rows) {
            self.memo = None;
        }
        self.index.maintain(&self.ids, rows, self.stamp());
    }

    pub fn row_count(&self) -> usize {
        self.ids.len()
    }

    /// Every row id, sorted.
    #[cfg(test)]
    pub fn ids(&self) -> Vec<i64> {
        let mut ids = self.ids.clone();
        ids.sort_unstable();
        ids
    }

    /// Panics unless every slot holds its row's own code and the id map agrees with the slots.
    #[cfg(test)]
    pub fn check(&self, code_of: impl Fn(i64) -> Vec<u64>) {
        let w = self.words;
        assert_eq!(self.codes.len(), self.row_count() * w);
        assert_eq!(self.slot_of.len(), self.row_count());
        for (s, id) in self.ids.iter().enumerate() {
            assert_eq!(self.slot_of[id], s as u32);
            assert_eq!(self.codes[s * w..(s + 1) * w], code_of(*id)[..]);
        }
    }

    /// Apply one change read from `vector_codes` with the row's stored vector: a code of
    /// another width, a NULL code or a missing vector removes the row.
    pub fn apply(&mut self, id: i64, code: Option<&[u8]>, row: Option<&[u8]>) {
        self.memo = None;
        let mut words = Vec::with_capacity(self.words);
        let valid = code.is_some_and(|b| super::push_code(&mut words, b, self.words))
            && row.is_some_and(|r| r.len() == self.dim);
        self.remove(id);
        if let (true, Some(row)) = (valid, row) {
            self.insert(id, &words, row);
        }
    }

    /// Add row `id` (not present) with its code and int8 vector, in a new last slot.
    pub fn insert(&mut self, id: i64, code: &[u64], row: &[u8]) {
        let slot = self.ids.len() as u32;
        // Re-scoring reads each candidate's id and norm as well as its row.
        super::huge::reserve(&mut self.ids, 1);
        super::huge::reserve(&mut self.norms, 1);
        self.ids.push(id);
        super::huge::reserve(&mut self.rows, row.len());
        self.rows.extend(row.iter().map(|&b| b as i8));
        self.norms.push(row.iter().map(|&b| f32::from(b as i8).powi(2)).sum::<f32>().sqrt());
        super::huge::reserve(&mut self.codes, code.len());
        self.codes.extend_from_slice(code);
        self.slot_of.insert(id, slot);
        let rows = Rows { rows: &self.rows, norms: &self.norms, dim: self.dim };
        self.index.inserted(id, slot, rows);
    }

    /// Remove row `id` if present: the last slot moves into its place.
    fn remove(&mut self, id: i64) {
        let Some(slot) = self.slot_of.remove(&id) else { return };
        let (s, w, d) = (slot as usize, self.words, self.dim);
        self.index.removed(id, slot, (self.ids.len() - 1) as u32);
        let end = self.ids.len() - 1;
        if s < end {
            self.ids[s] = self.ids[end];
            self.rows.copy_within(end * d..(end + 1) * d, s * d);
            self.norms[s] = self.norms[end];
            self.codes.copy_within(end * w..(end + 1) * w, s * w);
            self.slot_of.insert(self.ids[s], slot);
        }
        self.ids.truncate(end);
        self.rows.truncate(end * d);
        self.norms.truncate(end);
        self.codes.truncate(end * w);
    }

    /// After a batch of changes: start building the graph if the table has grown to want one
    /// (or its graph is worn), or drop it if the table shrank well under the threshold.
    pub fn reindex_if_grown(&mut self) {
        self.memo = None;
        let rows = Rows { rows: &self.rows, norms: &self.norms, dim: self.dim };
        self.index.maintain(&self.ids, rows, self.stamp());
    }

    /// The `k` nearest of the `n` rows with the nearest codes,
    /// re-scored against their int8 vectors: `(id, 1 − cos)`, nearest first, ties to the
    /// smaller id.
    pub fn nearest(&mut self, query: &[f32], k: usize, n: usize) -> Vec<(i64, f32)> {
        if let Some(m) = self.remembered(query, k, n) {
            return m.scored[..k.min(m.scored.len())].to_vec();
        }
        let (scored, depth) = self.shortlist(query, k, n);
        self.remember(k, Memo { n, depth, query: query.to_vec(), scored })
    }

    /// The last search's shortlist, if it answers this one.
    fn remembered(&self, query: &[f32], k: usize, n: usize) -> Option<&Memo> {
        self.memo.as_ref().filter(|m| m.n == n && k <= m.depth && m.query == query)
    }

    /// Keep a search's whole shortlist for the next search with the same query; its `k` nearest.
    fn remember(&mut self, k: usize, memo: Memo) -> Vec<(i64, f32)> {
        let found = memo.scored[..k.min(memo.scored.len())].to_vec();
        self.memo = Some(memo);
        found
    }

    /// The row ranges a search for `k` of `n` candidates may scan on separate threads, each
    /// with [`TableCodes::nearest_codes_in`], before [`TableCodes::nearest_of_parts`]
    /// re-scores what they found; `None` when the search is one piece of work ([`TableCodes::nearest`]):
    /// the table is under two parts of `part_rows`, at most `n` rows, remembers the answer,
    /// or is searched through a graph (or soon will be).
    pub fn parts(&self, query: &[f32], k: usize, n: usize, part_rows: usize) -> Option<Vec<Range<usize>>> {
        let rows = self.row_count();
        let split = part_rows > 0
            && rows >= 2 * part_rows
            && n < rows
            && self.index.flat_only(rows)
            && self.remembered(query, k, n).is_none();
        split.then(|| (0..rows).step_by(part_rows).map(|start| start..(start + part_rows).min(rows)).collect())
    }

    /// The `n` slots of `range` whose codes are nearest `code`, with their distances, ties to
    /// the earlier slot, in no order.
    pub fn nearest_codes_in(&self, code: &[u64], range: Range<usize>, n: usize) -> Vec<(u16, u32)> {
        let w = self.words;
        DISTANCES.with_borrow_mut(|dist| {
            hamming_all(&self.codes[range.start * w..range.end * w], code, dist);
            let picked = super::select_nearest(dist, w * 64, n);
            picked.into_iter().map(|i| (dist[i as usize], range.start as u32 + i)).collect()
        })
    }

    /// [`TableCodes::nearest`] from what [`TableCodes::nearest_codes_in`] found in each of the
    /// [`TableCodes::parts`]: the `n` nearest codes of the whole table are among them.
    pub fn nearest_of_parts(
        &mut self,
        query: &[f32],
        k: usize,
        n: usize,
        mut found: Vec<(u16, u32)>,
    ) -> Vec<(i64, f32)> {
        // The `n` least by distance, ties to the earlier slot: the whole scan's choice.
        if n == 0 {
            found.clear();
        } else if found.len() > n {
            found.select_nth_unstable(n - 1);
            found.truncate(n);
        }
        let scored = self.rescore(query, found.into_iter().map(|(_, slot)| slot).collect());
        self.remember(k, Memo { n, depth: n, query: query.to_vec(), scored })
    }

    /// The `n` rows with the nearest codes, re-scored against their int8 rows, nearest first
    /// (ties by id, so any `k` nearest are a prefix); or, through the graph, the nearest
    /// [`graph_ef`] (at least `k`) it finds. With the largest `k` the list answers.
    fn shortlist(&mut self, query: &[f32], k: usize, n: usize) -> (Vec<(i64, f32)>, usize) {
        self.adopt_built_graph();
        let query_norm = query.iter().map(|x| x * x).sum::<f32>().sqrt();
        let rows = Rows { rows: &self.rows, norms: &self.norms, dim: self.dim };
        let ef = graph_ef(n, self.ids.len()).max(k);
        if let Some(graph) = self.index.graph() {
            let mut scored: Vec<(i64, f32)> = graph
                .search(query, ef, rows)
                .into_iter()
                .map(|(slot, sim)| {
                    (self.ids[slot as usize], if query_norm > 0.0 { 1.0 - sim / query_norm } else { 1.0 })
                })
                .collect();
            scored.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
            return (scored, ef);
        }
        let found = self.nearest_codes_in(&binary_code(query), 0..self.row_count(), n);
        (self.rescore(query, found.into_iter().map(|(_, slot)| slot).collect()), n)
    }

    /// The rows at `picked` re-scored against `query`: `(id, 1 − cos)`, nearest first, ties by id.
    fn rescore(&self, query: &[f32], mut picked: Vec<u32>) -> Vec<(i64, f32)> {
        let query_norm = query.iter().map(|x| x * x).sum::<f32>().sqrt();
        // In table order, so the rows are read front to back (the result's order is set below).
        picked.sort_unstable();
        let dots = dots_int8(query, &self.rows, &picked);
        let mut scored: Vec<(i64, f32)> = picked
            .iter()
            .zip(dots)
            .map(|(&s, dot)| {
                let denom = query_norm * self.norms[s as usize];
                (self.ids[s as usize], if denom > 0.0 { 1.0 - dot / denom } else { 1.0 })
            })
            .collect();
        scored.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        scored
    }
}
