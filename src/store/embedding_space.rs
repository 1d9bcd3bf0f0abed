//! Which embedding model the vector tables hold, and at what size (migration 0004).
//!
//! Vectors of two models cannot be compared, and each table holds vectors of one size
//! ([`super::VectorRepo`] refuses any other). Rather than store memories without vectors when
//! the configured model changes, the tables are emptied and what was stored is queued for
//! re-embedding ([`switch_model`]); `crate::memory::reembed` does the work.

use super::StoreError;
use super::vectors::{DEFAULT_EMBEDDING_DIM, VecTable};
use rusqlite::{Connection, OptionalExtension, params};

/// The largest embedding the vector tables are created for; a model that returns more is
/// reported as unusable rather than given tables of its size.
pub const MAX_EMBEDDING_DIM: usize = 4096;

/// The recorded embedding space.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddingSpace {
    /// `None` on a database whose tables predate the record (built at [`DEFAULT_EMBEDDING_DIM`]).
    pub model: Option<String>,
    pub dim: usize,
}

/// What [`switch_model`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Switch {
    /// The model and size were already the recorded ones.
    Unchanged,
    /// The tables predate the record and are of this size: the model is recorded, nothing moves.
    Adopted,
    /// The tables were recreated at the new size; `pending` rows wait for a new vector.
    Recreated { pending: u64 },
}

/// The recorded space (the default one if the row is missing).
pub fn embedding_space(c: &Connection) -> Result<EmbeddingSpace, StoreError> {
    let row: Option<(Option<String>, i64)> = c
        .prepare_cached("SELECT model, dim FROM embedding_space WHERE id = 1")?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    Ok(match row {
        Some((model, dim)) => EmbeddingSpace { model, dim: usize::try_from(dim).unwrap_or(DEFAULT_EMBEDDING_DIM) },
        None => EmbeddingSpace { model: None, dim: DEFAULT_EMBEDDING_DIM },
    })
}

/// The size of the vectors the tables hold now.
pub fn embedding_dim(c: &Connection) -> Result<usize, StoreError> {
    Ok(embedding_space(c)?.dim)
}

/// The statement creating `table` (migration 0016's shape: one int8 blob per row, of any width).
pub fn vec_table_ddl(table: VecTable) -> String {
    format!("CREATE TABLE IF NOT EXISTS {} (id INTEGER PRIMARY KEY, embedding BLOB NOT NULL)", table.name())
}

/// Record `model` (returning `dim`-dimensional vectors) as the space of the vector tables,
/// recreating them when the size or the model differs from the recorded one. Everything
/// stored that should have a vector is then listed in `reembed_pending`. Run it in the
/// caller's transaction (with the job that does the re-embedding): a crash then leaves
/// either the old tables or the new ones with their full worklist.
pub fn switch_model(tx: &Connection, model: &str, dim: usize) -> Result<Switch, StoreError> {
    if dim == 0 || dim > MAX_EMBEDDING_DIM {
        return Err(StoreError::Dimension { expected: MAX_EMBEDDING_DIM, got: dim });
    }
    let now = super::now_ts();
    let current = embedding_space(tx)?;
    if current.dim == dim && current.model.as_deref() == Some(model) {
        return Ok(Switch::Unchanged);
    }
    if current.dim == dim && current.model.is_none() {
        tx.execute(
            "INSERT OR REPLACE INTO embedding_space (id, model, dim, updated_at) VALUES (1, ?1, ?2, ?3)",
            params![model, dim as i64, now],
        )?;
        return Ok(Switch::Adopted);
    }
    // Traits carry a vector only when their confidence earned one; episodes and concepts
    // always should (one stored without, while the model did not fit, gets one now).
    tx.execute_batch(
        "DELETE FROM reembed_pending;
         INSERT INTO reembed_pending (tbl, id) SELECT 0, id FROM episodes WHERE deleted_at IS NULL;
         INSERT INTO reembed_pending (tbl, id) SELECT 1, id FROM semantic_concepts WHERE deleted_at IS NULL;
         INSERT INTO reembed_pending (tbl, id) SELECT 2, t.id FROM user_traits t JOIN trait_vec v ON v.id = t.id;
         INSERT INTO reembed_pending (tbl, id) SELECT 3, f.id FROM facts f JOIN fact_vec v ON v.id = f.id;",
    )?;
    for table in VecTable::ALL {
        tx.execute_batch(&format!("DELETE FROM {};", table.name()))?;
    }
    // A new epoch per table: no cached copy of the old codes can be mistaken for the new ones.
    tx.execute_batch("DELETE FROM vector_codes; UPDATE vector_code_state SET seq = 0, epoch = random();")?;
    tx.execute(
        "INSERT OR REPLACE INTO embedding_space (id, model, dim, updated_at) VALUES (1, ?1, ?2, ?3)",
        params![model, dim as i64, now],
    )?;
    Ok(Switch::Recreated { pending: pending_count(tx)? })
}

