//! Speed of semantic consolidation and of the decay engine, on an on-disk database (WAL).
//!
//! - `semantic/extract_one_episode`: the deterministic extractor over one gist (pure).
//! - `semantic/consolidate_one_episode`: one job's work for one pending episode without the
//!   embedding call: read the batch, extract, match-or-create its concepts (by name),
//!   upsert its relationships, mark it done and complete the job, in one transaction. The
//!   graph already holds 1,000 concepts; gists rotate over five texts, so most mentions
//!   strengthen an existing concept, as in steady use.
//! - `decay/pass_10k_rows`: one `run_decay_once` over 4,000 episodes, 3,000 concepts and 3,000
//!   traits, every one of them due for decay (the values are reset between iterations,
//!   outside the timing).
//!
//! `cargo bench --bench memory_semantic`

use std::cell::RefCell;
use std::hint::black_box;

use chalie::memory::concepts::{EpisodeText, extract_batch};
use chalie::memory::decay::run_decay_once;
use chalie::memory::semantic::SEMANTIC_QUEUE;
use chalie::memory::semantic_store::{pending_batch, store_consolidation};
use chalie::store::JobsRepo;
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use rusqlite::{Connection, params};
use serde_json::json;
use std::collections::HashMap;

const GISTS: [&str; 5] = [
    "Rust is a systems programming language. — reply: It is great for command-line tools like ripgrep.",
    "We picked Postgres instead of MySQL for the billing service. — reply: Good choice for billing.",
    "The nightly build requires cmake and the release pipeline uses Docker. — reply: Noted.",
    "Unit testing is part of the release process at Acme. — reply: Makes sense.",
    "I keep reading about sourdough; my sourdough starter died while I was in Lisbon. — reply: Oh no!",
];
const T0: i64 = 1_800_000_000;

fn open(dir: &tempfile::TempDir) -> Connection {
    chalie::store::open(&dir.path().join("bench.db")).unwrap()
}

fn bench_semantic(c: &mut Criterion) {
    let mut group = c.benchmark_group("semantic");
    let ep = EpisodeText { id: 1, gist: GISTS[4].into(), topic: Some("baking".into()) };
    group.bench_function("extract_one_episode", |b| b.iter(|| black_box(extract_batch(std::slice::from_ref(&ep)))));

    let dir = tempfile::tempdir().unwrap();
    let conn = open(&dir);
    for i in 0..1_000 {
        conn.execute(
            "INSERT INTO semantic_concepts (name, definition, created_at, updated_at) VALUES (?1, 'seed', ?2, ?2)",
            params![format!("seed concept {i}"), T0],
        )
        .unwrap();
    }
    let conn = RefCell::new(conn);
    let mut n = 0usize;
    group.bench_function("consolidate_one_episode", |b| {
        b.iter_batched(
            || {
                n += 1;
                let c = conn.borrow();
                c.execute(
                    "INSERT INTO episodes (gist, topic, created_at, updated_at) VALUES (?1, 'work', ?2, ?2)",
                    params![GISTS[n % GISTS.len()], T0],
                )
                .unwrap();
                JobsRepo(&c).enqueue(SEMANTIC_QUEUE, &json!({"reason": "bench"}), 3).unwrap()
            },
            |job| {
                let mut c = conn.borrow_mut();
                let batch = pending_batch(&c, 20).unwrap();
                let ex = extract_batch(&batch);
                let pairs: Vec<(i64, _)> = batch.iter().map(|e| e.id).zip(ex).collect();
                black_box(store_consolidation(&mut c, job, &pairs, &HashMap::new(), T0).unwrap())
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

fn seed_decay(c: &Connection) {
    let tx = c.unchecked_transaction().unwrap();
    for i in 0..4_000 {
        tx.execute(
            "INSERT INTO episodes (gist, created_at, updated_at) VALUES (?1, ?2, ?2)",
            params![format!("e{i}"), T0],
        )
        .unwrap();
    }
    let reliability = ["reliable", "uncertain", "contradicted", "superseded"];
    for i in 0..3_000 {
        tx.execute(
            "INSERT INTO semantic_concepts (name, reliability, created_at, updated_at) VALUES (?1, ?2, ?3, ?3)",
            params![format!("c{i}"), reliability[i % 4], T0],
        )
        .unwrap();
        tx.execute(
            "INSERT INTO user_traits (trait_key, trait_value, category, created_at, updated_at)
             VALUES (?1, 'v', ?2, ?3, ?3)",
            params![format!("t{i}"), ["general", "core", "preference"][i % 3], T0],
        )
        .unwrap();
    }
    tx.commit().unwrap();
}

fn reset_decay(c: &Connection) {
    c.execute_batch(
        "UPDATE episodes SET activation_score = 1.5;
         UPDATE semantic_concepts SET strength = 3.0, at_floor_since = NULL;
         UPDATE user_traits SET confidence = 0.8, at_floor_since = NULL;
         DELETE FROM kv_state WHERE namespace = 'decay';",
    )
    .unwrap();
}

fn bench_decay(c: &mut Criterion) {
    let mut group = c.benchmark_group("decay");
    let dir = tempfile::tempdir().unwrap();
    let conn = open(&dir);
    seed_decay(&conn);
    let conn = RefCell::new(conn);
    group.bench_function("pass_10k_rows", |b| {
        b.iter_batched(
            || reset_decay(&conn.borrow()),
            |()| {
                let report = run_decay_once(&mut conn.borrow_mut(), T0 + 3 * 3600).unwrap();
                assert_eq!(report.episodes_decayed + report.concepts_decayed + report.traits_decayed, 10_000);
                black_box(report)
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group!(benches, bench_semantic, bench_decay);
criterion_main!(benches);
