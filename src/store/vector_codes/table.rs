//! One vector table held in process: every live row's int8 vector and binary code, with the
//! graph that searches it once it is big (`super::index`), and (off: [`IVF_MIN_ROWS`]) lists of
//! a coarse quantiser (IVF).
//!
//! A flat scan of the binary codes reads every code: 48 MB at a million 384-d rows, several
//! milliseconds of memory traffic. Past [`IVF_MIN_ROWS`] the rows are clustered (spherical
//! k-means on a sample, [`ROWS_PER_LIST`] rows a list) and each row's code is kept in its nearest
//! centroid's list, contiguously; a search ranks the centroids against the query and scans only
//! the codes of the nearest lists, until [`probe_rows`] have been scanned, then re-scores the
//! best of those by the int8 rows as before. Smaller tables are one list, scanned whole.
//!
//! The lists follow every change the cache sees (insert, delete, re-embed): a new or
//! re-embedded row goes to its nearest centroid's list at once, a deleted one leaves its list.
//! The centroids are trained in process from the rows (nothing is stored, so the database and
//! its size are unchanged), again whenever the table has doubled since, so they keep up with
//! what the table holds; a row placed by older centroids is still found, through its list.

use super::graph::{Rows, Stamp};
use super::index::Index;
use super::kernels::{dot_int8, dots_f32, dots_int8, hamming_all};
use super::{binary_code, code_words};
use std::collections::HashMap;

/// A table is one list (scanned whole) below this many rows. Set past any store measured so far:
/// on the 1M bench of real MiniLM vectors (`benches/recall_1m.rs`) the lists as they stand
/// (`ROWS_PER_LIST`, `SHORTLIST`, [`probe_rows`]) made the vector search 0.32 ms instead of a
/// flat scan's milliseconds, but found only 0.829 of the exact f32 top 10 (0.918 probing 10% of
/// the rows), under the 0.95 the search must keep; until that is mended the flat scan (0.959)
/// serves every table. Tests lower it per table (`with_ivf_min_rows`).
///
/// What was tried on that data (a harness over this file, the same 1M vectors and 100 queries,
/// 244 lists): filing every row by its exact best centroid, not the [`SHORTLIST`], gave 0.833, so
/// the filing is not the cause; re-scoring every probed row gave 0.839 / 0.938 probing 1/32 /
/// 1/8 of the rows, and 0.941 at 1/4 with 400 candidates: the exact neighbours of a held-out
/// sentence are spread over many lists (the mixtures `a + 0.35·b` sit between clusters). Four
/// times the k-means sample and twice the rounds: 0.838. Each row filed in its two best lists:
/// worse per code scanned (0.868 for the codes of 0.883). A first pass over each code's first 128
/// bits keeping 1/20 of the rows kept 0.957 but was slower than the flat scan (the survivors'
/// full codes are random reads). A sublinear search at 0.95 needs another index: the graph
/// (`super::graph`, from `super::index::GRAPH_MIN_ROWS` rows), which the lists never reach.
pub const IVF_MIN_ROWS: usize = 1 << 24;
/// The mean list size the number of centroids is chosen for.
pub const ROWS_PER_LIST: usize = 4_096;
/// At most this many centroids, whatever the table's size (assigning a row costs one
/// Hamming distance per centroid).
const MAX_LISTS: usize = 1_024;
/// k-means is trained on this many sampled rows per centroid, for this many rounds.
const SAMPLE_PER_LIST: usize = 32;
const TRAIN_ROUNDS: usize = 6;
/// A row's list is the best by int8 dot product among the centroids this many nearest its code.
const SHORTLIST: usize = 4;

/// Rows scanned (whole lists, nearest centroid first) for `n` candidates in a table of `len`
/// rows: the larger of 64 per candidate and 1/32 of the table. Chosen on held-out queries by
/// recall against the exact f32 top 10 (`benches/recall_1m.rs`, docs/cognition.md §9.9).
pub fn probe_rows(n: usize, len: usize) -> usize {
    n.saturating_mul(64).max(len / 32)
}

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

struct List {
    slots: Vec<u32>,
    codes: Vec<u64>,
}

