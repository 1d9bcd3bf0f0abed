//! The CLI contracts outside checks rely on: paths in `--version`, exit codes, and `ask`
//! through the whole pipeline (against the scripted OpenAI double, which the binary reaches
//! through its config file) with `--json`, `--batch` and `audit`.

use crate::support::bin::{chalie, json_lines, text};
use crate::support::harness::{Call, kind, triage_reply};
use crate::support::openai_double::{Double, Reply};
use chalie::cognition::router::Mode;
use serde_json::Value;
use std::path::Path;

#[test]
fn version_prints_every_path_in_use() {
    let dir = tempfile::tempdir().unwrap();
    let out = chalie(dir.path(), &["--version"]);
    assert!(out.status.success());
    let s = text(&out.stdout);
    assert!(s.starts_with(&format!("chalie-tui {}", env!("CARGO_PKG_VERSION"))), "{s}");
    for needle in [
        dir.path().join("config.toml"),
        dir.path().to_path_buf(),
        dir.path().join("models"),
        dir.path().join("logs/chalie-tui.log"),
    ] {
        assert!(s.contains(&needle.display().to_string()), "missing {} in {s}", needle.display());
    }
    assert!(!dir.path().join("chalie.db").exists(), "--version must not create anything");
}

/// `--version` answers before any config, store or network work (the startup bench times
/// it): a broken config is not even parsed. What serves each role is `models`.
#[test]
fn version_reads_no_config_and_models_names_each_role() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), "[llm]\nmax_retrys = 4\n").unwrap();
    let out = chalie(dir.path(), &["--version"]);
    assert!(out.status.success());
    let s = text(&out.stdout);
    assert!(s.contains("config.toml (present)"), "{s}");
    assert!(!s.contains("active:") && !s.contains("error"), "no provider resolved, no config parsed: {s}");

    std::fs::write(dir.path().join("config.toml"), "[llm]\ntriage = \"auto\"\n").unwrap();
    let out = chalie(dir.path(), &["models"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    for needle in ["vectors:", "active:", "  primary", "  embedding", "routing:"] {
        assert!(s.contains(needle), "missing {needle} in {s}");
    }
    assert!(!dir.path().join("chalie.db").exists(), "models must not create the database");
}

/// The startup bench's knob is a real start: config, store, session log and workers, one
/// frame (into memory: no terminal here), then a clean exit.
#[test]
fn the_tui_draws_one_frame_and_exits_under_the_startup_knob() {
    let dir = tempfile::tempdir().unwrap();
    let (_rt, double) = serve(vec![]);
    crate::support::bin::write_double_config(dir.path(), &double.base_url());
    let knob = [("CHALIE_EXIT_AFTER_FIRST_FRAME", "1")];
    let out = crate::support::bin::chalie_with(dir.path(), &dir.path().join("config.toml"), &knob, &[]);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains(chalie::tui::FIRST_FRAME_LINE), "{err}");
    assert!(dir.path().join("chalie.db").exists(), "the store was opened");
    assert!(err.contains("Session log: "), "the session ended as a quit does: {err}");
}

#[test]
fn malformed_config_exits_2_naming_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), "[llm]\ntriage = \"llm\"\nmax_retrys = 4\n").unwrap();
    let out = chalie(dir.path(), &["audit"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains(&format!("{}:3", dir.path().join("config.toml").display())), "{err}");
    assert!(err.contains("max_retrys"), "{err}");

    let out = chalie(dir.path(), &["--config", "/definitely/missing.toml", "audit"]);
    assert_eq!(out.status.code(), Some(2), "a missing --config file is a config error");
    assert!(text(&out.stderr).contains("/definitely/missing.toml"));
}

#[test]
fn usage_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(chalie(dir.path(), &["memory", "bogus"]).status.code(), Some(2));
    assert_eq!(chalie(dir.path(), &["--no-such-flag"]).status.code(), Some(2));
}

