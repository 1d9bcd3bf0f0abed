//! Speed of hybrid recall (`chalie::memory::hybrid_recall`, top 10) over N stored episodes.
//!
//! - `recall/hybrid_top10/{1k,10k,100k}`: vector kNN over `episode_vec` (k = 50, 384-d,
//!   cosine) + FTS5 over `episodes_fts` + the keyword layers, fused by RRF and re-ranked.
//! - `recall/text_only_top10/{…}`: the same without an embedding (what the `recall` skill
//!   does on the database thread).
//! - `recall/vector_only_top10/{…}`: a query with no content words, so only the vector source runs.
//! - `recall/knn_exact_k50/{…}` and `recall/knn_fast_k50/{…}`: the vector search alone,
//!   sqlite-vec's brute force (`VectorRepo::knn`, the reference) against the binary-code
//!   prefilter with exact rescoring (`VectorRepo::search`) that recall uses.
//!
//! Episodes are written through the worker's own `insert_episode` on an on-disk database
//! (WAL): gists of 8 words drawn from a 400-word vocabulary, salience 1–10, ages up to a year,
//! unit vectors from `SplitMix64`. The query shares two vocabulary words with many gists and
//! its embedding is a near neighbour of one stored vector. Seeded databases are kept under
//! `target/tmp/recall-bench/` (seeding 100k takes ~10 s); delete them to reseed. After
//! seeding, each database is copied, VACUUMed and its size per 10k episodes printed.
//!
//! The printed "fast kNN shares n/50 of the exact top 50" is low at 100k by design of the data:
//! uniform random 384-d vectors are all nearly orthogonal, so past the probe's one true
//! neighbour the exact top 50 are noise at cosine ≈ 0.2 (recall drops them at `MIN_SIMILARITY`),
//! which sign codes cannot order. Recall quality on clustered and real MiniLM embeddings is
//! measured by `examples/vector_prefilter_eval.rs` and the `store::vectors` tests.
//!
//! `cargo bench --bench recall`

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chalie::SplitMix64;
use chalie::memory::episodic::{build_episode, insert_episode};
use chalie::memory::hybrid_recall;
use chalie::store::{EMBEDDING_DIM, VecTable, VectorRepo, now_ts};
use criterion::{Criterion, criterion_group, criterion_main};
use rusqlite::Connection;
use serde_json::json;

const SIZES: &[(usize, &str)] = &[(1_000, "1k"), (10_000, "10k"), (100_000, "100k")];
const QUERY: &str = "what did I say about w17 and w42";
/// No content words: recall runs the vector source alone.
const VECTOR_QUERY: &str = "what did I say about it";
/// Bumped whenever `seed` changes, so stale cached databases are not reused.
const SEED_VERSION: u32 = 3;

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

fn cache_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("recall-bench")
}

/// Open the cached database of `n` episodes, seeding it first when missing. Returns the
/// connection and the probe embedding (stored beside the database as f32 bytes).
fn cached_db(n: usize, label: &str) -> (Connection, Vec<f32>) {
    let dir = cache_dir();
    std::fs::create_dir_all(&dir).unwrap();
    // Keyed on the schema too: a cache from another migration set would not open.
    let key = format!("v{SEED_VERSION}-s{}-{label}", chalie::store::latest_version());
    let db = dir.join(format!("{key}.db"));
    let probe_path = dir.join(format!("{key}.probe"));
    if !db.exists() || !probe_path.exists() {
        let partial = dir.join(format!("{key}.partial.db"));
        for p in [&partial, &partial.with_extension("db-wal"), &partial.with_extension("db-shm")] {
            let _ = std::fs::remove_file(p);
        }
        let mut conn = chalie::store::open(&partial).unwrap();
        let started = Instant::now();
        let probe = seed(&mut conn, n);
        conn.pragma_update(None, "wal_checkpoint", "TRUNCATE").unwrap();
        drop(conn);
        eprintln!("seeded {label} episodes in {:.1} s", started.elapsed().as_secs_f64());
        std::fs::write(&probe_path, probe.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
        std::fs::rename(&partial, &db).unwrap();
        print_size(&db, n, label);
    }
    let bytes = std::fs::read(&probe_path).unwrap();
    let probe = bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    (chalie::store::open(&db).unwrap(), probe)
}

/// VACUUM a copy of the database and print its size per 10k episodes (rows, embeddings,
/// full-text index and binary codes together).
fn print_size(db: &Path, n: usize, label: &str) {
    let copy = db.with_extension("size.db");
    let _ = std::fs::remove_file(&copy);
    let conn = chalie::store::open(db).unwrap();
    conn.execute("VACUUM INTO ?1", [copy.to_string_lossy().as_ref()]).unwrap();
    drop(conn);
    let bytes = std::fs::metadata(&copy).map(|m| m.len()).unwrap_or(0);
    let _ = std::fs::remove_file(&copy);
    eprintln!(
        "store size {label}: {:.1} MB after VACUUM, {:.2} MB per 10k episodes",
        bytes as f64 / 1e6,
        bytes as f64 / 1e6 / (n as f64 / 10_000.0)
    );
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("recall");
    group.warm_up_time(Duration::from_secs(1));
    for &(n, label) in SIZES {
        let (conn, probe) = cached_db(n, label);
        let now = now_ts();
        let hits = hybrid_recall(&conn, QUERY, Some(&probe), 10, now).unwrap();
        assert_eq!(hits.len(), 10);
        eprintln!("{label}: top hit {:?} #{} — {}", hits[0].layer, hits[0].id, hits[0].why);
        let repo = VectorRepo(&conn);
        let exact = repo.knn(VecTable::Episodes, &probe, 50).unwrap();
        let fast = repo.search(VecTable::Episodes, &probe, 50).unwrap();
        let same = fast.iter().filter(|f| exact.iter().any(|e| e.0 == f.0)).count();
        eprintln!("{label}: fast kNN shares {same}/50 of the exact top 50; nearest {:?} vs {:?}", fast[0], exact[0]);
        group.sample_size(if n >= 100_000 { 10 } else { 30 });
        group.measurement_time(Duration::from_secs(if n >= 100_000 { 10 } else { 4 }));
        group.bench_function(format!("hybrid_top10/{label}"), |b| {
            b.iter(|| black_box(hybrid_recall(&conn, QUERY, Some(&probe), 10, now).unwrap()))
        });
        group.bench_function(format!("text_only_top10/{label}"), |b| {
            b.iter(|| black_box(hybrid_recall(&conn, QUERY, None, 10, now).unwrap()))
        });
        group.bench_function(format!("vector_only_top10/{label}"), |b| {
            b.iter(|| black_box(hybrid_recall(&conn, VECTOR_QUERY, Some(&probe), 10, now).unwrap()))
        });
        group.bench_function(format!("knn_exact_k50/{label}"), |b| {
            b.iter(|| black_box(repo.knn(VecTable::Episodes, &probe, 50).unwrap()))
        });
        group.bench_function(format!("knn_fast_k50/{label}"), |b| {
            b.iter(|| black_box(repo.search(VecTable::Episodes, &probe, 50).unwrap()))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
