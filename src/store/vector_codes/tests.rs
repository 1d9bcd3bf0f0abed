use super::*;

#[test]
fn codes_match_sqlite_vec_quantisation() {
    let c = super::super::open_in_memory().unwrap();
    let mut rng = crate::SplitMix64(5);
    for dim in [384, 768, 1024] {
        let v: Vec<f32> = (0..dim).map(|_| rng.next_f64() as f32 - 0.5).collect();
        let blob: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        let theirs: Vec<u8> = c.query_row("SELECT vec_quantize_binary(?1)", [blob], |r| r.get(0)).unwrap();
        assert_eq!(theirs, code_bytes(&binary_code(&v)), "{dim}-d");
        let mut back = Vec::new();
        assert!(push_code(&mut back, &theirs, code_words(dim)));
        assert_eq!(back, binary_code(&v));
    }
}

#[test]
fn a_code_has_one_bit_per_dimension_rounded_up_to_whole_words() {
    assert_eq!([384, 768, 1024, 1, 64, 65, 1000, 4096].map(code_words), [6, 12, 16, 1, 1, 2, 16, 64]);
    let v: Vec<f32> = (0..1000).map(|i| if i == 999 { 1.0 } else { -1.0 }).collect();
    let code = binary_code(&v);
    assert_eq!(code.len(), 16);
    assert_eq!(code[15], 1 << (999 % 64), "the last dimension lands in the last word");
    assert_eq!(code_bytes(&code).len(), 128);
    // Codes of another width are never read as this table's.
    assert!(!push_code(&mut Vec::new(), &code_bytes(&code), code_words(384)));
}

#[test]
fn the_fast_paths_agree_with_the_plain_ones() {
    let mut rng = crate::SplitMix64(9);
    let codes: Vec<u64> = (0..6 * 50).map(|_| rng.next_u64()).collect();
    let query: Vec<u64> = (0..6).map(|_| rng.next_u64()).collect();
    assert_eq!(distances(&codes, &query), kernels::plain::hamming_all(&codes, &query));
    for dim in [384usize, 13] {
        let q: Vec<f32> = (0..dim).map(|_| rng.next_f64() as f32 - 0.5).collect();
        let row: Vec<i8> = (0..dim).map(|_| (rng.next_u64() % 255) as i8).collect();
        let plain: f32 = q.iter().zip(&row).map(|(a, &b)| a * f32::from(b)).sum();
        let close = |x: f32| (x - plain).abs() < 1e-3 * plain.abs().max(1.0);
        assert!(close(kernels::dot_int8(&q, &row)), "{dim}-d");
        assert!(close(kernels::plain::dot_int8(&q, &row)), "{dim}-d");
        let rows: Vec<i8> = [row.clone(), row.clone()].concat();
        assert!(kernels::dots_int8(&q, &rows, &[1, 0]).into_iter().all(close), "{dim}-d");
    }
}

#[test]
fn nearest_codes_keeps_the_closest_and_breaks_ties_by_position() {
    let words = code_words(768);
    let q = vec![0u64; words];
    let with_bits = |n: u32| {
        let mut c = vec![0u64; words];
        c[words - 1] = (1u64 << n) - 1;
        c
    };
    let codes: Vec<u64> = [with_bits(5), with_bits(1), with_bits(3), with_bits(1), with_bits(0), with_bits(3)].concat();
    let mut got = nearest_codes(&codes, &q, 4);
    got.sort_unstable();
    assert_eq!(got, [1, 2, 3, 4], "distances 0, 1, 1 and the first 3");
    assert_eq!(nearest_codes(&codes, &q, 10).len(), 6);
    assert!(nearest_codes(&codes, &q, 0).is_empty());
}

#[test]
fn every_code_width_scans_to_the_row_by_row_distances() {
    let mut rng = crate::SplitMix64(11);
    // The widths with a loop of their own (384-, 768- and 1024-d) and two without.
    for words in [6, 12, 16, 1, 7] {
        let codes: Vec<u64> = (0..words * 37).map(|_| rng.next_u64()).collect();
        let query: Vec<u64> = (0..words).map(|_| rng.next_u64()).collect();
        let want: Vec<u16> = codes.chunks_exact(words).map(|c| hamming(c, &query) as u16).collect();
        assert_eq!(distances(&codes, &query), want, "{words} words");
        assert_eq!(kernels::plain::hamming_all(&codes, &query), want, "{words} words, plain build");
    }
}

