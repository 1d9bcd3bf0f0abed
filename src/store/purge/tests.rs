//! The purge against a database file: every place a secret was copied to, then the file
//! and its WAL searched byte by byte.

use super::*;
use crate::store::{ChatRepo, EMBEDDING_DIM, VecTable, VectorRepo, open};

const SECRET: &str = "Zanzibar4921";

fn file_bytes_contain(dir: &std::path::Path, needle: &[u8]) -> Vec<String> {
    let mut hits = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let bytes = std::fs::read(&p).unwrap().to_ascii_lowercase();
        let n = needle.to_ascii_lowercase();
        if bytes.windows(n.len()).any(|w| w == n.as_slice()) {
            hits.push(p.display().to_string());
        }
    }
    hits
}

/// The first column of every row `sql` returns.
fn strings(c: &Connection, sql: &str) -> Vec<String> {
    c.prepare(sql).unwrap().query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
}

fn seed(c: &Connection) {
    let chat = ChatRepo(c);
    chat.append("t1", "x1", "user", &format!("my locker code is {SECRET}"), None, None).unwrap();
    chat.append("t1", "x1", "assistant", "Noted.", None, None).unwrap();
    chat.append("t1", "x2", "user", "what's the weather like?", None, None).unwrap();
    let now = now_ts();
    c.execute_batch(&format!(
        "INSERT INTO working_memory (thread_id, role, content, created_at, expires_at) VALUES ('t1', 'user', 'my locker code is {SECRET}', {now}, {now} + 999);
         INSERT INTO episodes (id, gist, action, topic, thread_id, exchange_id, salience, created_at, updated_at)
           VALUES (1, 'User shared a locker code', 'sharing', 'locker', 't1', 'x1', 5, {now}, {now}),
                  (2, 'Asked about the weather', 'asking', 'weather', 't1', 'x2', 5, {now}, {now});
         INSERT INTO gists (topic, thread_id, gist_type, content, confidence, created_at, expires_at)
           VALUES ('locker', 't1', 'fact', 'locker code {SECRET}', 5, {now}, {now} + 999);
         INSERT INTO facts (topic, key, value, confidence, created_at, updated_at, expires_at)
           VALUES ('locker', 'code', '{SECRET}', 0.9, {now}, {now}, {now} + 999);
         INSERT INTO user_traits (id, trait_key, trait_value, confidence, created_at, updated_at)
           VALUES (3, 'locker_code', '{SECRET}', 0.9, {now}, {now});
         INSERT INTO semantic_concepts (id, name, definition, source_episodes, created_at, updated_at)
           VALUES (4, 'locker', 'a place for things', '[1]', {now}, {now});
         INSERT INTO interaction_log (thread_id, exchange_id, topic, event_type, payload, created_at)
           VALUES ('t1', 'x1', 'locker', 'system_response', '{{\"text\": \"code {SECRET}\"}}', {now});
         INSERT INTO jobs (queue, payload, state, run_after, created_at, updated_at)
           VALUES ('encode', '{{\"exchange_id\": \"x1\", \"user_text\": \"{SECRET}\"}}', 'queued', 0, {now}, {now});"
    ))
    .unwrap();
    let mut v = vec![0.0f32; EMBEDDING_DIM];
    v[0] = 1234.5678;
    VectorRepo(c).upsert(VecTable::Episodes, 1, &v).unwrap();
    VectorRepo(c).upsert(VecTable::Concepts, 4, &v).unwrap();
    let mut w = vec![0.0f32; EMBEDDING_DIM];
    w[0] = 1.0;
    VectorRepo(c).upsert(VecTable::Episodes, 2, &w).unwrap();
}

