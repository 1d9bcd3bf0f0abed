//! `chalie-tui memory`: listing a layer (table and JSON), searching, forgetting by typed id,
//! and the exit codes for a bad id, against a seeded database in a temporary data dir; and
//! `chalie-tui status`, the background workers' report.

use crate::support::bin::{chalie, text};
use serde_json::Value;
use std::process::Output;

fn json(out: &Output) -> Value {
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stdout)))
}

/// Two episodes (one with an embedding), a trait and a fact, written the way the memory
/// workers write them.
fn seeded() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let conn = chalie::store::open(&dir.path().join("chalie.db")).unwrap();
    let now = chalie::store::now_ts();
    conn.execute_batch(&format!(
        "INSERT INTO episodes (id, gist, action, topic, thread_id, exchange_id, salience, created_at, updated_at)
         VALUES (1, 'Planned a hiking trip to the Alps', 'planning', 'travel', 't1', 'x1', 7, {now} - 100, {now} - 100),
                (2, 'Fixed a flaky test in the parser', 'coding', 'rust', 't1', 'x2', 5, {now}, {now});
         INSERT INTO user_traits (id, trait_key, trait_value, confidence, source, created_at, updated_at, reliability)
         VALUES (7, 'sister', 'Maria', 0.9, 'explicit', {now}, {now}, 'uncertain');
         INSERT INTO facts (id, topic, key, value, confidence, created_at, updated_at, expires_at)
         VALUES (5, 'travel', 'destination', 'Chamonix', 0.8, {now}, {now}, {now} + 86400);"
    ))
    .unwrap();
    let mut v = vec![0.0f32; chalie::store::EMBEDDING_DIM];
    v[0] = 1.0;
    chalie::store::VectorRepo(&conn).upsert(chalie::store::VecTable::Episodes, 1, &v).unwrap();
    dir
}

#[test]
fn lists_a_layer_as_a_json_array_with_typed_ids_and_provenance() {
    let dir = seeded();
    let rows = json(&chalie(dir.path(), &["memory", "--json", "episodes"]));
    let rows = rows.as_array().expect("an array");
    assert_eq!(rows.iter().map(|r| r["id"].as_str().unwrap()).collect::<Vec<_>>(), ["episode:2", "episode:1"]);
    let hike = &rows[1];
    assert_eq!(hike["text"], "Planned a hiking trip to the Alps");
    assert_eq!(hike["reliability"], "reliable");
    for (k, v) in [("thread_id", "t1"), ("exchange_id", "x1"), ("topic", "travel")] {
        assert_eq!(hike["provenance"][k], v, "{k}");
    }
    assert!(hike["created_at"].is_i64());

    let traits = json(&chalie(dir.path(), &["memory", "traits", "--json"]));
    assert_eq!(traits[0]["id"], "trait:7");
    assert_eq!(traits[0]["provenance"]["source"], "explicit");
    assert_eq!(traits[0]["reliability"], "uncertain");
}

