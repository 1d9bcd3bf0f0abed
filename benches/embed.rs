//! Embedding speed of the built-in all-MiniLM-L6-v2: one sentence, and a batch of 32
//! (divide by 32 for the per-sentence cost). Sentences are SNLI premises when the
//! shared data is present, so lengths are realistic (8–38 tokens, 17 on average).
//!
//! `cargo bench --bench embed`; fetches the model into `CHALIE_MODELS_DIR` (default
//! `target/models`) first if needed. With `RAYON_NUM_THREADS` unset, candle reads
//! /proc/cpuinfo before every matmul to count cores: set it to see the cost without.

use std::path::PathBuf;
use std::time::Duration;

use chalie::llm::local::embed::Embedder;
use chalie::llm::local::fetch::{self, Fetcher};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const SNLI: &str = "/work/shared/data/snli/train_sample.jsonl";

fn models_dir() -> PathBuf {
    std::env::var_os("CHALIE_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/models"))
}

fn sentences() -> Vec<String> {
    let from_snli = std::fs::read_to_string(SNLI).ok().map(|data| {
        data.lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter_map(|v| v["premise"].as_str().map(str::to_string))
            .take(32)
            .collect::<Vec<_>>()
    });
    match from_snli {
        Some(s) if s.len() == 32 => s,
        _ => (0..32).map(|i| format!("Sentence number {i}: the cat sits on the mat while it rains outside.")).collect(),
    }
}

fn bench(c: &mut Criterion) {
    let dir = models_dir();
    Fetcher::default().fetch(&dir, &mut |_| {}).unwrap();
    let embedder = Embedder::load(&fetch::model_dir(&dir, "all-minilm-l6-v2")).unwrap();
    let owned = sentences();
    let batch: Vec<&str> = owned.iter().map(String::as_str).collect();

    let mut group = c.benchmark_group("embed");
    group.measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Elements(1));
    group.bench_function("single", |b| b.iter(|| embedder.embed(&batch[..1]).unwrap()));
    group.throughput(Throughput::Elements(32));
    group.sample_size(20);
    group.bench_function("batch32", |b| b.iter(|| embedder.embed(&batch).unwrap()));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