/// A row still waiting for its vector in the current space, with the text its vector is made
/// from (as the episodic, semantic and chunker workers embed it); `None` when it was deleted
/// meanwhile.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingVector {
    pub table: VecTable,
    pub id: i64,
    pub text: Option<String>,
}

/// `reembed_pending.tbl`: the code [`switch_model`] lists each table's rows under.
fn pending_table(code: u8) -> VecTable {
    VecTable::ALL.into_iter().find(|t| t.code_table() == code).unwrap_or(VecTable::Traits)
}

fn pending_code(table: VecTable) -> u8 {
    table.code_table()
}

/// Create every vector table that does not exist yet. Before migration 0016 a table's width
/// was fixed and migration 0010 could not name fact_vec's, so it was created here; the
/// ordinary tables since need no width, and this only guards against a missing one.
pub fn ensure_vec_tables(c: &Connection) -> Result<(), StoreError> {
    for table in VecTable::ALL {
        c.execute_batch(&vec_table_ddl(table))?;
    }
    Ok(())
}

/// How many rows still wait for a vector.
pub fn pending_count(c: &Connection) -> Result<u64, StoreError> {
    let n: i64 = c.query_row("SELECT COUNT(*) FROM reembed_pending", [], |r| r.get(0))?;
    Ok(u64::try_from(n).unwrap_or(0))
}

