//! `import --merge` where ids alone do not tell whether a row is new: seeded rows, natural
//! keys, and ids written into text and JSON columns.

use crate::store::export::{ExportDoc, export, import, row_counts};
use crate::store::open_in_memory;
use rusqlite::Connection;
use std::collections::BTreeMap;

fn merge(into: &mut Connection, doc: &ExportDoc) -> super::super::ImportReport {
    let fresh: BTreeMap<String, u64> = row_counts(&open_in_memory().unwrap()).unwrap();
    import(into, doc, &fresh, true).unwrap()
}

fn strings(c: &Connection, sql: &str) -> Vec<String> {
    let mut s = c.prepare(sql).unwrap();
    s.query_map([], |r| r.get::<_, String>(0)).unwrap().map(Result::unwrap).collect()
}

fn count(c: &Connection, table: &str) -> i64 {
    c.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0)).unwrap()
}

#[test]
fn seeded_rows_that_differ_in_a_timestamp_or_epoch_are_not_added_again() {
    let theirs = open_in_memory().unwrap();
    theirs.execute_batch("UPDATE embedding_space SET updated_at = 7; UPDATE vector_code_state SET epoch = 11").unwrap();
    let mut mine = open_in_memory().unwrap();
    mine.execute_batch("UPDATE embedding_space SET updated_at = 9; UPDATE vector_code_state SET epoch = 13").unwrap();
    let seeded = count(&mine, "vector_code_state");
    let report = merge(&mut mine, &export(&theirs).unwrap());
    assert_eq!(count(&mine, "vector_code_state"), seeded, "{report:?}");
    assert_eq!(count(&mine, "embedding_space"), 1);
    assert_eq!(strings(&mine, "SELECT DISTINCT CAST(epoch AS TEXT) FROM vector_code_state"), ["13"], "mine kept");
    assert_eq!(report.renumbered, 0, "{report:?}");
}

/// A list named alike (in any case) is the same list: its items and history join it, an item
/// already on it is not added twice, and a second merge adds nothing.
#[test]
fn a_list_with_the_same_name_is_one_list_and_its_history_is_not_duplicated() {
    let theirs = open_in_memory().unwrap();
    theirs
        .execute_batch(
            "INSERT INTO lists (id, name, created_at, updated_at) VALUES (1, 'Shopping', 10, 10);
             INSERT INTO list_items (id, list_id, content, added_at, updated_at)
                 VALUES (1, 1, 'milk', 10, 10), (2, 1, 'Eggs', 10, 10);
             INSERT INTO list_history (id, list_id, action, item, created_at)
                 VALUES (1, 1, 'add', 'milk', 10), (2, 1, 'add', 'Eggs', 10);",
        )
        .unwrap();
    let mut mine = open_in_memory().unwrap();
    mine.execute_batch(
        "INSERT INTO lists (id, name, created_at, updated_at) VALUES (1, 'books', 20, 20), (2, 'shopping', 20, 20);
         INSERT INTO list_items (id, list_id, content, added_at, updated_at) VALUES (1, 2, 'eggs', 20, 20);
         INSERT INTO list_history (id, list_id, action, item, created_at) VALUES (1, 2, 'add', 'eggs', 20);",
    )
    .unwrap();
    let doc = export(&theirs).unwrap();
    merge(&mut mine, &doc);
    let items = "SELECT l.name || ':' || i.content FROM list_items i JOIN lists l ON l.id = i.list_id ORDER BY 1";
    let history = "SELECT l.name || ':' || h.item FROM list_history h JOIN lists l ON l.id = h.list_id ORDER BY 1";
    assert_eq!(strings(&mine, "SELECT name FROM lists ORDER BY name"), ["books", "shopping"]);
    assert_eq!(strings(&mine, items), ["shopping:eggs", "shopping:milk"]);
    assert_eq!(strings(&mine, history), ["shopping:Eggs", "shopping:eggs", "shopping:milk"]);
    assert_eq!(count(&mine, "list_history"), 3, "no history row points at a list that is not here");
    let fk: i64 = mine.query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |r| r.get(0)).unwrap();
    assert_eq!(fk, 0);

    merge(&mut mine, &doc);
    assert_eq!(strings(&mine, items), ["shopping:eggs", "shopping:milk"]);
    assert_eq!(strings(&mine, history), ["shopping:Eggs", "shopping:eggs", "shopping:milk"], "merged twice");
}

/// An uncertainty names its memories as text ("episode", "1"); a concept lists the episodes
/// it came from as JSON. Both follow the rows they name to their new ids.
#[test]
fn ids_in_typed_text_and_json_columns_follow_their_rows() {
    let someone = |gist: &str, concept: &str| {
        let c = open_in_memory().unwrap();
        c.execute("INSERT INTO episodes (id, gist, created_at, updated_at) VALUES (1, ?1, 1, 1)", [gist]).unwrap();
        c.execute(
            "INSERT INTO semantic_concepts (id, name, source_episodes, created_at, updated_at)
             VALUES (1, ?1, '[1]', 1, 1)",
            [concept],
        )
        .unwrap();
        c
    };
    let theirs = someone("flew to Lisbon", "lisbon");
    theirs
        .execute(
            "INSERT INTO uncertainties (id, memory_a_type, memory_a_id, memory_b_type, memory_b_id,
                 uncertainty_type, severity, detection_context, created_at)
             VALUES ('u-theirs', 'episode', '1', 'concept', '1', 'contradiction', 'medium', 'ingestion', 1)",
            [],
        )
        .unwrap();
    let mut mine = someone("fixed the kettle", "kettle");
    let report = merge(&mut mine, &export(&theirs).unwrap());
    assert!(report.renumbered >= 2, "{report:?}");
    let (a, b): (String, String) = mine
        .query_row("SELECT memory_a_id, memory_b_id FROM uncertainties WHERE id = 'u-theirs'", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    let gist: String =
        mine.query_row("SELECT gist FROM episodes WHERE id = CAST(?1 AS INTEGER)", [&a], |r| r.get(0)).unwrap();
    assert_eq!(gist, "flew to Lisbon");
    let (concept, sources): (String, String) = mine
        .query_row("SELECT name, source_episodes FROM semantic_concepts WHERE id = CAST(?1 AS INTEGER)", [&b], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!((concept.as_str(), sources), ("lisbon", format!("[{a}]")));
    let mine_sources = strings(&mine, "SELECT source_episodes FROM semantic_concepts WHERE name = 'kettle'");
    assert_eq!(mine_sources, ["[1]"], "the rows here keep theirs");
}
