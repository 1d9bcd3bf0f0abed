//! Listing, searching and forgetting in every layer, against a seeded in-memory database.

use super::super::{EMBEDDING_DIM, ForgetError, VecTable, VectorRepo, forget, open_in_memory};
use super::*;
use rusqlite::params;

const NOW_PAD: i64 = 100_000;

fn unit(i: usize) -> Vec<f32> {
    let mut v = vec![0.0; EMBEDDING_DIM];
    v[i] = 1.0;
    v
}

/// Two rows in every layer (one live, one that listings must skip where a layer has such).
fn seeded() -> Connection {
    let c = open_in_memory().unwrap();
    let future = now_ts() + NOW_PAD;
    c.execute_batch(&format!(
        "INSERT INTO user_traits (id, trait_key, trait_value, category, confidence, source, reinforcement_count,
                                  last_conflict_at, created_at, updated_at, reliability)
         VALUES (1, 'sister', 'Maria', 'relationship', 0.9, 'explicit', 3, NULL, 10, 10, 'reliable'),
                (2, 'diet', 'vegetarian', 'preference', 0.4, 'inferred', 1, 50, 20, 20, 'contradicted');
         INSERT INTO episodes (id, gist, action, topic, thread_id, exchange_id, salience, created_at, updated_at)
         VALUES (1, 'Planned a hiking trip to the Alps', 'planning', 'travel', 't1', 'x1', 7, 100, 100),
                (2, 'Debugged a borrow checker error', 'coding', 'rust', 't1', 'x2', 5, 200, 200);
         INSERT INTO semantic_concepts (id, name, definition, strength, consolidation_count, source_episodes,
                                        created_at, updated_at)
         VALUES (1, 'hiking', 'walking in mountains', 2.0, 3, '[1]', 5, 5),
                (2, 'rust', '', 1.0, 1, '[2]', 6, 6);
         INSERT INTO semantic_relationships (source_id, target_id, rel_type, created_at, updated_at)
         VALUES (1, 2, 'related-to', 1, 1);
         INSERT INTO gists (id, topic, gist_type, content, confidence, is_cold_start, created_at, expires_at)
         VALUES (1, 'travel', 'intent', 'wants to see glaciers', 8, 0, 300, {future}),
                (2, 'travel', 'cold_start', 'cold start', 5, 1, 301, {future}),
                (3, 'travel', 'fact', 'lapsed 100% gist', 5, 0, 302, 1);
         INSERT INTO facts (id, topic, key, value, confidence, created_at, updated_at, expires_at)
         VALUES (1, 'travel', 'destination', 'Chamonix', 0.8, 400, 400, {future}),
                (2, 'travel', 'budget', 'low', 0.5, 401, 401, 1);
         INSERT INTO lists (id, name, created_at, updated_at) VALUES (1, 'groceries', 500, 500);
         INSERT INTO list_items (list_id, content, checked, added_at, updated_at)
         VALUES (1, 'milk', 0, 500, 500), (1, 'eggs', 1, 500, 500);
         INSERT INTO reminders (id, message, due_at, due_ts, state, created_at)
         VALUES (1, 'call mum', '2026-11-22T09:00', {future}, 'pending', 600),
                (2, 'old one', '2020-01-01T09:00', 1, 'fired', 601);
         INSERT INTO uncertainties (id, memory_a_type, memory_a_id, uncertainty_type, severity,
                                    detection_context, state, created_at)
         VALUES ('u1', 'trait', '2', 'unverified', 'low', 'ingestion', 'open', 1);"
    ))
    .unwrap();
    let v = VectorRepo(&c);
    v.upsert(VecTable::Episodes, 1, &unit(0)).unwrap();
    v.upsert(VecTable::Episodes, 2, &unit(1)).unwrap();
    v.upsert(VecTable::Concepts, 1, &unit(2)).unwrap();
    v.upsert(VecTable::Traits, 2, &unit(3)).unwrap();
    c
}

fn ids(rows: &[MemoryRow]) -> Vec<String> {
    rows.iter().map(|r| r.id.to_string()).collect()
}