/// The next `n` rows waiting for a vector, in worklist order.
pub fn pending_vectors(c: &Connection, n: usize) -> Result<Vec<PendingVector>, StoreError> {
    let mut stmt = c.prepare_cached(
        "SELECT p.tbl, p.id, CASE p.tbl
             WHEN 0 THEN (SELECT gist FROM episodes WHERE id = p.id AND deleted_at IS NULL)
             WHEN 1 THEN (SELECT name || ' (' || concept_type || '): ' || definition
                          FROM semantic_concepts WHERE id = p.id AND deleted_at IS NULL)
             WHEN 3 THEN (SELECT key || ': ' || value FROM facts WHERE id = p.id)
             ELSE (SELECT trait_key || ': ' || trait_value FROM user_traits WHERE id = p.id) END
         FROM reembed_pending p ORDER BY p.tbl, p.id LIMIT ?1",
    )?;
    let rows = stmt.query_map(params![n as i64], |r| {
        Ok(PendingVector { table: pending_table(r.get(0)?), id: r.get(1)?, text: r.get(2)? })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Take one row off the worklist; false when it was no longer there.
pub fn take_pending(c: &Connection, table: VecTable, id: i64) -> Result<bool, StoreError> {
    Ok(c.execute("DELETE FROM reembed_pending WHERE tbl = ?1 AND id = ?2", params![pending_code(table), id])? > 0)
}

/// One line on the vector tables of the database at `path` for `--version`: their size, the
/// model recorded and any re-embedding still to do. Read-only: nothing is created or migrated.
pub fn describe_vectors(path: &std::path::Path) -> String {
    if !path.exists() {
        return "no database yet".into();
    }
    let read = || -> Result<String, StoreError> {
        let c = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
        let recorded: bool =
            c.query_row("SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'embedding_space')", [], |r| {
                r.get(0)
            })?;
        if !recorded {
            return Ok(format!(
                "{DEFAULT_EMBEDDING_DIM}-d (the built-in size; the model is recorded at the next start)"
            ));
        }
        let space = embedding_space(&c)?;
        let left = pending_count(&c)?;
        let model = space.model.map_or_else(|| "no model recorded yet".to_string(), |m| format!("from {m}"));
        let tail = if left > 0 { format!("; re-embedding, {left} left") } else { String::new() };
        Ok(format!("{}-d {model}{tail}", space.dim))
    };
    read().unwrap_or_else(|e| format!("unreadable: {}", crate::describe(&e)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{VectorRepo, open_in_memory};

    fn unit(dim: usize, hot: usize) -> Vec<f32> {
        let mut v = vec![0.0; dim];
        v[hot % dim] = 1.0;
        v
    }

    fn declared(c: &Connection, table: &str) -> String {
        c.query_row("SELECT sql FROM sqlite_master WHERE name = ?1", [table], |r| r.get(0)).unwrap()
    }

    #[test]
    fn the_vector_tables_are_ordinary_tables_of_any_width() {
        let c = open_in_memory().unwrap();
        for t in VecTable::ALL {
            let sql = declared(&c, t.name());
            assert!(sql.starts_with("CREATE TABLE") && sql.contains("embedding BLOB NOT NULL"), "{sql}");
        }
        assert!(vec_table_ddl(VecTable::Facts).contains("IF NOT EXISTS fact_vec "));
    }

    #[test]
    fn a_fresh_database_is_at_the_built_in_size_until_a_model_is_recorded() {
        let c = open_in_memory().unwrap();
        assert_eq!(embedding_space(&c).unwrap(), EmbeddingSpace { model: None, dim: DEFAULT_EMBEDDING_DIM });
        assert_eq!(switch_model(&c, "local/minilm", 384).unwrap(), Switch::Adopted);
        assert_eq!(switch_model(&c, "local/minilm", 384).unwrap(), Switch::Unchanged);
        assert_eq!(embedding_space(&c).unwrap().model.as_deref(), Some("local/minilm"));
    }

    #[test]
    fn another_size_recreates_the_tables_and_lists_what_needs_a_vector() {
        let c = open_in_memory().unwrap();
        switch_model(&c, "local/minilm", 384).unwrap();
        for id in 1..=3 {
            c.execute("INSERT INTO episodes (id, gist, created_at, updated_at) VALUES (?1, 'g', 0, 0)", params![id])
                .unwrap();
            VectorRepo(&c).upsert(VecTable::Episodes, id, &unit(384, id as usize)).unwrap();
        }
        c.execute("UPDATE episodes SET deleted_at = 1 WHERE id = 3", []).unwrap();
        c.execute(
            "INSERT INTO user_traits (id, trait_key, trait_value, created_at, updated_at) VALUES (7, 'k', 'v', 0, 0), (8, 'k2', 'v', 0, 0)",
            [],
        )
        .unwrap();
        VectorRepo(&c).upsert(VecTable::Traits, 7, &unit(384, 7)).unwrap();
        c.execute(
            "INSERT INTO facts (id, topic, key, value, confidence, created_at, updated_at, expires_at)
             VALUES (5, 't', 'gym', 'Iron Works', 0.9, 0, 0, 99)",
            [],
        )
        .unwrap();
        VectorRepo(&c).upsert(VecTable::Facts, 5, &unit(384, 5)).unwrap();

        let got = switch_model(&c, "ollama/nomic-embed-text", 768).unwrap();
        assert_eq!(
            got,
            Switch::Recreated { pending: 4 },
            "two live episodes, the trait and the fact that had a vector"
        );
        let texts: Vec<String> = pending_vectors(&c, 10).unwrap().into_iter().filter_map(|p| p.text).collect();
        assert!(texts.contains(&"gym: Iron Works".to_string()), "{texts:?}");
        let left: i64 = c
            .query_row(
                "SELECT (SELECT COUNT(*) FROM episode_vec) + (SELECT COUNT(*) FROM trait_vec)
                      + (SELECT COUNT(*) FROM fact_vec) + (SELECT COUNT(*) FROM vector_codes)",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(left, 0);
        assert!(matches!(
            VectorRepo(&c).upsert(VecTable::Episodes, 1, &unit(384, 1)),
            Err(StoreError::Dimension { expected: 768, got: 384 })
        ));
        VectorRepo(&c).upsert(VecTable::Episodes, 1, &unit(768, 700)).unwrap();
        assert_eq!(VectorRepo(&c).search(VecTable::Episodes, &unit(768, 700), 3).unwrap()[0].0, 1);
        // The same size from another model still recreates: its vectors mean something else.
        assert!(matches!(switch_model(&c, "openai/other-768", 768).unwrap(), Switch::Recreated { .. }));
        assert!(switch_model(&c, "m", 0).is_err());
        assert!(switch_model(&c, "m", MAX_EMBEDDING_DIM + 1).is_err());
        assert_eq!(embedding_space(&c).unwrap().dim, 768);
    }

    #[test]
    fn the_code_prefilter_serves_a_768_d_table() {
        let c = open_in_memory().unwrap();
        switch_model(&c, "m768", 768).unwrap();
        let mut rng = crate::SplitMix64(768);
        let mut noise = |scale: f32| -> Vec<f32> { (0..768).map(|_| scale * (rng.next_f64() as f32 - 0.5)).collect() };
        // Enough rows that search takes the code prefilter rather than the exact scan.
        let stored: Vec<Vec<f32>> = (0..2_000).map(|_| noise(1.0)).collect();
        for (i, v) in stored.iter().enumerate() {
            VectorRepo(&c).upsert(VecTable::Episodes, i as i64 + 1, v).unwrap();
        }
        for target in (0..2_000).step_by(97) {
            let q: Vec<f32> = stored[target].iter().zip(noise(0.3)).map(|(a, b)| a + b).collect();
            let got = VectorRepo(&c).search(VecTable::Episodes, &q, 5).unwrap();
            let exact = VectorRepo(&c).knn(VecTable::Episodes, &q, 5).unwrap();
            assert_eq!(got[0].0, target as i64 + 1);
            // Beyond the first, random vectors are all about equally far: only it is certain.
            assert_eq!(exact[0].0, got[0].0);
        }
    }

    #[test]
    fn a_768_d_database_of_version_9_gets_its_fact_vectors() {
        let mut c = open_in_memory().unwrap();
        switch_model(&c, "m768", 768).unwrap();
        // As a database of version 9 that had moved to a 768-d model was.
        c.execute_batch(crate::store::migrate::BEFORE_RERUN).unwrap();
        c.execute_batch(
            "DROP TABLE fact_vec; DELETE FROM vector_code_state WHERE tbl = 3;
             ALTER TABLE user_traits DROP COLUMN superseded_by; ALTER TABLE routing_decisions DROP COLUMN adaptive;
             PRAGMA user_version = 9;",
        )
        .unwrap();
        assert_eq!(crate::store::migrate(&mut c).unwrap() as u32, crate::store::latest_version() - 9);
        VectorRepo(&c).upsert(VecTable::Facts, 1, &unit(768, 3)).unwrap();
        assert_eq!(VectorRepo(&c).search(VecTable::Facts, &unit(768, 3), 1).unwrap()[0].0, 1);
    }

    #[test]
    fn version_describes_the_recorded_space_and_the_work_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.db");
        assert_eq!(describe_vectors(&path), "no database yet");
        let c = crate::store::open(&path).unwrap();
        assert_eq!(describe_vectors(&path), "384-d no model recorded yet");
        c.execute("INSERT INTO episodes (gist, created_at, updated_at) VALUES ('g', 0, 0)", []).unwrap();
        switch_model(&c, "ollama/nomic-embed-text", 768).unwrap();
        assert_eq!(describe_vectors(&path), "768-d from ollama/nomic-embed-text; re-embedding, 1 left");
    }
}
