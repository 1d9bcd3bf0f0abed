use super::*;
use serde_json::json;

/// Every store the seeds name must exist after migration.
const TABLES: &[&str] = &[
    "threads",
    "chat_history",
    "working_memory",
    "topics",
    "boundary_state",
    "boundary_recent",
    "gists",
    "facts",
    "world_state",
    "fok",
    "episodes",
    "episodes_fts",
    "semantic_concepts",
    "semantic_relationships",
    "user_traits",
    "identity_vectors",
    "memory_deletions",
    "episode_vec",
    "concept_vec",
    "trait_vec",
    "uncertainties",
    "routing_decisions",
    "router_weights",
    "routing_adjustments",
    "triage_calibration",
    "cortex_iterations",
    "interaction_log",
    "lists",
    "list_items",
    "list_history",
    "reminders",
    "focus_sessions",
    "persistent_tasks",
    "drift_thoughts",
    "curiosity_threads",
    "regulator_state",
    "kv_state",
    "jobs",
];

/// Every row `sql` returns, each read by `row`.
fn rows<T>(conn: &Connection, sql: &str, row: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>) -> Vec<T> {
    conn.prepare(sql).unwrap().query_map([], row).unwrap().collect::<Result<_, _>>().unwrap()
}

fn tables(conn: &Connection) -> Vec<String> {
    rows(conn, "SELECT name FROM sqlite_master WHERE type = 'table'", |r| r.get(0))
}

/// An in-memory database migrated to `version` only, as one written then would be.
fn at_version(version: u32) -> Connection {
    register_sqlite_vec();
    let conn = Connection::open_in_memory().unwrap();
    for m in MIGRATIONS.iter().take_while(|m| m.version <= version) {
        conn.execute_batch(m.sql).unwrap();
    }
    conn.pragma_update(None, "user_version", version).unwrap();
    conn
}

fn columns(conn: &Connection, table: &str) -> Vec<String> {
    rows(conn, &format!("PRAGMA table_info({table})"), |r| r.get(1))
}

#[test]
fn migrates_from_empty_to_full_schema() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/dir/chalie.db");
    let conn = open(&path).unwrap();
    let have = tables(&conn);
    for t in TABLES {
        assert!(have.iter().any(|h| h == t), "missing table {t}");
    }
    let version: u32 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
    assert_eq!(version, latest_version());
    let mode: String = conn.pragma_query_value(None, "journal_mode", |r| r.get(0)).unwrap();
    assert_eq!(mode, "wal");
    for t in ["user_traits", "episodes", "semantic_concepts"] {
        assert!(columns(&conn, t).contains(&"reliability".to_string()), "{t} lacks reliability");
    }
    for t in ["working_memory", "gists", "facts"] {
        assert!(columns(&conn, t).contains(&"expires_at".to_string()), "{t} lacks expires_at");
    }
    let rd = columns(&conn, "routing_decisions");
    for c in [
        "topic",
        "selected_mode",
        "router_confidence",
        "scores",
        "tiebreaker_used",
        "tiebreaker_candidates",
        "margin",
        "effective_margin",
        "signal_snapshot",
        "weight_snapshot",
        "routing_time_ms",
        "feedback",
        "reflection",
        "previous_mode",
        "created_at",
    ] {
        assert!(rd.contains(&c.to_string()), "routing_decisions lacks {c}");
    }
}

#[test]
fn migration_rerun_is_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chalie.db");
    {
        let conn = open(&path).unwrap();
        ChatRepo(&conn).append("t1", "x1", "user", "keep me", None, None).unwrap();
    }
    let mut conn = open(&path).unwrap();
    assert_eq!(migrate(&mut conn).unwrap(), 0);
    assert_eq!(ChatRepo(&conn).recent("t1", 10).unwrap()[0].content, "keep me");
}

#[test]
fn refuses_a_database_from_a_newer_program() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chalie.db");
    {
        let conn = open(&path).unwrap();
        conn.pragma_update(None, "user_version", latest_version() + 1).unwrap();
    }
    assert!(matches!(open(&path), Err(StoreError::TooNew { .. })));
}

#[test]
fn chat_round_trip() {
    let conn = open_in_memory().unwrap();
    let repo = ChatRepo(&conn);
    assert_eq!(repo.latest_thread().unwrap(), None);
    for i in 0..5 {
        repo.append("t1", &format!("x{i}"), "user", &format!("m{i}"), Some("RESPOND"), Some("topic")).unwrap();
    }
    repo.append("t2", "y", "assistant", "other", None, None).unwrap();
    let last3 = repo.recent("t1", 3).unwrap();
    assert_eq!(last3.iter().map(|m| m.content.as_str()).collect::<Vec<_>>(), ["m2", "m3", "m4"]);
    assert_eq!(last3[0].mode.as_deref(), Some("RESPOND"));
    assert_eq!(repo.latest_thread().unwrap().as_deref(), Some("t2"));
}