fn list(c: &Connection, layer: MemoryLayer, search: Option<&str>) -> Vec<String> {
    ids(&list_layer(c, layer, search, 50).unwrap())
}

#[test]
fn every_layer_lists_its_live_rows_with_typed_ids() {
    let c = seeded();
    assert_eq!(list(&c, MemoryLayer::Traits, None), ["trait:1", "trait:2"], "most confident first");
    assert_eq!(list(&c, MemoryLayer::Episodes, None), ["episode:2", "episode:1"], "newest first");
    assert_eq!(list(&c, MemoryLayer::Concepts, None), ["concept:1", "concept:2"], "strongest first");
    assert_eq!(list(&c, MemoryLayer::Gists, None), ["gist:1"], "no cold-start or lapsed gists");
    assert_eq!(list(&c, MemoryLayer::Facts, None), ["fact:1"], "no lapsed facts");
    assert_eq!(list(&c, MemoryLayer::Lists, None), ["list:1"]);
    assert_eq!(list(&c, MemoryLayer::Reminders, None), ["reminder:1"], "pending only");
    assert_eq!(ids(&list_layer(&c, MemoryLayer::Traits, None, 1).unwrap()), ["trait:1"], "limit");
}

#[test]
fn rows_carry_reliability_and_provenance() {
    let c = seeded();
    let traits = list_layer(&c, MemoryLayer::Traits, None, 10).unwrap();
    assert_eq!(traits[1].text, "diet: vegetarian");
    assert_eq!(traits[1].reliability.as_deref(), Some("contradicted"));
    assert_eq!(traits[1].provenance["source"], "inferred");
    assert_eq!(traits[1].provenance["reinforcement_count"], 1);
    assert_eq!(traits[1].provenance["last_conflict_at"], 50);

    c.execute("UPDATE episodes SET context = '{\"builder\": \"model\"}' WHERE exchange_id = 'x1'", []).unwrap();
    let ep = &list_layer(&c, MemoryLayer::Episodes, None, 10).unwrap()[1];
    assert_eq!((ep.reliability.as_deref(), ep.created_at), (Some("reliable"), 100));
    for (k, v) in [("thread_id", "t1"), ("exchange_id", "x1"), ("topic", "travel"), ("builder", "model")] {
        assert_eq!(ep.provenance[k], v, "{k}: who wrote the episode (§16.4) shows in the browser");
    }

    let concept = &list_layer(&c, MemoryLayer::Concepts, None, 10).unwrap()[0];
    assert_eq!(concept.text, "hiking: walking in mountains");
    assert_eq!(concept.provenance["source_episodes"], serde_json::json!([1]), "parsed, not a string");
    assert_eq!(concept.provenance["strength"], 2.0);
    assert_eq!(concept.provenance["consolidation_count"], 3);
    assert_eq!(concept.provenance["relationships"], 1);

    let gist = &list_layer(&c, MemoryLayer::Gists, None, 10).unwrap()[0];
    assert_eq!(gist.confidence, Some(0.8), "gist confidence scaled from 0-10");
    assert!(gist.expires_at.is_some_and(|e| e > now_ts()));
    assert_eq!(gist.provenance["topic"], "travel");

    let groceries = &list_layer(&c, MemoryLayer::Lists, None, 10).unwrap()[0];
    assert_eq!(groceries.text, "groceries: milk; [x] eggs");
    assert_eq!((&groceries.provenance["items"], &groceries.provenance["checked"]), (&2.into(), &1.into()));

    let json = serde_json::to_value(&traits[0]).unwrap();
    assert_eq!(json["id"], "trait:1", "ids serialise in their typed form");
}

