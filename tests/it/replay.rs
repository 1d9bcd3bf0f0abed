//! `--replay LOG [--rerun] [--headless]` on the real binary, with a session log recorded by the
//! real binary (`ask --batch` against the scripted OpenAI double): the rerun reproduces every
//! routing decision offline, a changed router weight shows as differing turns, and damaged,
//! newer, older or foreign logs replay what can be read without a panic.

use crate::support::bin::{chalie_with, json_lines, text};

/// The binary with a config file and the key the double's provider names in the env.
fn chalie(data: &Path, config: &Path, args: &[&str]) -> Output {
    chalie_with(data, config, &[("DOUBLE_KEY", "sk-test-secret-4242")], args)
}
use crate::support::openai_double::{Double, Reply};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

/// The recorded conversation: a clarification (a vague reference with nothing to refer to),
/// a greeting, questions, an ACT command and thanks.
const MESSAGES: &str = "What about that one?\nHello there!\nWhat is the capital of France?\n\
    Add milk and eggs to my shopping list\nWhat is on my shopping list?\nThanks, that's great!\n";

/// A weight change that moves the general-knowledge question away from RESPOND (the social
/// turns take the social exit, and ACT and CLARIFY win by a wide margin).
const CHANGED_WEIGHT: &str = "[router.weights]\nrespond.base = 0.30\n";

/// A log recorded by [`record`] (regenerate with `CHALIE_WRITE_FIXTURES=1 cargo nextest run
/// --test it -E 'test(/^replay::/)'`): the bench's input, and a check that logs written earlier still read cleanly.
const FIXTURE: &str = "tests/data/replay_session.jsonl";

fn write_config(dir: &Path, base_url: &str, extra: &str) -> PathBuf {
    let path = dir.join(format!("config-{}.toml", extra.len()));
    let config = format!(
        "[providers.double]\nkind = \"openai\"\nbase_url = \"{base_url}\"\napi_key_env = \"DOUBLE_KEY\"\n\
         [models]\nprimary = \"double/chat\"\nlightweight = \"double/chat\"\nstrong = \"double/chat\"\n\
         embedding = \"double/embed\"\n[llm]\ntriage = \"heuristic\"\nmemory_extraction = \"heuristic\"\ncritic = \"heuristic\"\n{extra}"
    );
    std::fs::write(&path, config).unwrap();
    path
}

