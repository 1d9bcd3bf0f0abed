//! End to end: the real binary in a real terminal (tmux), against the scripted
//! OpenAI-compatible endpoint. Type a message, watch the reply stream in and the Routing pane
//! fill, open the routing audit with F2, quit with Ctrl-Q and exit 0.
//!
//! Needs tmux (`scripts/deps.sh` installs it). The tmux server is private to the test (its
//! own socket in a temp dir) and is killed when the test ends, pass or fail.

use crate::support::openai_double::{Double, Reply};
use crate::support::tmux::{config, launch, quit};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn type_stream_audit_quit_in_tmux() {
    let chunks: Vec<String> = [
        "**Green ", "tea** ", "likes ", "water ", "at ", "about ", "80 ", "°C, ", "steeped ", "for ", "two ",
        "minutes.",
    ]
    .map(String::from)
    .to_vec();
    let reply = Reply::Text { chunks, delay_ms: 120, logprobs: None };
    // Whatever else the engine asks the model gets the same answer.
    let double = Double::start(vec![reply.clone(), reply.clone(), reply]).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let config = config(dir.path(), &double.base_url());
    let tmux = launch(dir.path(), &config);
    let mut seen = Vec::new();

    tmux.wait("the TUI", &mut seen, |s| s.contains("Routing") && s.contains("Uncertainties") && s.contains("Message"))
        .await;
    // The engine has started when the status bar lists the resolved models.
    tmux.wait("the models", &mut seen, |s| s.contains("double/double-chat") && !s.contains("starting")).await;

    tmux.type_text("How should I brew green tea?");
    tmux.keys(&["Enter"]);
    let done = tmux
        .wait("the streamed reply and the routing pane", &mut seen, |s| {
            s.contains("steeped for two minutes.") && s.contains("▸") && s.contains("topic")
        })
        .await;
    assert!(done.contains("How should I brew green tea?"), "{done}");
    // Markdown rendered: the ** markers are gone.
    assert!(done.contains("Green tea likes water") && !done.contains("**Green"), "{done}");
    // It streamed: some screen showed part of the reply.
    assert!(
        seen.iter().any(|s| s.contains("likes") && !s.contains("steeped for two minutes.")),
        "never saw a partial reply"
    );
    // The Routing pane: a bar per mode, confidence, margin, tie-break, time and topic.
    for needle in ["RESPOND", "CLARIFY", "ACT", "ACKNOWLEDGE", "IGNORE", "conf ", "margin ", "tie-break", " ms · topic"]
    {
        assert!(done.contains(needle), "routing pane lacks {needle:?}:\n{done}");
    }

    tmux.keys(&["F2"]);
    let audit =
        tmux.wait("the audit popup", &mut seen, |s| s.contains("Routing audit") && s.contains("1 decision")).await;
    assert!(audit.contains("conf") && audit.contains("tie"), "{audit}");
    tmux.keys(&["Enter"]);
    tmux.wait("the decision's detail", &mut seen, |s| s.contains("── Signals") && s.contains("── Scores")).await;
    // One key at a time, each awaited: two ESC bytes read together are one Esc to crossterm
    // (it parses ESC ESC as a single key), so the second would be lost on a busy machine.
    tmux.keys(&["Escape"]);
    tmux.wait("the detail to close", &mut seen, |s| s.contains("Routing audit") && !s.contains("── Signals")).await;
    tmux.keys(&["Escape"]);
    tmux.wait("the audit to close", &mut seen, |s| !s.contains("Routing audit")).await;

    let code = quit(&tmux, dir.path()).await;
    assert_eq!(code.trim(), "0", "exit status");
    // The generation request was the streaming one the double answered.
    assert!(double.chat_requests().iter().any(|r| r.body["stream"] == true));
}

/// A reminder that fell due while the app was closed fires once at the next start (its chat
/// line written once), and not again at the start after that (issue 23).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reminder_due_while_closed_fires_once_across_restarts() {
    use chalie::store::{NewReminder, RemindersRepo};
    let double = Double::start(Vec::new()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let config = config(dir.path(), &double.base_url());
    let db = dir.path().join("chalie.db");
    let past = chrono::Local::now() - chrono::Duration::minutes(10);
    {
        let c = chalie::store::open(&db).expect("database");
        let due_at = past.format("%Y-%m-%dT%H:%M").to_string();
        let r = NewReminder {
            message: "water the plants",
            due_at: &due_at,
            due_ts: past.timestamp(),
            item_type: "notification",
            recurrence: None,
            thread_id: Some("t1"),
        };
        RemindersRepo(&c).insert(&r, past.timestamp() - 3600).expect("reminder");
    }
    let lines = || -> (i64, String) {
        let c = chalie::store::open(&db).expect("database");
        let n = c
            .query_row(
                "SELECT count(*) FROM chat_history WHERE role = 'system' AND content LIKE '%water the plants%'",
                [],
                |r| r.get(0),
            )
            .expect("count");
        let state = c.query_row("SELECT state FROM reminders", [], |r| r.get(0)).expect("state");
        (n, state)
    };
    for start in 0..2 {
        let _ = std::fs::remove_file(dir.path().join("exit"));
        let tmux = launch(dir.path(), &config);
        let mut seen = Vec::new();
        tmux.wait("the TUI", &mut seen, |s| s.contains("Routing") && s.contains("Message")).await;
        // The scheduler catches up half a second after start; give it well past that.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while lines().0 == 0 && std::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        if start == 1 {
            tokio::time::sleep(std::time::Duration::from_secs(2)).await;
        }
        let code = quit(&tmux, dir.path()).await;
        assert_eq!(code.trim(), "0", "exit status of start {start}");
        drop(tmux);
        assert_eq!(lines(), (1, "fired".to_string()), "after start {start}");
    }
}
