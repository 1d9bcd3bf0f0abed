//! End to end: the memory browser in the real binary in a real terminal (tmux). Open it with
//! F3, switch layer, search, forget an episode after confirming, quit, and find the episode
//! forgotten in the database (with its deletion recorded) and the other one untouched.
//!
//! Needs tmux (`scripts/deps.sh` installs it); the tmux server is private to the test.

use crate::support::openai_double::Double;
use crate::support::tmux::{config, launch, quit};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browse_search_and_forget_in_tmux() {
    // No message is sent, so the model is never asked.
    let double = Double::start(vec![]).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("chalie.db");
    {
        let conn = chalie::store::open(&db).unwrap();
        let now = chalie::store::now_ts();
        conn.execute_batch(&format!(
            "INSERT INTO user_traits (id, trait_key, trait_value, confidence, source, created_at, updated_at)
             VALUES (1, 'sister', 'Maria', 0.9, 'explicit', {now}, {now});
             INSERT INTO episodes (id, gist, action, topic, created_at, updated_at)
             VALUES (1, 'Planned a hiking trip to the Alps', 'planning', 'travel', {now} - 10, {now} - 10),
                    (2, 'Fixed a flaky parser test', 'coding', 'rust', {now}, {now});"
        ))
        .unwrap();
    }
    let config = config(dir.path(), &double.base_url());
    let tmux = launch(dir.path(), &config);
    let mut seen = Vec::new();
    tmux.wait("the TUI", &mut seen, |s| s.contains("Routing") && s.contains("Message")).await;

    tmux.keys(&["F3"]);
    tmux.wait("the traits", &mut seen, |s| s.contains("Memory · Traits · 1 memory") && s.contains("sister: Maria"))
        .await;
    tmux.keys(&["Tab"]);
    tmux.wait("the episodes", &mut seen, |s| s.contains("Memory · Episodes · 2 memories")).await;

    tmux.keys(&["/"]);
    tmux.type_text("alps");
    tmux.wait("the search", &mut seen, |s| s.contains("search: alps") && s.contains("Episodes · 1 memory")).await;
    tmux.keys(&["Enter"]);
    tmux.keys(&["Enter"]);
    tmux.wait("the detail", &mut seen, |s| s.contains("Memory · episode:1") && s.contains("Provenance")).await;
    tmux.keys(&["d"]);
    tmux.wait("the question", &mut seen, |s| s.contains("Forget episode:1?")).await;
    tmux.keys(&["y"]);
    tmux.wait("the forget", &mut seen, |s| s.contains("Forgot episode:1.") && s.contains("Episodes · 0 memories"))
        .await;

    assert_eq!(quit(&tmux, dir.path()).await, "0");
    let conn = chalie::store::open(&db).unwrap();
    let live: Vec<i64> = conn
        .prepare("SELECT id FROM episodes WHERE deleted_at IS NULL")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(live, [2]);
    let recorded: (String, String) = conn
        .query_row("SELECT layer, row_id FROM memory_deletions WHERE reason = 'user'", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(recorded, ("episode".to_string(), "1".to_string()));
}
