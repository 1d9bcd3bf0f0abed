//! `export` / `import` through the binary: a database that a real turn wrote goes out as one
//! document and comes back whole into a new database; a used database is refused.

use crate::support::bin::{chalie, text, write_double_config};
use crate::support::openai_double::{Double, Reply};
use std::path::Path;

fn chat_rows(db: &Path) -> Vec<(String, String)> {
    let conn = chalie::store::open(db).unwrap();
    let mut stmt = conn.prepare("SELECT role, content FROM chat_history ORDER BY id").unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
}

#[test]
fn a_used_database_goes_out_and_comes_back_into_a_new_one() {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let double = rt.block_on(Double::start(vec![Reply::text("Noted, Ana.")]));
    write_double_config(dir.path(), &double.base_url());
    let out = chalie(dir.path(), &["ask", "My name is Ana and I live in Lisbon."]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    let file = dir.path().join("mine.json");
    let out = chalie(dir.path(), &["export", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(doc["format"], "chalie-tui export");
    assert_eq!(doc["version"], 1);
    for table in ["chat_history", "episodes", "user_traits", "lists", "reminders", "persistent_tasks", "router_weights"]
    {
        assert!(doc["tables"][table]["columns"].is_array(), "{table} is in the export");
    }

    let new_db = dir.path().join("restored.db");
    let db_arg = new_db.to_str().unwrap();
    let out = chalie(dir.path(), &["--db", db_arg, "import", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let before = chat_rows(&dir.path().join("chalie.db"));
    assert_eq!(before.len(), 2, "{before:?}");
    assert_eq!(chat_rows(&new_db), before);

    // Once used, a database takes an export only when asked to merge.
    let out = chalie(dir.path(), &["--db", db_arg, "import", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("--merge"), "{}", text(&out.stderr));
    let out = chalie(dir.path(), &["--db", db_arg, "import", "--merge", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("already there"), "{}", text(&out.stderr));
    assert_eq!(chat_rows(&new_db), before, "nothing doubled");

    std::fs::write(dir.path().join("other.json"), "{\"hello\": 1}").unwrap();
    let out = chalie(dir.path(), &["import", dir.path().join("other.json").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}
