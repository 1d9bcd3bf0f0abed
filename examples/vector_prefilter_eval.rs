//! How many binary-code candidates `VectorRepo::search` must re-score to find what the exact
//! brute force (`VectorRepo::knn`) finds: recall@10 and recall@50 against it, per candidate count.
//!
//! Three corpora, each stored in an in-memory database and queried (100 queries; `real` ~200):
//! - `clustered`: 20k synthetic unit vectors in topics and subtopics (SplitMix64, seed 7);
//! - `minilm`: sentences from templates (people, activities, places, feelings) embedded with the
//!   built-in all-MiniLM-L6-v2 (`CHALIE_MODELS_DIR` or `target/models`; skipped when missing).
//!   Queries are further sentences from the same templates.
//! - `real`: every distinct real sentence of the shared data (`CHALIE_DATA_DIR`, default
//!   /work/shared/data: SNLI premises and hypotheses, chatterbot lines, chitchat utterances),
//!   embedded with the same model; every 97th sentence is held out as a query, the rest stored.
//!
//! Each line gives recall@k against the database's exact search (`knn`, over the stored int8
//! rows) and against the exact f32 top k computed here from the unquantised vectors, which is
//! the figure that says what the one int8 copy costs.
//!
//! `cargo run --release --example vector_prefilter_eval [-- SENTENCES]` (default 6000).

use std::path::PathBuf;

use chalie::SplitMix64;
use chalie::llm::local::embed::Embedder;
use chalie::llm::local::fetch;
use chalie::store::{EMBEDDING_DIM, VecTable, VectorRepo, open_in_memory};

const CANDIDATES: &[usize] = &[50, 100, 200, 300, 400, 800];
const QUERIES: usize = 100;

fn unit(v: Vec<f32>) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(f32::EPSILON);
    v.into_iter().map(|x| x / n).collect()
}

fn noise(rng: &mut SplitMix64, scale: f32) -> Vec<f32> {
    (0..EMBEDDING_DIM).map(|_| scale * (rng.next_f64() as f32 * 2.0 - 1.0)).collect()
}

fn clustered(rng: &mut SplitMix64, topics: &[Vec<f32>]) -> Vec<f32> {
    let topic = &topics[rng.below(topics.len())];
    let sub: Vec<f32> = topic.iter().zip(noise(rng, 0.05)).map(|(a, b)| a + b).collect();
    unit(unit(sub).iter().zip(noise(rng, 0.04)).map(|(a, b)| a + b).collect())
}

const WHO: &[&str] = &[
    "my sister",
    "my manager",
    "Ana",
    "the neighbour",
    "my doctor",
    "a colleague",
    "my son",
    "the landlord",
    "my best friend",
    "the dentist",
    "my mother",
    "the team lead",
];
const WHAT: &[&str] = &[
    "planned a weekend hike",
    "asked about the budget for the trip",
    "fixed a failing database migration",
    "recommended a sourdough recipe",
    "booked flights to Porto",
    "complained about the noisy heating",
    "suggested learning Spanish past tenses",
    "reviewed the pull request on async cancellation",
    "moved the meeting to Friday morning",
    "sent the invoice for the garden work",
    "lent me a bicycle",
    "talked about running a marathon",
    "found a cheaper laptop with better battery life",
    "explained how to split the bill among four friends",
    "worried about the project deadline",
    "shared a playlist for studying",
    "asked me to water the plants",
    "called about the overdue library books",
];
const WHERE: &[&str] = &[
    "at lunch",
    "on the phone",
    "over coffee",
    "in an email",
    "after the gym",
    "during the standup",
    "at the harbour",
    "on the balcony",
    "before the theatre",
    "in the car",
];
const FEEL: &[&str] =
    &["and I felt relieved", "which annoyed me", "and it was fun", "and I still need to reply", "", "", "", ""];

fn sentence(rng: &mut SplitMix64) -> String {
    let pick = |rng: &mut SplitMix64, xs: &[&'static str]| xs[rng.below(xs.len())];
    format!("{} {} {} {}", pick(rng, WHO), pick(rng, WHAT), pick(rng, WHERE), pick(rng, FEEL)).trim().to_string()
}

/// The exact top `k` of `vectors` by cosine to `q` (all unit length), ids from 1.
fn exact_f32(vectors: &[Vec<f32>], q: &[f32], k: usize) -> Vec<i64> {
    let mut scored: Vec<(f32, i64)> = vectors
        .iter()
        .enumerate()
        .map(|(i, v)| (-v.iter().zip(q).map(|(a, b)| a * b).sum::<f32>(), i as i64 + 1))
        .collect();
    scored.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    scored.into_iter().take(k).map(|s| s.1).collect()
}

fn overlap(got: &[i64], want: &[i64]) -> usize {
    got.iter().filter(|h| want.contains(h)).count()
}

/// Every distinct sentence of the shared data, in file order.
fn real_sentences(dir: &std::path::Path) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    let mut add = |t: &str| {
        let t = t.trim();
        if !t.is_empty() && seen.insert(t.to_string()) {
            out.push(t.to_string());
        }
    };
    let lines = |rel: &str| -> Vec<serde_json::Value> {
        std::fs::read_to_string(dir.join(rel))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    };
    for d in lines("snli/train_sample.jsonl") {
        for key in ["premise", "hypothesis"] {
            add(d[key].as_str().unwrap_or(""));
        }
    }
    for d in lines("chatterbot/first_turns.jsonl") {
        add(d["text"].as_str().unwrap_or(""));
    }
    for rel in ["chatterbot/topic_shift_concat.jsonl", "chitchat/topic_shift_dev.jsonl"] {
        for d in lines(rel) {
            for u in d["utterances"].as_array().into_iter().flatten() {
                add(u["text"].as_str().unwrap_or(""));
            }
        }
    }
    out
}