#[test]
fn plain_listing_is_an_aligned_table() {
    let dir = seeded();
    let out = chalie(dir.path(), &["memory", "facts"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(lines.len(), 2, "{s}");
    assert!(lines[0].starts_with("id") && lines[0].ends_with("text"), "{s}");
    assert!(lines[1].starts_with("fact:5") && lines[1].ends_with("destination: Chamonix"), "{s}");
    let col = lines[0].find("note").unwrap();
    assert_eq!(&lines[1][col..col + 6], "travel", "columns line up: {s}");
}

#[test]
fn search_narrows_the_listing() {
    let dir = seeded();
    let hits = json(&chalie(dir.path(), &["memory", "--json", "--search", "hik", "episodes"]));
    assert_eq!(hits.as_array().unwrap().len(), 1);
    assert_eq!(hits[0]["id"], "episode:1");
    let none = chalie(dir.path(), &["memory", "--search", "volcano", "episodes"]);
    assert!(none.status.success());
    assert!(text(&none.stdout).contains("No episodes mention \"volcano\""), "{}", text(&none.stdout));
    let limited = json(&chalie(dir.path(), &["memory", "--json", "--limit", "1", "episodes"]));
    assert_eq!(limited.as_array().unwrap().len(), 1);
}

#[test]
fn forget_removes_the_memory_and_records_it() {
    let dir = seeded();
    let out = json(&chalie(dir.path(), &["memory", "forget", "episode:1", "--json"]));
    assert_eq!(out["id"], "episode:1");
    assert!(!out.to_string().contains("hiking"), "the answer does not repeat what was forgotten: {out}");
    assert!(out["rows"]["episodes"].as_u64().is_some_and(|n| n >= 1), "{out}");
    let rows = json(&chalie(dir.path(), &["memory", "--json", "episodes"]));
    assert_eq!(rows.as_array().unwrap().len(), 1, "{rows}");
    assert_eq!(rows[0]["id"], "episode:2");

    let conn = chalie::store::open(&dir.path().join("chalie.db")).unwrap();
    let (layer, row, reason): (String, String, String) = conn
        .query_row("SELECT layer, row_id, reason FROM memory_deletions WHERE reason = 'user'", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .unwrap();
    assert_eq!((layer.as_str(), row.as_str(), reason.as_str()), ("episode", "1", "user"));
    let vecs: i64 = conn.query_row("SELECT COUNT(*) FROM episode_vec", [], |r| r.get(0)).unwrap();
    assert_eq!(vecs, 0, "the embedding is gone");

    let plain = chalie(dir.path(), &["memory", "forget", "trait:7"]);
    assert!(plain.status.success(), "{}", text(&plain.stderr));
    assert!(text(&plain.stdout).starts_with("Forgot trait:7 ("), "{}", text(&plain.stdout));
    assert!(!text(&plain.stdout).contains("Maria"), "{}", text(&plain.stdout));
}

#[test]
fn a_bad_id_exits_1_and_deletes_nothing() {
    let dir = seeded();
    for (id, says) in [("episode:1x", "not a memory id"), ("42", "not a memory id"), ("fact:99", "there is no fact:99")]
    {
        let out = chalie(dir.path(), &["memory", "forget", id]);
        assert_eq!(out.status.code(), Some(1), "{id}");
        assert!(text(&out.stderr).contains(says), "{id}: {}", text(&out.stderr));
    }
    assert!(chalie(dir.path(), &["memory", "forget", "episode:2"]).status.success());
    let again = chalie(dir.path(), &["memory", "forget", "episode:2"]);
    assert_eq!(again.status.code(), Some(1));
    assert!(text(&again.stderr).contains("already forgotten"), "{}", text(&again.stderr));
    let conn = chalie::store::open(&dir.path().join("chalie.db")).unwrap();
    let n: i64 =
        conn.query_row("SELECT COUNT(*) FROM memory_deletions WHERE reason = 'user'", [], |r| r.get(0)).unwrap();
    assert_eq!(n, 1, "only the one real forget is recorded");
    // Usage errors stay clap's.
    assert_eq!(chalie(dir.path(), &["memory", "forget"]).status.code(), Some(2));
    assert_eq!(chalie(dir.path(), &["memory"]).status.code(), Some(2));
    assert_eq!(chalie(dir.path(), &["memory", "bogus"]).status.code(), Some(2));
}

/// `chalie-tui status` lists every background worker with its queue depth, read from the
/// database when no app is running.
#[test]
fn status_lists_every_worker_with_its_queue_depth() {
    let dir = tempfile::tempdir().unwrap();
    let conn = chalie::store::open(&dir.path().join("chalie.db")).unwrap();
    let jobs = chalie::store::JobsRepo(&conn);
    for _ in 0..2 {
        jobs.enqueue(chalie::store::JobKind::Chunk, &serde_json::json!({"exchange_id": "x"}), 3).unwrap();
    }
    drop(conn);
    let out = chalie(dir.path(), &["status"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    let names: Vec<&str> = lines.iter().filter_map(|l| l.split_whitespace().next()).collect();
    assert_eq!(
        names,
        [
            "reembed",
            "episodic",
            "chunker",
            "semantic",
            "decay",
            "scheduler",
            "drift",
            "tasks",
            "router",
            "topics",
            "reflection",
            "checkpoint",
        ],
        "{stdout}"
    );
    let chunker = lines.iter().find(|l| l.starts_with("chunker")).unwrap();
    assert!(chunker.contains("queue 2"), "{chunker}");
    let episodic = lines.iter().find(|l| l.starts_with("episodic")).unwrap();
    assert!(episodic.contains("queue 0"), "{episodic}");
}

#[test]
fn lists_uncertainty_records_reading_their_memories_at_display_time() {
    let dir = seeded();
    {
        let conn = chalie::store::open(&dir.path().join("chalie.db")).unwrap();
        let rec = chalie::store::NewUncertainty {
            a: ("trait", "7".into()),
            b: Some(("fact", "5".into())),
            kind: "contradiction",
            severity: "critical",
            context: "ingestion",
            reasoning: Some("two values for one slot"),
            temporal_signal: false,
            surface_context: Some("family"),
            resolved: None,
        };
        chalie::store::UncertaintiesRepo(&conn).insert(&rec, 100).unwrap();
    }
    let rows = json(&chalie(dir.path(), &["memory", "--json", "uncertainties"]));
    let r = &rows.as_array().expect("an array")[0];
    for (k, v) in [
        ("kind", "contradiction"),
        ("severity", "critical"),
        ("state", "open"),
        ("memory_a", "trait:7"),
        ("memory_b", "fact:5"),
        ("reasoning", "two values for one slot"),
        ("surface_context", "family"),
        ("memory_a_text", "sister: Maria"),
        ("memory_b_text", "destination: Chamonix"),
    ] {
        assert_eq!(r[k], v, "{k}");
    }
    assert!(r["id"].is_string() && r["created_at"] == 100);
    assert_eq!(r["memory_a_replaced_by"], Value::Null, "a current trait was replaced by nothing");
    // Forgetting a memory leaves no copy of its text in the record.
    assert!(chalie(dir.path(), &["memory", "forget", "trait:7"]).status.success());
    let rows = json(&chalie(dir.path(), &["memory", "--json", "uncertainties"]));
    assert_eq!(rows[0]["memory_a_text"], Value::Null);
    assert_eq!(rows[0]["state"], "decayed");
    let plain = chalie(dir.path(), &["memory", "uncertainties"]);
    assert!(text(&plain.stdout).contains("(gone) vs destination: Chamonix"), "{}", text(&plain.stdout));
}

#[test]
fn style_shows_the_profile_and_micro_preferences_and_forget_style_resets_them() {
    let dir = tempfile::tempdir().unwrap();
    {
        let conn = chalie::store::open(&dir.path().join("chalie.db")).unwrap();
        for text in ["ok", "fine", "yes"] {
            chalie::memory::style::observe_and_save(&conn, &chalie::memory::style::observe(text).unwrap()).unwrap();
        }
        let t = chalie::cognition::adaptive::state::TurnInput {
            text: "no bullet points please",
            last_reply_words: None,
            answers: true,
            now: chalie::store::now_ts(),
        };
        chalie::cognition::adaptive::state::prepare(&conn, &t).unwrap();
    }
    let v = json(&chalie(dir.path(), &["memory", "--json", "style"]));
    assert_eq!(v["profile"]["observations"], 3);
    assert_eq!(v["micro_preferences"][0]["key"], "format");
    assert_eq!(v["micro_preferences"][0]["value"], "prose");
    let texts: Vec<&str> = v["directives"].as_array().unwrap().iter().filter_map(|d| d["text"].as_str()).collect();
    assert!(texts.contains(&"No bullet points or lists: write plain sentences."), "{texts:?}");
    assert!(texts.contains(&"Keep replies brief: a few sentences."), "{texts:?}");
    let plain = chalie(dir.path(), &["memory", "style"]);
    assert!(text(&plain.stdout).contains("format = prose"), "{}", text(&plain.stdout));

    let r = json(&chalie(dir.path(), &["memory", "forget", "style", "--json"]));
    assert_eq!((r["profile"].as_bool(), r["micro_preferences"].as_u64()), (Some(true), Some(1)));
    let v = json(&chalie(dir.path(), &["memory", "--json", "style"]));
    assert!(v["profile"].is_null() && v["micro_preferences"].as_array().unwrap().is_empty(), "{v}");
    assert!(v["directives"].as_array().unwrap().is_empty());
}