#[test]
fn audit_and_memory_read_an_empty_database() {
    let dir = tempfile::tempdir().unwrap();
    let out = chalie(dir.path(), &["audit", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "");
    let out = chalie(dir.path(), &["memory", "traits"]);
    assert!(out.status.success());
    assert!(text(&out.stdout).contains("Nothing stored"));
}

/// A tokio runtime serving the double while the binary (a separate process) talks to it.
fn serve(script: Vec<Reply>) -> (tokio::runtime::Runtime, Double) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let double = rt.block_on(Double::start(script));
    (rt, double)
}

/// A config pointing every role at the double; `triage` is `[llm] triage`. The memory
/// workers extract deterministically here, so each test's scripted replies are the turn's
/// own calls (the `memory_chunker` module covers their model path).
fn configure(data: &Path, base_url: &str, primary_url: Option<&str>, triage: &str) {
    let primary = match primary_url {
        Some(url) => format!("[providers.gone]\nkind = \"openai\"\nbase_url = \"{url}\"\n"),
        None => String::new(),
    };
    let config = format!(
        "[providers.double]\nkind = \"openai\"\nbase_url = \"{base_url}\"\n{primary}\
         [models]\nprimary = \"{}/m\"\nlightweight = \"double/m\"\nstrong = \"double/m\"\nembedding = \"double/e\"\n\
         [llm]\ntriage = \"{triage}\"\nmemory_extraction = \"heuristic\"\ncritic = \"heuristic\"\n",
        if primary_url.is_some() { "gone" } else { "double" },
    );
    std::fs::write(data.join("config.toml"), config).unwrap();
}

