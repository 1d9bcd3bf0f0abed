//! Speed of the memory chunker's deterministic path, per exchange.
//!
//! - `chunker/extract`: `chalie::memory::extract::extract` over one user message (sentences,
//!   first-person patterns, gist cues, the nine style dimensions). Pure, no I/O.
//! - `chunker/extract_and_store`: the same, then `store_chunk` in one transaction on an on-disk
//!   database (tempdir, WAL): sweep and read the topic, plan and write gists and facts, merge
//!   the style profile, apply the trait rules, log, complete the job.
//! - `chunker/extract_and_store_vectors`: as above with a 384-d vector per trait written into
//!   `trait_vec` (the embedding itself is the model's cost, measured by the `embed` bench).
//!
//! Messages rotate over eight realistic exchanges and four topics with a rising timestamp, so
//! the store sees new gists, de-duplication, reinforced and conflicting traits, not one row
//! rewritten. `cargo bench --bench memory`.

use std::hint::black_box;

use chalie::memory::chunker::{ChunkInput, store_chunk};
use chalie::memory::extract::extract;
use chalie::store::{CHUNK_QUEUE, EMBEDDING_DIM, JobsRepo};
use criterion::{Criterion, criterion_group, criterion_main};
use rusqlite::Connection;
use serde_json::json;

const MESSAGES: [&str; 8] = [
    "Hi! My name is Ada and I live in Porto. I work as a nurse at the city hospital.",
    "I decided to take the weekend off. Maybe we go hiking in the mountains, I'm not sure yet.",
    "Remind me to call my sister on Sunday, her birthday is next week.",
    "I'm allergic to peanuts and shellfish, so keep that in mind when you suggest recipes.",
    "My favourite colour is dark green and I prefer tea over coffee in the morning.",
    "Could you please explain why the build fails? The error is in the linker step.",
    "I have a dog named Biscuit. My wife Carla loves him more than I do!",
    "I want to learn Rust this year. The deadline for the course signup is Friday.",
];

fn input(i: usize) -> ChunkInput {
    ChunkInput {
        thread_id: Some("bench".into()),
        exchange_id: Some(format!("x{i}")),
        topic: format!("topic-{}", i % 4),
        user_text: MESSAGES[i % MESSAGES.len()].into(),
        response: "Noted.".into(),
        created_at: 1_800_000_000 + i as i64,
    }
}

fn open() -> (tempfile::TempDir, Connection, i64) {
    let dir = tempfile::tempdir().unwrap();
    let c = chalie::store::open(&dir.path().join("bench.db")).unwrap();
    let job = JobsRepo(&c).enqueue(CHUNK_QUEUE, &json!({}), 3).unwrap();
    (dir, c, job)
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("chunker");
    let mut i = 0usize;
    g.bench_function("extract", |b| {
        b.iter(|| {
            i += 1;
            black_box(extract(black_box(MESSAGES[i % MESSAGES.len()])))
        })
    });
    for vectors in [false, true] {
        let (_dir, mut conn, job) = open();
        let unit = vec![1.0 / (EMBEDDING_DIM as f32).sqrt(); EMBEDDING_DIM];
        let mut i = 0usize;
        let name = if vectors { "extract_and_store_vectors" } else { "extract_and_store" };
        g.bench_function(name, |b| {
            b.iter(|| {
                i += 1;
                let inp = input(i);
                let ex = extract(&inp.user_text);
                let v: Vec<Option<Vec<f32>>> = ex.traits.iter().map(|_| vectors.then(|| unit.clone())).collect();
                let now = inp.created_at;
                black_box(store_chunk(&mut conn, job, &inp, &ex, &v, "deterministic", now).unwrap())
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