fn record(id: &str, mode: &str, created_at: i64) -> RoutingRecord {
    RoutingRecord {
        id: id.into(),
        thread_id: Some("t1".into()),
        topic: "weather-plans".into(),
        exchange_id: Some("x1".into()),
        selected_mode: mode.into(),
        router_confidence: Some(0.42),
        scores: json!({"RESPOND": 0.8, "CLARIFY": 0.3}),
        pre_routed: false,
        tiebreaker_used: true,
        tiebreaker_candidates: Some(json!(["RESPOND", "CLARIFY"])),
        margin: Some(0.1),
        effective_margin: Some(0.2),
        signal_snapshot: json!({"context_warmth": 0.5}).into(),
        weight_snapshot: Some(json!({"respond.base": 0.5}).into()),
        weights_version: Some(1),
        routing_time_ms: Some(0.03),
        fallback: None,
        reasoning: None,
        feedback: None,
        reflection: None,
        previous_mode: None,
        created_at,
        regulator: None,
        adaptive: None,
    }
}

#[test]
fn routing_round_trip_and_filter() {
    let conn = open_in_memory().unwrap();
    let repo = RoutingRepo(&conn);
    let a = record("a", "RESPOND", 100);
    let b = record("b", "CLARIFY", 200);
    repo.insert(&a).unwrap();
    repo.insert(&b).unwrap();
    let all = repo.recent(10, None).unwrap();
    assert_eq!(all, vec![b.clone(), a.clone()]);
    assert_eq!(repo.recent(10, Some("respond")).unwrap(), vec![a]);
    assert!(repo.set_feedback("b", &json!({"label": "correct_route"})).unwrap());
    assert_eq!(repo.recent(1, None).unwrap()[0].feedback, Some(json!({"label": "correct_route"})));
    assert!(!repo.set_feedback("missing", &json!({})).unwrap());
}

#[test]
fn the_thread_s_newest_decision_waits_for_its_verdict_until_one_is_stored() {
    let conn = open_in_memory().unwrap();
    let repo = RoutingRepo(&conn);
    assert_eq!(repo.latest_unjudged_in_thread("t1").unwrap(), None);
    repo.insert(&record("a", "RESPOND", 100)).unwrap();
    repo.insert(&RoutingRecord { thread_id: Some("t2".into()), ..record("other", "ACT", 300) }).unwrap();
    let b = RoutingRecord { exchange_id: Some("x2".into()), ..record("b", "CLARIFY", 200) };
    repo.insert(&b).unwrap();
    let want =
        crate::store::Unjudged { id: "b".into(), exchange_id: Some("x2".into()), selected_mode: "CLARIFY".into() };
    assert_eq!(repo.latest_unjudged_in_thread("t1").unwrap(), Some(want), "the newest of its own thread");
    repo.set_feedback("b", &json!({"label": "correct_route"})).unwrap();
    assert_eq!(
        repo.latest_unjudged_in_thread("t1").unwrap(),
        None,
        "judged: no verdict is written again, and never to an older decision"
    );
}

#[test]
fn jobs_survive_a_crash_and_give_up_eventually() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chalie.db");
    let id = {
        let conn = open(&path).unwrap();
        let jobs = JobsRepo(&conn);
        let id = jobs.enqueue(JobKind::Encode, &json!({"exchange_id": "x1"}), 2).unwrap();
        let job = jobs.claim(JobKind::Encode).unwrap().unwrap();
        assert_eq!(job.payload["exchange_id"], "x1");
        assert!(jobs.claim(JobKind::Encode).unwrap().is_none(), "a running job is not handed out twice");
        id
        // the process "dies" here with the job running
    };
    let conn = open(&path).unwrap();
    let jobs = JobsRepo(&conn);
    assert_eq!(jobs.recover_interrupted().unwrap(), 1);
    let job = jobs.claim(JobKind::Encode).unwrap().unwrap();
    assert_eq!((job.id, job.attempts), (id, 2));
    jobs.fail(id, "model returned junk", 0).unwrap();
    assert!(jobs.claim(JobKind::Encode).unwrap().is_none(), "out of attempts: failed, not retried forever");
    let state: String = conn.query_row("SELECT state FROM jobs WHERE id = ?1", [id], |r| r.get(0)).unwrap();
    assert_eq!(state, "failed");

    let id2 = jobs.enqueue(JobKind::Encode, &json!({}), 3).unwrap();
    jobs.claim(JobKind::Encode).unwrap().unwrap();
    jobs.complete(id2).unwrap();
    assert_eq!(jobs.pending_count().unwrap(), 0);
}

