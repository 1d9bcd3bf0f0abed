//! Speed and size of the concept graph (docs/cognition.md §9.4), over a random graph of N
//! nodes and E edges (weights 0.3–1.2, one in ten negative, a fifth symmetric) written into a
//! real SQLite file through the store's repositories and read back with `graph::load`, so the
//! ids, the symmetric edges' order and the duplicates merged are the store's own.
//!
//! Figures (the `BENCHFIG` lines at the end, benches/support/benchfig.rs), each timed call on
//! its own, cycling through 64 seed sets of 10 concepts at similarities 0.3–0.9:
//! - `graph/activate/{10k_100k,100k_1m}`: one mechanical activation (3 steps, top 10), pure.
//!   Targets: < 1 ms and < 5 ms median.
//! - `graph/learn/{..}`: the learning rule alone (half the fired concepts "used"), pure.
//! - `graph/learn_persist/{..}`: a turn's learning as the turn runs it, `turn::after_reply` on
//!   the file: which fired concepts the reply names, the changes, each written through
//!   `RelationshipsRepo`, and the fired set kept for the feedback, plus the firings' `persist`.
//! - `graph/disk/{..}`: the file after a WAL checkpoint, as bytes per node (the concepts
//!   alone, over an empty store) and per edge (what the edges added); no timing.
//!
//! Criterion groups (skipped by `scripts/bench.sh --figures`): `graph/load/10k_100k` (reading
//! the graph from SQLite) and `graph/cached/10k_100k` (a turn's graph when nothing wrote to it).
//!
//! `/work/notes/c bench --bench graph` (2-core shared machine; figures in docs/cognition.md §9.4.12).

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use chalie::SplitMix64;
use chalie::memory::graph::{self, Activated, Edge, Params, learn, turn};
use chalie::store::{ConceptFields, ConceptsRepo, NewEdge, RelationshipsRepo};
use criterion::{Criterion, criterion_group, criterion_main};
use rusqlite::Connection;

#[path = "support/benchfig.rs"]
mod benchfig;

const SEED_SETS: usize = 64;

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

fn seeds(nodes: usize, rng: &mut SplitMix64) -> Vec<graph::Seed> {
    let near: Vec<(i64, f64)> = (0..10).map(|_| (rng.below(nodes) as i64 + 1, 0.3 + 0.6 * unit(rng))).collect();
    graph::seeds_from_similarity(&near)
}

fn file_size(c: &Connection, path: &Path) -> u64 {
    c.pragma_update(None, "wal_checkpoint", "TRUNCATE").unwrap();
    std::fs::metadata(path).unwrap().len()
}

/// Write `nodes` concepts and the edges through the repositories (one transaction each, as a
/// bulk import would). Returns the file's size empty, with the concepts, with the edges.
fn fill(c: &mut Connection, path: &Path, nodes: usize, es: &[Edge]) -> [u64; 3] {
    let empty = file_size(c, path);
    let tx = c.transaction().unwrap();
    for id in 1..=nodes {
        let (name, definition) = (format!("concept {id}"), format!("what concept {id} is about"));
        let f = ConceptFields {
            name: &name,
            concept_type: "domain",
            definition: &definition,
            abstraction_level: 3,
            domain: None,
        };
        ConceptsRepo(&tx).insert(&f, "[]", 0).unwrap();
    }
    tx.commit().unwrap();
    let with_nodes = file_size(c, path);
    let tx = c.transaction().unwrap();
    for e in es.iter().filter(|e| e.source != e.target) {
        // A symmetric edge is stored lower id first.
        let (source, target) =
            if e.both { (e.source.min(e.target), e.source.max(e.target)) } else { (e.source, e.target) };
        let edge = NewEdge { source, target, rel_type: "related-to", weight: e.weight, bidirectional: e.both };
        RelationshipsRepo(&tx).upsert(&edge, 0).unwrap();
    }
    tx.commit().unwrap();
    [empty, with_nodes, file_size(c, path)]
}