#[test]
fn the_picking_pass_finds_every_row_within_the_bound_in_order() {
    let mut rng = crate::SplitMix64(14);
    // Lengths around the 32-row steps, and distances past 0x7fff, which a signed comparison
    // would take for negative.
    for len in [0usize, 1, 31, 32, 33, 63, 64, 65, 1_000, 70_001] {
        let dist: Vec<u16> = (0..len)
            .map(|_| match rng.next_u64() % 10 {
                0 => 0x8000 + (rng.next_u64() % 0x8000) as u16,
                _ => (rng.next_u64() % 400) as u16,
            })
            .collect();
        for bound in [0, 5, 100, 399, 0x8000, u16::MAX] {
            let want: Vec<u32> = (0..len as u32).filter(|&i| dist[i as usize] <= bound).collect();
            // What `out` held is replaced, and it grows from a capacity too small for the picks.
            let mut got = vec![7; 3];
            kernels::within(&dist, bound, &mut got);
            assert_eq!(got, want, "{len} rows within {bound}");
            assert_eq!(kernels::plain::within(&dist, bound), want, "{len} rows within {bound}, plain build");
        }
    }
}

#[test]
fn the_nearest_positions_are_the_smallest_distances_with_ties_to_the_earlier() {
    let mut rng = crate::SplitMix64(12);
    // Many ties (distances 0..40), and lengths around the picking pass's 32-row blocks.
    for len in [1usize, 31, 32, 33, 100, 1_000, 5_003] {
        let dist: Vec<u16> = (0..len).map(|_| (rng.next_u64() % 40) as u16).collect();
        for n in [0, 1, 7, len / 2, len.saturating_sub(1), len] {
            let want = nearest_by_sorting(&dist, n);
            let mut got = select_nearest(&dist, 384, n);
            got.sort_unstable();
            assert_eq!(got, want, "{len} rows, {n} nearest");
        }
    }
}

/// The `n` positions of `dist` with the smallest distances, ties to the earlier, ascending.
fn nearest_by_sorting(dist: &[u16], n: usize) -> Vec<u32> {
    let mut by_distance: Vec<u32> = (0..dist.len() as u32).collect();
    by_distance.sort_by_key(|&i| (dist[i as usize], i));
    let mut want = by_distance[..n.min(dist.len())].to_vec();
    want.sort_unstable();
    want
}

#[test]
fn a_cut_off_bounded_from_a_sample_picks_what_the_full_count_picks() {
    // Rows enough to sample: spread distances, heavy ties, and two layouts that mislead the
    // sample, whose near rows are all off its stride (the bound comes out high) or all on it
    // (the bound comes out low, holds too few rows, and the full count answers).
    let mut rng = crate::SplitMix64(13);
    let len = 70_000;
    let mut draw = |f: &dyn Fn(usize, u64) -> u16| -> Vec<u16> { (0..len).map(|i| f(i, rng.next_u64())).collect() };
    let layouts = [
        ("spread", draw(&|_, r| (r % 385) as u16)),
        ("ties", draw(&|_, r| 150 + (r % 6) as u16)),
        ("near rows off the sample", draw(&|i, r| if i % 16 != 0 && r % 50 == 0 { 20 } else { 200 + (r % 40) as u16 })),
        ("near rows on the sample", draw(&|i, r| if i % 16 == 0 { (r % 30) as u16 } else { 100 + (r % 200) as u16 })),
    ];
    for (name, dist) in &layouts {
        for n in [1, 5, 400, 2_000] {
            let want = nearest_by_sorting(dist, n);
            let mut got = select_nearest(dist, 384, n);
            got.sort_unstable();
            assert_eq!(got, want, "{name}, {n} nearest");
            if let Some(mut sampled) = select_within_sampled_bound(dist, 384, n) {
                sampled.sort_unstable();
                assert_eq!(sampled, want, "{name}, {n} nearest, sampled");
            }
        }
    }
    assert!(select_within_sampled_bound(&layouts[0].1, 384, 400).is_some(), "a spread sample bounds the cut");
    assert!(select_within_sampled_bound(&layouts[3].1, 384, 400).is_none(), "a misleading sample falls back");
    assert!(select_within_sampled_bound(&layouts[0].1[..10_000], 384, 400).is_none(), "too few rows to sample");
}

