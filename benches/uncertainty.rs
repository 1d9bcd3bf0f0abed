//! Speed of the uncertainty engine's ingestion check without a model (docs/cognition.md §10.4):
//! the slot lookup and the k = 5 vector pre-screen over traits, facts and concepts
//! (`ingest::candidates`), then the rules over every candidate (`ingest::judge`). No writes:
//! what runs beside the reply before anything is found.
//!
//! The store holds 100k memories, all vectorised: 50k traits (one key each, eight of them
//! everyday slots), 25k facts and 25k concepts, written through their repositories on an on-disk database
//! (WAL) cached under `target/tmp/uncertainty-bench/`. Messages are personal statements that
//! name a stored slot with a new value, with an embedding next to a stored trait vector.
//!
//! Besides criterion's estimate, 2,000 timed checks print the median and p99 (the target is
//! p99 < 2 ms). Measured with the chalie-tui package at opt-level 3 and dependencies as the dev
//! profile builds them (`[profile.dev.package.chalie-tui] opt-level = 3` in a local
//! .cargo/config.toml, `cargo bench --profile dev --bench uncertainty`): re-scoring 400 rows
//! per table gave a median 4.75 ms, p99 5.69 ms; re-scoring `ingest::PRESCREEN_CANDIDATES` = 50,
//! median 1.48 ms, p99 1.72 ms (slots and rules alone: 0.04 ms / 0.08 ms).
//!
//! `cargo bench --bench uncertainty`

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chalie::SplitMix64;
use chalie::memory::uncertainty::{ingest, rules};
use chalie::store::{
    ConceptFields, ConceptsRepo, EMBEDDING_DIM, FactOrigin, FactsRepo, TraitWrite, TraitsRepo, VecTable, VectorRepo,
    now_ts,
};
use criterion::{Criterion, criterion_group, criterion_main};
use rusqlite::Connection;

const TRAITS: usize = 50_000;
const FACTS: usize = 25_000;
const CONCEPTS: usize = 25_000;
const SLOTS: [&str; 8] = ["location", "employer", "manager", "gym", "phone_number", "reading", "diet", "partner"];
const MESSAGES: [&str; 4] = [
    "I moved to Lisbon last month",
    "I switched gyms, I go to Iron Works now",
    "My new manager is Bruno",
    "The deadline was pushed back to Monday",
];
const SEED_VERSION: u32 = 3;

fn unit(rng: &mut SplitMix64) -> Vec<f32> {
    let v: Vec<f32> = (0..EMBEDDING_DIM).map(|_| rng.next_f64() as f32 * 2.0 - 1.0).collect();
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / n).collect()
}

fn key(i: usize) -> String {
    if i < SLOTS.len() { SLOTS[i].to_string() } else { format!("slot_{i}") }
}

/// Seed the store; returns probe embeddings near stored trait vectors.
fn seed(c: &mut Connection) -> Vec<Vec<f32>> {
    let mut rng = SplitMix64(7);
    let now = now_ts();
    let tx = c.transaction().unwrap();
    let mut probes = Vec::new();
    for i in 0..TRAITS {
        let k = key(i);
        let value = format!("value {}", rng.below(10_000));
        let w = TraitWrite {
            key: &k,
            value: &value,
            category: "general",
            confidence: 0.8,
            source: "explicit",
            is_literal: true,
            observed_at: now,
        };
        let id = TraitsRepo(&tx).insert(&w, now).unwrap();
        let v = unit(&mut rng);
        if i % 12_500 == 0 {
            probes.push(v.iter().map(|x| x + 0.01 * (rng.next_f64() as f32 - 0.5)).collect());
        }
        VectorRepo(&tx).upsert(VecTable::Traits, id, &v).unwrap();
    }
    for i in 0..FACTS {
        let k = if i % 10 == 0 { "deadline".to_string() } else { format!("fact_{}", i % 500) };
        let topic = format!("topic-{}", i % 300);
        let (id, _) = FactsRepo(&tx)
            .upsert(&topic, &k, &format!("day {}", i % 28), 0.7, now, now + 86_400, FactOrigin::Conversation)
            .unwrap();
        VectorRepo(&tx).upsert(VecTable::Facts, id, &unit(&mut rng)).unwrap();
    }
    for i in 0..CONCEPTS {
        let name = format!("concept {i}");
        let f = ConceptFields {
            name: &name,
            concept_type: "domain",
            definition: "a thing the user talked about",
            abstraction_level: 3,
            domain: None,
        };
        let id = ConceptsRepo(&tx).insert(&f, "[]", now).unwrap();
        VectorRepo(&tx).upsert(VecTable::Concepts, id, &unit(&mut rng)).unwrap();
    }
    tx.commit().unwrap();
    probes
        .into_iter()
        .map(|p: Vec<f32>| {
            let n = p.iter().map(|x| x * x).sum::<f32>().sqrt();
            p.into_iter().map(|x| x / n).collect()
        })
        .collect()
}

