//! How trustworthy the scope-drift warning (docs/cognition.md §13.2) is on real text: a message
//! and the line that answers it, labelled on-topic when both lie in one conversation and
//! off-topic when they straddle a join between two.
//!
//! - chitchat (real human chat): each line and the other speaker's next line within a
//!   conversation are on-topic; the last line before a join and the first after it are off-topic.
//! - chatterbot: each user line and the bot's answer are on-topic; the same user line with the
//!   bot's answer at the same place in the session's next segment is off-topic.
//!
//! Sessions with an even index calibrate the similarity threshold (the one with the best F1 of
//! "warned" against "off-topic"); odd sessions report, beside the seed's keyword-only rule.
//! Only pairs whose keyword drift reaches the threshold are embedded (the others never warn),
//! as in a turn. Needs the built-in all-MiniLM-L6-v2 (`CHALIE_MODELS_DIR` or `target/models`).
//!
//! `cargo run --example drift_eval [CHITCHAT.jsonl CHATTERBOT.jsonl]`

use anyhow::{Context, Result};
use chalie::cognition::regulator::keywords::task_bag;
use chalie::cognition::regulator::scope::{self, DEFAULT_SIMILARITY, DEFAULT_THRESHOLD, cosine, drift, warns};
use chalie::llm::local::embed::Embedder;
use chalie::llm::local::fetch;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// One labelled pair: its set, the session's half, the message, the answer, off-topic or not.
struct Pair {
    set: &'static str,
    odd: bool,
    request: String,
    reply: String,
    off: bool,
    /// Keyword drift (None: a bag was empty).
    drift: Option<scope::Drift>,
    similarity: Option<f64>,
}

fn data(rel: &str, abs: &str) -> String {
    if Path::new(rel).exists() { rel.into() } else { abs.into() }
}

fn utterances(v: &serde_json::Value) -> Vec<(String, String, i64)> {
    v["utterances"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|u| {
            (
                u["speaker"].as_str().unwrap_or("").to_string(),
                u["text"].as_str().unwrap_or("").to_string(),
                u["segment"].as_i64().unwrap_or(0),
            )
        })
        .collect()
}

fn chitchat(text: &str, out: &mut Vec<Pair>) -> Result<()> {
    for (i, line) in text.lines().enumerate() {
        let v: serde_json::Value = serde_json::from_str(line).with_context(|| format!("chitchat line {}", i + 1))?;
        let u = utterances(&v);
        for w in u.windows(2) {
            let off = w[0].2 != w[1].2;
            if off || w[0].0 != w[1].0 {
                out.push(pair("chitchat", i, &w[0].1, &w[1].1, off));
            }
        }
    }
    Ok(())
}

fn chatterbot(text: &str, out: &mut Vec<Pair>) -> Result<()> {
    for (i, line) in text.lines().enumerate() {
        let v: serde_json::Value = serde_json::from_str(line).with_context(|| format!("chatterbot line {}", i + 1))?;
        let u = utterances(&v);
        let segments = u.iter().map(|x| x.2).max().unwrap_or(0) + 1;
        // Per segment, its user→bot exchanges in order.
        let mut exchanges: Vec<Vec<(String, String)>> = vec![Vec::new(); segments as usize];
        for w in u.windows(2) {
            if w[0].0 == "user" && w[1].0 == "bot" && w[0].2 == w[1].2 {
                exchanges[w[0].2 as usize].push((w[0].1.clone(), w[1].1.clone()));
            }
        }
        for (s, ex) in exchanges.iter().enumerate() {
            let other = &exchanges[(s + 1) % exchanges.len()];
            for (k, (req, rep)) in ex.iter().enumerate() {
                out.push(pair("chatterbot", i, req, rep, false));
                if let Some((_, foreign)) = other.get(k % other.len().max(1)) {
                    out.push(pair("chatterbot", i, req, foreign, true));
                }
            }
        }
    }
    Ok(())
}

fn pair(set: &'static str, session: usize, request: &str, reply: &str, off: bool) -> Pair {
    let drift = drift(&task_bag(request), reply);
    Pair { set, odd: session % 2 == 1, request: request.into(), reply: reply.into(), off, drift, similarity: None }
}

#[derive(Default)]
struct Counts {
    tp: usize,
    fp: usize,
    fn_: usize,
    on: usize,
}

impl Counts {
    fn f1(&self) -> f64 {
        let (p, r) = (self.precision(), self.recall());
        if p + r == 0.0 { 0.0 } else { 2.0 * p * r / (p + r) }
    }
    fn precision(&self) -> f64 {
        self.tp as f64 / (self.tp + self.fp).max(1) as f64
    }
    fn recall(&self) -> f64 {
        self.tp as f64 / (self.tp + self.fn_).max(1) as f64
    }
    fn false_warnings(&self) -> f64 {
        self.fp as f64 / self.on.max(1) as f64
    }
    fn line(&self) -> String {
        format!(
            "precision {:.3}  recall {:.3}  F1 {:.3}  false warnings {:.4} ({} of {} on-topic)  warned {}",
            self.precision(),
            self.recall(),
            self.f1(),
            self.false_warnings(),
            self.fp,
            self.on,
            self.tp + self.fp
        )
    }
}

