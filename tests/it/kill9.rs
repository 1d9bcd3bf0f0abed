//! Kill -9 at random moments (issue 23, item 1): `ask --batch` through the real binary against
//! the scripted endpoint, with long streamed replies, killed with SIGKILL after a random
//! delay and started again, round after round on one database. After every kill the database
//! must pass `PRAGMA integrity_check`, every turn the program reported done must be in the
//! chat history with its routing row, and nothing may be there twice.
//!
//! The normal test run does a few rounds; `CHALIE_KILL_ROUNDS` sets how many
//! (scripts/soak.sh runs 200).

use crate::support::bin::text;
use crate::support::openai_double::{Double, Reply};
use chalie::SplitMix64;
use rusqlite::Connection;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const SHORT_ROUNDS: u64 = 6;

/// What a user says across a round: lists, reminders, memory statements, questions.
const SAYINGS: &[&str] = &[
    "add oat milk to my shopping list",
    "remind me in 1 minute to stretch",
    "my sister is called Ana and she lives in Porto",
    "what should I cook tonight?",
    "I prefer tea to coffee",
    "remind me tomorrow at 9 to call the dentist",
    "put batteries on the shopping list",
    "tell me a long story about the sea",
];

fn one(conn: &Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

/// Problems found in the database after a kill, given the exchanges reported done.
fn check(db: &Path, reported: &[String]) -> (Vec<String>, usize, usize) {
    let conn = Connection::open(db).unwrap();
    let mut problems = Vec::new();
    let integrity: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    if integrity != "ok" {
        problems.push(format!("integrity_check: {integrity}"));
    }
    let duplicates = one(
        &conn,
        "SELECT COUNT(*) FROM (SELECT exchange_id, role FROM chat_history GROUP BY exchange_id, role HAVING COUNT(*) > 1)",
    ) + one(
        &conn,
        "SELECT COUNT(*) FROM (SELECT exchange_id FROM routing_decisions WHERE exchange_id IS NOT NULL \
         GROUP BY exchange_id HAVING COUNT(*) > 1)",
    ) + one(
        &conn,
        "SELECT COUNT(*) FROM (SELECT queue, payload FROM jobs GROUP BY queue, payload HAVING COUNT(*) > 1)",
    );
    // A turn with a reply committed has its message and its routing row.
    let orphans = one(
        &conn,
        "SELECT COUNT(*) FROM chat_history a WHERE a.role = 'assistant' AND (\
         NOT EXISTS (SELECT 1 FROM chat_history u WHERE u.exchange_id = a.exchange_id AND u.role = 'user') OR \
         NOT EXISTS (SELECT 1 FROM routing_decisions r WHERE r.exchange_id = a.exchange_id))",
    );
    if orphans > 0 {
        problems.push(format!("{orphans} committed replies without their message or routing row"));
    }
    let mut lost = 0;
    for ex in reported {
        let n: i64 = conn
            .query_row("SELECT COUNT(*) FROM chat_history WHERE exchange_id = ?1 AND role = 'user'", [ex], |r| r.get(0))
            .unwrap();
        if n == 0 {
            lost += 1;
        }
    }
    (problems, lost, duplicates as usize)
}

#[test]
fn kill_9_at_random_moments_loses_and_duplicates_nothing() {
    let rounds = std::env::var("CHALIE_KILL_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(SHORT_ROUNDS);
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    // Long streamed replies: 30 chunks 25 ms apart, so kills land mid-stream as often as not.
    let long = Reply::Text {
        chunks: (0..30).map(|i| format!("part {i} of a long and winding reply. ")).collect(),
        delay_ms: 25,
        logprobs: None,
    };
    let double = rt.block_on(Double::start(vec![long; (rounds as usize + 1) * SAYINGS.len() + 16]));
    crate::support::tmux::config(dir.path(), &double.base_url());
    let mut rng = SplitMix64(std::env::var("CHALIE_KILL_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(9));
    let (mut kills, mut reported_total, mut lost_total, mut dup_total) = (0, 0, 0, 0);
    let mut problems = Vec::new();
    for round in 0..=rounds {
        let batch = dir.path().join("batch.txt");
        let lines: Vec<String> =
            SAYINGS.iter().enumerate().map(|(i, s)| format!("{s} (round {round}, #{i})")).collect();
        std::fs::write(&batch, lines.join("\n")).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_chalie-tui"))
            .args(["ask", "--json", "--batch"])
            .arg(&batch)
            .env("CHALIE_DATA_DIR", dir.path())
            .env("CHALIE_CONFIG", dir.path().join("config.toml"))
            .env("CHALIE_MODELS_DIR", dir.path().join("models"))
            .env_remove("CHALIE_LOG")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The last round runs to the end: what was interrupted before must not get in its way.
        let killed = round < rounds;
        let out = if killed {
            std::thread::sleep(Duration::from_millis(100 + rng.next_u64() % 4000));
            let mut child = child;
            let _ = child.kill();
            kills += 1;
            child.wait_with_output().unwrap()
        } else {
            child.wait_with_output().unwrap()
        };
        if !killed {
            assert!(out.status.code().is_some_and(|c| c <= 1), "the last round ends normally: {}", text(&out.stderr));
        }
        // Complete JSON lines are turns the program reported done (a torn last line is not).
        let reported: Vec<String> = text(&out.stdout)
            .split_inclusive('\n')
            .filter(|l| l.ends_with('\n'))
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter_map(|v| v["exchange_id"].as_str().map(String::from))
            .collect();
        reported_total += reported.len();
        let (p, lost, dups) = check(&dir.path().join("chalie.db"), &reported);
        problems.extend(p.into_iter().map(|p| format!("round {round}: {p}")));
        lost_total += lost;
        dup_total = dups;
    }
    println!(
        "kill9: {} rounds, {kills} kills, {reported_total} turns reported done, {lost_total} lost, {dup_total} duplicates, \
         {} other problems",
        rounds + 1,
        problems.len()
    );
    assert!(problems.is_empty(), "{problems:#?}");
    assert_eq!((lost_total, dup_total), (0, 0));
    assert!(reported_total > 0, "no turn ever finished: the harness tested nothing");
}
