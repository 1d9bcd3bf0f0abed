//! Real all-MiniLM-L6-v2 embeddings of the shared data's sentences, and the million-row stores
//! mixed from them (`benches/recall_1m.rs` describes the data; `benches/turn.rs` seeds its 1M
//! store's vectors the same way).

#![allow(dead_code)] // each bench uses part of it

use std::path::{Path, PathBuf};
use std::time::Instant;

use chalie::SplitMix64;
use chalie::llm::local::embed::Embedder;
use chalie::llm::local::fetch;
use chalie::store::EMBEDDING_DIM;

/// Every this-many-th sentence is a held-out query.
pub const HOLD_OUT_EVERY: usize = 97;
/// Weight of the second real vector in a mixture.
pub const MIX_B: f32 = 0.35;
/// Half-width of each noise component of a mixture.
pub const NOISE: f32 = 0.03;

/// `target/bench-cache/`, beside the shared target's `tmp/`.
pub fn cache_dir() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent().unwrap_or(tmp).join("bench-cache")
}

pub fn unit(mut v: Vec<f32>) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(f32::EPSILON);
    v.iter_mut().for_each(|x| *x /= n);
    v
}

/// Every distinct sentence of the shared data, in file order.
pub fn real_sentences(dir: &Path) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    let read = |rel: &str| -> Vec<serde_json::Value> {
        std::fs::read_to_string(dir.join(rel))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    };
    let mut texts: Vec<String> = Vec::new();
    for d in read("snli/train_sample.jsonl") {
        texts.extend(["premise", "hypothesis"].iter().filter_map(|k| d[*k].as_str().map(String::from)));
    }
    for d in read("chatterbot/first_turns.jsonl") {
        texts.extend(d["text"].as_str().map(String::from));
    }
    for rel in ["chatterbot/topic_shift_concat.jsonl", "chitchat/topic_shift_dev.jsonl"] {
        for d in read(rel) {
            for u in d["utterances"].as_array().into_iter().flatten() {
                texts.extend(u["text"].as_str().map(String::from));
            }
        }
    }
    for t in texts {
        let t = t.trim().to_string();
        if !t.is_empty() && seen.insert(t.clone()) {
            out.push(t);
        }
    }
    out
}

/// The sentences and their embeddings, from the cache or embedded now.
pub fn embedded_sentences() -> (Vec<String>, Vec<Vec<f32>>) {
    let dir = cache_dir();
    std::fs::create_dir_all(&dir).expect("bench-cache dir");
    let (txt, bin) = (dir.join("minilm-real-v1.txt"), dir.join("minilm-real-v1.f32"));
    if let (Ok(t), Ok(b)) = (std::fs::read_to_string(&txt), std::fs::read(&bin)) {
        let sentences: Vec<String> = t.lines().map(String::from).collect();
        let floats: Vec<f32> = b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        if floats.len() == sentences.len() * EMBEDDING_DIM {
            return (sentences, floats.chunks_exact(EMBEDDING_DIM).map(<[f32]>::to_vec).collect());
        }
    }
    let data = std::env::var_os("CHALIE_DATA_DIR").map_or_else(|| PathBuf::from("/work/shared/data"), PathBuf::from);
    let sentences: Vec<String> = real_sentences(&data).into_iter().map(|s| s.replace('\n', " ")).collect();
    assert!(!sentences.is_empty(), "no sentences under {}", data.display());
    let embedder = embedder().expect("built-in embedding model");
    let started = Instant::now();
    let mut vectors = Vec::with_capacity(sentences.len());
    for batch in sentences.chunks(64) {
        let refs: Vec<&str> = batch.iter().map(String::as_str).collect();
        vectors.extend(embedder.embed(&refs).expect("embed"));
    }
    eprintln!("embedded {} sentences in {:.1} s", sentences.len(), started.elapsed().as_secs_f64());
    std::fs::write(&txt, sentences.join("\n")).expect("write sentences");
    std::fs::write(&bin, vectors.iter().flatten().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>())
        .expect("write vectors");
    (sentences, vectors)
}

/// Episode `i`'s vector and the index of the real sentence whose text it carries.
pub fn generated(real: &[Vec<f32>], i: usize) -> (Vec<f32>, usize) {
    let s = real.len();
    if i < s {
        return (real[i].clone(), i);
    }
    let mut rng = SplitMix64(i as u64);
    let (a, b) = (&real[i % s], &real[rng.below(s)]);
    let v = a.iter().zip(b).map(|(x, y)| x + MIX_B * y + NOISE * (rng.next_f64() as f32 * 2.0 - 1.0)).collect();
    (unit(v), i % s)
}

/// The ids (episode `i` is id `i + 1`) of the exact top `k` of the first `rows` generated
/// vectors by f32 cosine, for each query, in one pass over the vectors.
pub fn exact_top(real: &[Vec<f32>], rows: usize, queries: &[&Vec<f32>], k: usize) -> Vec<Vec<i64>> {
    let mut best: Vec<Vec<(f32, i64)>> = vec![Vec::with_capacity(k + 1); queries.len()];
    for i in 0..rows {
        let (v, _) = generated(real, i);
        for (q, top) in queries.iter().zip(best.iter_mut()) {
            let sim: f32 = q.iter().zip(&v).map(|(a, b)| a * b).sum();
            if top.len() < k || sim > top[top.len() - 1].0 {
                let at = top.partition_point(|e| e.0 >= sim);
                top.insert(at, (sim, i as i64 + 1));
                top.truncate(k);
            }
        }
    }
    best.into_iter().map(|t| t.into_iter().map(|e| e.1).collect()).collect()
}

/// The share of each query's exact top 10 (`exact`, from [`exact_top`]) that the episodes'
/// `VectorRepo::search` for `k` neighbours puts in its first 10.
pub fn share_found(repo: &chalie::store::VectorRepo, queries: &[&Vec<f32>], exact: &[Vec<i64>], k: usize) -> f64 {
    let found: usize = queries
        .iter()
        .zip(exact)
        .map(|(v, want)| {
            let got = repo.search(chalie::store::VecTable::Episodes, v, k).expect("search");
            got.iter().take(10).filter(|(id, _)| want.contains(id)).count()
        })
        .sum();
    found as f64 / (10 * queries.len()) as f64
}

/// The built-in embedding model (`CHALIE_MODELS_DIR`, else the manifest's `target/models`).
pub fn embedder() -> Result<Embedder, String> {
    let models = std::env::var_os("CHALIE_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/models"));
    Embedder::load(&fetch::model_dir(&models, "all-minilm-l6-v2")).map_err(|e| e.to_string())
}

/// The real pool (held-out sentences removed, texts beside vectors) and the held-out queries.
pub struct Split {
    pub texts: Vec<String>,
    pub real: Vec<Vec<f32>>,
    pub queries: Vec<(String, Vec<f32>)>,
}

pub fn split() -> Split {
    let (sentences, vectors) = embedded_sentences();
    let mut out = Split { texts: Vec::new(), real: Vec::new(), queries: Vec::new() };
    for (i, (t, v)) in sentences.into_iter().zip(vectors).enumerate() {
        if i % HOLD_OUT_EVERY == 0 {
            out.queries.push((t, v));
        } else {
            out.texts.push(t);
            out.real.push(v);
        }
    }
    out
}
