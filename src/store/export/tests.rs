use super::*;
use crate::store::open_in_memory;

/// A value a column of declared type `ty` accepts; text is `{}` so JSON checks pass too.
fn sample(ty: &str, n: i64) -> Sql {
    let ty = ty.to_ascii_uppercase();
    if ty.contains("INT") {
        Sql::Integer(n)
    } else if ty.contains("REAL") || ty.contains("FLOA") || ty.contains("DOUB") {
        Sql::Real(n as f64 + 0.25)
    } else if ty.contains("BLOB") {
        Sql::Blob(vec![n as u8, 0xff])
    } else {
        Sql::Text("{}".into())
    }
}

/// Values a CHECK (col IN ('a', 'b')) in the table's statement allows for `col`.
fn allowed(create: &str, col: &str) -> Vec<String> {
    let Some(at) = create.find(&format!("{col} IN (")).or_else(|| create.find(&format!("{col} IN("))) else {
        return Vec::new();
    };
    let rest = &create[at..];
    let Some(open) = rest.find('(') else { return Vec::new() };
    let Some(close) = rest.find(')') else { return Vec::new() };
    rest[open + 1..close].split(',').map(|v| v.trim().trim_matches('\'').to_string()).collect()
}

/// Two rows in every data table of the migrated schema, whatever it holds: a table added
/// later is filled (and so checked) without this test knowing its name.
fn fill_every_table(conn: &Connection) -> Vec<String> {
    conn.pragma_update(None, "foreign_keys", false).unwrap();
    let mut unfilled = Vec::new();
    for table in data_tables(conn).unwrap() {
        let create: String =
            conn.query_row("SELECT sql FROM sqlite_master WHERE name = ?1", [&table], |r| r.get(0)).unwrap();
        let cols: Vec<(String, String, bool)> = conn
            .prepare(&format!("SELECT name, type, pk FROM pragma_table_info('{table}')"))
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get::<_, i64>(2)? > 0)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        for n in [1, 2] {
            let values: Vec<Sql> = cols
                .iter()
                .map(|(name, ty, pk)| {
                    match allowed(&create, name).get(n as usize - 1).or(allowed(&create, name).first()) {
                        Some(v) => Sql::Text(v.clone()),
                        None if *pk && !ty.to_ascii_uppercase().contains("INT") => Sql::Text(format!("key{n}")),
                        None => sample(ty, n),
                    }
                })
                .collect();
            let names = cols.iter().map(|(c, ..)| format!("\"{c}\"")).collect::<Vec<_>>().join(", ");
            let marks = vec!["?"; cols.len()].join(", ");
            let sql = format!("INSERT OR REPLACE INTO \"{table}\" ({names}) VALUES ({marks})");
            // A table whose checks no sample passes (embedding_space: one row, id 1) is
            // still compared when the migration seeded it.
            if conn.execute(&sql, params_from_iter(values)).is_err() {
                let seeded: i64 =
                    conn.query_row(&format!("SELECT count(*) FROM \"{table}\""), [], |r| r.get(0)).unwrap();
                if seeded == 0 {
                    unfilled.push(table.clone());
                }
                break;
            }
        }
    }
    conn.pragma_update(None, "foreign_keys", true).unwrap();
    unfilled
}

fn every_table(conn: &Connection) -> BTreeMap<String, TableDump> {
    data_tables(conn)
        .unwrap()
        .into_iter()
        .map(|t| {
            let d = dump(conn, &select_all(conn, &t).unwrap()).unwrap();
            (t, d)
        })
        .collect()
}

