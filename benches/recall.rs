//! Speed of hybrid recall (`chalie::memory::hybrid_recall`, top 10) over N stored episodes.
//!
//! - `recall/hybrid_top10/{1k,10k,100k}`: vector kNN over `episode_vec` (k = 50, 384-d,
//!   cosine) + FTS5 over `episodes_fts` + the keyword layers, fused by RRF and re-ranked.
//! - `recall/text_only_top10/{…}`: the same without an embedding (what the `recall` skill
//!   does on the database thread).
//!
//! Episodes are written through the worker's own `insert_episode` on an on-disk database
//! (tempdir, WAL): gists of 8 words drawn from a 400-word vocabulary, salience 1–10, ages
//! up to a year, unit vectors from `SplitMix64`. The query shares two vocabulary words with
//! many gists and its embedding is a near neighbour of one stored vector.
//!
//! `cargo bench --bench recall` (seeding 100k episodes takes a while first).

use std::hint::black_box;
use std::time::{Duration, Instant};

use chalie::SplitMix64;
use chalie::memory::episodic::{build_episode, insert_episode};
use chalie::memory::hybrid_recall;
use chalie::store::{EMBEDDING_DIM, now_ts};
use criterion::{Criterion, criterion_group, criterion_main};
use rusqlite::Connection;
use serde_json::json;

const SIZES: &[(usize, &str)] = &[(1_000, "1k"), (10_000, "10k"), (100_000, "100k")];
const QUERY: &str = "what did I say about w17 and w42";

fn unit(rng: &mut SplitMix64) -> Vec<f32> {
    let v: Vec<f32> = (0..EMBEDDING_DIM).map(|_| rng.next_f64() as f32 * 2.0 - 1.0).collect();
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / n).collect()
}

/// Seed `n` episodes; returns a query embedding near one of them.
fn seed(c: &mut Connection, n: usize) -> Vec<f32> {
    let mut rng = SplitMix64(42);
    let now = now_ts();
    let tx = c.transaction().unwrap();
    let mut probe = Vec::new();
    for i in 0..n {
        let text: Vec<String> = (0..8).map(|_| format!("w{}", rng.next_u64() % 400)).collect();
        let payload = json!({
            "thread_id": "bench", "exchange_id": format!("x{i}"), "topic": format!("topic-{}", i % 50),
            "user_text": format!("note {}", text.join(" ")), "response": "Okay.", "mode": "RESPOND",
            "created_at": now - (rng.next_u64() % (365 * 86_400)) as i64,
        });
        let draft = build_episode(&payload).unwrap();
        let v = unit(&mut rng);
        if i == n / 2 {
            probe = v.iter().map(|x| x + 0.02 * (rng.next_f64() as f32 - 0.5)).collect();
        }
        insert_episode(&tx, &draft, Some(&v)).unwrap();
    }
    tx.commit().unwrap();
    let norm = probe.iter().map(|x| x * x).sum::<f32>().sqrt();
    probe.into_iter().map(|x| x / norm).collect()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("recall");
    group.warm_up_time(Duration::from_secs(1));
    for &(n, label) in SIZES {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = chalie::store::open(&dir.path().join("bench.db")).unwrap();
        let started = Instant::now();
        let probe = seed(&mut conn, n);
        eprintln!("seeded {label} episodes in {:.1} s", started.elapsed().as_secs_f64());
        let now = now_ts();
        let hits = hybrid_recall(&conn, QUERY, Some(&probe), 10, now).unwrap();
        assert_eq!(hits.len(), 10);
        eprintln!("{label}: top hit {:?} #{} — {}", hits[0].layer, hits[0].id, hits[0].why);
        group.sample_size(if n >= 100_000 { 10 } else { 30 });
        group.measurement_time(Duration::from_secs(if n >= 100_000 { 10 } else { 4 }));
        group.bench_function(format!("hybrid_top10/{label}"), |b| {
            b.iter(|| black_box(hybrid_recall(&conn, QUERY, Some(&probe), 10, now).unwrap()))
        });
        group.bench_function(format!("text_only_top10/{label}"), |b| {
            b.iter(|| black_box(hybrid_recall(&conn, QUERY, None, 10, now).unwrap()))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