#[test]
fn done_jobs_are_pruned_to_a_short_history_per_queue_while_live_and_failed_ones_stay() {
    let conn = open_in_memory().unwrap();
    let jobs = JobsRepo(&conn);
    let failed = jobs.enqueue(JobKind::Chunk, &json!({"exchange_id": "bad"}), 1).unwrap();
    jobs.claim(JobKind::Chunk).unwrap().unwrap();
    jobs.fail(failed, "junk", 0).unwrap();
    let semantic = jobs.enqueue(JobKind::Semantic, &json!({"reason": "volume"}), 3).unwrap();
    jobs.claim(JobKind::Semantic).unwrap().unwrap();
    jobs.complete(semantic).unwrap();
    let waiting = jobs.enqueue(JobKind::Chunk, &json!({"exchange_id": "later"}), 3).unwrap();
    for n in 0..2_000 {
        let id = jobs.enqueue(JobKind::Encode, &json!({"exchange_id": format!("x{n}")}), 3).unwrap();
        assert_eq!(jobs.claim(JobKind::Encode).unwrap().unwrap().id, id);
        jobs.complete(id).unwrap();
    }
    let count = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap();
    let done = count("SELECT COUNT(*) FROM jobs WHERE queue = 'encode' AND state = 'done'");
    assert!((DONE_KEPT..=DONE_KEPT + 64).contains(&done), "{done} done encode rows kept");
    assert_eq!(jobs.exchange_state(JobKind::Encode, "x1999").unwrap(), Some(JobState::Done), "the newest stay");
    assert_eq!(jobs.exchange_state(JobKind::Encode, "x3").unwrap(), None, "an old one reads as finished");
    assert!(jobs.last_queued_at(JobKind::Semantic).unwrap().is_some(), "a queue's newest done job stays");
    assert_eq!(jobs.exchange_state(JobKind::Chunk, "bad").unwrap(), Some(JobState::Failed));
    assert_eq!(jobs.claim(JobKind::Chunk).unwrap().map(|j| j.id), Some(waiting), "live work is untouched");
}

#[test]
fn an_exchange_s_rows_are_found_by_index_not_by_walking_the_history() {
    let conn = open_in_memory().unwrap();
    let plan = |sql: &str| -> String {
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        let rows = stmt.query_map([], |r| r.get::<_, String>(3)).unwrap();
        rows.map(Result::unwrap).collect::<Vec<_>>().join("; ")
    };
    for (sql, index) in [
        (
            "SELECT state FROM jobs WHERE queue = 'encode' AND json_extract(payload, '$.exchange_id') = 'x' \
             ORDER BY id DESC LIMIT 1",
            "idx_jobs_exchange",
        ),
        (
            "UPDATE chat_history SET mode = 'x' WHERE thread_id = 't' AND exchange_id = 'x' AND role = 'user'",
            "idx_chat_history_exchange",
        ),
        ("UPDATE triage_calibration SET outcome = '{}' WHERE exchange_id = 'x'", "idx_triage_exchange"),
        ("SELECT id FROM episodes WHERE exchange_id = 'x' AND deleted_at IS NULL", "idx_episodes_exchange"),
        ("DELETE FROM kv_state WHERE namespace = 'graph_fired' AND updated_at < 5", "idx_kv_state_age"),
        // Migration 0021: the turn's reads of its thread's past user lines and last decision.
        (
            "SELECT created_at FROM chat_history WHERE thread_id = 't' AND role = 'user' \
             AND id NOT IN (SELECT id FROM chat_history WHERE exchange_id = 'x' AND role = 'user') \
             ORDER BY id DESC LIMIT 200",
            "COVERING INDEX idx_chat_history_user_times",
        ),
        (
            "SELECT id FROM routing_decisions WHERE thread_id = 't' ORDER BY created_at DESC, rowid DESC LIMIT 1",
            "idx_routing_thread",
        ),
    ] {
        let p = plan(sql);
        assert!(p.contains(index), "{sql}\n  plan: {p}");
    }
}