#[test]
fn search_uses_full_text_for_episodes_and_like_elsewhere() {
    let c = seeded();
    assert_eq!(list(&c, MemoryLayer::Episodes, Some("hik")), ["episode:1"], "word prefixes match");
    assert_eq!(list(&c, MemoryLayer::Episodes, Some("borrow error")), ["episode:2"], "every word must match");
    assert!(list(&c, MemoryLayer::Episodes, Some("hiking rust")).is_empty());
    assert_eq!(list(&c, MemoryLayer::Episodes, Some("(alps\"*: -")), ["episode:1"], "operators are not run");
    assert_eq!(list(&c, MemoryLayer::Traits, Some("MARIA")), ["trait:1"], "case-insensitive");
    assert_eq!(list(&c, MemoryLayer::Concepts, Some("mountain")), ["concept:1"]);
    assert_eq!(list(&c, MemoryLayer::Facts, Some("chamonix")), ["fact:1"]);
    assert_eq!(list(&c, MemoryLayer::Lists, Some("eggs")), ["list:1"], "a list matches by its items");
    assert_eq!(list(&c, MemoryLayer::Reminders, Some("mum")), ["reminder:1"]);
    assert_eq!(list(&c, MemoryLayer::Gists, Some("%")), Vec::<String>::new(), "% is literal");
    assert_eq!(list(&c, MemoryLayer::Traits, Some("  ")).len(), 2, "a blank search lists everything");
}

#[test]
fn typed_ids_parse_strictly() {
    assert_eq!("episode:42".parse::<MemoryId>().unwrap(), MemoryId { layer: MemoryLayer::Episodes, row: 42 });
    assert_eq!("Traits:7".parse::<MemoryId>().unwrap().to_string(), "trait:7", "plural and case are accepted");
    for bad in ["42", "episode", "episode:", "episode:x", "episode:-1", "episode:0", "memory:3", ""] {
        let e = bad.parse::<MemoryId>().unwrap_err();
        assert!(e.to_string().contains("episode:42"), "{bad}: {e}");
    }
}

fn deletion(c: &Connection, id: i64) -> (String, String, String, serde_json::Value) {
    c.query_row("SELECT layer, row_id, reason, detail FROM memory_deletions WHERE id = ?1", [id], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, serde_json::from_str(&r.get::<_, String>(3)?).unwrap()))
    })
    .unwrap()
}

fn vec_ids(c: &Connection, table: &str) -> Vec<i64> {
    let mut s = c.prepare(&format!("SELECT rowid FROM {table} ORDER BY rowid")).unwrap();
    s.query_map([], |r| r.get(0)).unwrap().collect::<Result<_, _>>().unwrap()
}

#[test]
fn forgetting_an_episode_hides_it_removes_its_vector_and_records_why() {
    let mut c = seeded();
    let id: MemoryId = "episode:1".parse().unwrap();
    let f = forget(&mut c, id).unwrap();
    assert_eq!(list(&c, MemoryLayer::Episodes, None), ["episode:2"]);
    assert!(list(&c, MemoryLayer::Episodes, Some("hiking")).is_empty(), "nor found by search");
    assert_eq!(vec_ids(&c, "episode_vec"), [2]);
    let knn = VectorRepo(&c).knn(VecTable::Episodes, &unit(0), 5).unwrap();
    assert!(knn.iter().all(|(i, _)| *i != 1), "kNN cannot find it: {knn:?}");
    let fast = VectorRepo(&c).search(VecTable::Episodes, &unit(0), 5).unwrap();
    assert!(fast.iter().all(|(i, _)| *i != 1), "nor the search recall uses: {fast:?}");
    let gone: i64 = c.query_row("SELECT COUNT(*) FROM episodes WHERE id = 1", [], |r| r.get(0)).unwrap();
    assert_eq!(gone, 0, "deleted, not hidden: its words must leave the file");
    let (layer, row, reason, detail) = deletion(&c, f.deletion_id);
    assert_eq!((layer.as_str(), row.as_str(), reason.as_str()), ("episode", "1", "user"));
    assert!(!detail.to_string().contains("hiking"), "the record holds no content: {detail}");
    assert!(detail["rows"].is_object(), "only counts per table: {detail}");

    match forget(&mut c, id) {
        Err(ForgetError::AlreadyForgotten { id: again }) => assert_eq!(again, id),
        other => panic!("expected AlreadyForgotten, got {other:?}"),
    }
    let n: i64 = c.query_row("SELECT COUNT(*) FROM memory_deletions WHERE reason = 'user'", [], |r| r.get(0)).unwrap();
    assert_eq!(n, 1, "a refused forget records nothing");
    assert!(crate::store::exchange_forgotten(&c, "x1").unwrap(), "its exchange is not learned again");
}

