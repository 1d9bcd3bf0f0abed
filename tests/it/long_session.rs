//! Long sessions (issue 23, item 6): many turns through `ask --batch` against the scripted
//! endpoint, one process. The memory the process holds once warmed up must stay flat, and the
//! time per turn must not grow with the history; the test reports the slope of the time per
//! turn (least squares, from the session log's timestamps) and the database and log bytes
//! each turn adds.
//!
//! The normal run does [`SHORT_TURNS`]; `CHALIE_LONG_TURNS` sets the length (scripts/soak.sh
//! runs 10,000).

use crate::support::bin::{command, text, write_double_config};
use crate::support::openai_double::{Double, Reply};
use chrono::{DateTime, Utc};
use serde_json::Value;
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;

const SHORT_TURNS: usize = 300;

/// Kilobytes resident, from /proc (Linux only; `None` elsewhere or once the process is gone):
/// (all, anonymous). The rest is file pages, which the store's memory map of the database
/// (`mmap_size`) adds to as the file grows: page cache the kernel shares and can drop, not
/// memory the program holds. Anonymous pages are the heap, where a leak would show.
fn rss_kb(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| -> Option<u64> {
        status.lines().find_map(|l| l.strip_prefix(name)).and_then(|v| v.split_whitespace().next()?.parse().ok())
    };
    Some((field("VmRSS:")?, field("RssAnon:")?))
}

fn bytes_under(path: &Path) -> u64 {
    let Ok(meta) = std::fs::metadata(path) else { return 0 };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path).map_or(0, |d| d.flatten().map(|e| bytes_under(&e.path())).sum())
}

