//! How precise the uncertainty engine's deterministic rules are (docs/cognition.md §10.4) on SNLI
//! pairs: the premise is the stored memory, the hypothesis the new statement. A "record" is a
//! rules verdict that is neither compatible nor figurative.
//!
//! Calibration uses the even lines of the file (0-based), the report the odd ones: the sweep
//! prints, for each negation-overlap threshold, how often a record opens on entailment and
//! neutral pairs (the bound is 5 %) and precision and recall on the contradiction pairs; the
//! report then scores the committed `rules::NEGATION_OVERLAP` on the held-out half.
//!
//! `cargo run --example uncertainty_eval [DATA.jsonl]` (default
//! `../shared/data/snli/train_sample.jsonl`). SNLI is CC BY-SA 4.0 (Bowman et al., 2015).

use anyhow::{Context, Result};
use chalie::memory::uncertainty::rules::{NEGATION_OVERLAP, compare_texts};
use std::path::PathBuf;

const DATA_REL: &str = "../shared/data/snli/train_sample.jsonl";
const DATA_ABS: &str = "/work/shared/data/snli/train_sample.jsonl";

struct Pair {
    premise: String,
    hypothesis: String,
    contradiction: bool,
}

#[derive(Default)]
struct Score {
    compatible: usize,
    fired_on_compatible: usize,
    contradictions: usize,
    caught: usize,
}

impl Score {
    fn of(pairs: &[&Pair], overlap: f64) -> Score {
        let mut s = Score::default();
        for p in pairs {
            let hit = compare_texts(&p.premise, &p.hypothesis, overlap).is_some_and(|v| v.classification.is_hit());
            if p.contradiction {
                s.contradictions += 1;
                s.caught += usize::from(hit);
            } else {
                s.compatible += 1;
                s.fired_on_compatible += usize::from(hit);
            }
        }
        s
    }

    fn line(&self) -> String {
        let pct = |a: usize, b: usize| if b == 0 { 0.0 } else { 100.0 * a as f64 / b as f64 };
        let fired = self.caught + self.fired_on_compatible;
        format!(
            "records on entailment+neutral {}/{} = {:.2} %; contradiction precision {}/{} = {:.1} %, recall {}/{} = {:.1} %",
            self.fired_on_compatible,
            self.compatible,
            pct(self.fired_on_compatible, self.compatible),
            self.caught,
            fired,
            pct(self.caught, fired),
            self.caught,
            self.contradictions,
            pct(self.caught, self.contradictions)
        )
    }
}

fn main() -> Result<()> {
    let path = std::env::args().nth(1).map(PathBuf::from).unwrap_or_else(|| {
        let rel = PathBuf::from(DATA_REL);
        if rel.exists() { rel } else { PathBuf::from(DATA_ABS) }
    });
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let mut pairs = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line)?;
        pairs.push(Pair {
            premise: v["premise"].as_str().unwrap_or_default().to_string(),
            hypothesis: v["hypothesis"].as_str().unwrap_or_default().to_string(),
            contradiction: v["label"] == "contradiction",
        });
    }
    let even: Vec<&Pair> = pairs.iter().step_by(2).collect();
    let odd: Vec<&Pair> = pairs.iter().skip(1).step_by(2).collect();
    println!("{}: {} pairs ({} calibration, {} report)", path.display(), pairs.len(), even.len(), odd.len());
    println!("calibration (even lines), negation-overlap sweep:");
    for t in [0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 1.0] {
        println!("  {t:.2}: {}", Score::of(&even, t).line());
    }
    println!("report (odd lines), NEGATION_OVERLAP = {NEGATION_OVERLAP}:");
    println!("  {}", Score::of(&odd, NEGATION_OVERLAP).line());
    Ok(())
}