mod flat {
    use super::super::table::TableCodes;
    use super::super::{binary_code, code_bytes, kernels};
    use crate::store::vectors::quantize;
    use std::collections::HashMap;

    // Small vectors keep the unoptimised test quick; the search is the same at any size.
    pub(super) const DIM: usize = 128;

    pub(super) fn unit(v: Vec<f32>) -> Vec<f32> {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(f32::EPSILON);
        v.into_iter().map(|x| x / n).collect()
    }

    pub(super) fn noise(rng: &mut crate::SplitMix64, scale: f32) -> Vec<f32> {
        (0..DIM).map(|_| scale * (rng.next_f64() as f32 * 2.0 - 1.0)).collect()
    }

    /// Points around topic directions (cosine to their topic ≈ 0.7): clusters with near
    /// neighbours that sign codes alone cannot order.
    pub(super) fn point(rng: &mut crate::SplitMix64, topics: &[Vec<f32>]) -> Vec<f32> {
        let t = &topics[rng.below(topics.len())];
        unit(t.iter().zip(noise(rng, 0.06)).map(|(a, b)| a + b).collect())
    }

    /// The exact top 10 over the int8 rows by cosine, for each query: what the index must find.
    pub(super) fn exact(rows: &HashMap<i64, Vec<f32>>, queries: &[Vec<f32>]) -> Vec<Vec<i64>> {
        let stored: Vec<(i64, Vec<f32>)> = rows
            .iter()
            .map(|(&id, v)| {
                let r: Vec<f32> = quantize(v).iter().map(|&b| f32::from(b as i8)).collect();
                let n = r.iter().map(|x| x * x).sum::<f32>().sqrt();
                (id, r.into_iter().map(|x| x / n).collect())
            })
            .collect();
        queries
            .iter()
            .map(|q| {
                let mut all: Vec<(f32, i64)> = stored.iter().map(|(id, r)| (-kernels::dot_f32(q, r), *id)).collect();
                all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                all.into_iter().take(10).map(|e| e.1).collect()
            })
            .collect()
    }

    pub(super) fn put(t: &mut TableCodes, rows: &mut HashMap<i64, Vec<f32>>, id: i64, v: Vec<f32>) {
        t.apply(id, Some(&code_bytes(&binary_code(&v))), Some(&quantize(&v)));
        rows.insert(id, v);
    }

    pub(super) fn recall(t: &mut TableCodes, rows: &HashMap<i64, Vec<f32>>, queries: &[Vec<f32>]) -> f64 {
        let found: usize = queries
            .iter()
            .zip(exact(rows, queries))
            .map(|(q, want)| t.nearest(q, 10, 400).iter().filter(|(id, _)| want.contains(id)).count())
            .sum();
        found as f64 / (10 * queries.len()) as f64
    }

