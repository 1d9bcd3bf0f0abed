//! How often a grown node's name recurs across messages (docs/cognition.md §9.4.5): over the
//! chit-chat dev sessions, every line that passes neurogenesis's text gates is named by
//! `grow::grown_name`; a name given to two or more lines is a node that messages come back to.
//! Printed beside the old scheme (the whole normalised line as the name).
//!
//! `cargo run --example graph_names [-- --calibration] [PATH]` (default
//! /work/shared/data/chitchat/topic_shift_dev.jsonl). Sessions with an even number are the
//! calibration half (the chat fillers in `grow::NOT_NAMING` beyond the first draft were taken
//! from its most frequent names); the figures quoted are over the odd half, the default.

use chalie::memory::graph::grow::{self, Novelty};
use std::collections::HashMap;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let calibration = args.iter().any(|a| a == "--calibration");
    let path = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .cloned()
        .unwrap_or_else(|| "/work/shared/data/chitchat/topic_shift_dev.jsonl".into());
    let text = std::fs::read_to_string(&path)?;
    let (mut lines, mut named, mut sessions) = (0usize, 0usize, 0usize);
    let mut by_name: HashMap<String, usize> = HashMap::new();
    let mut by_line: HashMap<String, usize> = HashMap::new();
    for row in text.lines() {
        let v: serde_json::Value = serde_json::from_str(row)?;
        let id = v["session_id"].as_str().unwrap_or_default();
        let even = id.rsplit('-').next().and_then(|n| n.parse::<u32>().ok()).is_some_and(|n| n % 2 == 0);
        if even != calibration {
            continue;
        }
        sessions += 1;
        for u in v["utterances"].as_array().into_iter().flatten() {
            let norm = grow::normalise(u["text"].as_str().unwrap_or_default());
            if grow::novelty(&norm, None) == Novelty::Blocked {
                continue;
            }
            lines += 1;
            *by_line.entry(norm.clone()).or_default() += 1;
            if let Some(n) = grow::grown_name(&norm) {
                named += 1;
                *by_name.entry(n).or_default() += 1;
            }
        }
    }
    let recurring = |m: &HashMap<String, usize>| {
        let nodes = m.values().filter(|&&c| c >= 2).count();
        let lines: usize = m.values().filter(|&&c| c >= 2).sum();
        (m.len(), nodes, lines)
    };
    let (n_names, n_rec, l_rec) = recurring(&by_name);
    let (o_names, o_rec, o_lines) = recurring(&by_line);
    println!("{sessions} sessions, {lines} lines past the text gates, {named} named ({:.1}%)", pct(named, lines));
    println!(
        "content phrase: {n_names} distinct names; {n_rec} recur, carrying {l_rec} lines ({:.1}% of named)",
        pct(l_rec, named)
    );
    println!(
        "whole line:     {o_names} distinct names; {o_rec} recur, carrying {o_lines} lines ({:.1}% of lines)",
        pct(o_lines, lines)
    );
    let mut top: Vec<(&String, &usize)> = by_name.iter().collect();
    top.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let shown: Vec<String> =
        top.iter().take(if calibration { 80 } else { 15 }).map(|(n, c)| format!("{n} {c}")).collect();
    println!("most named: {}", shown.join(", "));
    Ok(())
}

fn pct(a: usize, b: usize) -> f64 {
    100.0 * a as f64 / b.max(1) as f64
}
