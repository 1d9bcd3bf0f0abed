//! Speed and size of the concept graph (docs/cognition.md §9.4).
//!
//! - `graph/activate/{10k_100k,100k_1m}`: one mechanical activation (10 seeds, energy by
//!   similarity, 3 steps, top 10) over a random graph of N nodes and E edges (weights 0.3–1.2,
//!   one in ten negative, a fifth symmetric). Targets: < 1 ms and < 5 ms median.
//! - `graph/learn/{..}`: the learning update of one turn (half the fired concepts "used").
//! - `graph/load/10k_100k`: reading the graph from SQLite into the adjacency form.
//! - `graph/cached/10k_100k`: a turn's graph when nothing wrote to it since the last turn (the
//!   version read from `kv_state`, the kept copy shared).
//! - Size on disk: printed once per size (the database file after the rows are written).
//!
//! Measured (2-core shared machine, medians): activate 185 µs (10k/100k) and 359 µs (100k/1M);
//! learn 1.84 ms and 2.23 ms; 14.8 MB and 150.1 MB on disk. Load 66.1 ms against 4.59 µs cached
//! (10k/100k, `cargo bench --bench graph -- 'load|cached'`). `cargo bench --bench graph`

use std::collections::HashSet;
use std::hint::black_box;
use std::time::Duration;

use chalie::SplitMix64;
use chalie::memory::graph::{self, Edge, Graph, Node, Params, learn};
use criterion::{Criterion, criterion_group, criterion_main};

fn unit(rng: &mut SplitMix64) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

fn edges(nodes: usize, n: usize, rng: &mut SplitMix64) -> Vec<Edge> {
    (0..n)
        .map(|i| {
            let source = rng.below(nodes) as i64 + 1;
            let target = rng.below(nodes) as i64 + 1;
            let w = 0.3 + 0.9 * unit(rng);
            let weight = if rng.below(10) == 0 { -w } else { w };
            Edge { id: i as i64 + 1, source, target, weight, both: rng.below(5) == 0 }
        })
        .collect()
}

fn build(nodes: usize, n_edges: usize, seed: u64) -> (Graph, Vec<Edge>) {
    let mut rng = SplitMix64(seed);
    let es = edges(nodes, n_edges, &mut rng);
    let ns: Vec<Node> = (1..=nodes as i64).map(|id| Node::new(id, format!("concept {id}"))).collect();
    (Graph::new(ns, &es), es)
}

fn seeds(nodes: usize, rng: &mut SplitMix64) -> Vec<graph::Seed> {
    let near: Vec<(i64, f64)> = (0..10).map(|_| (rng.below(nodes) as i64 + 1, 0.3 + 0.6 * unit(rng))).collect();
    graph::seeds_from_similarity(&near)
}

/// The database file's size with `nodes` concepts and `n_edges` edges.
fn disk_size(nodes: usize, es: &[Edge]) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("graph.db");
    let mut c = chalie::store::open(&path).unwrap();
    let tx = c.transaction().unwrap();
    {
        let mut con = tx
            .prepare("INSERT INTO semantic_concepts (id, name, definition, created_at, updated_at) VALUES (?1, ?2, ?3, 0, 0)")
            .unwrap();
        for id in 1..=nodes as i64 {
            con.execute(rusqlite::params![id, format!("concept {id}"), format!("what concept {id} is about")]).unwrap();
        }
        let mut rel = tx
            .prepare(
                "INSERT OR IGNORE INTO semantic_relationships (source_id, target_id, rel_type, weight, bidirectional,
                     created_at, updated_at) VALUES (?1, ?2, 'related-to', ?3, ?4, 0, 0)",
            )
            .unwrap();
        for e in es.iter().filter(|e| e.source != e.target) {
            rel.execute(rusqlite::params![e.source, e.target, e.weight, e.both]).unwrap();
        }
    }
    tx.commit().unwrap();
    c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
    std::fs::metadata(&path).unwrap().len()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("graph");
    group.measurement_time(Duration::from_secs(5));
    for (label, nodes, n_edges) in [("10k_100k", 10_000, 100_000), ("100k_1m", 100_000, 1_000_000)] {
        let (g, es) = build(nodes, n_edges, 7);
        let mut rng = SplitMix64(11);
        let seed_sets: Vec<Vec<graph::Seed>> = (0..64).map(|_| seeds(nodes, &mut rng)).collect();
        let p = Params::default();
        let fired: Vec<usize> = seed_sets.iter().map(|s| graph::activate::activate(&g, s, &p).fired_total).collect();
        eprintln!(
            "graph {label}: {} transfers; fired per activation median {} (min {}, max {}); {:.1} MB on disk",
            g.transfer_count(),
            median(&fired),
            fired.iter().min().unwrap(),
            fired.iter().max().unwrap(),
            disk_size(nodes, &es) as f64 / 1e6
        );
        let mut i = 0;
        group.bench_function(format!("activate/{label}"), |b| {
            b.iter(|| {
                i = (i + 1) % seed_sets.len();
                graph::activate::activate(black_box(&g), &seed_sets[i], &p)
            })
        });
        let acts: Vec<_> = seed_sets.iter().map(|s| graph::activate::activate(&g, s, &p)).collect();
        let used: Vec<HashSet<i64>> =
            acts.iter().map(|a| a.steps_of.keys().copied().filter(|id| id % 2 == 0).collect()).collect();
        let mut k = 0;
        group.bench_function(format!("learn/{label}"), |b| {
            b.iter(|| {
                k = (k + 1) % acts.len();
                learn::learn(black_box(&g), &acts[k], &used[k], 0.5)
            })
        });
    }
    // Loading from SQLite, the part of a turn's activation that is not the dynamics.
    let (_, es) = build(10_000, 100_000, 7);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("load.db");
    {
        let mut c = chalie::store::open(&path).unwrap();
        let tx = c.transaction().unwrap();
        for id in 1..=10_000i64 {
            tx.execute(
                "INSERT INTO semantic_concepts (id, name, created_at, updated_at) VALUES (?1, ?2, 0, 0)",
                rusqlite::params![id, format!("concept {id}")],
            )
            .unwrap();
        }
        for e in es.iter().filter(|e| e.source != e.target) {
            tx.execute(
                "INSERT OR IGNORE INTO semantic_relationships (source_id, target_id, rel_type, weight, bidirectional,
                     created_at, updated_at) VALUES (?1, ?2, 'related-to', ?3, ?4, 0, 0)",
                rusqlite::params![e.source, e.target, e.weight, e.both],
            )
            .unwrap();
        }
        tx.commit().unwrap();
    }
    let conn = chalie::store::open(&path).unwrap();
    group.sample_size(10);
    group.bench_function("load/10k_100k", |b| b.iter(|| graph::load(black_box(&conn)).unwrap()));
    // What a turn pays when nothing wrote to the graph since the last: the version read.
    let cache = graph::GraphCache::new();
    cache.graph(&conn).unwrap();
    group.sample_size(100);
    group.bench_function("cached/10k_100k", |b| b.iter(|| cache.graph(black_box(&conn)).unwrap()));
    assert_eq!(cache.loads(), 1, "the cached path never reloads");
    group.finish();
}

fn median(xs: &[usize]) -> usize {
    let mut v = xs.to_vec();
    v.sort_unstable();
    v[v.len() / 2]
}

criterion_group!(benches, bench);
criterion_main!(benches);
