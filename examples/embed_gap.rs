//! How far the int8 embedder (the default) moves SNLI premise/hypothesis cosines from
//! candle's F32 BERT: the bar is every pair within 0.01. Prints the worst gap, a few
//! quantiles and the lowest cosine between a text's two vectors, for pairs `FROM..TO`
//! (default 600..1800: the quantization scheme was chosen on pairs 0–599).
//!
//! `cargo run --release --example embed_gap [FROM TO]`; reads
//! `/work/shared/data/snli/train_sample.jsonl` (or `CHALIE_DATA_DIR/snli/…`) and the model from
//! `CHALIE_MODELS_DIR` (default `target/models`), fetching it first if needed. SNLI is
//! CC BY-SA 4.0 (Bowman et al., 2015).

use std::path::PathBuf;

use anyhow::{Context, bail};
use chalie::llm::local::embed::Embedder;
use chalie::llm::local::fetch::{self, Fetcher};

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn main() -> anyhow::Result<()> {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse()).collect::<Result<_, _>>()?;
    let (from, to) = match args[..] {
        [] => (600, 1800),
        [from, to] if from < to => (from, to),
        _ => bail!("usage: embed_gap [FROM TO]"),
    };
    let data = std::env::var_os("CHALIE_DATA_DIR").map_or_else(|| PathBuf::from("/work/shared/data"), PathBuf::from);
    let path = data.join("snli/train_sample.jsonl");
    let raw = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let pairs: Vec<(String, String)> = raw
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| Some((v["premise"].as_str()?.to_string(), v["hypothesis"].as_str()?.to_string())))
        .skip(from)
        .take(to - from)
        .collect();
    if pairs.len() != to - from {
        bail!("{} has only {} pairs from {from}", path.display(), pairs.len());
    }

    let models = std::env::var_os("CHALIE_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/models"));
    Fetcher::default().fetch(&models, &mut |_| {})?;
    let dir = fetch::model_dir(&models, "all-minilm-l6-v2");
    let (int8, f32_ref) = (Embedder::load(&dir)?, Embedder::load_f32(&dir)?);

    let texts: Vec<&str> = pairs.iter().flat_map(|(p, h)| [p.as_str(), h.as_str()]).collect();
    let (mut exact, mut quantized) = (Vec::new(), Vec::new());
    for chunk in texts.chunks(64) {
        exact.extend(f32_ref.embed(chunk)?);
        quantized.extend(int8.embed(chunk)?);
    }
    let mut gaps: Vec<(f32, usize)> = (0..pairs.len())
        .map(|i| {
            let (a, b) = (2 * i, 2 * i + 1);
            ((dot(&exact[a], &exact[b]) - dot(&quantized[a], &quantized[b])).abs(), from + i)
        })
        .collect();
    gaps.sort_by(|a, b| b.0.total_cmp(&a.0));
    let twin = exact.iter().zip(&quantized).map(|(e, q)| dot(e, q)).fold(1f32, f32::min);
    let mean = gaps.iter().map(|g| g.0).sum::<f32>() / gaps.len() as f32;
    println!(
        "pairs {from}..{to}: worst gap {:.4} (pair {}), 2nd {:.4}, 10th {:.4}, mean {mean:.5}; lowest twin cosine {twin:.5}",
        gaps[0].0,
        gaps[0].1,
        gaps.get(1).map_or(0.0, |g| g.0),
        gaps.get(9).map_or(0.0, |g| g.0),
    );
    println!("{}", if gaps[0].0 <= 0.01 { "within the 0.01 bar" } else { "OVER the 0.01 bar" });
    Ok(())
}