#[test]
fn every_table_survives_a_round_trip_through_the_json_document() {
    let source = open_in_memory().unwrap();
    let unfilled = fill_every_table(&source);
    assert!(unfilled.is_empty(), "tables this test could not fill: {unfilled:?}");
    let text = serde_json::to_string(&export(&source).unwrap()).unwrap();
    let doc: ExportDoc = serde_json::from_str(&text).unwrap();
    assert_eq!((doc.format.as_str(), doc.version), (FORMAT, VERSION));

    let mut target = open_in_memory().unwrap();
    let fresh = row_counts(&target).unwrap();
    import(&mut target, &doc, &fresh, false).unwrap();
    let (mut before, mut after) = (every_table(&source), every_table(&target));
    // The concept graph's version (migration 13) is a change counter its triggers bump as the
    // imported concepts and edges go in: it may only move forward, so no cache keyed on it
    // can mistake the imported graph for one it holds.
    let version = |t: &mut BTreeMap<String, TableDump>| {
        let kv = t.get_mut("kv_state").unwrap();
        let at = kv.rows.iter().position(|r| r[0] == "graph" && r[1] == "version").unwrap();
        kv.rows.remove(at)[2].as_str().unwrap().parse::<i64>().unwrap()
    };
    assert!(version(&mut after) >= version(&mut before));
    assert_eq!(before.keys().collect::<Vec<_>>(), after.keys().collect::<Vec<_>>());
    for (table, rows) in &before {
        if NOT_EXPORTED.contains(&table.as_str()) {
            assert!(!doc.tables.contains_key(table), "{table}");
            continue;
        }
        assert!(!rows.rows.is_empty(), "{table} was filled");
        assert_eq!(rows, &after[table], "{table} differs after the round trip");
    }
}

#[test]
fn a_database_with_anything_in_it_is_refused_unless_merging() {
    let source = open_in_memory().unwrap();
    fill_every_table(&source);
    let doc = export(&source).unwrap();
    let mut target = open_in_memory().unwrap();
    let fresh = row_counts(&target).unwrap();
    target.execute("INSERT INTO threads (id, created_at, last_active_at) VALUES ('mine', 1, 1)", []).unwrap();
    target
        .execute(
            "INSERT INTO chat_history (thread_id, exchange_id, role, content, created_at) VALUES ('mine', 'x', 'user', 'hi', 1)",
            [],
        )
        .unwrap();
    let err = import(&mut target, &doc, &fresh, false).unwrap_err();
    assert!(matches!(err, ExportError::NotEmpty { .. }), "{err}");
    assert!(err.to_string().contains("--merge"), "{err}");

    let report = import(&mut target, &doc, &fresh, true).unwrap();
    assert!(report.inserted.values().sum::<u64>() > 0);
    let mine: i64 =
        target.query_row("SELECT count(*) FROM chat_history WHERE content = 'hi'", [], |r| r.get(0)).unwrap();
    assert_eq!(mine, 1, "merging keeps what was there");
}

#[test]
fn another_format_or_schema_is_refused_by_name() {
    let source = open_in_memory().unwrap();
    let mut doc = export(&source).unwrap();
    let mut target = open_in_memory().unwrap();
    let fresh = row_counts(&target).unwrap();
    doc.schema += 1;
    assert!(matches!(import(&mut target, &doc, &fresh, false), Err(ExportError::SchemaMismatch { .. })));
    doc.schema -= 1;
    doc.format = "something else".into();
    assert!(matches!(import(&mut target, &doc, &fresh, false), Err(ExportError::NotAnExport(_))));
}

#[test]
fn blobs_round_trip_as_hex() {
    let v = to_json(ValueRef::Blob(&[0, 1, 0xab, 0xff]));
    assert_eq!(v, serde_json::json!({"hex": "0001abff"}));
    assert_eq!(from_json("t", &v).unwrap(), Sql::Blob(vec![0, 1, 0xab, 0xff]));
    assert!(from_json("t", &serde_json::json!({"hex": "0g"})).is_err());
}