fn session_log(data: &Path) -> Vec<Value> {
    let sessions: Vec<_> = std::fs::read_dir(data.join("sessions")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    std::fs::read_to_string(&sessions[0]).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn ask_json_runs_the_pipeline_and_prints_the_turn_report() {
    let dir = tempfile::tempdir().unwrap();
    let (_rt, double) = serve(vec![triage_reply("RESPOND", &[]), Reply::text("Paris is the capital of France.")]);
    configure(dir.path(), &double.base_url(), None, "llm");
    let out = chalie(dir.path(), &["ask", "--json", "What is the capital of France?"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 1);
    let r = &lines[0];
    assert_eq!(r["response"], "Paris is the capital of France.");
    assert_eq!(r["mode"], "RESPOND");
    let scores = r["router"]["scores"].as_object().expect("router.scores");
    for m in Mode::ALL {
        assert!(scores[m.as_str()].is_f64(), "{m} in {scores:?}");
    }
    assert!(r["router"]["confidence"].is_f64());
    assert_eq!(r["router"]["tiebreaker_used"], false);
    assert!(r["router"]["routing_time_ms"].as_f64().is_some_and(|t| t >= 0.0));
    assert!(r["router"]["signals"].as_object().is_some_and(|s| s.contains_key("derived")));
    let topic = r["topic"].as_object().expect("topic");
    assert!(topic["name"].as_str().is_some_and(|n| !n.is_empty()));
    assert_eq!(topic["is_new_topic"], true);
    assert!(topic["switch_score"].is_number());
    for k in ["acc", "bound", "newma", "surprise"] {
        assert!(topic.get(k).is_some_and(Value::is_number), "boundary diagnostic topic.{k}: {topic:?}");
    }
    assert_eq!(r["triage"]["mode"], "RESPOND");
    assert_eq!(r["triage"]["source"], "model");
    assert!(r["act_iterations"].is_array());
    let reg = r["regulator"].as_object().expect("regulator");
    for k in ["decision", "confidence", "low_confidence_spans", "scope_drift", "cost", "procedural_warning", "breaks"] {
        assert!(reg.contains_key(k), "regulator.{k}: {reg:?}");
    }
    assert!(reg["confidence"].as_f64().is_some_and(|c| (0.0..=1.0).contains(&c)));
    for k in ["tokens_in", "tokens_out", "wall_ms"] {
        assert!(reg["cost"][k].is_u64(), "regulator.cost.{k}");
    }
    for k in ["detected", "surfaced", "resolved"] {
        assert!(r["uncertainty"][k].is_array(), "uncertainty.{k}: {}", r["uncertainty"]);
    }
    let timings = r["timings_ms"].as_object().expect("timings_ms");
    for stage in ["embedding", "topic", "triage", "routing", "generation", "commit", "total"] {
        assert!(timings[stage].is_f64(), "timings_ms.{stage}: {timings:?}");
    }
    let calls: Vec<Call> = double.chat_requests().iter().map(kind).collect();
    assert_eq!(calls, [Call::Triage, Call::Generation(Mode::Respond)]);

    // The database has the message and the reply, in a fully migrated schema.
    let conn = rusqlite::Connection::open(dir.path().join("chalie.db")).unwrap();
    let mut stmt = conn.prepare("SELECT role, content, mode FROM chat_history ORDER BY id").unwrap();
    let rows: Vec<(String, String, Option<String>)> =
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect();
    assert_eq!(
        rows,
        [
            ("user".into(), "What is the capital of France?".into(), Some("RESPOND".into())),
            ("assistant".into(), "Paris is the capital of France.".into(), Some("RESPOND".into())),
        ]
    );
    let tables: i64 =
        conn.query_row("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'", [], |r| r.get(0)).unwrap();
    assert!(tables >= 36, "only {tables} tables");
    let decisions: i64 = conn.query_row("SELECT COUNT(*) FROM routing_decisions", [], |r| r.get(0)).unwrap();
    assert_eq!(decisions, 1);

    // The session log has the turn's events after its header, in order.
    let log = session_log(dir.path());
    assert_eq!(log[0]["type"], "session_header");
    let types: Vec<&str> = log.iter().filter_map(|e| e["type"].as_str()).collect();
    let at = |t: &str| types.iter().position(|x| *x == t).unwrap_or_else(|| panic!("no {t} in {types:?}"));
    assert!(
        at("user_message") < at("routed") && at("routed") < at("reply_chunk") && at("reply_chunk") < at("reply_done")
    );
    let done = &log[at("reply_done")];
    assert_eq!(done["text"], "Paris is the capital of France.");
    assert!(log.iter().all(|e| e.get("ts").is_some()), "every line has ts");
}

#[test]
fn ask_batch_runs_every_line_on_one_thread_and_audit_lists_the_decisions() {
    let dir = tempfile::tempdir().unwrap();
    let (_rt, double) = serve(vec![
        Reply::text("Good morning!"),
        Reply::text("Paris is the capital of France."),
        Reply::text("Madrid is the capital of Spain."),
    ]);
    configure(dir.path(), &double.base_url(), None, "heuristic");
    let batch = dir.path().join("batch.txt");
    std::fs::write(
        &batch,
        "hey, good morning!\n\nWhat is the capital of France?\n   \nAnd what is the capital of Spain?\n",
    )
    .unwrap();
    let out = chalie(dir.path(), &["ask", "--json", "--batch", batch.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines = json_lines(&out);
    let modes: Vec<&str> = lines.iter().map(|r| r["mode"].as_str().unwrap()).collect();
    assert_eq!(modes, ["ACKNOWLEDGE", "RESPOND", "RESPOND"], "one object per non-blank line, in order");
    let responses: Vec<&str> = lines.iter().map(|r| r["response"].as_str().unwrap()).collect();
    assert_eq!(responses, ["Good morning!", "Paris is the capital of France.", "Madrid is the capital of Spain."]);
    let thread = lines[0]["thread_id"].as_str().unwrap();
    assert!(lines.iter().all(|r| r["thread_id"] == thread), "one thread");
    let sent: Vec<Value> = double.chat_requests().iter().map(|r| r.body["messages"].clone()).collect();
    let last = sent[2].as_array().unwrap();
    // One system message (a server gets them merged, first), the first two exchanges, the message.
    assert_eq!(last.len(), 6, "the third message sees the first two exchanges: {last:?}");
    assert_eq!(last.iter().filter(|m| m["role"] == "system").count(), 1, "{last:?}");
    let calls: Vec<Call> = double.chat_requests().iter().map(kind).collect();
    assert_eq!(
        calls,
        [Call::Generation(Mode::Acknowledge), Call::Generation(Mode::Respond), Call::Generation(Mode::Respond)],
        "heuristic pre-routing: generation calls only"
    );

    let out = chalie(dir.path(), &["audit", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let audit = json_lines(&out);
    let audited: Vec<(&str, &str)> =
        audit.iter().map(|d| (d["selected_mode"].as_str().unwrap(), d["exchange_id"].as_str().unwrap())).collect();
    let expected: Vec<(&str, &str)> =
        lines.iter().rev().map(|r| (r["mode"].as_str().unwrap(), r["exchange_id"].as_str().unwrap())).collect();
    assert_eq!(audited, expected, "newest first");
    for d in &audit {
        assert_eq!(d["thread_id"], thread);
        assert!(d["scores"].as_object().is_some_and(|s| s.len() == 5));
        assert!(d["weights_version"].is_i64() && d["routing_time_ms"].is_f64());
    }
    let out = chalie(dir.path(), &["audit", "--json", "--limit", "1"]);
    assert_eq!(json_lines(&out)[..], audit[..1]);
    let out = chalie(dir.path(), &["audit", "--json", "--mode", "acknowledge"]);
    assert_eq!(json_lines(&out)[..], audit[2..]);
    let out = chalie(dir.path(), &["audit"]);
    assert!(out.status.success());
    let table = text(&out.stdout);
    assert_eq!(table.lines().count(), 4, "a header and three decisions: {table}");
    assert!(table.contains("ACKNOWLEDGE") && table.contains("RESPOND"), "{table}");
}

#[test]
fn plain_ask_prints_just_the_reply() {
    let dir = tempfile::tempdir().unwrap();
    let (_rt, double) = serve(vec![triage_reply("RESPOND", &[]), Reply::text("Paris is the capital of France.")]);
    configure(dir.path(), &double.base_url(), None, "llm");
    let out = chalie(dir.path(), &["ask", "--thread", "trip", "What is the capital of France?"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "Paris is the capital of France.\n");

    // An empty message needs no reply and asks no model.
    let out = chalie(dir.path(), &["ask", "--thread", "trip", " "]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("IGNORE"), "{}", text(&out.stdout));
    assert_eq!(double.chat_requests().len(), 2);

    let conn = rusqlite::Connection::open(dir.path().join("chalie.db")).unwrap();
    let threads: Vec<String> = conn
        .prepare("SELECT DISTINCT thread_id FROM chat_history")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(threads, ["trip"]);
}

#[test]
fn ask_exits_1_with_an_explanation_when_the_primary_model_is_unreachable() {
    let dir = tempfile::tempdir().unwrap();
    let (_rt, double) = serve(vec![triage_reply("RESPOND", &[])]);
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/v1", l.local_addr().unwrap())
    };
    configure(dir.path(), &double.base_url(), Some(&dead), "llm");
    let out = chalie(dir.path(), &["ask", "--json", "What is the capital of France?"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let r = &json_lines(&out)[0];
    assert!(r["failed"].is_string(), "{r}");
    assert!(r["response"].as_str().unwrap().contains("gone/m"), "{r}");
    let conn = rusqlite::Connection::open(dir.path().join("chalie.db")).unwrap();
    let roles: Vec<String> = conn
        .prepare("SELECT role FROM chat_history ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(roles, ["user", "system"], "the turn committed with the explanation as a system line");
}