fn count<'a>(pairs: impl Iterator<Item = &'a Pair>, warned: impl Fn(&Pair) -> bool) -> Counts {
    let mut c = Counts::default();
    for p in pairs {
        let w = warned(p);
        match (w, p.off) {
            (true, true) => c.tp += 1,
            (true, false) => c.fp += 1,
            (false, true) => c.fn_ += 1,
            _ => {}
        }
        c.on += usize::from(!p.off);
    }
    c
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let chit = args.first().cloned().unwrap_or_else(|| {
        data("../shared/data/chitchat/topic_shift_dev.jsonl", "/work/shared/data/chitchat/topic_shift_dev.jsonl")
    });
    let bot = args.get(1).cloned().unwrap_or_else(|| {
        data(
            "../shared/data/chatterbot/topic_shift_concat.jsonl",
            "/work/shared/data/chatterbot/topic_shift_concat.jsonl",
        )
    });
    let mut pairs = Vec::new();
    chitchat(&std::fs::read_to_string(&chit).with_context(|| format!("reading {chit}"))?, &mut pairs)?;
    chatterbot(&std::fs::read_to_string(&bot).with_context(|| format!("reading {bot}"))?, &mut pairs)?;

    let dir = std::env::var_os("CHALIE_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/models"));
    let embedder = Embedder::load(&fetch::model_dir(&dir, "all-minilm-l6-v2"))
        .map_err(|e| anyhow::anyhow!("embedding model unavailable: {e}"))?;

    // What one more embed call costs a turn: one reply at a time, as the pipeline does.
    let mut times: Vec<f64> = Vec::new();
    for p in pairs.iter().filter(|p| p.reply.len() > 40).take(60) {
        let t = Instant::now();
        embedder.embed(&[p.reply.as_str()]).map_err(|e| anyhow::anyhow!("{e}"))?;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    println!("one reply embedded alone: median {:.2} ms over {} replies", times[times.len() / 2], times.len());

    let candidates: Vec<usize> =
        (0..pairs.len()).filter(|&i| pairs[i].drift.as_ref().is_some_and(|d| d.score >= DEFAULT_THRESHOLD)).collect();
    let texts: Vec<&str> =
        candidates.iter().flat_map(|&i| [pairs[i].request.as_str(), pairs[i].reply.as_str()]).collect();
    let vectors = embedder.embed(&texts).map_err(|e| anyhow::anyhow!("{e}"))?;
    for (k, &i) in candidates.iter().enumerate() {
        pairs[i].similarity = cosine(&vectors[2 * k], &vectors[2 * k + 1]);
    }

    let keyword_only = |p: &Pair| p.drift.as_ref().is_some_and(|d| d.score >= DEFAULT_THRESHOLD);
    let combined =
        |t: f64| move |p: &Pair| p.drift.as_ref().is_some_and(|d| warns(d, p.similarity, DEFAULT_THRESHOLD, t));

    let calib = || pairs.iter().filter(|p| !p.odd);
    let mut best = (f64::NEG_INFINITY, DEFAULT_SIMILARITY);
    for step in 0..=36 {
        let t = -0.1 + 0.025 * f64::from(step);
        let c = count(calib(), combined(t));
        let f1 = c.f1();
        if step % 4 == 1 {
            println!("  calibration sweep {t:.3}: {}", c.line());
        }
        if f1 > best.0 {
            best = (f1, t);
        }
    }
    println!(
        "calibration (even sessions): {} pairs, {} off-topic; best similarity threshold {:.3} (F1 {:.3}); configured default {:.3}",
        calib().count(),
        calib().filter(|p| p.off).count(),
        best.1,
        best.0,
        DEFAULT_SIMILARITY
    );
    println!("  keyword only ≥ {DEFAULT_THRESHOLD}: {}", count(calib(), keyword_only).line());
    println!("  combined (default):    {}", count(calib(), combined(DEFAULT_SIMILARITY)).line());
    for set in ["chitchat", "chatterbot", "both"] {
        let report = || pairs.iter().filter(|p| p.odd && (set == "both" || p.set == set));
        println!(
            "report (odd sessions) {set}: {} pairs, {} off-topic",
            report().count(),
            report().filter(|p| p.off).count()
        );
        println!("  keyword only ≥ {DEFAULT_THRESHOLD}: {}", count(report(), keyword_only).line());
        println!(
            "  combined (default {:.3}): {}",
            DEFAULT_SIMILARITY,
            count(report(), combined(DEFAULT_SIMILARITY)).line()
        );
    }
    let hand = [
        ("Tell me something about space", "A short fact about the moon: it drifts 3.8 cm from Earth each year."),
        ("Tell me something about space", "Here is a recipe for banana bread with walnuts and butter."),
    ];
    for (req, rep) in hand {
        let v = embedder.embed(&[req, rep]).map_err(|e| anyhow::anyhow!("{e}"))?;
        let d = scope::drift(&task_bag(req), rep).map_or(0.0, |d| d.score);
        println!("  {req:?} -> {rep:?}: drift {d:.2}, cosine {:.3}", cosine(&v[0], &v[1]).unwrap_or(0.0));
    }
    Ok(())
}
