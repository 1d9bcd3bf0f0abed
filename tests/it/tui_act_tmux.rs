//! The ACT loop and reminders in the real TUI (tmux), against a scripted endpoint whose plans
//! are unusable: a reminder that came due while the app was closed is caught up into the
//! chat at start; list commands work through the deterministic planner and show in the ACT
//! pane; quitting exits 0.

use crate::support::openai_double::{Double, Reply};
use crate::support::tmux::{config, launch, quit};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reminders_fire_and_lists_work_in_the_tui() {
    // Every model call gets prose, which is no plan: the deterministic planner must carry it.
    let double = Double::start(vec![Reply::text("Happy to help with that!"); 40]).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let config = config(dir.path(), &double.base_url());

    // A reminder that came due an hour ago, while the app was not running.
    let db = chalie::store::open(&dir.path().join("chalie.db")).expect("create the database");
    let due = chrono::Local::now() - chrono::Duration::hours(1);
    db.execute(
        "INSERT INTO reminders (message, due_at, due_ts, created_at) VALUES ('water the plants', ?1, ?2, ?2)",
        rusqlite::params![due.format("%Y-%m-%dT%H:%M").to_string(), due.timestamp()],
    )
    .expect("insert a reminder");
    drop(db);

    let tmux = launch(dir.path(), &config);
    let mut seen = Vec::new();
    tmux.wait("the caught-up reminder", &mut seen, |s| s.contains("Reminder: water the plants")).await;

    tmux.type_text("add eggs, milk and bread to my shopping list");
    tmux.keys(&["Enter"]);
    let s = tmux.wait("the list card", &mut seen, |s| s.contains("Added eggs, milk and bread to shopping.")).await;
    assert!(s.contains("list"), "the ACT pane names the skill:\n{s}");

    tmux.type_text("take milk off the list");
    tmux.keys(&["Enter"]);
    tmux.wait("the removal", &mut seen, |s| s.contains("Removed milk from shopping.")).await;

    tmux.type_text("what's on my shopping list?");
    tmux.keys(&["Enter"]);
    tmux.wait("the list", &mut seen, |s| s.contains("shopping (2)")).await;

    assert_eq!(quit(&tmux, dir.path()).await, "0", "exit status");
    let conn = rusqlite::Connection::open(dir.path().join("chalie.db")).expect("open the database");
    let state: String = conn.query_row("SELECT state FROM reminders", [], |r| r.get(0)).expect("the reminder");
    assert_eq!(state, "fired");
}