/// The row's deletion and the purge were two commits: a kill -9 between them left the episode
/// gone, its exchange's lines with their words, and no record of the forget, so asking again
/// (`memory forget episode:N`) said "there is no episode:N". A purge that fails must take the
/// row's deletion back with it.
#[test]
fn a_forget_whose_purge_fails_leaves_the_row_and_its_words_as_they_were() {
    let mut c = seeded();
    crate::store::ChatRepo(&c).append("t1", "x1", "user", "a hiking trip to the Alps", None, None).unwrap();
    // The purge's last write is its audit row: failing there is failing as late as it can.
    c.execute_batch(
        "CREATE TRIGGER fail_audit BEFORE INSERT ON memory_deletions WHEN NEW.reason = 'user'
         BEGIN SELECT RAISE(ABORT, 'the disk went away'); END;",
    )
    .unwrap();
    let id: MemoryId = "episode:1".parse().unwrap();
    assert!(forget(&mut c, id).is_err(), "the trigger must make the forget fail, or the test is void");
    let kept: i64 = c.query_row("SELECT COUNT(*) FROM episodes WHERE id = 1", [], |r| r.get(0)).unwrap();
    assert_eq!(kept, 1, "the episode is still there, so the forget can be asked again");
    assert_eq!(vec_ids(&c, "episode_vec"), [1, 2], "with its vector");
    let line: String =
        c.query_row("SELECT content FROM chat_history WHERE exchange_id = 'x1'", [], |r| r.get(0)).unwrap();
    assert_eq!(line, "a hiking trip to the Alps", "and the line is not half-forgotten");
    c.execute_batch("DROP TRIGGER fail_audit").unwrap();
    forget(&mut c, id).unwrap();
    let gone: i64 = c.query_row("SELECT COUNT(*) FROM episodes WHERE id = 1", [], |r| r.get(0)).unwrap();
    assert_eq!(gone, 0, "asked again, it goes");
}

#[test]
fn forgetting_a_concept_cuts_its_graph_edges() {
    let mut c = seeded();
    let f = forget(&mut c, "concept:1".parse().unwrap()).unwrap();
    assert_eq!(f.relationships, 1);
    assert_eq!(list(&c, MemoryLayer::Concepts, None), ["concept:2"]);
    let edges: i64 = c.query_row("SELECT COUNT(*) FROM semantic_relationships", [], |r| r.get(0)).unwrap();
    assert_eq!(edges, 0);
    assert!(vec_ids(&c, "concept_vec").is_empty());
    assert!(!deletion(&c, f.deletion_id).3.to_string().contains("hiking"));
}

#[test]
fn forgetting_a_trait_deletes_it_and_closes_its_uncertainties() {
    let mut c = seeded();
    let f = forget(&mut c, "trait:2".parse().unwrap()).unwrap();
    assert_eq!(f.uncertainties, 1);
    assert_eq!(list(&c, MemoryLayer::Traits, None), ["trait:1"]);
    assert!(vec_ids(&c, "trait_vec").is_empty());
    let state: String = c.query_row("SELECT state FROM uncertainties WHERE id = 'u1'", [], |r| r.get(0)).unwrap();
    assert_eq!(state, "decayed");
    assert!(!deletion(&c, f.deletion_id).3.to_string().contains("vegetarian"));
}

