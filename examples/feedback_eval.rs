//! How often the post-routing feedback detector (docs/cognition.md §13.5) fires on real human
//! chat, where nobody is correcting a bot: in the chitchat sessions, each line that answers the
//! other speaker is read as the "next message" after that speaker's "reply". Nearly every label
//! there should be `correct_route`; anything else is printed so it can be read and judged.
//!
//! Sessions with an even index calibrate (the cue lists were tuned by reading their hits); odd
//! ones report. `cargo run --example feedback_eval [DATA.jsonl] [--show]`, default
//! `../shared/data/chitchat/topic_shift_dev.jsonl`.

use anyhow::{Context, Result};
use chalie::cognition::regulator::feedback::{Exchange, FeedbackLabel, detect};
use chalie::cognition::regulator::keywords::{cluster, task_bag};
use chalie::vocab::Mode;
use std::collections::BTreeMap;

const DATA_REL: &str = "../shared/data/chitchat/topic_shift_dev.jsonl";
const DATA_ABS: &str = "/work/shared/data/chitchat/topic_shift_dev.jsonl";

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let show = args.iter().any(|a| a == "--show");
    let path = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .cloned()
        .unwrap_or_else(|| if std::path::Path::new(DATA_REL).exists() { DATA_REL } else { DATA_ABS }.into());
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
    for (half, parity) in [("calibration (even sessions)", 0), ("report (odd sessions)", 1)] {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        let mut total = 0usize;
        // §13.5's implicit window, were every follow-up quick: same cluster as the last message.
        let mut implicit = 0usize;
        for (i, line) in text.lines().enumerate().filter(|(i, _)| i % 2 == parity) {
            let v: serde_json::Value = serde_json::from_str(line).with_context(|| format!("line {}", i + 1))?;
            let utts: Vec<(String, String)> = v["utterances"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|u| {
                    (u["speaker"].as_str().unwrap_or("").to_string(), u["text"].as_str().unwrap_or("").to_string())
                })
                .collect();
            // A speaker's line, the other's answer, then the first speaker's next line.
            for w in utts.windows(3) {
                if w[0].0 != w[2].0 || w[0].0 == w[1].0 {
                    continue;
                }
                let fb = detect(Exchange { user: &w[0].1, mode: Mode::Respond, next: &w[2].1 });
                total += 1;
                let c = cluster(&task_bag(&w[2].1));
                implicit += usize::from(!c.is_empty() && c == cluster(&task_bag(&w[0].1)));
                *counts.entry(fb.label.as_str()).or_default() += 1;
                if show && fb.label != FeedbackLabel::CorrectRoute {
                    println!("  [{}] {:?} | {:?} -> {:?}", fb.label.as_str(), fb.cue, w[1].1, w[2].1);
                }
            }
        }
        println!(
            "{half}: implicit window would file {implicit} corrections ({:.2} % of exchanges)",
            100.0 * implicit as f64 / total.max(1) as f64
        );
        let fired = total - counts.get("correct_route").copied().unwrap_or(0);
        println!(
            "{half}: {total} exchanges, {fired} not correct_route ({:.2} %): {counts:?}",
            100.0 * fired as f64 / total.max(1) as f64
        );
    }
    Ok(())
}
