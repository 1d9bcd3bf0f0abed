//! The graph kept beside the database: read back by the next process, brought up to date with
//! rows changed since, and refused (then built again) when damaged or another table's.

use super::super::super::graph::{Stamp, load};
use super::super::super::table::TableCodes;
use super::super::flat::{DIM, noise, point, put, unit};
use super::{GRAPH_MIN_ROWS, check};
use std::collections::HashMap;
use std::path::Path;

const EPOCH: i64 = 41;

/// A table as a process loads it: `rows` in id order, as of change `seq`, kept in `file`.
fn open(rows: &Rows, epoch: i64, seq: i64, file: &Path) -> TableCodes {
    let mut t = TableCodes::new(epoch, seq, DIM).with_graph_min_rows(GRAPH_MIN_ROWS);
    t.set_graph_file(file.to_path_buf());
    let mut ids: Vec<i64> = rows.keys().copied().collect();
    ids.sort_unstable();
    let mut scratch = HashMap::new();
    for id in ids {
        put(&mut t, &mut scratch, id, rows[&id].clone());
    }
    t.reindex_if_grown();
    assert!(t.wait_for_graph(), "a graph is adopted");
    t
}

/// A table's rows by id, and queries.
type Rows = HashMap<i64, Vec<f32>>;

/// Rows and queries around 60 topics, and more points around the same topics.
fn table_rows(seed: u64) -> (Rows, Vec<Vec<f32>>, impl FnMut() -> Vec<f32>) {
    let mut rng = crate::SplitMix64(seed);
    let topics: Vec<Vec<f32>> = (0..60).map(|_| unit(noise(&mut rng, 1.0))).collect();
    let rows: HashMap<i64, Vec<f32>> =
        (1..=GRAPH_MIN_ROWS as i64 + 200).map(|id| (id, point(&mut rng, &topics))).collect();
    let queries = (0..20).map(|_| point(&mut rng, &topics)).collect();
    (rows, queries, move || point(&mut rng, &topics))
}

#[test]
fn a_kept_graph_is_read_back_and_brought_up_to_date() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("chalie.db-vgraph0");
    let (mut rows, queries, mut fresh) = table_rows(43);
    let mut first = open(&rows, EPOCH, 10, &file);
    assert!(!first.graph_restored() && file.exists(), "the first process builds the graph and keeps it");

    // The next process, nothing changed: the same graph, read back, answering the same.
    let mut again = open(&rows, EPOCH, 10, &file);
    assert!(again.graph_restored());
    assert_eq!(again.graph_counts(), first.graph_counts());
    for q in &queries {
        assert_eq!(again.nearest(q, 10, 400), first.nearest(q, 10, 400));
    }

    // Rows deleted, re-embedded and added after it was kept: their nodes die or are added.
    let n = rows.len() as i64;
    let deleted: Vec<i64> = (1..=n).filter(|id| id % 9 == 0).collect();
    for id in &deleted {
        rows.remove(id);
    }
    for id in (1..=n).filter(|id| id % 9 == 4).take(40) {
        rows.insert(id, fresh());
    }
    for id in n + 1..=n + 40 {
        rows.insert(id, fresh());
    }
    let mut later = open(&rows, EPOCH, 30, &file);
    assert!(later.graph_restored());
    let (_, dead) = later.graph_counts().unwrap();
    assert_eq!(dead, deleted.len() + 40, "a node per deleted or re-embedded row is dead");
    check(&mut later, &rows, &deleted, &queries, "read back after changes");
}

#[test]
fn a_damaged_stale_or_foreign_graph_file_is_refused_and_built_again() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("chalie.db-vgraph0");
    let (rows, queries, _) = table_rows(47);
    let mut built = open(&rows, EPOCH, 10, &file);
    let good = std::fs::read(&file).unwrap();
    let stamp = Stamp { epoch: EPOCH, seq: 10, dim: DIM };
    assert!(load(&file, stamp).is_ok());

    // Every kind of damage is refused without a panic: any changed byte, any cut, more bytes.
    let damaged = dir.path().join("damaged");
    let mut rng = crate::SplitMix64(53);
    let mut cases: Vec<Vec<u8>> = Vec::new();
    let at: Vec<usize> = (0..40).map(|i| i * 3).chain((0..40).map(|_| rng.next_u64() as usize % good.len())).collect();
    for at in at {
        let mut bytes = good.clone();
        bytes[at] ^= 1 << (rng.next_u64() % 8);
        cases.push(bytes);
    }
    for len in [0, 7, 60, good.len() / 3, good.len() - 9, good.len() - 1] {
        cases.push(good[..len].to_vec());
    }
    cases.push([good.as_slice(), &[0]].concat());
    for (i, bytes) in cases.iter().enumerate() {
        std::fs::write(&damaged, bytes).unwrap();
        assert!(load(&damaged, stamp).is_err(), "damaged case {i} was read");
    }
    // Another table's (epoch), another width, or one from further on than the table.
    assert!(load(&file, Stamp { epoch: EPOCH + 1, ..stamp }).is_err());
    assert!(load(&file, Stamp { dim: DIM + 8, ..stamp }).is_err());
    assert!(load(&file, Stamp { seq: 9, ..stamp }).is_err());

    // A process that finds it damaged builds the graph again, searches as well, and keeps the
    // new one for the next.
    std::fs::write(&file, &good[..good.len() / 2]).unwrap();
    let mut rebuilt = open(&rows, EPOCH, 10, &file);
    assert!(!rebuilt.graph_restored());
    check(&mut rebuilt, &rows, &[], &queries, "built again");
    for q in &queries {
        assert_eq!(rebuilt.nearest(q, 10, 400), built.nearest(q, 10, 400));
    }
    assert_eq!(std::fs::read(&file).unwrap(), good, "the same graph kept again");
    assert!(open(&rows, EPOCH, 10, &file).graph_restored());
}
