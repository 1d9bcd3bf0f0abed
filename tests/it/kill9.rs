//! Kill -9 at random moments (issue 23, item 1): `ask --batch` through the real binary against
//! the scripted endpoint, with long streamed replies, killed with SIGKILL after a random
//! delay and started again, round after round on one database. After every kill the database
//! must pass `PRAGMA integrity_check`, every turn the program reported done must be in the
//! chat history with its routing row, and nothing may be there twice.
//!
//! Rounds take turns at what they aim the kill at ([`Aim`]): ordinary turns (which also
//! consolidate: the semantic worker runs on the episodes they leave), ACT turns (lists and
//! reminders through the planner), a decay pass (its schedule is reset so the pass runs at
//! the start the kill lands in) and a forget (`memory forget` on the newest episode, then a
//! "forget what I told you about …" turn). On top of the checks above: no exchange has two
//! episodes (a job run twice), every committed exchange still has its encode job or its
//! episode (no job lost), and a forgotten line's words are nowhere in the database once the
//! line is gone (a forget is all or nothing).
//!
//! A fifth aim is reminders: reminders fall due while nothing runs, then the TUI (the real
//! binary on a pseudo-terminal from `script`, as a person starts it) is killed while its
//! scheduler catches up on them. Each reminder fires once: its chat line is there once exactly
//! when it is marked fired, and after a last start that is left to finish, every one has fired.
//!
//! The normal test run does a few rounds; `CHALIE_KILL_ROUNDS` sets how many
//! (scripts/soak.sh runs 200).

use crate::support::bin::{command, text};
use crate::support::openai_double::{Double, Reply};
use chalie::SplitMix64;
use rusqlite::Connection;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

const SHORT_ROUNDS: u64 = 8;

/// What a round's kill is aimed at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Aim {
    Turns,
    Act,
    Decay,
    Forget,
    Remind,
}

const AIMS: [Aim; 5] = [Aim::Turns, Aim::Act, Aim::Decay, Aim::Forget, Aim::Remind];

/// ACT turns: the deterministic planner acts on these whatever the model says.
const ACTS: &[&str] = &[
    "add oat milk to my shopping list",
    "remind me in 1 minute to stretch",
    "put batteries on the shopping list",
    "remind me tomorrow at 9 to call the dentist",
];

/// A round's messages; a forget round states something and then takes it back.
fn batch(aim: Aim, round: u64) -> Vec<String> {
    let tagged = |list: &[&str]| -> Vec<String> {
        list.iter().enumerate().map(|(i, s)| format!("{s} (round {round}, #{i})")).collect()
    };
    match aim {
        Aim::Turns | Aim::Decay | Aim::Remind => tagged(SAYINGS),
        Aim::Act => tagged(ACTS),
        Aim::Forget => vec![
            format!("my cousin Zed{round} lives in Town{round}"),
            "what should I cook tonight?".to_string(),
            format!("forget everything I told you about Zed{round}"),
            "tell me a long story about the sea".to_string(),
        ],
    }
}

/// Whether `needle` occurs in `text` not followed by a digit: "Town8" is not in round 83's
/// "Town83" (the first 200-round run reported 118 false leaks for want of this).
fn has_word(text: &str, needle: &str) -> bool {
    text.match_indices(needle).any(|(i, _)| !text[i + needle.len()..].starts_with(|c: char| c.is_ascii_digit()))
}

/// Whether any text value in any ordinary table of the database contains `needle`.
fn anywhere(conn: &Connection, needle: &str) -> Vec<String> {
    let mut stmt =
        conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'").unwrap();
    let tables: Vec<String> = stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
    let mut found = Vec::new();
    for t in tables {
        let Ok(mut stmt) = conn.prepare(&format!("SELECT * FROM \"{t}\"")) else { continue };
        let n = stmt.column_count();
        let mut rows = stmt.query([]).unwrap();
        while let Ok(Some(row)) = rows.next() {
            let hit = (0..n).any(|i| matches!(row.get_ref(i), Ok(rusqlite::types::ValueRef::Text(b)) if has_word(&String::from_utf8_lossy(b), needle)));
            if hit {
                found.push(t.clone());
                break;
            }
        }
    }
    found
}

