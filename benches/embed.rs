//! Embedding speed of the built-in all-MiniLM-L6-v2, one sentence and a batch of 32 (divide
//! by 32 for the per-sentence cost): the int8 encoder (the default) against candle's F32 BERT
//! (the reference it is held to) on the same files in the same run. Sentences are SNLI premises when the shared data is
//! present, so lengths are realistic (8–38 tokens, 17 on average).
//!
//! The reference is an int8 ONNX runtime (2.7 ms a sentence on this machine); none
//! can be had from crates.io or PyPI without a model-hub download, so that figure is the
//! target and the F32 path is the in-run reference.
//!
//! `cargo bench --bench embed`; fetches the model into `CHALIE_MODELS_DIR` (default
//! `target/models`) first if needed. With `RAYON_NUM_THREADS` unset, candle's F32 path reads
//! /proc/cpuinfo before every matmul to count cores; the binary sets it, and so does this.

use std::path::PathBuf;
use std::time::Duration;

use chalie::llm::local::embed::Embedder;
use chalie::llm::local::fetch::{self, Fetcher};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

#[path = "support/benchfig.rs"]
mod benchfig;

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
    if std::env::var_os("RAYON_NUM_THREADS").is_none() {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get());
        // SAFETY: set before any model work starts a thread, as the binary does.
        unsafe { std::env::set_var("RAYON_NUM_THREADS", n.to_string()) };
    }
    let dir = models_dir();
    Fetcher::default().fetch(&dir, &mut |_| {}).unwrap();
    let model = fetch::model_dir(&dir, "all-minilm-l6-v2");
    let (int8, f32_ref) = (Embedder::load(&model).unwrap(), Embedder::load_f32(&model).unwrap());
    let owned = sentences();
    let batch: Vec<&str> = owned.iter().map(String::as_str).collect();

    let (ours, reference) =
        benchfig::paired(20, 300, || int8.embed(&batch[..1]).unwrap(), || f32_ref.embed(&batch[..1]).unwrap());
    benchfig::print(
        "embed_single_int8_default",
        &ours,
        Some(("candle_f32", &reference)),
        "<=2.7ms (int8 ONNX, external)",
    );
    benchfig::print("embed_single_f32", &reference, None, "reference");
    let per = |s: Vec<f64>| s.into_iter().map(|ms| ms / 32.0).collect::<Vec<_>>();
    let (ours, reference) = benchfig::paired(2, 30, || int8.embed(&batch).unwrap(), || f32_ref.embed(&batch).unwrap());
    benchfig::print("embed_batch32_per_sentence_int8", &per(ours), Some(("candle_f32", &per(reference))), "report");

    let mut group = c.benchmark_group("embed");
    group.measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Elements(1));
    group.bench_function("single", |b| b.iter(|| int8.embed(&batch[..1]).unwrap()));
    group.bench_function("single_f32", |b| b.iter(|| f32_ref.embed(&batch[..1]).unwrap()));
    group.throughput(Throughput::Elements(32));
    group.sample_size(20);
    group.bench_function("batch32", |b| b.iter(|| int8.embed(&batch).unwrap()));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