/// Run the conversation through the real binary against the double; returns the session log,
/// the config (pointing at the double, which is gone afterwards) and what `ask` reported.
fn record(dir: &Path) -> (PathBuf, PathBuf, Vec<Value>) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let replies = (1..=24).map(|i| Reply::text(&format!("Scripted reply number {i}, streamed in pieces.")));
    let double = rt.block_on(Double::start(replies.collect()));
    let data = dir.join("recorded");
    std::fs::create_dir_all(&data).unwrap();
    let config = write_config(dir, &double.base_url(), "");
    let batch = dir.join("batch.txt");
    std::fs::write(&batch, MESSAGES).unwrap();
    let out = chalie(&data, &config, &["ask", "--json", "--batch", batch.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let reports = json_lines(&out);
    drop(double);
    let logs: Vec<PathBuf> = std::fs::read_dir(data.join("sessions")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    (logs[0].clone(), config, reports)
}

fn rerun(dir: &Path, config: &Path, log: &Path) -> (Vec<Value>, String) {
    let data = dir.join("replayer");
    let out = chalie(&data, config, &["--replay", log.to_str().unwrap(), "--rerun", "--headless"]);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    (json_lines(&out), err)
}

fn modes(turns: &[Value], key: &str) -> Vec<String> {
    turns.iter().map(|t| t[key].as_str().unwrap_or("-").to_string()).collect()
}

#[test]
fn a_rerun_reproduces_every_turn_and_a_changed_weight_shows() {
    let dir = tempfile::tempdir().unwrap();
    let (log, config, reports) = record(dir.path());
    if std::env::var_os("CHALIE_WRITE_FIXTURES").is_some() {
        std::fs::copy(&log, Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE)).unwrap();
    }
    let recorded: Vec<String> = reports.iter().map(|r| r["mode"].as_str().unwrap().to_string()).collect();
    for mode in ["CLARIFY", "ACKNOWLEDGE", "RESPOND", "ACT"] {
        assert!(recorded.iter().any(|m| m == mode), "the session has a {mode} turn: {recorded:?}");
    }

    // The log holds what a rerun needs, and no secret.
    let raw = std::fs::read_to_string(&log).unwrap();
    assert!(!raw.contains("sk-test-secret-4242"), "the API key reached the session log");
    let kinds: Vec<String> =
        raw.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()?["type"].as_str().map(String::from)).collect();
    for kind in [
        "user_message",
        "llm_start",
        "llm_token",
        "llm_complete",
        "llm_embedded",
        "routed",
        "act_iteration",
        "regulated",
    ] {
        assert!(kinds.iter().any(|k| k == kind), "no {kind} in the log");
    }

    // Offline (the double is gone): the same decisions, every call answered from the log.
    let (turns, summary) = rerun(dir.path(), &config, &log);
    assert_eq!(turns.len(), recorded.len());
    assert_eq!(modes(&turns, "recorded_mode"), recorded);
    assert_eq!(modes(&turns, "mode"), recorded, "{summary}");
    for ((t, r), message) in turns.iter().zip(&reports).zip(MESSAGES.lines()) {
        assert_eq!(t["differs"], false);
        assert_eq!(t["text"], message);
        assert_eq!(t["scores"], r["router"]["scores"], "turn {}: the same scores", t["turn"]);
        assert_eq!(t["reply"], r["response"], "turn {}: the recorded reply", t["turn"]);
        assert_eq!(t["calls"]["missing"], 0, "turn {}: {t}", t["turn"]);
        assert_eq!(t["regulator"]["decision"], r["regulator"]["decision"], "turn {}: the same verdict", t["turn"]);
    }
    assert!(summary.contains("0 with different routing") && summary.contains("0 had no recording"), "{summary}");
    assert!(summary.contains(" 0 of "), "every recorded call was made again: {summary}");

    // With no config at all (every role the built-in models), the recorded roles still decide
    // what `auto` settings do: the same decisions, every recorded call made again. The roles
    // were endpoints, so `auto` asks the lightweight model for triage, extraction and the
    // critic, which this recording (all "heuristic") never called: those calls have no
    // recording and fall back, as they would live.
    let (turns, summary) = rerun(dir.path(), &dir.path().join("absent.toml"), &log);
    assert_eq!(modes(&turns, "mode"), recorded, "{summary}");
    assert!(summary.contains(" 0 of "), "{summary}");

    // One weight changed in the config: the question RESPOND won now routes elsewhere.
    let changed = write_config(dir.path(), "http://127.0.0.1:9/v1", CHANGED_WEIGHT);
    let (turns, summary) = rerun(dir.path(), &changed, &log);
    let differing: Vec<&str> =
        turns.iter().filter(|t| t["differs"] == true).map(|t| t["recorded_mode"].as_str().unwrap()).collect();
    assert!(!differing.is_empty(), "{summary}\n{turns:#?}");
    assert!(differing.iter().all(|m| *m == "RESPOND"), "only the turns the weight touches: {differing:?}");
    for t in &turns {
        let untouched = t["recorded_mode"] != "RESPOND";
        assert!(!untouched || t["differs"] == false, "{t}");
    }
}

/// A copy of `log` at `dir/name` with its lines passed through `edit`.
fn edited(dir: &Path, log: &Path, name: &str, edit: impl Fn(Vec<String>) -> Vec<String>) -> PathBuf {
    let lines: Vec<String> = std::fs::read_to_string(log).unwrap().lines().map(String::from).collect();
    let path = dir.join(name);
    std::fs::write(&path, edit(lines).join("\n") + "\n").unwrap();
    path
}

