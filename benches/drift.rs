//! The drift cycle's deterministic part at 100k memories (docs/cognition.md §14; target < 5 ms):
//! skip gates, the self-reflection draw, a weighted seed strategy with cooldown retries, the
//! spread from the seed, the energy gate over the non-seed concepts, cooldowns, the top concepts
//! and the grounding episode — `cycle::front` over a snapshot of 50,000 concepts (200,000 edges,
//! a fifth two-way) and 50,000 episodes, 2,000 of them cooling down. The activation is the
//! graph's integrate-and-fire (`memory::graph::activate`). `snapshot_100k` times gathering that
//! snapshot from a SQLite store of the same rows (`drift::run::snapshot`), `graph_load_100k` the
//! part of it that reads the activation graph. Not timed: the model call.
//!
//! Measured (2-core shared machine, crate at opt-level 3, medians): cycle_front 2.56 ms
//! (184 of 200 cycles pass the gate); snapshot 326 ms, graph_load 293 ms, snapshot_cached 78 ms.
//!
//! `cargo bench --bench drift`

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use chalie::SplitMix64;
use chalie::cognition::drift::cycle::{self, Snapshot};
use chalie::cognition::drift::gate::Conditions;
use chalie::cognition::drift::run::{self, Options};
use chalie::cognition::drift::seed::{Concept, Episode, Pool};
use chalie::memory::graph::{self, Edge, Graph, Node};
use criterion::{Criterion, criterion_group, criterion_main};

const NOW: i64 = 1_800_000_000;
const CONCEPTS: i64 = 50_000;
const EPISODES: i64 = 50_000;
const EDGES: i64 = 200_000;

fn snapshot() -> Snapshot {
    let mut rng = SplitMix64(7);
    let concepts = (1..=CONCEPTS)
        .map(|id| Concept {
            id,
            name: format!("concept {id}"),
            strength: 1.0 + 9.0 * rng.next_f64(),
            confidence: rng.next_f64(),
            last_reinforced_at: NOW - (rng.next_f64() * 30.0 * 86_400.0) as i64,
            sources: vec![1 + (id * 7) % EPISODES],
        })
        .collect();
    let episodes = (1..=EPISODES)
        .map(|id| Episode {
            id,
            gist: format!("the user talked about concept {id} and what followed"),
            topic: Some(format!("topic {}", id % 200)),
            salience: 1.0 + 9.0 * rng.next_f64(),
            created_at: NOW - id * 12,
        })
        .collect();
    let topics = (0..200).map(|t| (format!("topic {t}"), 1 + (t % 17) as u32)).collect();
    let edges: Vec<Edge> = (1..=EDGES)
        .map(|id| {
            let source = 1 + (rng.next_f64() * CONCEPTS as f64) as i64 % CONCEPTS;
            let target = 1 + (rng.next_f64() * CONCEPTS as f64) as i64 % CONCEPTS;
            Edge { id, source, target, weight: 0.2 + 0.8 * rng.next_f64(), both: id % 5 == 0 }
        })
        .collect();
    let nodes = (1..=CONCEPTS).map(|id| Node::new(id, format!("concept {id}"))).collect();
    let cooldowns: HashMap<i64, i64> = (1..=2_000).map(|i| (i * 25, NOW + 1_800)).collect();
    Snapshot {
        conditions: Conditions { last_episode_at: Some(NOW - 600), richness: 0.8, ..Conditions::default() },
        pool: Pool { concepts, episodes, topics, interval_s: 300, ..Pool::default() },
        graph: Arc::new(Graph::new(nodes, &edges)),
        cooldowns,
        self_items: Vec::new(),
    }
}

fn bench(c: &mut Criterion) {
    let s = snapshot();
    // What the timed cycles do: most must reach the gate and pass, or the figure says little.
    let mut kinds: HashMap<&str, u32> = HashMap::new();
    for seed in 1..=200u64 {
        let kind = match cycle::front(&s, NOW, &mut SplitMix64(seed), None) {
            cycle::Front::Ready(_) => "ready",
            cycle::Front::SelfReflection(_) => "self-reflection",
            cycle::Front::Skipped(_) => "skipped",
        };
        *kinds.entry(kind).or_default() += 1;
    }
    eprintln!("outcomes of 200 cycles: {kinds:?}");
    let mut g = c.benchmark_group("drift");
    g.measurement_time(Duration::from_secs(8));
    let mut seed = 0u64;
    g.bench_function("cycle_front_100k", |b| {
        b.iter(|| {
            seed += 1;
            let mut rng = SplitMix64(seed);
            black_box(cycle::front(black_box(&s), NOW, &mut rng, None))
        })
    });
    // Gathering the snapshot from SQLite, the cycle's other deterministic cost, over the same
    // shape of store; `graph_load` is the share of it that reads the activation graph.
    let dir = tempfile::tempdir().unwrap();
    let conn = store(&dir.path().join("drift.db"), &s);
    let opts = Options::default();
    let (snap, _) = run::snapshot(&conn, NOW, &opts).unwrap();
    eprintln!(
        "snapshot: {} concepts, {} transfers, {} episodes",
        snap.pool.concepts.len(),
        snap.graph.transfer_count(),
        snap.pool.episodes.len()
    );
    g.sample_size(10);
    g.bench_function("snapshot_100k", |b| b.iter(|| run::snapshot(black_box(&conn), NOW, &opts).unwrap()));
    g.bench_function("graph_load_100k", |b| b.iter(|| graph::load(black_box(&conn)).unwrap()));
    let cached = Options { graph_cache: graph::GraphHandle::new(Arc::default()), ..Options::default() };
    g.bench_function("snapshot_cached_100k", |b| b.iter(|| run::snapshot(black_box(&conn), NOW, &cached).unwrap()));
    g.finish();
}

/// The snapshot's rows in a fresh store.
fn store(path: &std::path::Path, s: &Snapshot) -> rusqlite::Connection {
    let mut c = chalie::store::open(path).unwrap();
    let tx = c.transaction().unwrap();
    {
        let mut con = tx
            .prepare(
                "INSERT INTO semantic_concepts (id, name, strength, confidence, source_episodes, created_at,
                     updated_at, last_reinforced_at) VALUES (?1, ?2, ?3, ?4, ?5, 0, 0, ?6)",
            )
            .unwrap();
        for k in &s.pool.concepts {
            let src = serde_json::to_string(&k.sources).unwrap();
            con.execute(rusqlite::params![k.id, k.name, k.strength, k.confidence, src, k.last_reinforced_at]).unwrap();
        }
        let mut rel = tx
            .prepare(
                "INSERT OR IGNORE INTO semantic_relationships (source_id, target_id, rel_type, weight, bidirectional,
                     created_at, updated_at) VALUES (?1, ?2, 'related-to', ?3, ?4, 0, 0)",
            )
            .unwrap();
        for id in 1..=CONCEPTS {
            for (target, weight, _) in s.graph.outgoing(id) {
                rel.execute(rusqlite::params![id, target, weight, false]).unwrap();
            }
        }
        let mut ep = tx
            .prepare(
                "INSERT INTO episodes (id, gist, salience, topic, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
            )
            .unwrap();
        for e in &s.pool.episodes {
            ep.execute(rusqlite::params![e.id, e.gist, e.salience.round() as i64, e.topic, e.created_at]).unwrap();
        }
    }
    tx.commit().unwrap();
    c
}

criterion_group!(benches, bench);
criterion_main!(benches);