#[test]
fn forgetting_short_lived_and_skill_rows() {
    let mut c = seeded();
    for (id, layer) in [
        ("gist:1", MemoryLayer::Gists),
        ("fact:1", MemoryLayer::Facts),
        ("list:1", MemoryLayer::Lists),
        ("reminder:1", MemoryLayer::Reminders),
    ] {
        let f = forget(&mut c, id.parse().unwrap()).unwrap();
        assert!(list(&c, layer, None).is_empty(), "{id} still listed");
        let (kind, ..) = deletion(&c, f.deletion_id);
        assert_eq!(kind, layer.kind());
        let twice = forget(&mut c, id.parse().unwrap());
        assert!(matches!(twice, Err(ForgetError::AlreadyForgotten { .. })), "{id} twice: {twice:?}");
    }
    let items: i64 = c.query_row("SELECT COUNT(*) FROM list_items", [], |r| r.get(0)).unwrap();
    assert_eq!(items, 0, "a list's items go with it");
    let snap = &c
        .query_row("SELECT detail FROM memory_deletions WHERE layer = 'list'", [], |r| r.get::<_, String>(0))
        .unwrap();
    assert!(!snap.contains("eggs"), "the record keeps no items: {snap}");
}

#[test]
fn an_unknown_id_deletes_nothing() {
    let mut c = seeded();
    let err = forget(&mut c, "episode:99".parse().unwrap()).unwrap_err();
    assert_eq!(err.to_string(), "there is no episode:99");
    let n: i64 = c.query_row("SELECT COUNT(*) FROM memory_deletions", params![], |r| r.get(0)).unwrap();
    assert_eq!(n, 0);
    assert_eq!(list(&c, MemoryLayer::Episodes, None).len(), 2);
}

/// Drift's thoughts are a layer: listed newest first with kind and action, forgotten with
/// their curiosity thread and the drift gist that carried their words.
#[test]
fn drift_thoughts_are_listed_and_forgotten_with_their_thread_and_gist() {
    let mut c = seeded();
    let future = now_ts() + NOW_PAD;
    c.execute_batch(&format!(
        "INSERT INTO drift_thoughts (id, thought_type, content, action, topic, author, state, created_at)
         VALUES (1, 'question', 'Would the glaciers still be there next summer?', 'SEED_THREAD', 'travel',
                 'template', 'kept', 700),
                (2, 'reflection', 'Borrow checker errors cluster on Mondays', 'REFLECT', 'rust', 'model', 'kept', 800);
         INSERT INTO curiosity_threads (question, topic, drift_thought_id, created_at)
         VALUES ('Would the glaciers still be there next summer?', 'travel', 1, 700);
         INSERT INTO gists (id, topic, gist_type, content, confidence, is_cold_start, created_at, expires_at)
         VALUES (9, 'travel', 'drift', '[question] Would the glaciers still be there next summer?', 8, 0, 700,
                 {future});"
    ))
    .unwrap();
    let rows = list_layer(&c, MemoryLayer::Thoughts, None, 50).unwrap();
    assert_eq!(ids(&rows), ["thought:2", "thought:1"], "newest first");
    assert_eq!(rows[1].note(), "question → SEED_THREAD");
    assert_eq!(list(&c, MemoryLayer::Thoughts, Some("glacier")), ["thought:1"]);
    assert_eq!(
        memory_text(&c, "thought:2").unwrap().map(|t| t.0).as_deref(),
        Some("Borrow checker errors cluster on Mondays")
    );
    let f = forget(&mut c, "thought:1".parse().unwrap()).unwrap();
    assert_eq!(list(&c, MemoryLayer::Thoughts, None), ["thought:2"]);
    assert_eq!(deletion(&c, f.deletion_id).0, "thought");
    let threads: i64 = c.query_row("SELECT COUNT(*) FROM curiosity_threads", [], |r| r.get(0)).unwrap();
    assert_eq!(threads, 0, "its curiosity thread goes with it");
    let gist: String = c.query_row("SELECT content FROM gists WHERE id = 9", [], |r| r.get(0)).unwrap_or_default();
    assert!(!gist.contains("glaciers"), "its words are purged from the drift gist: {gist}");
    assert!(matches!(forget(&mut c, "thought:1".parse().unwrap()), Err(ForgetError::AlreadyForgotten { .. })));
}