    /// A flat scan split in parts (scanned in any order, as two threads would) answers exactly
    /// as the whole scan, and leaves the same remembered shortlist.
    #[test]
    fn a_scan_in_parts_answers_as_the_whole_scan() {
        let mut rng = crate::SplitMix64(78);
        let topics: Vec<Vec<f32>> = (0..40).map(|_| unit(noise(&mut rng, 1.0))).collect();
        let (mut t, mut whole_scan) = (TableCodes::new(1, 0, DIM), TableCodes::new(1, 0, DIM));
        let mut rows = HashMap::new();
        for id in 1..=3_000 {
            let v = point(&mut rng, &topics);
            put(&mut whole_scan, &mut rows, id, v.clone());
            put(&mut t, &mut rows, id, v);
        }
        t.reindex_if_grown();
        whole_scan.reindex_if_grown();
        for _ in 0..5 {
            let q = point(&mut rng, &topics);
            let whole = whole_scan.nearest(&q, 50, 400);
            let parts = t.parts(&q, 50, 400, 256).expect("a flat table of 3,000 rows splits in parts of 256");
            assert_eq!(parts.len(), 12);
            let code = binary_code(&q);
            let found: Vec<(u16, u32)> =
                parts.into_iter().rev().flat_map(|rows| t.nearest_codes_in(&code, rows, 400)).collect();
            assert_eq!(t.nearest_of_parts(&q, 50, 400, found), whole);
            assert!(t.parts(&q, 10, 400, 256).is_none(), "the shortlist is remembered: one piece of work");
            assert_eq!(t.nearest(&q, 10, 400), whole[..10]);
        }
        assert!(t.parts(&point(&mut rng, &topics), 50, 400, 2_000).is_none(), "under two parts");
        assert!(t.parts(&point(&mut rng, &topics), 50, 3_000, 256).is_none(), "no more rows than candidates");
    }

    /// Slots, codes and the id map follow inserts, deletes (the last slot moving into the
    /// gap) and re-embeddings; the flat scan keeps the exact top 10 throughout.
    #[test]
    fn the_flat_table_follows_inserts_deletes_and_re_embedding() {
        let mut rng = crate::SplitMix64(77);
        let topics: Vec<Vec<f32>> = (0..200).map(|_| unit(noise(&mut rng, 1.0))).collect();
        let mut t = TableCodes::new(1, 0, DIM);
        let mut rows = HashMap::new();
        let n = 6_000;
        for id in 1..=n {
            put(&mut t, &mut rows, id, point(&mut rng, &topics));
        }
        t.reindex_if_grown();
        t.check(|id| binary_code(&rows[&id]));
        let queries: Vec<Vec<f32>> = (0..10).map(|_| point(&mut rng, &topics)).collect();
        let before = recall(&mut t, &rows, &queries);
        assert!(before >= 0.95, "recall@10 {before:.3}");
        for id in [1, n / 2, n] {
            assert_eq!(t.nearest(&rows[&id], 1, 400)[0].0, id);
        }

        // Deleted rows leave the table and are never returned; the rest keep their own codes.
        for id in (1..=n).filter(|id| id % 3 == 0) {
            t.apply(id, None, None);
            rows.remove(&id);
        }
        t.reindex_if_grown();
        t.check(|id| binary_code(&rows[&id]));
        let mut left: Vec<i64> = rows.keys().copied().collect();
        left.sort_unstable();
        assert_eq!(t.ids(), left);
        assert!(!t.nearest(&point(&mut rng, &topics), 50, 400).iter().any(|(id, _)| id % 3 == 0));

        // Re-embedded rows are found at their new vector; new rows are found.
        for id in (1..=n).filter(|id| id % 3 == 1).take(500) {
            put(&mut t, &mut rows, id, point(&mut rng, &topics));
        }
        for id in n + 1..=n + 500 {
            put(&mut t, &mut rows, id, point(&mut rng, &topics));
        }
        t.check(|id| binary_code(&rows[&id]));
        for id in [1, 4, n + 1, n + 500] {
            assert_eq!(t.nearest(&rows[&id], 1, 400)[0].0, id, "row {id} at its new place");
        }
        let after = recall(&mut t, &rows, &queries);
        assert!(after >= 0.95, "recall@10 after the changes {after:.3}");
    }
}

mod graph {
    use super::super::table::TableCodes;
    use super::flat::{DIM, noise, point, put, recall, unit};
    use std::collections::HashMap;

    /// Where this test's table starts its graph (the unoptimised build is slow; the graph is the
    /// same at any size).
    const GRAPH_MIN_ROWS: usize = 1_500;

    mod persisted;