/// A kept statement is not planned again when its parameters change: neither a `LIKE ?` nor,
/// after ANALYZE, an equality on an indexed column (the planner's stability guarantee, set in
/// `configure`). Each re-preparation parses and plans the statement again.
#[test]
fn a_kept_statement_is_not_planned_again_for_new_parameters() {
    let dir = tempfile::tempdir().unwrap();
    let conn = open(&dir.path().join("qpsg.db")).unwrap();
    let f = fixtures::Fixture(&conn);
    for i in 0..200 {
        f.insert(
            "kv_state",
            &[("namespace", &format!("ns{}", i % 7)), ("key", &format!("k{i}")), ("value", &"v"), ("updated_at", &i)],
        );
    }
    conn.execute_batch("ANALYZE;").unwrap();
    for sql in ["SELECT count(*) FROM kv_state WHERE namespace = ?1", "SELECT count(*) FROM kv_state WHERE key LIKE ?1"]
    {
        for arg in ["ns1", "%k1%", "ns3", "k2%"] {
            let _: i64 = conn.prepare_cached(sql).unwrap().query_row([arg], |r| r.get(0)).unwrap();
        }
        let stmt = conn.prepare_cached(sql).unwrap();
        assert_eq!(stmt.get_status(rusqlite::StatementStatus::RePrepare), 0, "{sql}");
    }
}

fn unit(hot: usize, mix: f32) -> Vec<f32> {
    let mut v = vec![0.0f32; EMBEDDING_DIM];
    v[hot] = 1.0;
    v[(hot + 1) % EMBEDDING_DIM] = mix;
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter().map(|x| x / n).collect()
}

#[test]
fn vec0_knn_finds_nearest_by_cosine() {
    let conn = open_in_memory().unwrap();
    let repo = VectorRepo(&conn);
    repo.upsert(VecTable::Episodes, 1, &unit(0, 0.0)).unwrap();
    repo.upsert(VecTable::Episodes, 2, &unit(0, 0.5)).unwrap();
    repo.upsert(VecTable::Episodes, 3, &unit(7, 0.0)).unwrap();
    repo.upsert(VecTable::Concepts, 9, &unit(0, 0.0)).unwrap();
    let hits = repo.knn(VecTable::Episodes, &unit(0, 0.1), 2).unwrap();
    assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), [1, 2]);
    assert!(hits[0].1 < hits[1].1 && hits[0].1 < 0.01);
    // Replacing a vector keeps one row per id.
    repo.upsert(VecTable::Episodes, 1, &unit(7, 0.0)).unwrap();
    let hits = repo.knn(VecTable::Episodes, &unit(7, 0.0), 5).unwrap();
    assert_eq!(hits.len(), 3);
    assert_eq!(hits.iter().filter(|h| h.0 == 1).count(), 1);
    repo.delete(VecTable::Episodes, 1).unwrap();
    assert_eq!(repo.knn(VecTable::Episodes, &unit(7, 0.0), 5).unwrap().len(), 2);
    assert!(matches!(repo.upsert(VecTable::Traits, 1, &[1.0, 0.0]), Err(StoreError::Dimension { got: 2, .. })));
}