/// One person's database: a list with items, two linked concepts, the first one embedded.
fn someone(list: &str, items: &[&str], concepts: [&str; 2], axis: usize) -> Connection {
    let c = open_in_memory().unwrap();
    c.execute("INSERT INTO lists (id, name, created_at, updated_at) VALUES (1, ?1, 1, 1)", [list]).unwrap();
    for (i, item) in items.iter().enumerate() {
        c.execute(
            "INSERT INTO list_items (id, list_id, content, added_at, updated_at) VALUES (?1, 1, ?2, 1, 1)",
            rusqlite::params![i as i64 + 1, item],
        )
        .unwrap();
    }
    for (i, name) in concepts.iter().enumerate() {
        c.execute(
            "INSERT INTO semantic_concepts (id, name, created_at, updated_at) VALUES (?1, ?2, 1, 1)",
            rusqlite::params![i as i64 + 1, name],
        )
        .unwrap();
    }
    c.execute(
        "INSERT INTO semantic_relationships (id, source_id, target_id, rel_type, created_at, updated_at)
         VALUES (1, 1, 2, 'related-to', 1, 1)",
        [],
    )
    .unwrap();
    let mut v = vec![0.0f32; crate::store::DEFAULT_EMBEDDING_DIM];
    v[axis] = 1.0;
    crate::store::VectorRepo(&c).upsert(crate::store::VecTable::Concepts, 1, &v).unwrap();
    c
}

fn items_by_list(c: &Connection) -> Vec<(String, String)> {
    let mut s = c
        .prepare(
            "SELECT l.name, i.content FROM list_items i JOIN lists l ON l.id = i.list_id ORDER BY l.name, i.content",
        )
        .unwrap();
    s.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
}

fn edges(c: &Connection) -> Vec<(String, String)> {
    let mut s = c
        .prepare(
            "SELECT a.name, b.name FROM semantic_relationships r JOIN semantic_concepts a ON a.id = r.source_id
             JOIN semantic_concepts b ON b.id = r.target_id ORDER BY a.name",
        )
        .unwrap();
    s.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
}

#[test]
fn merging_two_independent_databases_renumbers_colliding_ids_and_what_points_at_them() {
    let theirs = someone("books", &["Dune", "Emma"], ["lisbon", "flights"], 0);
    let mut mine = someone("groceries", &["eggs"], ["kettle", "repair"], 1);
    let doc = export(&theirs).unwrap();
    let fresh = row_counts(&open_in_memory().unwrap()).unwrap();
    let report = import(&mut mine, &doc, &fresh, true).unwrap();
    assert!(report.renumbered >= 5, "list, two items, two concepts, one edge: {report:?}");
    let both = [("books", "Dune"), ("books", "Emma"), ("groceries", "eggs")].map(|(a, b)| (a.into(), b.into()));
    assert_eq!(items_by_list(&mine), both, "every item still on its own list");
    let links = [("kettle", "repair"), ("lisbon", "flights")].map(|(a, b)| (a.to_string(), b.to_string()));
    assert_eq!(edges(&mine), links, "edges follow their concepts");
    // The embedding follows its concept: the nearest concept to their axis is theirs.
    let lisbon: i64 =
        mine.query_row("SELECT id FROM semantic_concepts WHERE name = 'lisbon'", [], |r| r.get(0)).unwrap();
    let coded: i64 =
        mine.query_row("SELECT count(*) FROM vector_codes WHERE tbl = 1 AND id = ?1", [lisbon], |r| r.get(0)).unwrap();
    let vec_rows: i64 =
        mine.query_row("SELECT count(*) FROM concept_vec WHERE rowid = ?1", [lisbon], |r| r.get(0)).unwrap();
    assert_eq!((coded, vec_rows), (1, 1), "the vector family follows the concept's new id");
    let fk: i64 = mine.query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |r| r.get(0)).unwrap();
    assert_eq!(fk, 0, "no reference left dangling");

    // The same export merged again adds nothing.
    let before = every_table(&mine);
    let again = import(&mut mine, &doc, &fresh, true).unwrap();
    assert_eq!(items_by_list(&mine), both);
    assert_eq!(edges(&mine), links);
    assert_eq!(every_table(&mine).get("lists"), before.get("lists"), "{again:?}");
}