    /// Every live row is one live node, found as its own nearest neighbour; the graph finds the
    /// exact top 10 of fresh queries; no deleted row is ever returned.
    fn check(t: &mut TableCodes, rows: &HashMap<i64, Vec<f32>>, deleted: &[i64], queries: &[Vec<f32>], when: &str) {
        let (live, _) = t.graph_counts().expect("searches go through the graph");
        assert_eq!(live, t.row_count(), "{when}: one live node per row");
        let mut ids: Vec<i64> = rows.keys().copied().collect();
        ids.sort_unstable();
        for &id in ids.iter().step_by(97) {
            assert_eq!(t.nearest(&rows[&id], 1, 400)[0].0, id, "{when}: row {id} at its place");
        }
        let r = recall(t, rows, queries);
        assert!(r >= 0.95, "{when}: recall@10 {r:.3}");
        for id in deleted.iter().step_by(13) {
            let near: Vec<f32> = unit(rows.get(id).map_or_else(|| queries[0].clone(), Clone::clone));
            assert!(!t.nearest(&near, 50, 400).iter().any(|(got, _)| deleted.contains(got)), "{when}: a deleted row");
        }
    }

    #[test]
    fn the_graph_is_built_aside_and_follows_every_change() {
        let mut rng = crate::SplitMix64(23);
        let topics: Vec<Vec<f32>> = (0..60).map(|_| unit(noise(&mut rng, 1.0))).collect();
        let mut t = TableCodes::new(1, 0, DIM).with_graph_min_rows(GRAPH_MIN_ROWS);
        let mut rows = HashMap::new();
        let n = GRAPH_MIN_ROWS as i64 + 300;
        for id in 1..=n {
            put(&mut t, &mut rows, id, point(&mut rng, &topics));
        }
        assert!(t.graph_counts().is_none() && !t.index_settled(), "no graph until a batch is done");
        let queries: Vec<Vec<f32>> = (0..20).map(|_| point(&mut rng, &topics)).collect();
        let flat = recall(&mut t, &rows, &queries);
        t.reindex_if_grown();

        // While the graph is built from a copy the table changes: deletions, re-embeddings, new rows.
        let mut deleted: Vec<i64> = (1..=n).filter(|id| id % 11 == 0).collect();
        for &id in &deleted {
            t.apply(id, None, None);
            rows.remove(&id);
        }
        for id in (1..=n).filter(|id| id % 11 == 3).take(50) {
            put(&mut t, &mut rows, id, point(&mut rng, &topics));
        }
        for id in n + 1..=n + 50 {
            put(&mut t, &mut rows, id, point(&mut rng, &topics));
        }
        t.reindex_if_grown();
        assert!(t.wait_for_graph(), "the built graph is adopted");
        assert!(t.index_settled());
        check(&mut t, &rows, &deleted, &queries, "adopted");
        assert!(recall(&mut t, &rows, &queries) >= flat - 0.05, "the graph keeps up with the flat scan");

        // Changes after adoption go straight into the graph (too few dead nodes for a rebuild).
        for id in (1..=n).filter(|id| id % 23 == 5) {
            t.apply(id, None, None);
            rows.remove(&id);
            deleted.push(id);
        }
        for id in (1..=n).filter(|id| id % 23 == 4).take(30) {
            put(&mut t, &mut rows, id, point(&mut rng, &topics));
        }
        for id in n + 51..=n + 80 {
            put(&mut t, &mut rows, id, point(&mut rng, &topics));
        }
        t.reindex_if_grown();
        assert!(t.graph_counts().is_some_and(|(live, dead)| dead * 5 < live + dead));
        check(&mut t, &rows, &deleted, &queries, "after changes");
        assert!(t.graph_counts().is_some_and(|(_, dead)| dead > 0), "still the same graph");

        // Once a fifth of the nodes are dead a new graph is built (the old one serving meanwhile).
        for id in (1..=n).filter(|id| id % 7 == 1 || id % 7 == 2) {
            t.apply(id, None, None);
            rows.remove(&id);
            deleted.push(id);
        }
        assert!(t.graph_counts().is_some_and(|(live, dead)| dead * 5 > live + dead));
        t.reindex_if_grown();
        check(&mut t, &rows, &deleted, &queries, "worn, before the rebuild");
        // The searches above may have adopted it already, if it was quick.
        t.wait_for_graph();
        assert_eq!(t.graph_counts().map(|(_, dead)| dead), Some(0), "a fresh graph is adopted");
        check(&mut t, &rows, &deleted, &queries, "rebuilt");
    }

