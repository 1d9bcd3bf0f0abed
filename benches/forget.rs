//! Time a forget takes at 100k stored memories (`forget/statement/100k`): resolving "forget my
//! locker code" against the user's newest chat lines, then the purge of every table (each
//! `TEXT_MAP` column scanned once for the needles), the optimize of all six FTS indexes and
//! the TRUNCATE checkpoint, on an on-disk WAL database with `secure_delete` on.
//!
//! The store holds 100k episodes (8-word gists over a 400-word vocabulary, 384-d unit
//! vectors, through the worker's `insert_episode`) and 100k chat lines (one user line per
//! episode's exchange, indexed by the trigram FTS). Each iteration first stores one new
//! statement with a fresh secret (chat line, episode with its vector and FTS entry; not timed),
//! then forgets it (timed). Seeded databases are kept under `target/tmp/forget-bench/`;
//! delete them to reseed.
//!
//! `cargo bench --profile dev --bench forget`

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chalie::SplitMix64;
use chalie::memory::episodic::{build_episode, insert_episode};
use chalie::memory::forget::{Line, Resolution, Target, resolve};
use chalie::store::{ChatRepo, EMBEDDING_DIM, Purge, now_ts, purge, user_lines};
use criterion::{Criterion, criterion_group, criterion_main};
use rusqlite::Connection;
use serde_json::json;

const N: usize = 100_000;
const SEED_VERSION: u32 = 1;

fn unit(rng: &mut SplitMix64) -> Vec<f32> {
    let v: Vec<f32> = (0..EMBEDDING_DIM).map(|_| rng.next_f64() as f32 * 2.0 - 1.0).collect();
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / n).collect()
}

fn store_exchange(c: &Connection, rng: &mut SplitMix64, x: &str, text: &str) {
    ChatRepo(c).append("bench", x, "user", text, None, None).unwrap();
    let payload = json!({
        "thread_id": "bench", "exchange_id": x, "topic": "bench",
        "user_text": text, "response": "Okay.", "mode": "RESPOND", "created_at": now_ts(),
    });
    let draft = build_episode(&payload).unwrap();
    insert_episode(c, &draft, Some(&unit(rng))).unwrap();
}

fn seed(c: &mut Connection) {
    let mut rng = SplitMix64(7);
    let tx = c.transaction().unwrap();
    for i in 0..N {
        let text: Vec<String> = (0..8).map(|_| format!("w{}", rng.next_u64() % 400)).collect();
        store_exchange(&tx, &mut rng, &format!("x{i}"), &format!("note {}", text.join(" ")));
    }
    tx.commit().unwrap();
}

fn cached_db() -> Connection {
    let dir: PathBuf = Path::new(env!("CARGO_TARGET_TMPDIR")).join("forget-bench");
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join(format!("v{SEED_VERSION}-s{}-100k.db", chalie::store::latest_version()));
    if !db.exists() {
        let partial = db.with_extension("partial.db");
        let _ = std::fs::remove_file(&partial);
        let mut conn = chalie::store::open(&partial).unwrap();
        let started = Instant::now();
        seed(&mut conn);
        conn.pragma_update(None, "wal_checkpoint", "TRUNCATE").unwrap();
        drop(conn);
        eprintln!("seeded 100k episodes and chat lines in {:.1} s", started.elapsed().as_secs_f64());
        std::fs::rename(&partial, &db).unwrap();
    }
    chalie::store::open(&db).unwrap()
}

fn bench(c: &mut Criterion) {
    let mut conn = cached_db();
    let mut rng = SplitMix64(99);
    let mut k = 0u64;
    let mut group = c.benchmark_group("forget");
    group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(20));
    group.bench_function("statement/100k", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                k += 1;
                let x = format!("secret-{k}-{}", rng.next_u64());
                let text = format!("My locker code is Q{}Z{k}", rng.next_u64() % 1_000_000);
                store_exchange(&conn, &mut rng, &x, &text);
                let started = Instant::now();
                let lines: Vec<Line> = user_lines(&conn, 2000)
                    .unwrap()
                    .into_iter()
                    .map(|(exchange_id, thread_id, text)| Line { exchange_id, thread_id, text })
                    .collect();
                let target = Target::About { subject: "locker code".into(), all: false };
                let Resolution::Forget(plan) = resolve(&target, &lines, "bench") else { panic!("not clear-cut") };
                let p = Purge {
                    needles: plan.needles,
                    exchanges: plan.exchanges,
                    kind: "statement".into(),
                    ..Purge::default()
                };
                let purged = purge(&mut conn, &p).unwrap();
                total += started.elapsed();
                assert_eq!(purged.lines, [x]);
            }
            total
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