/// One table's rows as of change `seq`, `words` code words and `dim` int8 bytes each.
pub(super) struct TableCodes {
    pub epoch: i64,
    pub seq: i64,
    pub dim: usize,
    pub last_used: u64,
    words: usize,
    /// Per slot: the row id, its int8 vector, its length and where its code is (list, index).
    ids: Vec<i64>,
    rows: Vec<i8>,
    norms: Vec<f32>,
    place: Vec<(u32, u32)>,
    slot_of: HashMap<i64, u32>,
    lists: Vec<List>,
    /// Unit centroids, `dim` floats each, one per list; empty while the table is one list.
    centroids: Vec<f32>,
    /// The centroids' sign codes, for shortlisting a row's list.
    centroid_codes: Vec<u64>,
    /// Rows when the centroids were trained (0: never).
    trained_at: usize,
    /// See [`IVF_MIN_ROWS`].
    ivf_min_rows: usize,
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
            last_used: 0,
            words: code_words(dim),
            ids: Vec::new(),
            rows: Vec::new(),
            norms: Vec::new(),
            place: Vec::new(),
            slot_of: HashMap::new(),
            lists: vec![List { slots: Vec::new(), codes: Vec::new() }],
            centroids: Vec::new(),
            centroid_codes: Vec::new(),
            trained_at: 0,
            ivf_min_rows: IVF_MIN_ROWS,
            index: Index::new(),
            memo: None,
        }
    }

    /// The table with lists from `rows` rows on (tests: the index at a size they can build).
    #[cfg(test)]
    pub fn with_ivf_min_rows(mut self, rows: usize) -> TableCodes {
        self.ivf_min_rows = rows;
        self
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

    /// How many lists the rows are in (1 until the table passes [`IVF_MIN_ROWS`]).
    #[cfg(test)]
    pub fn lists(&self) -> usize {
        self.lists.len()
    }

    /// Every row id, in no particular order, each once.
    #[cfg(test)]
    pub fn ids(&self) -> Vec<i64> {
        let mut listed: Vec<i64> =
            self.lists.iter().flat_map(|l| l.slots.iter().map(|&s| self.ids[s as usize])).collect();
        listed.sort_unstable();
        listed
    }

    /// Panics unless every row is filed exactly once, where `place` says, with its own code.
    #[cfg(test)]
    pub fn check(&self, code_of: impl Fn(i64) -> Vec<u64>) {
        let w = self.words;
        assert_eq!(self.lists.iter().map(|l| l.slots.len()).sum::<usize>(), self.row_count());
        for (li, l) in self.lists.iter().enumerate() {
            assert_eq!(l.codes.len(), l.slots.len() * w);
            for (i, &slot) in l.slots.iter().enumerate() {
                assert_eq!(self.place[slot as usize], (li as u32, i as u32));
                assert_eq!(l.codes[i * w..(i + 1) * w], code_of(self.ids[slot as usize])[..]);
            }
        }
        for (s, id) in self.ids.iter().enumerate() {
            assert_eq!(self.slot_of[id], s as u32);
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

    /// Add row `id` (not present) with its code and int8 vector, in its nearest list.
    pub fn insert(&mut self, id: i64, code: &[u64], row: &[u8]) {
        let slot = self.ids.len() as u32;
        self.ids.push(id);
        self.rows.extend(row.iter().map(|&b| b as i8));
        self.norms.push(row.iter().map(|&b| f32::from(b as i8).powi(2)).sum::<f32>().sqrt());
        self.slot_of.insert(id, slot);
        let list = self.assign(code, slot);
        let l = &mut self.lists[list];
        self.place.push((list as u32, l.slots.len() as u32));
        l.slots.push(slot);
        l.codes.extend_from_slice(code);
        let rows = Rows { rows: &self.rows, norms: &self.norms, dim: self.dim };
        self.index.inserted(id, slot, rows);
    }

    /// Remove row `id` if present: its code leaves its list, and the last slot moves into its place.
    fn remove(&mut self, id: i64) {
        let Some(slot) = self.slot_of.remove(&id) else { return };
        let (s, w, d) = (slot as usize, self.words, self.dim);
        self.index.removed(id, slot, (self.ids.len() - 1) as u32);
        let (list, at) = self.place[s];
        let l = &mut self.lists[list as usize];
        let last = l.slots.len() - 1;
        l.slots.swap_remove(at as usize);
        l.codes.copy_within(last * w..(last + 1) * w, at as usize * w);
        l.codes.truncate(last * w);
        if (at as usize) < last {
            let moved = l.slots[at as usize] as usize;
            self.place[moved].1 = at;
        }
        let end = self.ids.len() - 1;
        if s < end {
            self.ids[s] = self.ids[end];
            self.rows.copy_within(end * d..(end + 1) * d, s * d);
            self.norms[s] = self.norms[end];
            self.place[s] = self.place[end];
            self.slot_of.insert(self.ids[s], slot);
            let (ml, mi) = self.place[s];
            self.lists[ml as usize].slots[mi as usize] = slot;
        }
        self.ids.truncate(end);
        self.rows.truncate(end * d);
        self.norms.truncate(end);
        self.place.truncate(end);
    }

    /// The list for the row in `slot` with sign code `code`: the best by int8 dot product of the
    /// [`SHORTLIST`] centroids nearest its code (one Hamming distance per centroid, then a few
    /// dot products, where a dot product with every centroid would cost seconds at a million rows).
    fn assign(&self, code: &[u64], slot: u32) -> usize {
        if self.centroids.is_empty() {
            return 0;
        }
        let mut dist = Vec::with_capacity(self.lists.len());
        hamming_all(&self.centroid_codes, code, &mut dist);
        let mut order: Vec<usize> = (0..dist.len()).collect();
        let short = SHORTLIST.min(order.len());
        order.select_nth_unstable_by_key(short - 1, |&i| (dist[i], i));
        let d = self.dim;
        let row = &self.rows[slot as usize * d..(slot as usize + 1) * d];
        order[..short]
            .iter()
            .map(|&c| (c, dot_int8(&self.centroids[c * d..(c + 1) * d], row)))
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
            .map_or(0, |(c, _)| c)
    }

    /// Train the centroids when the table has passed its [`IVF_MIN_ROWS`] and has doubled since
    /// they were last trained, and re-file every row. Call after a batch of changes.
    pub fn reindex_if_grown(&mut self) {
        self.memo = None;
        let rows = Rows { rows: &self.rows, norms: &self.norms, dim: self.dim };
        self.index.maintain(&self.ids, rows, self.stamp());
        let n = self.row_count();
        if n < self.ivf_min_rows || (self.trained_at > 0 && n < 2 * self.trained_at) {
            return;
        }
        let lists = (n / ROWS_PER_LIST).clamp(2, MAX_LISTS);
        self.centroids = self.train(lists);
        self.centroid_codes = self.centroids.chunks_exact(self.dim).flat_map(binary_code).collect();
        self.trained_at = n;
        let mut codes = vec![0u64; n * self.words];
        for l in &self.lists {
            for (i, &slot) in l.slots.iter().enumerate() {
                let s = slot as usize;
                codes[s * self.words..(s + 1) * self.words]
                    .copy_from_slice(&l.codes[i * self.words..(i + 1) * self.words]);
            }
        }
        self.lists = (0..lists).map(|_| List { slots: Vec::new(), codes: Vec::new() }).collect();
        for s in 0..n {
            let code = &codes[s * self.words..(s + 1) * self.words];
            let list = self.assign(code, s as u32);
            let l = &mut self.lists[list];
            self.place[s] = (list as u32, l.slots.len() as u32);
            l.slots.push(s as u32);
            l.codes.extend_from_slice(code);
        }
    }

    /// Spherical k-means over an evenly spaced sample of the rows: `lists` unit centroids.
    fn train(&self, lists: usize) -> Vec<f32> {
        let (n, d) = (self.row_count(), self.dim);
        let sample_len = (lists * SAMPLE_PER_LIST).min(n);
        let sample: Vec<f32> = (0..sample_len)
            .flat_map(|i| {
                let s = i * n / sample_len;
                let norm = self.norms[s].max(f32::EPSILON);
                self.rows[s * d..(s + 1) * d].iter().map(move |&x| f32::from(x) / norm)
            })
            .collect();
        let mut centroids: Vec<f32> =
            (0..lists).flat_map(|c| sample[c * sample_len / lists * d..][..d].to_vec()).collect();
        for _ in 0..TRAIN_ROUNDS {
            let mut sums = vec![0f32; lists * d];
            for v in sample.chunks_exact(d) {
                let sims = dots_f32(v, &centroids);
                let best = (0..lists).max_by(|&a, &b| sims[a].total_cmp(&sims[b]).then(b.cmp(&a))).unwrap_or(0);
                sums[best * d..(best + 1) * d].iter_mut().zip(v).for_each(|(s, x)| *s += x);
            }
            for (c, sum) in centroids.chunks_exact_mut(d).zip(sums.chunks_exact(d)) {
                let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
                // An empty cluster keeps its centroid.
                if norm > 0.0 {
                    c.iter_mut().zip(sum).for_each(|(c, s)| *c = s / norm);
                }
            }
        }
        centroids
    }

    /// The `k` nearest of the `n` rows with the nearest codes among the probed lists,
    /// re-scored against their int8 vectors: `(id, 1 − cos)`, nearest first, ties to the
    /// smaller id.
    pub fn nearest(&mut self, query: &[f32], k: usize, n: usize) -> Vec<(i64, f32)> {
        if let Some(m) = &self.memo
            && m.n == n
            && k <= m.depth
            && m.query == query
        {
            return m.scored[..k.min(m.scored.len())].to_vec();
        }
        let (scored, depth) = self.shortlist(query, k, n);
        let found = scored[..k.min(scored.len())].to_vec();
        self.memo = Some(Memo { n, depth, query: query.to_vec(), scored });
        found
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
        let code = binary_code(query);
        let mut dist = Vec::new();
        let mut slots: Vec<u32> = Vec::new();
        let scan = |l: &List, dist: &mut Vec<u32>, slots: &mut Vec<u32>| {
            hamming_all(&l.codes, &code, dist);
            slots.extend_from_slice(&l.slots);
        };
        if self.centroids.is_empty() {
            scan(&self.lists[0], &mut dist, &mut slots);
        } else {
            let sims = dots_f32(query, &self.centroids);
            let mut order: Vec<usize> = (0..sims.len()).collect();
            order.sort_by(|&a, &b| sims[b].total_cmp(&sims[a]).then(a.cmp(&b)));
            let want = probe_rows(n, self.row_count());
            for l in order {
                if slots.len() >= want {
                    break;
                }
                scan(&self.lists[l], &mut dist, &mut slots);
            }
        }
        let mut picked: Vec<u32> =
            super::select_nearest(&dist, self.words * 64, n).into_iter().map(|i| slots[i]).collect();
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
        (scored, n)
    }
}