/// Kill a `chalie-tui ARGS` run after up to `max_ms`; whether it finished first.
fn kill_during(data: &Path, args: &[&str], after_ms: u64) -> bool {
    let mut child = command(data).args(args).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(after_ms));
    let finished = matches!(child.try_wait(), Ok(Some(_)));
    let _ = child.kill();
    let _ = child.wait();
    finished
}

/// Reminders that fell due while the program was down (one to ten minutes ago), in a thread
/// of their own so each firing writes a chat line.
fn due_while_down(db: &Path, round: u64) {
    use chalie::store::{NewReminder, RemindersRepo};
    let c = chalie::store::open(db).unwrap();
    for i in 0..2 {
        let past = chrono::Local::now() - chrono::Duration::minutes(1 + 4 * i);
        let due_at = past.format("%Y-%m-%dT%H:%M").to_string();
        let message = format!("water plant {round}-{i}");
        let r = NewReminder {
            message: &message,
            due_at: &due_at,
            due_ts: past.timestamp(),
            item_type: "notification",
            recurrence: None,
            thread_id: Some("t-remind"),
        };
        RemindersRepo(&c).insert(&r, past.timestamp() - 3600).unwrap();
    }
}

/// Start the TUI on a pseudo-terminal, as a person would, and SIGKILL it (with `script`)
/// after `after_ms`; with `until` set, wait for that instead (at most 30 s).
fn tui_killed(data: &Path, after_ms: u64, until: Option<&dyn Fn() -> bool>) {
    let exe = crate::support::bin::exe();
    let line = format!("stty cols 120 rows 40; exec {}", crate::support::tmux::shell_quote(&exe.display().to_string()));
    let mut child = std::process::Command::new("script")
        .args(["-qfec", &line, "/dev/null"])
        .env("CHALIE_DATA_DIR", data)
        .env("CHALIE_CONFIG", data.join("config.toml"))
        .env("CHALIE_MODELS_DIR", data.join("models"))
        .env("TERM", "xterm-256color")
        .env_remove("CHALIE_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    match until {
        None => std::thread::sleep(Duration::from_millis(after_ms)),
        Some(done) => {
            let deadline = std::time::Instant::now() + Duration::from_secs(30);
            while !done() && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
    // The TUI runs under `script` (and maybe a shell): kill the whole tree, program first.
    let mut tree = vec![child.id()];
    let mut i = 0;
    while i < tree.len() {
        let p = tree[i];
        let kids = std::fs::read_to_string(format!("/proc/{p}/task/{p}/children")).unwrap_or_default();
        tree.extend(kids.split_whitespace().filter_map(|k| k.parse::<u32>().ok()));
        i += 1;
    }
    for pid in tree.iter().rev() {
        let _ = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status();
    }
    let _ = child.wait();
}

/// Reminders whose firing is not whole: marked fired without their one chat line, or with a
/// line and not marked, or with two lines.
fn reminder_problems(conn: &Connection, all_fired: bool) -> Vec<String> {
    let mut stmt = conn
        .prepare(
            "SELECT r.id, r.state, (SELECT COUNT(*) FROM chat_history c              WHERE c.role = 'system' AND c.exchange_id = 'reminder-' || r.id || '-' || r.due_ts)              FROM reminders r WHERE r.thread_id = 't-remind'",
        )
        .unwrap();
    let rows: Vec<(i64, String, i64)> =
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect();
    let mut problems = Vec::new();
    for (id, state, lines) in rows {
        let fired = state == "fired";
        let whole = if fired { lines == 1 } else { lines == 0 };
        if !whole || (all_fired && !fired) {
            problems.push(format!("reminder {id}: state {state}, {lines} chat lines"));
        }
    }
    problems
}

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

/// Whether the schema is there: a kill during the very first start (a loaded machine, a short
/// first delay) rolls the first migration back and leaves an empty file.
fn migrated(conn: &Connection) -> bool {
    one(conn, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'chat_history'") > 0
}

fn one(conn: &Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

/// Committed exchanges (a reply stored) with neither an episode nor an encode job, and no
/// forget that explains it, as "id: what the user said". A forget takes an exchange's job and
/// episode when the exchange itself is forgotten: its lines redacted, or the forget request,
/// on the block list. A forgotten word in another exchange's topic label takes nothing: the
/// job stays with the label redacted (the scripted endpoint's embeddings make every message
/// of a batch one topic, named after the first, so "what should I cook tonight?" after "my
/// cousin Zed28 lives in Town28" carries `cousin-zed28-…`; the forget used to take its job,
/// 20 problems in rounds 28-47 of seed 9, and the check excused it; no longer).
fn unencoded(conn: &Connection) -> Vec<String> {
    let mut stmt = conn
        .prepare(
            "SELECT a.exchange_id, coalesce((SELECT substr(u.content, 1, 60) FROM chat_history u \
             WHERE u.exchange_id = a.exchange_id AND u.role = 'user'), '(no user line)') \
             FROM chat_history a WHERE a.role = 'assistant' \
             AND NOT EXISTS (SELECT 1 FROM chat_history l WHERE l.exchange_id = a.exchange_id \
                             AND l.content LIKE '[forgotten%') \
             AND NOT EXISTS (SELECT 1 FROM episodes e WHERE e.exchange_id = a.exchange_id) \
             AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.queue = 'encode' AND json_extract(j.payload, '$.exchange_id') = a.exchange_id)",
        )
        .unwrap();
    let rows: Vec<(String, String)> =
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect();
    rows.into_iter()
        .filter(|(x, _)| !chalie::store::exchange_forgotten(conn, x).unwrap())
        .map(|(x, said)| format!("{x}: {said}"))
        .collect()
}

/// Problems found in the database after a kill, given the exchanges reported done.
fn check(db: &Path, reported: &[String], forgets: &[(u64, bool)]) -> (Vec<String>, usize, usize) {
    let conn = Connection::open(db).unwrap();
    let mut problems = Vec::new();
    let integrity: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    if integrity != "ok" {
        problems.push(format!("integrity_check: {integrity}"));
    }
    if !migrated(&conn) {
        // Killed before its first migration committed: no schema, so nothing can have been done.
        return (problems, reported.len(), 0);
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
    ) + one(
        &conn,
        "SELECT COUNT(*) FROM (SELECT exchange_id FROM episodes WHERE exchange_id IS NOT NULL \
         GROUP BY exchange_id HAVING COUNT(*) > 1)",
    );
    // A committed exchange keeps its encode job until its episode exists, unless a forget took them.
    let unencoded = unencoded(&conn);
    if !unencoded.is_empty() {
        // Which exchanges, and what they said, so a run's report can be read without the database.
        problems.push(format!(
            "{} committed exchanges with neither an episode nor an encode job: {:?}",
            unencoded.len(),
            &unencoded[..unencoded.len().min(3)]
        ));
    }
    // A forget is all or nothing: once the stated line is gone, so is every copy of its words.
    for &(round, reported_done) in forgets {
        let needle = format!("Town{round}");
        let lines = {
            let mut stmt = conn.prepare("SELECT content FROM chat_history").unwrap();
            let texts: Vec<String> = stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
            texts.iter().filter(|t| has_word(t, &needle)).count()
        };
        let elsewhere = anywhere(&conn, &needle);
        if (lines == 0 || reported_done) && !elsewhere.is_empty() {
            problems.push(format!("{needle} forgotten (reported: {reported_done}) but still in {elsewhere:?}"));
        }
    }
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
    let double = rt.block_on(Double::start(vec![long; (rounds as usize + 1) * SAYINGS.len() * 3 + 16]));
    crate::support::tmux::config(dir.path(), &double.base_url());
    let mut rng = SplitMix64(std::env::var("CHALIE_KILL_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(9));
    let (mut kills, mut reported_total, mut lost_total, mut dup_total) = (0, 0, 0, 0);
    let mut problems = Vec::new();
    let db = dir.path().join("chalie.db");
    let mut kills_by_aim = [0usize; 5];
    let mut reminders_made = 0;
    let mut forgets: Vec<(u64, bool)> = Vec::new();
    let mut panics = 0;
    for round in 0..=rounds {
        let aim = AIMS[(round % AIMS.len() as u64) as usize];
        let schema = db.exists() && migrated(&Connection::open(&db).unwrap());
        if schema && aim == Aim::Decay {
            // The pass is due at once, so it runs inside the start the kill lands in.
            Connection::open(&db)
                .unwrap()
                .execute("DELETE FROM kv_state WHERE namespace = 'decay' AND key = 'last_pass'", [])
                .unwrap();
        }
        if schema && aim == Aim::Forget {
            let newest: Option<i64> =
                Connection::open(&db).unwrap().query_row("SELECT MAX(id) FROM episodes", [], |r| r.get(0)).unwrap();
            if let Some(id) = newest {
                let after = 50 + rng.next_u64() % 600;
                if !kill_during(dir.path(), &["memory", "forget", &format!("episode:{id}")], after) {
                    kills += 1;
                    kills_by_aim[3] += 1;
                }
            }
        }
        if round > 0 && aim == Aim::Remind {
            due_while_down(&db, round);
            // Start-up takes a moment and the catch-up comes half a second after it.
            let after = 300 + rng.next_u64() % 2500;
            tui_killed(dir.path(), after, None);
            kills += 1;
            kills_by_aim[4] += 1;
            reminders_made += 2;
        }
        let batch = dir.path().join("batch.txt");
        let lines = self::batch(aim, round);
        std::fs::write(&batch, lines.join("\n")).unwrap();
        let child = command(dir.path())
            .args(["ask", "--json", "--batch"])
            .arg(&batch)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The last round runs to the end: what was interrupted before must not get in its way.
        let killed = round < rounds;
        let out = if killed {
            // A decay pass runs right after the start; other aims spread over the whole batch.
            let window = if aim == Aim::Decay { 800 } else { 4000 };
            std::thread::sleep(Duration::from_millis(100 + rng.next_u64() % window));
            let mut child = child;
            let _ = child.kill();
            kills += 1;
            kills_by_aim[AIMS.iter().position(|a| *a == aim).unwrap_or(0)] += 1;
            child.wait_with_output().unwrap()
        } else {
            child.wait_with_output().unwrap()
        };
        panics += usize::from(text(&out.stderr).contains("panicked"));
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
        if aim == Aim::Forget {
            // The forget turn is the third message: reported done when three reports came.
            forgets.push((round, reported.len() >= 3));
        }
        let (mut p, lost, dups) = check(&db, &reported, &forgets);
        let conn = Connection::open(&db).unwrap();
        if migrated(&conn) {
            p.extend(reminder_problems(&conn, false));
        }
        problems.extend(p.into_iter().map(|p| format!("round {round}: {p}")));
        lost_total += lost;
        dup_total = dups;
    }
    // A last start left to finish: every reminder due while down has fired, each once.
    let all_fired = || {
        let c = Connection::open(&db).unwrap();
        one(&c, "SELECT COUNT(*) FROM reminders WHERE thread_id = 't-remind' AND state != 'fired'") == 0
    };
    tui_killed(dir.path(), 0, Some(&all_fired));
    let conn = Connection::open(&db).unwrap();
    problems.extend(reminder_problems(&conn, true).into_iter().map(|p| format!("at the end: {p}")));
    let reminder_lines = one(&conn, "SELECT COUNT(*) FROM chat_history WHERE exchange_id LIKE 'reminder-%'");
    // Exchanges whose job or episode a forget took for a forgotten word in their topic label
    // alone (their lines kept): what the check excuses beyond whole forgotten exchanges.
    let by_label: Vec<(String, String)> = {
        let mut stmt = conn
            .prepare(
                "SELECT DISTINCT u.topic, substr(u.content, 1, 40) FROM chat_history u WHERE u.role = 'user' \
                 AND u.topic LIKE '%[forgotten]%' AND u.content NOT LIKE '[forgotten%' \
                 AND NOT EXISTS (SELECT 1 FROM episodes e WHERE e.exchange_id = u.exchange_id) \
                 AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.queue = 'encode' AND json_extract(j.payload, '$.exchange_id') = u.exchange_id)",
            )
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
    };
    println!(
        "kill9: taken with a forgotten topic label: {} {:?}",
        by_label.len(),
        by_label.iter().take(3).collect::<Vec<_>>()
    );
    dup_total += one(
        &conn,
        "SELECT COUNT(*) FROM (SELECT exchange_id FROM chat_history WHERE exchange_id LIKE 'reminder-%' \
         GROUP BY exchange_id HAVING COUNT(*) > 1)",
    ) as usize;
    println!(
        "kill9: runs={} faults={kills} losses={lost_total} panics={panics} duplicates={dup_total} problems={} \
         turns_done={reported_total} kills_turns={} kills_act={} kills_decay={} kills_forget={} \
         kills_remind={} reminders_due_while_down={reminders_made} reminder_lines={reminder_lines}",
        rounds + 1,
        problems.len(),
        kills_by_aim[0],
        kills_by_aim[1],
        kills_by_aim[2],
        kills_by_aim[3],
        kills_by_aim[4]
    );
    if !problems.is_empty() {
        // What the problems are about is in the database: keep it for a look.
        println!("kill9: data dir kept at {}", dir.keep().display());
    }
    assert!(problems.is_empty(), "{problems:#?}");
    assert_eq!((lost_total, dup_total, panics), (0, 0, 0));
    assert!(reported_total > 0, "no turn ever finished: the harness tested nothing");
}

/// The check itself: a job a forget took because the exchange's topic label held a forgotten
/// name is not a lost job, and a job gone with no forget to explain it still is. The check
/// before this one reported the first as lost (the 20 problems of the 200-round run).
#[test]
fn a_forgotten_word_in_a_topic_label_keeps_the_job_and_a_job_gone_unexplained_is_lost() {
    use chalie::store::{ChatRepo, JobKind, JobsRepo, Purge};
    let dir = tempfile::tempdir().unwrap();
    let mut conn = chalie::store::open(&dir.path().join("chalie.db")).unwrap();
    let label = "cousin-zed28-lives-town28";
    let lines = [
        ("xa", "my cousin Zed28 lives in Town28", label),
        ("xb", "what should I cook tonight?", label),
        ("xc", "tell me a long story about the sea", "sea"),
    ];
    for (x, said, topic) in lines {
        ChatRepo(&conn).append("t", x, "user", said, None, Some(topic)).unwrap();
        ChatRepo(&conn).append("t", x, "assistant", "part 0 of a long reply", Some("RESPOND"), Some(topic)).unwrap();
        if x != "xc" {
            let payload = serde_json::json!({"thread_id": "t", "exchange_id": x, "topic": topic, "user_text": said,
                                             "response": "part 0 of a long reply", "mode": "RESPOND", "created_at": 5});
            JobsRepo(&conn).enqueue(JobKind::Encode, &payload, 3).unwrap();
        }
    }
    // "forget everything I told you about Zed28": xa goes whole; its words go everywhere.
    let forget = Purge {
        needles: vec!["Zed28".into(), "Town28".into()],
        exchanges: vec!["xa".into()],
        kind: "statement".into(),
        ..Purge::default()
    };
    chalie::store::purge(&mut conn, &forget).unwrap();
    let topic: String = conn
        .query_row("SELECT json_extract(payload, '$.topic') FROM jobs WHERE instr(payload, '\"xb\"') > 0", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(topic, "cousin-[forgotten]-lives-[forgotten]", "xb's job stays, its label without the words");
    assert_eq!(one(&conn, "SELECT COUNT(*) FROM jobs WHERE instr(payload, '\"xa\"') > 0"), 0, "xa's job went with xa");
    // xc never had a job: lost, whatever forgets happened around it.
    assert_eq!(unencoded(&conn), ["xc: tell me a long story about the sea"]);
}