    #[test]
    fn small_tables_stay_flat() {
        let mut rng = crate::SplitMix64(29);
        let topics: Vec<Vec<f32>> = (0..20).map(|_| unit(noise(&mut rng, 1.0))).collect();
        let mut t = TableCodes::new(1, 0, DIM);
        let mut rows = HashMap::new();
        for id in 1..=500 {
            put(&mut t, &mut rows, id, point(&mut rng, &topics));
        }
        t.reindex_if_grown();
        assert!(t.index_settled() && t.graph_counts().is_none());
        assert_eq!(t.nearest(&rows[&7], 1, 400)[0].0, 7);
    }
}

/// A turn asks the same table the same query for 50, 10 and 1 neighbours: the later answers
/// come from the first's shortlist and equal a search of their own on a table that has not
/// searched before, and a change to the table (a row that is the query itself) is seen at once.
#[test]
fn a_repeated_query_is_answered_from_the_last_shortlist_until_the_table_changes() {
    use super::table::TableCodes;
    use crate::store::vectors::quantize;
    let dim = 64;
    let mut rng = crate::SplitMix64(31);
    let rows: Vec<Vec<f32>> = (0..2_001).map(|_| (0..dim).map(|_| rng.next_f64() as f32 - 0.5).collect()).collect();
    let (q, stored) = rows.split_last().unwrap();
    let build = || {
        let mut t = TableCodes::new(1, 0, dim);
        for (id, row) in stored.iter().enumerate() {
            t.apply(id as i64 + 1, Some(&code_bytes(&binary_code(row))), Some(&quantize(row)));
        }
        t
    };
    let mut t = build();
    let fifty = t.nearest(q, 50, 400);
    assert_eq!(fifty.len(), 50);
    for k in [10, 1] {
        assert_eq!(t.nearest(q, k, 400), build().nearest(q, k, 400), "top {k}");
        assert_eq!(t.nearest(q, k, 400)[..], fifty[..k]);
    }
    t.apply(9_999, Some(&code_bytes(&binary_code(q))), Some(&quantize(q)));
    assert_eq!(t.nearest(q, 1, 400)[0].0, 9_999, "the new row, not the remembered answer");
}

#[test]
fn a_ready_copy_that_moved_on_is_not_searched() {
    use crate::store::{VecTable, VectorRepo};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v.db");
    let a = crate::store::open(&path).unwrap();
    let b = crate::store::open(&path).unwrap();
    let v: Vec<f32> = (0..384).map(|i| if i % 3 == 0 { 0.1 } else { -0.05 }).collect();
    VectorRepo(&a).upsert(VecTable::Concepts, 1, &v).unwrap();
    let tbl = VecTable::Concepts.code_table();
    let ready = ready(&a, tbl, VecTable::Concepts.name(), 384).unwrap().expect("outside a transaction");
    assert_eq!(nearest_in(&ready, &v, 1, 400).map(|f| f[0].0), Some(1));
    // Another connection writes and searches: the cached copy moves past what `a` saw.
    VectorRepo(&b).upsert(VecTable::Concepts, 2, &v).unwrap();
    assert_eq!(VectorRepo(&b).search(VecTable::Concepts, &v, 2).unwrap().len(), 2);
    assert_eq!(nearest_in(&ready, &v, 1, 400), None, "not the view `a` caught up with");
    // A query of another size than the copy's is never searched.
    let fresh = ready_of(&a, tbl);
    assert_eq!(nearest_in(&fresh, &v[..100], 1, 400), None);
    assert_eq!(nearest_in(&fresh, &v, 5, 400).map(|f| f.len()), Some(2));
}

fn ready_of(c: &Connection, tbl: u8) -> Ready {
    ready(c, tbl, crate::store::VecTable::Concepts.name(), 384).unwrap().unwrap()
}
