//! A reader that went away is not a crash: the binary run with stdout or stderr a pipe whose
//! reading end is already closed (`chalie-tui --version | true`, `ask hi | head -c1`) ends
//! with its usual exit code and no panic, and the turn it ran is still committed.

use crate::support::bin::{text, write_double_config};
use crate::support::openai_double::{Double, Reply};
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Which of the child's streams is a pipe with no reader.
#[derive(Clone, Copy)]
enum Closed {
    Stdout,
    Stderr,
}

/// Run the binary with one stream a pipe whose reader is dropped before the child starts,
/// so every write to it fails with a broken pipe; the other stream is captured.
fn run_closed(data: &Path, closed: Closed, args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_chalie-tui"));
    cmd.args(args)
        .env("CHALIE_DATA_DIR", data)
        .env("CHALIE_CONFIG", data.join("config.toml"))
        .env("CHALIE_MODELS_DIR", data.join("models"))
        .env_remove("CHALIE_LOG")
        .stdin(Stdio::null());
    match closed {
        Closed::Stdout => cmd.stdout(writer).stderr(Stdio::piped()),
        Closed::Stderr => cmd.stderr(writer).stdout(Stdio::piped()),
    };
    cmd.output().expect("run chalie-tui")
}

fn assert_no_panic(out: &Output) {
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(!all.contains("panicked"), "panicked: {all}");
    assert_ne!(out.status.code(), Some(101), "{all}");
}

#[test]
fn version_into_a_closed_stdout_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_closed(dir.path(), Closed::Stdout, &["--version"]);
    assert_no_panic(&out);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn completions_and_the_man_page_into_a_closed_stdout_exit_0() {
    let dir = tempfile::tempdir().unwrap();
    for args in [&["completions", "bash"][..], &["man"]] {
        let out = run_closed(dir.path(), Closed::Stdout, args);
        assert_no_panic(&out);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out.stderr));
    }
}

#[test]
fn config_error_into_a_closed_stderr_keeps_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), "[models\nprimary = 3\n").unwrap();
    let out = run_closed(dir.path(), Closed::Stderr, &["ask", "hi"]);
    assert_no_panic(&out);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn ask_into_a_closed_stdout_exits_0_and_keeps_the_turn() {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let double = rt.block_on(Double::start(vec![Reply::text("A reply nobody reads.")]));
    write_double_config(dir.path(), &double.base_url());
    let out = run_closed(dir.path(), Closed::Stdout, &["ask", "--thread", "gone", "hello there"]);
    assert_no_panic(&out);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let conn = rusqlite::Connection::open(dir.path().join("chalie.db")).unwrap();
    let saved: i64 =
        conn.query_row("SELECT COUNT(*) FROM chat_history WHERE thread_id = 'gone'", [], |r| r.get(0)).unwrap();
    assert!(saved >= 1, "the user's message was not kept");
}
