//! The CLI contracts outside checks rely on: paths in `--version`, exit codes, and
//! that `ask` creates the database with the whole schema.

use std::path::Path;
use std::process::{Command, Output};

fn chalie(data: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_chalie-tui"))
        .args(args)
        .env("CHALIE_DATA_DIR", data)
        .env("CHALIE_CONFIG", data.join("config.toml"))
        .env("CHALIE_MODELS_DIR", data.join("models"))
        .env_remove("CHALIE_LOG")
        .output()
        .expect("run chalie-tui")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

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
fn ask_stores_the_message_in_a_fully_migrated_database() {
    let dir = tempfile::tempdir().unwrap();
    let out = chalie(dir.path(), &["ask", "hello there"]);
    // No pipeline in this build: it must say so, not pretend to answer.
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("no cognition pipeline"), "{}", text(&out.stderr));

    let conn = rusqlite::Connection::open(dir.path().join("chalie.db")).unwrap();
    let content: String = conn.query_row("SELECT content FROM chat_history", [], |r| r.get(0)).unwrap();
    assert_eq!(content, "hello there");
    let tables: i64 =
        conn.query_row("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'", [], |r| r.get(0)).unwrap();
    assert!(tables >= 36, "only {tables} tables");

    // The session log recorded the message after its header.
    let sessions: Vec<_> = std::fs::read_dir(dir.path().join("sessions")).unwrap().collect();
    assert_eq!(sessions.len(), 1);
    let log = std::fs::read_to_string(sessions[0].as_ref().unwrap().path()).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    assert!(lines[0].contains("\"session_header\""));
    assert!(lines[1].contains("\"user_message\"") && lines[1].contains("hello there"));
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