#[test]
fn every_text_column_of_the_schema_is_mapped() {
    let c = crate::store::open_in_memory().unwrap();
    let mut stmt =
        c.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'").unwrap();
    let tables: Vec<String> = stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
    let mut missing = Vec::new();
    for t in tables
        .iter()
        .filter(|t| !t.starts_with("sqlite_") && !t.contains("_vec_") && !t.ends_with("_fts") && !t.contains("_trgm"))
    {
        if NO_USER_TEXT.contains(&t.as_str()) || FTS_TABLES.iter().any(|f| t.starts_with(f)) {
            continue;
        }
        let mut s = c.prepare(&format!("PRAGMA table_info({t})")).unwrap();
        let cols: Vec<(String, String)> =
            s.query_map([], |r| Ok((r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect();
        for (col, ty) in cols.iter().filter(|(_, ty)| ty == "TEXT") {
            let _ = ty;
            let ids = matches!(
                col.as_str(),
                "id" | "exchange_id"
                    | "thread_id"
                    | "state"
                    | "role"
                    | "queue"
                    | "namespace"
                    | "key"
                    | "layer"
                    | "reason"
                    | "created_at"
            );
            let mapped = TEXT_MAP.iter().any(|(tt, cc, _)| tt == t && cc.contains(&col.as_str()));
            if !mapped && !ids {
                missing.push(format!("{t}.{col}"));
            }
        }
    }
    // Enum-like columns the program writes itself carry no user words.
    let allowed = [
        "gists.gist_type",
        "episodes.semantic_consolidation_status",
        "episodes.reliability",
        "semantic_concepts.concept_type",
        "semantic_concepts.reliability",
        "user_traits.category",
        "user_traits.source",
        "user_traits.reliability",
        "facts.reliability",
        "gists.reliability",
        "uncertainties.memory_a_type",
        "uncertainties.memory_a_id",
        "uncertainties.memory_b_type",
        "uncertainties.memory_b_id",
        "uncertainties.uncertainty_type",
        "uncertainties.severity",
        "uncertainties.detection_context",
        "uncertainties.resolution_strategy",
        "routing_decisions.selected_mode",
        "routing_decisions.scores",
        "routing_decisions.weight_snapshot",
        "routing_decisions.fallback",
        "routing_decisions.previous_mode",
        // The adaptive layer's directives: fixed lines of the program, never the user's words.
        "routing_decisions.adaptive",
        "routing_adjustments.parameter",
        "routing_adjustments.pressure",
        "triage_calibration.source",
        "triage_calibration.fallback_reason",
        "triage_calibration.branch",
        "triage_calibration.mode",
        "triage_calibration.effort_estimate",
        "triage_calibration.routed_mode",
        "cortex_iterations.routing_decision_id",
        "cortex_iterations.planner",
        "cortex_iterations.mode",
        "cortex_iterations.termination_reason",
        "interaction_log.event_type",
        "list_history.action",
        "reminders.due_at",
        "reminders.item_type",
        "reminders.recurrence",
        "focus_sessions.source",
        "drift_thoughts.thought_type",
        "drift_thoughts.seed_strategy",
        "drift_thoughts.action",
        "drift_thoughts.author",
        "drift_thoughts.state",
        "curiosity_threads.state",
        "regulator_state.user_id",
        "world_state.key",
        "memory_deletions.layer",
        "working_memory.role",
        "semantic_relationships.origin",
        // A hash prefix of a grown node's name; the row goes when its name matches.
        "semantic_concepts.graph_key",
    ];
    missing.retain(|m| !allowed.contains(&m.as_str()));
    assert!(missing.is_empty(), "text columns no forget reaches: {missing:?}");
}

#[test]
fn a_purge_leaves_no_byte_of_the_secret_in_the_file_or_the_wal() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = open(&dir.path().join("chalie.db")).unwrap();
    seed(&c);
    assert!(!file_bytes_contain(dir.path(), SECRET.as_bytes()).is_empty(), "the seed is on disk");
    let p = Purge {
        needles: vec![SECRET.into()],
        exchanges: vec!["x1".into()],
        kind: "statement".into(),
        row: None,
        block_only: vec!["x9".into()],
        trait_slots: Vec::new(),
    };
    let purged = purge(&mut c, &p).unwrap();
    assert_eq!(purged.lines, ["x1"]);
    let counts = purged.rows;
    for t in
        ["chat_history", "working_memory", "episodes", "gists", "facts", "user_traits", "jobs", "semantic_concepts"]
    {
        assert!(counts.get(t).is_some_and(|n| *n >= 1), "{t}: {counts:?}");
    }
    // The conversation still reads; the unrelated exchange is untouched.
    let lines: Vec<String> = ChatRepo(&c).recent("t1", 10).unwrap().into_iter().map(|m| m.content).collect();
    assert_eq!(lines, [FORGOTTEN_LINE, FORGOTTEN_LINE, "what's the weather like?"]);
    assert!(VectorRepo(&c).contains(VecTable::Episodes, 2).unwrap());
    assert!(!VectorRepo(&c).contains(VecTable::Episodes, 1).unwrap());
    assert!(exchange_forgotten(&c, "x1").unwrap() && exchange_forgotten(&c, "x9").unwrap());
    assert!(!exchange_forgotten(&c, "x2").unwrap());
    let record: String =
        c.query_row("SELECT detail FROM memory_deletions WHERE reason = 'user'", [], |r| r.get(0)).unwrap();
    assert!(!record.to_lowercase().contains("zanzibar") && record.contains("chat_history"), "{record}");
    drop(c);
    let hits = file_bytes_contain(dir.path(), SECRET.as_bytes());
    assert!(hits.is_empty(), "the secret is still on disk in {hits:?}");
    assert!(file_bytes_contain(dir.path(), b"locker code").is_empty(), "the statement's words are gone too");
    let vector = 1234.5678f32.to_le_bytes();
    assert!(file_bytes_contain(dir.path(), &vector).is_empty(), "a forgotten vector's floats are gone");
}

#[test]
fn every_fts_index_deletes_securely() {
    let c = crate::store::open_in_memory().unwrap();
    for t in FTS_TABLES {
        let on: i64 = c
            .query_row(&format!("SELECT v FROM {t}_config WHERE k = 'secure-delete'"), [], |r| r.get(0))
            .unwrap_or_else(|e| panic!("{t}: {e}"));
        assert_eq!(on, 1, "{t}");
    }
}

#[test]
fn an_exchange_takes_the_trait_rows_it_wrote_not_another_value_of_the_key() {
    // x1 said "I live in Porto" (row 1, since superseded by Lisbon, row 2): forgetting x1 takes
    // Porto; the key alone would find the current row first.
    let mut c = crate::store::open_in_memory().unwrap();
    c.execute_batch(
        "INSERT INTO user_traits (id, trait_key, trait_value, confidence, created_at, updated_at, reliability)
           VALUES (1, 'location', 'Porto', 0.9, 1, 2, 'superseded'), (2, 'location', 'Lisbon', 0.9, 2, 2, 'reliable');
         INSERT INTO interaction_log (exchange_id, event_type, payload, created_at)
           VALUES ('x1', 'memory_chunk', '{\"summary\":{\"traits\":[[\"location\",\"insert\"]]},\"trait_ids\":[1]}', 1);",
    )
    .unwrap();
    let p = Purge { exchanges: vec!["x1".into()], ..Purge::default() };
    purge(&mut c, &p).unwrap();
    let left: Vec<String> = strings(&c, "SELECT trait_value FROM user_traits ORDER BY id");
    assert_eq!(left, ["Lisbon"]);
}

#[test]
fn a_forgotten_word_is_taken_whole_not_out_of_longer_words() {
    // Forgetting cousin Zed5 must not take Zed50, nor what merely contains the letters.
    let mut c = crate::store::open_in_memory().unwrap();
    let chat = ChatRepo(&c);
    chat.append("t1", "x5", "user", "my cousin Zed5 lives in Town5", None, None).unwrap();
    chat.append("t1", "x50", "user", "my cousin Zed50 lives in Town50", None, None).unwrap();
    chat.append("t1", "x6", "user", "Zed5's birthday is in May", None, None).unwrap();
    c.execute_batch(
        "INSERT INTO gists (topic, thread_id, gist_type, content, confidence, created_at, expires_at)
           VALUES ('family', 't1', 'fact', 'cousin Zed50 lives in Town50', 5, 1, 9999999999),
                  ('family', 't1', 'fact', 'cousin zed5 lives in Town5', 5, 1, 9999999999);",
    )
    .unwrap();
    let p = Purge { needles: vec!["Zed5".into(), "Town5".into()], ..Purge::default() };
    let purged = purge(&mut c, &p).unwrap();
    let lines: Vec<String> = strings(&c, "SELECT content FROM chat_history ORDER BY id");
    assert_eq!(lines, [FORGOTTEN_LINE, "my cousin Zed50 lives in Town50", FORGOTTEN_LINE]);
    let gists: Vec<String> = strings(&c, "SELECT content FROM gists");
    assert_eq!(gists, ["cousin Zed50 lives in Town50"]);
    assert_eq!(purged.lines, ["x5", "x6"]);
}

#[test]
fn a_job_whose_exchange_is_kept_loses_the_words_not_the_job() {
    // x7's topic label was named after the forgotten message (one topic for both): its encode
    // job stays, label redacted, and its episode will still be written. x8's own line held
    // the word: its job goes with it.
    let mut c = crate::store::open_in_memory().unwrap();
    let chat = ChatRepo(&c);
    chat.append("t1", "x8", "user", "my cousin Zed28 lives in Town28", None, Some("cousin-zed28-lives")).unwrap();
    chat.append("t1", "x7", "user", "what should I cook tonight?", None, Some("cousin-zed28-lives")).unwrap();
    c.execute_batch(
        "INSERT INTO jobs (queue, payload, state, run_after, created_at, updated_at) VALUES
           ('encode', '{\"exchange_id\":\"x8\",\"topic\":\"cousin-zed28-lives\",\"user_text\":\"my cousin Zed28 lives in Town28\"}', 'queued', 0, 1, 1),
           ('encode', '{\"exchange_id\":\"x7\",\"topic\":\"cousin-zed28-lives\",\"user_text\":\"what should I cook tonight?\"}', 'queued', 0, 1, 1);",
    )
    .unwrap();
    let p = Purge { needles: vec!["Zed28".into()], ..Purge::default() };
    purge(&mut c, &p).unwrap();
    let jobs: Vec<String> = strings(&c, "SELECT payload FROM jobs");
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    let job: Value = serde_json::from_str(&jobs[0]).unwrap();
    assert_eq!(job["exchange_id"], "x7");
    assert_eq!(job["topic"], "cousin-[forgotten]-lives");
    assert_eq!(job["user_text"], "what should I cook tonight?");
}