#[test]
fn damaged_newer_older_and_foreign_logs_replay_what_can_be_read() {
    let dir = tempfile::tempdir().unwrap();
    let (log, config, reports) = record(dir.path());
    let play = |path: &Path, extra: &[&str]| {
        let mut args = vec!["--replay", path.to_str().unwrap(), "--headless"];
        args.extend_from_slice(extra);
        let out = chalie(&dir.path().join("replayer"), &config, &args);
        let err = text(&out.stderr);
        assert!(!err.contains("panicked"), "{err}");
        (out, err)
    };

    // A torn last line: the session ended mid-write. Playback and rerun go on without it.
    let torn = std::fs::read_to_string(&log).unwrap();
    let cut = torn.trim_end().len() - 10;
    let torn_path = dir.path().join("torn.jsonl");
    std::fs::write(&torn_path, &torn[..cut]).unwrap();
    let (out, err) = play(&torn_path, &[]);
    assert!(out.status.success() && err.contains("torn last line"), "{err}");
    assert_eq!(json_lines(&out).len(), reports.len());
    let (out, err) = play(&torn_path, &["--rerun"]);
    assert!(out.status.success(), "{err}");
    assert!(json_lines(&out).iter().all(|t| t["differs"] == false), "{err}");

    // Event types from a newer version, and a header saying so: warned about, skipped.
    let newer = edited(dir.path(), &log, "newer.jsonl", |mut lines| {
        let current = format!("\"schema\":{}", chalie::session::LOG_SCHEMA);
        lines[0] = lines[0].replace(&current, "\"schema\":9");
        lines.insert(2, r#"{"ts":"2026-11-21T08:00:00Z","type":"hologram","beams":3}"#.into());
        lines
    });
    let (out, err) = play(&newer, &["--rerun"]);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("`hologram` is not known") && err.contains("log schema 9"), "{err}");
    assert!(json_lines(&out).iter().all(|t| t["differs"] == false), "{err}");

    // A schema-1 log (before embeddings were logged; its header had no `schema`): it plays,
    // and a rerun runs, counting the embedding calls it cannot answer.
    let older = edited(dir.path(), &log, "older.jsonl", |lines| {
        let mut header: Value = serde_json::from_str(&lines[0]).unwrap();
        header.as_object_mut().unwrap().remove("schema");
        let mut out = vec![header.to_string()];
        out.extend(lines[1..].iter().filter(|l| !l.contains("\"type\":\"llm_embedded\"")).cloned());
        out
    });
    let (out, err) = play(&older, &[]);
    assert!(out.status.success() && err.contains("log schema 1"), "{err}");
    assert_eq!(modes(&json_lines(&out), "recorded_mode"), modes(&reports, "mode"));
    let (out, err) = play(&older, &["--rerun"]);
    assert!(out.status.success(), "{err}");
    let turns = json_lines(&out);
    assert_eq!(turns.len(), reports.len());
    assert!(turns.iter().map(|t| t["calls"]["missing"].as_u64().unwrap()).sum::<u64>() > 0, "{err}");

    // Not a session log at all: a clear message and a failure status, nothing replayed.
    for (name, body) in [
        ("notes.jsonl", b"{\"hello\": 1}\n".to_vec()),
        ("empty.jsonl", Vec::new()),
        ("binary.bin", vec![0u8, 159, 146, 150, 255, 10, 1, 2]),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, body).unwrap();
        let (out, err) = play(&path, &[]);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        assert!(err.contains("is not a chalie-tui session log"), "{name}: {err}");
        assert!(out.stdout.is_empty());
    }
    let (out, err) = play(&dir.path().join("missing.jsonl"), &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(err.contains("cannot read"), "{err}");
}

#[test]
fn the_live_engine_routes_with_the_config_weights_and_audits_their_version() {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let double = rt.block_on(Double::start((0..4).map(|_| Reply::text("Paris.")).collect()));
    let ask = |name: &str, extra: &str| {
        let data = dir.path().join(name);
        let config = write_config(&dir.path().join(name), &double.base_url(), extra);
        let out = chalie(&data, &config, &["ask", "--json", "What is the capital of France?"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let audit = chalie(&data, &config, &["audit", "--json"]);
        (json_lines(&out).remove(0), json_lines(&audit).remove(0))
    };
    std::fs::create_dir_all(dir.path().join("default")).unwrap();
    std::fs::create_dir_all(dir.path().join("changed")).unwrap();
    let (plain, plain_audit) = ask("default", "");
    let (changed, changed_audit) = ask("changed", CHANGED_WEIGHT);
    let respond = |r: &Value| r["router"]["scores"]["RESPOND"].as_f64().unwrap();
    assert!((respond(&plain) - respond(&changed) - 0.20).abs() < 1e-9, "respond.base 0.50 → 0.30: {changed}");
    assert_eq!(plain_audit["weights_version"], 2, "the built-in weights");
    assert_eq!(changed_audit["weights_version"], 3, "the config's merge is its own version");
}

#[test]
fn the_committed_fixture_still_reads_cleanly() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE);
    let log = chalie::session::read_log(&path).unwrap();
    assert_eq!(log.warnings, Vec::<String>::new());
    assert!(log.entries.iter().all(|e| matches!(e, chalie::session::LogEntry::Event(_))));
    let turns = chalie::session::recorded_turns(&log);
    let texts: Vec<&str> = turns.iter().map(|t| t.text.as_str()).collect();
    assert_eq!(texts, MESSAGES.lines().collect::<Vec<_>>());
    assert!(turns.iter().all(|t| t.mode.is_some() && t.reply.is_some()));
}
