//! The first ten minutes of a new user, scored: 40 everyday turns (greetings, introductions,
//! questions about what the user told us, thanks, small talk) from `tests/data/everyday_turns.jsonl`,
//! run through the real binary with `ask --json --batch`, one fresh data dir per conversation,
//! on whatever models the binary resolves (the built-in ones when nothing is configured).
//!
//! A reply is accepted when it holds one word of every `accept_all` group, none of
//! `reject_any`, and — for greetings, thanks and introductions — stays under 300 characters
//! (a paragraph in answer to "thanks!" is not what a person wants). The rules stand in for a
//! person's judgement and are deliberately loose on wording; every reply is printed so the
//! judgement can be checked by eye.
//!
//! `cargo run --example everyday_eval -- [--data FILE] [--bin PATH] [--models DIR] [--out FILE]`
//! (`--bin` defaults to target/debug/chalie-tui; `--out` saves the per-turn results as JSONL).

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

/// The turns the templates were written against; `--data tests/data/everyday_turns_heldout.jsonl`
/// holds 23 more, phrased differently and written before any result on them was seen.
const DATA: &str = "tests/data/everyday_turns.jsonl";
/// Longest acceptable reply to a greeting, thanks or introduction.
const SHORT_REPLY_CHARS: usize = 300;

#[derive(Deserialize)]
struct Turn {
    conversation: String,
    category: String,
    text: String,
    accept_all: Vec<Vec<String>>,
    reject_any: Vec<String>,
}

/// Whether a person would take `reply` for `turn`, and why not.
fn judge(turn: &Turn, reply: &str) -> Result<(), String> {
    let lower = reply.to_lowercase().replace('\u{2019}', "'");
    if lower.trim().is_empty() {
        return Err("no reply".into());
    }
    for group in &turn.accept_all {
        if !group.iter().any(|w| lower.contains(w.as_str())) {
            return Err(format!("none of {group:?}"));
        }
    }
    if let Some(w) = turn.reject_any.iter().find(|w| lower.contains(w.as_str())) {
        return Err(format!("says {w:?}"));
    }
    if matches!(turn.category.as_str(), "greeting" | "thanks" | "identity") && reply.chars().count() > SHORT_REPLY_CHARS
    {
        return Err(format!("{} characters", reply.chars().count()));
    }
    Ok(())
}

fn main() -> Result<()> {
    let mut bin = PathBuf::from("target/debug/chalie-tui");
    let mut models = PathBuf::from("target/models");
    let mut out: Option<PathBuf> = None;
    let mut data = PathBuf::from(DATA);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().with_context(|| format!("{a} needs a value"));
        match a.as_str() {
            "--bin" => bin = value()?.into(),
            "--models" => models = value()?.into(),
            "--out" => out = Some(value()?.into()),
            "--data" => data = value()?.into(),
            other => bail!("unknown argument {other}"),
        }
    }
    let turns: Vec<Turn> = std::fs::read_to_string(&data)
        .with_context(|| format!("read {}", data.display()))?
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    let mut conversations: BTreeMap<&str, Vec<&Turn>> = BTreeMap::new();
    for t in &turns {
        conversations.entry(&t.conversation).or_default().push(t);
    }

    let scratch = std::env::temp_dir().join(format!("chalie-everyday-{}", std::process::id()));
    let mut results = Vec::new();
    for (id, conv) in &conversations {
        let data = scratch.join(id);
        std::fs::create_dir_all(&data)?;
        let batch = data.join("batch.txt");
        std::fs::write(&batch, conv.iter().map(|t| t.text.as_str()).collect::<Vec<_>>().join("\n"))?;
        let output = Command::new(&bin)
            .args(["ask", "--json", "--batch"])
            .arg(&batch)
            .env("CHALIE_DATA_DIR", &data)
            .env("CHALIE_CONFIG", data.join("config.toml"))
            .env("CHALIE_MODELS_DIR", std::fs::canonicalize(&models).unwrap_or(models.clone()))
            .output()
            .with_context(|| format!("run {}", bin.display()))?;
        let reports: Vec<Value> =
            String::from_utf8_lossy(&output.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        if reports.len() != conv.len() {
            bail!(
                "{id}: {} replies for {} messages; stderr:\n{}",
                reports.len(),
                conv.len(),
                String::from_utf8_lossy(&output.stderr)
            );
        }
        for (t, r) in conv.iter().zip(reports) {
            let reply = r["response"].as_str().unwrap_or_default().to_string();
            let verdict = judge(t, &reply);
            results.push((t, r, reply, verdict));
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);

    let mut by_cat: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut by_source: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut saved = Vec::new();
    for (t, r, reply, verdict) in &results {
        let source = r["reply_source"].as_str().unwrap_or("(not recorded)").to_string();
        let ok = verdict.is_ok();
        let mark = if ok { "✓" } else { "✗" };
        println!("{mark} [{}] {:<11} {:<8} {:?}", t.conversation, t.category, source, t.text);
        println!("      → {}", reply.replace('\n', " "));
        if let Err(why) = verdict {
            println!("      ({why})");
        }
        tally(&mut by_cat, &t.category, ok);
        tally(&mut by_source, &source, ok);
        saved.push(json!({
            "conversation": t.conversation, "category": t.category, "text": t.text, "mode": r["mode"],
            "reply_source": source, "reply": reply, "accepted": ok,
        }));
    }
    let accepted = results.iter().filter(|r| r.3.is_ok()).count();
    println!("\naccepted {accepted}/{} ({:.0}%)", results.len(), 100.0 * accepted as f64 / results.len() as f64);
    for (name, (ok, n)) in by_cat.iter().chain(&by_source) {
        println!("  {name:<14} {ok}/{n}");
    }
    if let Some(path) = out {
        let lines: Vec<String> = saved.iter().map(Value::to_string).collect();
        std::fs::write(&path, lines.join("\n") + "\n")?;
    }
    Ok(())
}

/// Count one verdict under `key`: (accepted, total).
fn tally(map: &mut BTreeMap<String, (usize, usize)>, key: &str, ok: bool) {
    let e = map.entry(key.to_string()).or_insert((0, 0));
    e.0 += usize::from(ok);
    e.1 += 1;
}