#[test]
fn episodes_are_full_text_indexed() {
    let conn = open_in_memory().unwrap();
    let now = now_ts();
    conn.execute(
        "INSERT INTO episodes (gist, action, created_at, updated_at) VALUES (?1, ?2, ?3, ?3)",
        rusqlite::params!["User planned a trip to Lisbon", "booked flights", now],
    )
    .unwrap();
    let n: i64 = conn
        .query_row("SELECT COUNT(*) FROM episodes_fts WHERE episodes_fts MATCH 'lisbon'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 1);
}

#[tokio::test]
async fn async_handle_runs_on_its_own_thread() {
    let db = Db::spawn(open_in_memory().unwrap());
    db.call(|c| ChatRepo(c).append("t", "x", "user", "hi", None, None)).await.unwrap();
    let msgs = db.call(|c| ChatRepo(c).recent("t", 5)).await.unwrap();
    assert_eq!(msgs.len(), 1);
    let err = db.call(|c| VectorRepo(c).knn(VecTable::Traits, &[0.0], 1)).await.unwrap_err();
    assert!(matches!(err, StoreError::Dimension { .. }));
}

#[test]
fn context_traits_skip_weak_ones_put_statements_first_and_flag_the_rest() {
    let conn = open_in_memory().unwrap();
    let add = |key: &str, conf: f64, source: &str, reliability: &str| {
        conn.execute(
            "INSERT INTO user_traits (trait_key, trait_value, confidence, source, reliability, created_at, updated_at)
             VALUES (?1, 'v', ?2, ?3, ?4, 1, 1)",
            rusqlite::params![key, conf, source, reliability],
        )
        .unwrap();
    };
    add("guessed_hobby", 0.9, "inferred", "reliable");
    add("stated_city", 0.6, "explicit", "reliable");
    add("faint", 0.29, "inferred", "reliable");
    add("disputed", 0.95, "explicit", "contradicted");
    add("stated_city", 0.9, "explicit", "superseded");
    add("gone", 0.9, "explicit", "superseded");
    let rows: Vec<(String, String)> =
        TurnRepo(&conn).traits().unwrap().into_iter().map(|t| (t.key, t.reliability)).collect();
    let want = [
        ("stated_city", "reliable"),
        ("guessed_hobby", "reliable"),
        ("disputed", "contradicted"),
        ("stated_city", "superseded"),
    ];
    assert_eq!(
        rows,
        want.map(|(k, r)| (k.to_string(), r.to_string())),
        "current first, contradicted flagged, past last"
    );
}

/// Migration 8 rebuilds `semantic_relationships`: `weight` keeps the signed strength, the
/// `strength` column goes, and the bound widens to ±10.
#[test]
fn graph_migration_keeps_edges_signed_and_widens_the_bound() {
    let mut conn = at_version(6);
    conn.execute_batch(
        "INSERT INTO semantic_concepts (id, name, created_at, updated_at) VALUES (1, 'a', 0, 0), (2, 'b', 0, 0);
         INSERT INTO semantic_relationships (source_id, target_id, rel_type, strength, weight, bidirectional,
                                             created_at, updated_at)
         VALUES (1, 2, 'contradicts', 0.8, -0.8, 1, 0, 0), (1, 2, 'is-a', 0.6, 0.6, 0, 0, 0);",
    )
    .unwrap();
    assert_eq!(migrate(&mut conn).unwrap(), MIGRATIONS.len() - 6);
    let read: Vec<(String, f64, bool)> =
        rows(&conn, "SELECT rel_type, weight, bidirectional FROM semantic_relationships ORDER BY id", |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        });
    assert_eq!(read, [("contradicts".into(), -0.8, true), ("is-a".into(), 0.6, false)]);
    assert!(!columns(&conn, "semantic_relationships").contains(&"strength".to_string()));
    for c in ["threshold", "probation", "graph_key"] {
        assert!(columns(&conn, "semantic_concepts").contains(&c.to_string()), "semantic_concepts lacks {c}");
    }
    // Migration 0021 moved the activation state into its own narrow table.
    for c in ["trace", "potential"] {
        assert!(!columns(&conn, "semantic_concepts").contains(&c.to_string()), "semantic_concepts keeps {c}");
        assert!(columns(&conn, "concept_traces").contains(&c.to_string()), "concept_traces lacks {c}");
    }
    // Migration 0025 moved the firing counts and times into their own narrow table.
    for c in ["fired_count", "last_fired_at"] {
        assert!(!columns(&conn, "semantic_concepts").contains(&c.to_string()), "semantic_concepts keeps {c}");
        assert!(columns(&conn, "concept_firings").contains(&c.to_string()), "concept_firings lacks {c}");
    }
    conn.execute("UPDATE semantic_relationships SET weight = 9.5 WHERE rel_type = 'is-a'", []).unwrap();
    assert!(conn.execute("UPDATE semantic_relationships SET weight = 10.5 WHERE rel_type = 'is-a'", []).is_err());
}

/// Migration 25 carries each fired concept's count and time into `concept_firings`, and only
/// those: a concept that never fired has no row there.
#[test]
fn the_firing_counts_move_to_their_own_table() {
    let mut conn = at_version(24);
    conn.execute_batch(
        "INSERT INTO semantic_concepts (id, name, fired_count, last_fired_at, created_at, updated_at)
         VALUES (1, 'a', 3, 70, 0, 0), (2, 'b', 0, NULL, 0, 0), (3, 'c', 1, 90, 0, 0);",
    )
    .unwrap();
    assert_eq!(migrate(&mut conn).unwrap(), MIGRATIONS.len() - 24);
    let read: Vec<(i64, i64, Option<i64>)> =
        rows(&conn, "SELECT id, fired_count, last_fired_at FROM concept_firings ORDER BY id", |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        });
    assert_eq!(read, [(1, 3, Some(70)), (3, 1, Some(90))]);
}

#[test]
fn the_memory_map_asked_for_is_the_one_sqlite_grants() {
    let dir = tempfile::tempdir().unwrap();
    let conn = open(&dir.path().join("mmap.db")).unwrap();
    let granted: i64 = conn.query_row("PRAGMA mmap_size", [], |r| r.get(0)).unwrap();
    // SQLite cuts a larger request to its ceiling without a word; asking for exactly that keeps
    // the constant honest.
    assert_eq!(granted, MMAP_BYTES);
}