/// Milliseconds per turn, in the order the turns were taken, from the session log.
fn durations(dir: &Path) -> Vec<f64> {
    let mut start: HashMap<String, DateTime<Utc>> = HashMap::new();
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir.join("sessions")) else { return out };
    for entry in entries.flatten() {
        let bytes = std::fs::read(entry.path()).unwrap_or_default();
        for line in String::from_utf8_lossy(&bytes).lines() {
            let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
            let (Some(ts), Some(ex)) = (v["ts"].as_str(), v["exchange_id"].as_str()) else { continue };
            let Ok(ts) = ts.parse::<DateTime<Utc>>() else { continue };
            match v["type"].as_str() {
                Some("user_message") => {
                    start.insert(ex.to_string(), ts);
                }
                Some("reply_done") => {
                    if let Some(s) = start.get(ex) {
                        out.push((ts - *s).num_microseconds().unwrap_or(0) as f64 / 1000.0);
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// Least-squares slope of `ys` against their index.
fn slope(ys: &[f64]) -> f64 {
    let n = ys.len() as f64;
    if n < 2.0 {
        return 0.0;
    }
    let mean_x = (n - 1.0) / 2.0;
    let mean_y = ys.iter().sum::<f64>() / n;
    let (mut num, mut den) = (0.0, 0.0);
    for (i, y) in ys.iter().enumerate() {
        let dx = i as f64 - mean_x;
        num += dx * (y - mean_y);
        den += dx * dx;
    }
    num / den
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

#[test]
fn slope_is_a_least_squares_fit() {
    assert!((slope(&[1.0, 3.0, 5.0, 7.0]) - 2.0).abs() < 1e-9);
    assert!(slope(&[4.0, 4.0, 4.0]).abs() < 1e-9);
}

#[test]
fn a_long_session_holds_flat_memory_and_time_per_turn() {
    let turns = std::env::var("CHALIE_LONG_TURNS").ok().and_then(|v| v.parse().ok()).unwrap_or(SHORT_TURNS);
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    // More replies than turns: a turn may ask several times (a tie-break, a clarification, the
    // graph router once per activation step, the critic).
    let replies =
        (0..turns * 8).map(|i| Reply::text(&format!("Here is answer number {i}, short and plain."))).collect();
    let double = rt.block_on(Double::start(replies));
    write_double_config(dir.path(), &double.base_url());
    let lines: Vec<String> = (0..turns)
        .map(|i| match i % 4 {
            0 => format!("what is {i} times {}?", i % 17),
            1 => format!("I went for a walk number {i} by the river today"),
            2 => format!("tell me something about the number {i}"),
            _ => format!("note {i}: the weather was mild"),
        })
        .collect();
    let batch = dir.path().join("batch.txt");
    std::fs::write(&batch, lines.join("\n")).unwrap();
    let mut child = command(dir.path())
        .args(["ask", "--json", "--batch"])
        .arg(&batch)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let stdout = child.stdout.take().unwrap();
    // (turn, RSS) after each reply, and the store's size a tenth of the way in (after warm-up).
    let mut rss = Vec::new();
    let mut done = 0usize;
    let mut failed = Vec::new();
    let warm = (turns / 10).max(1);
    let mut warm_bytes = (0, 0);
    // Each turn's own stage timings, to say which stage grows when the whole turn does.
    let mut stages: Vec<HashMap<String, f64>> = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        if let Ok(report) = serde_json::from_str::<Value>(&line) {
            done += 1;
            if let Some(t) = report["timings_ms"].as_object() {
                stages.push(t.iter().filter_map(|(k, v)| Some((k.clone(), v.as_f64()?))).collect());
            }
            if let Some(why) = report["failed"].as_str() {
                failed.push(format!("turn {done}: {why}"));
            }
            if let Some(kb) = rss_kb(pid) {
                rss.push((done, kb));
            }
            if done == warm {
                warm_bytes = (db_bytes(dir.path()), bytes_under(&dir.path().join("sessions")));
            }
        }
    }
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    // Exit 1 is a turn that failed (counted below); anything else is a crash.
    let panics = usize::from(stderr.contains("panicked") || out.status.code().is_none_or(|c| c > 1));
    let losses = turns - done;

    let times = durations(dir.path());
    let after_warm: Vec<f64> = times.iter().skip(warm).copied().collect();
    let per_turn_slope = slope(&after_warm);
    let third = after_warm.len() / 3;
    let (first, last) = (median(&after_warm[..third]), median(&after_warm[after_warm.len() - third..]));
    let rss_after: Vec<(u64, u64)> = rss.iter().filter(|(t, _)| *t >= warm).map(|(_, kb)| *kb).collect();
    let (rss_warm, anon_warm) = rss_after.first().copied().unwrap_or((0, 0));
    let (rss_end, anon_end) = rss_after.last().copied().unwrap_or((0, 0));
    let rss_slope = slope(&rss_after.iter().map(|kb| kb.0 as f64).collect::<Vec<_>>());
    let anon_slope = slope(&rss_after.iter().map(|kb| kb.1 as f64).collect::<Vec<_>>());
    let counted = (turns - warm).max(1) as f64;
    let db_growth = (db_bytes(dir.path()).saturating_sub(warm_bytes.0)) as f64 / counted;
    let log_growth = (bytes_under(&dir.path().join("sessions")).saturating_sub(warm_bytes.1)) as f64 / counted;
    println!(
        "long_session: runs={turns} faults=0 losses={losses} panics={panics} warmup={warm} \
         rss_kb={rss_warm}->{rss_end} rss_slope_kb_per_turn={rss_slope:.2} \
         anon_kb={anon_warm}->{anon_end} anon_slope_kb_per_turn={anon_slope:.3} \
         turn_ms_median={:.1} first_third_ms={first:.1} last_third_ms={last:.1} slope_ms_per_turn={per_turn_slope:.4} \
         db_bytes_per_turn={db_growth:.0} log_bytes_per_turn={log_growth:.0} failed_turns={}",
        median(&after_warm),
        failed.len()
    );
    println!("long_session stages (median ms, first third -> last third): {}", stage_growth(&stages, warm));
    println!("long_session failed turns: {:?}", failed.iter().take(5).collect::<Vec<_>>());
    assert_eq!((losses, panics), (0, 0), "{stderr}");
    // With a model that always answers, a failed turn is a finding (the long form has met one
    // in 3,000 turns, not yet explained); the short form must have none.
    if turns <= SHORT_TURNS {
        assert_eq!(failed, Vec::<String>::new());
    }
    assert_eq!(times.len(), turns, "every turn is timed in the session log");
    // Flat: the heap (anonymous memory) no more than a quarter above its warmed-up size plus
    // 8 MB (a leak of a reply per turn would be far past it on a long run). VmRSS is not the
    // measure: it also counts the pages read of the memory-mapped database, which grows by
    // design (7.7 kB a turn) and which the kernel drops under pressure; 10k turns took it from
    // 78 to 152 MB while the heap went from 24 to 32 MB.
    assert!(anon_end <= anon_warm + anon_warm / 4 + 8 * 1024, "the heap grew: {anon_warm} kB -> {anon_end} kB");
    // Time per turn: the last third no slower than three times the first (medians, after
    // warm-up; loose, since other processes share the machine).
    assert!(last <= 3.0 * first + 20.0, "turns slowed down: {first:.1} ms -> {last:.1} ms");
}

/// Per stage, the median time of the first and last thirds of the turns after warm-up, the
/// stages that grew most first.
fn stage_growth(stages: &[HashMap<String, f64>], warm: usize) -> String {
    let after = stages.get(warm..).unwrap_or_default();
    let third = after.len() / 3;
    if third == 0 {
        return String::new();
    }
    let mut names: Vec<&String> = after.iter().flat_map(|m| m.keys()).collect();
    names.sort();
    names.dedup();
    let of = |part: &[HashMap<String, f64>], name: &str| {
        median(&part.iter().map(|m| m.get(name).copied().unwrap_or(0.0)).collect::<Vec<_>>())
    };
    let mut rows: Vec<(f64, String)> = names
        .into_iter()
        .map(|n| {
            let (a, b) = (of(&after[..third], n), of(&after[after.len() - third..], n));
            (b - a, format!("{n}={a:.2}->{b:.2}"))
        })
        .collect();
    rows.sort_by(|x, y| y.0.total_cmp(&x.0));
    rows.into_iter().map(|(_, r)| r).collect::<Vec<_>>().join(" ")
}

fn db_bytes(dir: &Path) -> u64 {
    ["chalie.db", "chalie.db-wal"].iter().map(|f| bytes_under(&dir.join(f))).sum()
}

/// A reply of a megabyte is recorded whole in the session log: one `reply_done` line holding
/// every byte the model sent, which the log reads back (issue 23, item 4).
#[test]
fn a_one_megabyte_reply_is_logged_whole() {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    // 1 MiB in 4 KiB chunks, with a mark at each end so a clipped copy cannot pass.
    let body = format!("BEGIN {} END", "0123456789abcdef".repeat(65_536));
    let chunks: Vec<String> = body.as_bytes().chunks(4096).map(|c| String::from_utf8_lossy(c).into_owned()).collect();
    let replies = (0..8).map(|_| Reply::Text { chunks: chunks.clone(), delay_ms: 0, logprobs: None }).collect();
    let double = rt.block_on(Double::start(replies));
    write_double_config(dir.path(), &double.base_url());
    let out = command(dir.path()).args(["ask", "--json", "tell me everything"]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut logged = Vec::new();
    for entry in std::fs::read_dir(dir.path().join("sessions")).unwrap().flatten() {
        for line in std::fs::read_to_string(entry.path()).unwrap().lines() {
            let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
            if v["type"] == "reply_done" {
                logged.push(v["text"].as_str().unwrap_or_default().to_string());
            }
        }
    }
    assert_eq!(logged.len(), 1, "one reply_done");
    assert_eq!(logged[0].len(), body.len(), "the whole megabyte is in the log");
    assert_eq!(logged[0], body);
}