/// recall@k of `search_with` against `knn` and against the exact f32 top k, per candidate count.
fn evaluate(name: &str, vectors: &[Vec<f32>], queries: &[Vec<f32>]) {
    let c = open_in_memory().expect("in-memory database");
    let repo = VectorRepo(&c);
    let tx = c.unchecked_transaction().expect("transaction");
    for (i, v) in vectors.iter().enumerate() {
        VectorRepo(&tx).upsert(VecTable::Episodes, i as i64 + 1, v).expect("upsert");
    }
    tx.commit().expect("commit");
    println!("{name}: {} vectors, {} queries", vectors.len(), queries.len());
    for k in [10usize, 50] {
        let exact: Vec<Vec<i64>> = queries
            .iter()
            .map(|q| repo.knn(VecTable::Episodes, q, k).expect("knn").into_iter().map(|h| h.0).collect())
            .collect();
        let f32_exact: Vec<Vec<i64>> = queries.iter().map(|q| exact_f32(vectors, q, k)).collect();
        let total = (k * queries.len()) as f64;
        let int8_vs_f32: usize = exact.iter().zip(&f32_exact).map(|(a, b)| overlap(a, b)).sum();
        println!("  recall@{k:<2} of the exact int8 search against exact f32: {:.3}", int8_vs_f32 as f64 / total);
        for &n in CANDIDATES.iter().filter(|&&n| n >= k) {
            let (mut found, mut found_f32) = (0, 0);
            for ((q, want), want_f32) in queries.iter().zip(&exact).zip(&f32_exact) {
                let got: Vec<i64> =
                    repo.search_with(VecTable::Episodes, q, k, n).expect("search").into_iter().map(|h| h.0).collect();
                found += overlap(&got, want);
                found_f32 += overlap(&got, want_f32);
            }
            println!(
                "  recall@{k:<2} with {n:>4} candidates: {:.3} vs exact int8, {:.3} vs exact f32",
                found as f64 / total,
                found_f32 as f64 / total
            );
        }
    }
}

fn main() {
    let mut rng = SplitMix64(7);
    let topics: Vec<Vec<f32>> = (0..60).map(|_| unit(noise(&mut rng, 1.0))).collect();
    let vectors: Vec<Vec<f32>> = (0..20_000).map(|_| clustered(&mut rng, &topics)).collect();
    let queries: Vec<Vec<f32>> = (0..QUERIES).map(|_| clustered(&mut rng, &topics)).collect();
    evaluate("clustered", &vectors, &queries);

    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(6_000);
    let dir = std::env::var_os("CHALIE_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/models"));
    let embedder = match Embedder::load(&fetch::model_dir(&dir, "all-minilm-l6-v2")) {
        Ok(e) => e,
        Err(e) => {
            println!("minilm: skipped ({e})");
            return;
        }
    };
    let mut rng = SplitMix64(11);
    let texts: Vec<String> = (0..n + QUERIES).map(|_| sentence(&mut rng)).collect();
    let mut embedded = Vec::with_capacity(texts.len());
    for batch in texts.chunks(64) {
        let refs: Vec<&str> = batch.iter().map(String::as_str).collect();
        embedded.extend(embedder.embed(&refs).expect("embed"));
    }
    let queries = embedded.split_off(n);
    evaluate("minilm", &embedded, &queries);

    let data = std::env::var_os("CHALIE_DATA_DIR").map_or_else(|| PathBuf::from("/work/shared/data"), PathBuf::from);
    let sentences = real_sentences(&data);
    if sentences.is_empty() {
        println!("real: skipped (no data under {})", data.display());
        return;
    }
    let mut vectors = Vec::with_capacity(sentences.len());
    for batch in sentences.chunks(64) {
        let refs: Vec<&str> = batch.iter().map(String::as_str).collect();
        vectors.extend(embedder.embed(&refs).expect("embed"));
    }
    let (mut stored, mut queries) = (Vec::new(), Vec::new());
    for (i, v) in vectors.into_iter().enumerate() {
        if i % 97 == 0 { queries.push(v) } else { stored.push(v) }
    }
    evaluate("real", &stored, &queries);
}