fn bench(c: &mut Criterion) {
    let mut figures: Vec<(String, Vec<f64>, &str)> = Vec::new();
    let mut sizes: Vec<String> = Vec::new();
    for (label, nodes, n_edges, target) in
        [("10k_100k", 10_000, 100_000, "<1ms"), ("100k_1m", 100_000, 1_000_000, "<5ms")]
    {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("graph.db");
        let mut conn = chalie::store::open(&path).unwrap();
        let es = edges(nodes, n_edges, &mut SplitMix64(7));
        let [empty, with_nodes, full] = fill(&mut conn, &path, nodes, &es);
        let g = Arc::new(graph::load(&conn).unwrap());
        let stored = RelationshipsRepo(&conn).counts().unwrap();
        let per_node = (with_nodes - empty) as f64 / nodes as f64;
        let per_row = (full - with_nodes) as f64 / stored.0.max(1) as f64;
        let per_transfer = (full - with_nodes) as f64 / g.transfer_count().max(1) as f64;
        let mb = full as f64 / 1e6;
        sizes.push(format!(
            "BENCHFIG name=graph/disk/{label} median_ms=- p99_ms=- ref=- ref_median_ms=- \
             target=size_only({mb:.1}MB,{per_node:.0}B/node,{per_row:.0}B/edge_row,{per_transfer:.0}B/transfer,\
             rows={},inhibitory={})",
            stored.0, stored.1
        ));
        let mut rng = SplitMix64(11);
        let seed_sets: Vec<Vec<graph::Seed>> = (0..SEED_SETS).map(|_| seeds(nodes, &mut rng)).collect();
        let p = Params::default();
        let acts: Vec<_> = seed_sets.iter().map(|s| graph::activate::activate(&g, s, &p)).collect();
        let mut fired: Vec<usize> = acts.iter().map(|a| a.steps_of.len()).collect();
        fired.sort_unstable();
        eprintln!(
            "graph {label}: {} transfers ({stored:?} rows); fired per activation median {} (min {}, max {})",
            g.transfer_count(),
            fired[fired.len() / 2],
            fired[0],
            fired[fired.len() - 1],
        );

        let mut i = 0;
        let activate = benchfig::samples(SEED_SETS, 2_000, || {
            i = (i + 1) % SEED_SETS;
            graph::activate::activate(black_box(&g), &seed_sets[i], &p)
        });
        figures.push((format!("graph/activate/{label}"), activate, target));

        let used: Vec<_> = acts.iter().map(|a| a.steps_of.keys().copied().filter(|id| id % 2 == 0).collect()).collect();
        let learn_only = benchfig::samples(SEED_SETS, 2_000, || {
            i = (i + 1) % SEED_SETS;
            learn::learn(black_box(&g), &acts[i], &used[i], 0.5)
        });
        figures.push((format!("graph/learn/{label}"), learn_only, "-"));

        // The reply names the even fired concepts, as `used` above.
        let turns: Vec<(turn::TurnGraph, String)> = acts
            .iter()
            .zip(&seed_sets)
            .map(|(a, s)| {
                let reply: Vec<&str> = a
                    .steps_of
                    .keys()
                    .filter(|id| *id % 2 == 0)
                    .filter_map(|id| g.node(*id))
                    .map(|n| n.name.as_str())
                    .collect();
                let activated = Activated { graph: Arc::clone(&g), seeds: s.clone(), activation: a.clone() };
                (turn::TurnGraph { activated, ..turn::TurnGraph::default() }, reply.join(", "))
            })
            .collect();
        let mut now = 1_000;
        let learn_persist = benchfig::samples(8, 500, || {
            i = (i + 1) % SEED_SETS;
            now += 1;
            let (t, reply) = &turns[i];
            graph::persist(&conn, &t.activated.activation, now).unwrap();
            turn::after_reply(&conn, t, &format!("x{now}"), reply, 0.5, now).unwrap()
        });
        figures.push((format!("graph/learn_persist/{label}"), learn_persist, "-"));
        drop(conn);
    }
    load_and_cached(c);
    for (name, samples, target) in &figures {
        benchfig::print(name, samples, None, target);
    }
    for line in sizes {
        println!("{line}");
    }
}

/// Loading from SQLite, the part of a turn's activation that is not the dynamics, against
/// what a turn pays when nothing wrote to the graph since the last: the version read.
fn load_and_cached(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("load.db");
    let mut conn = chalie::store::open(&path).unwrap();
    fill(&mut conn, &path, 10_000, &edges(10_000, 100_000, &mut SplitMix64(7)));
    let mut group = c.benchmark_group("graph");
    group.measurement_time(Duration::from_secs(5));
    group.sample_size(10);
    group.bench_function("load/10k_100k", |b| b.iter(|| graph::load(black_box(&conn)).unwrap()));
    let cache = graph::GraphCache::new();
    cache.graph(&conn).unwrap();
    group.sample_size(100);
    group.bench_function("cached/10k_100k", |b| b.iter(|| cache.graph(black_box(&conn)).unwrap()));
    assert_eq!(cache.loads(), 1, "the cached path never reloads");
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