fn cached_db() -> (Connection, Vec<Vec<f32>>) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("uncertainty-bench");
    std::fs::create_dir_all(&dir).unwrap();
    let key = format!("v{SEED_VERSION}-s{}", chalie::store::latest_version());
    let db: PathBuf = dir.join(format!("{key}.db"));
    let probes_path = dir.join(format!("{key}.probes"));
    if !db.exists() || !probes_path.exists() {
        let partial = dir.join(format!("{key}.partial.db"));
        for p in [&partial, &partial.with_extension("db-wal"), &partial.with_extension("db-shm")] {
            let _ = std::fs::remove_file(p);
        }
        let mut conn = chalie::store::open(&partial).unwrap();
        let started = Instant::now();
        let probes = seed(&mut conn);
        conn.pragma_update(None, "wal_checkpoint", "TRUNCATE").unwrap();
        drop(conn);
        eprintln!("seeded 100k memories in {:.1} s", started.elapsed().as_secs_f64());
        let bytes: Vec<u8> = probes.iter().flatten().flat_map(|x| x.to_le_bytes()).collect();
        std::fs::write(&probes_path, bytes).unwrap();
        std::fs::rename(&partial, &db).unwrap();
    }
    let bytes = std::fs::read(&probes_path).unwrap();
    let flat: Vec<f32> = bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    let probes = flat.chunks(EMBEDDING_DIM).map(<[f32]>::to_vec).collect();
    (chalie::store::open(&db).unwrap(), probes)
}

fn check(c: &Connection, message: &str, probe: Option<&[f32]>, now: i64) -> usize {
    let claims = rules::claims(message);
    let cands = ingest::candidates(c, &claims, probe, now).unwrap();
    ingest::judge(message, &claims, &cands).len()
}

fn bench(cr: &mut Criterion) {
    let (conn, probes) = cached_db();
    let now = now_ts();
    let found: usize = MESSAGES.iter().zip(probes.iter().cycle()).map(|(m, p)| check(&conn, m, Some(p), now)).sum();
    eprintln!("findings over the {} messages: {found}", MESSAGES.len());
    for (label, with_vectors) in [("slots and rules only", false), ("with the k = 5 vector pre-screen", true)] {
        let mut times: Vec<Duration> = (0..2_000)
            .map(|i| {
                let (m, p) = (MESSAGES[i % MESSAGES.len()], &probes[i % probes.len()]);
                let t = Instant::now();
                black_box(check(&conn, m, with_vectors.then_some(p.as_slice()), now));
                t.elapsed()
            })
            .collect();
        times.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        eprintln!(
            "ingestion check at 100k memories, {label}: median {:.3} ms, p99 {:.3} ms, max {:.3} ms (2,000 checks)",
            ms(times[times.len() / 2]),
            ms(times[times.len() * 99 / 100]),
            ms(times[times.len() - 1])
        );
    }
    let mut i = 0usize;
    cr.bench_function("uncertainty/ingestion_check_100k", |b| {
        b.iter(|| {
            i += 1;
            black_box(check(&conn, MESSAGES[i % MESSAGES.len()], Some(&probes[i % probes.len()]), now))
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(50).measurement_time(Duration::from_secs(5));
    targets = bench
}
criterion_main!(benches);
