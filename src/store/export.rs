//! The whole database as one versioned JSON document and back (`chalie-tui export` /
//! `import`). It spans every table on purpose, like the forget purge: the document must hold
//! everything a person's assistant knows, including tables added after this was written,
//! so the table list is read from the schema, never typed here.
//!
//! Ordinary tables are copied row by row with their ids, so references between them hold.
//! Full-text indexes are not copied: their triggers rebuild them as the rows go in. The
//! vector tables are ordinary tables (migration 0016) and travel like any other.

use super::StoreError;
use rusqlite::types::{Value as Sql, ValueRef};
use rusqlite::{Connection, params_from_iter};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// What the `format` field says, so a stray JSON file is refused by name.
pub const FORMAT: &str = "chalie-tui export";
/// The document's own shape; the schema's version is `schema`.
pub const VERSION: u32 = 1;

/// Tables the export leaves out: the work queue, whose jobs belong to the running engine of
/// the database they were queued in (their results are in the exported rows or never were),
/// the graph's change log (migration 20), bookkeeping for an in-process cache that the
/// import's own writes log again in the database they go into, and recall's text state
/// (migration 22), the same for the text sources' copies: the database gone into has its own.
pub const NOT_EXPORTED: &[&str] = &["jobs", "graph_changes", "recall_text_state", "topic_stamps"];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportDoc {
    pub format: String,
    pub version: u32,
    /// `PRAGMA user_version` of the database written: an import needs the same.
    pub schema: u32,
    pub app_version: String,
    pub exported_at: String,
    pub tables: BTreeMap<String, TableDump>,
}

/// One table: column names, then each row's values in that order. A BLOB is
/// `{"hex": "…"}`, every other value its plain JSON counterpart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableDump {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Value>>,
}

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("not a chalie-tui export (format {0:?})")]
    NotAnExport(String),
    #[error("export format version {found} is newer than this program reads ({VERSION})")]
    TooNew { found: u32 },
    #[error(
        "the export is of schema version {found}, this database is at {here}; export and import with the same version"
    )]
    SchemaMismatch { found: u32, here: u32 },
    #[error("the database is not empty ({table} has {rows} rows); import into a new --db FILE, or pass --merge")]
    NotEmpty { table: String, rows: u64 },
    #[error("table {0} in the export does not exist here")]
    UnknownTable(String),
    #[error("bad value in {table}: {detail}")]
    BadValue { table: String, detail: String },
}

impl From<rusqlite::Error> for ExportError {
    fn from(e: rusqlite::Error) -> Self {
        ExportError::Store(StoreError::Sqlite(e))
    }
}

/// How many rows each table received, and (with merge) how many were already there.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ImportReport {
    pub inserted: BTreeMap<String, u64>,
    pub skipped: BTreeMap<String, u64>,
    /// Rows that came in under a new id because theirs was taken here (merge only).
    pub renumbered: u64,
}

/// The ordinary tables of the migrated schema, by name: no SQLite internals, no virtual
/// tables and none of their shadow tables.
pub fn data_tables(conn: &Connection) -> Result<Vec<String>, StoreError> {
    let mut stmt =
        conn.prepare("SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' ORDER BY name")?;
    let names = stmt.query_map([], |r| r.get::<_, String>(0))?.collect::<Result<Vec<_>, _>>()?;
    Ok(names.into_iter().filter(|n| !n.starts_with("sqlite_")).collect())
}

/// Every table's rows as one document.
pub fn export(conn: &Connection) -> Result<ExportDoc, StoreError> {
    let mut tables = BTreeMap::new();
    for name in data_tables(conn)? {
        if NOT_EXPORTED.contains(&name.as_str()) {
            continue;
        }
        tables.insert(name.clone(), dump(conn, &select_all(conn, &name)?)?);
    }
    Ok(ExportDoc {
        format: FORMAT.to_string(),
        version: VERSION,
        schema: conn.pragma_query_value(None, "user_version", |r| r.get(0))?,
        app_version: env!("CARGO_PKG_VERSION").to_string(),
        exported_at: chrono::Utc::now().to_rfc3339(),
        tables,
    })
}

/// A table's rows in a stable order: by rowid (so an import numbers implicit rowids alike),
/// or by every column for a table without one.
fn select_all(conn: &Connection, table: &str) -> Result<String, StoreError> {
    let without_rowid: bool =
        conn.query_row("SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?1", [table], |r| r.get(0))?;
    let order = if without_rowid {
        let n: i64 = conn.query_row("SELECT count(*) FROM pragma_table_info(?1)", [table], |r| r.get(0))?;
        (1..=n).map(|i| i.to_string()).collect::<Vec<_>>().join(", ")
    } else {
        "rowid".to_string()
    };
    Ok(format!("SELECT * FROM \"{table}\" ORDER BY {order}"))
}

fn dump(conn: &Connection, sql: &str) -> Result<TableDump, StoreError> {
    let mut stmt = conn.prepare(sql)?;
    let columns: Vec<String> = stmt.column_names().map(str::to_string).collect();
    let n = columns.len();
    let rows = stmt
        .query_map([], |r| (0..n).map(|i| r.get_ref(i).map(to_json)).collect::<Result<Vec<_>, _>>())?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(TableDump { columns, rows })
}

fn to_json(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::from(i),
        ValueRef::Real(f) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
        ValueRef::Text(t) => Value::String(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => serde_json::json!({ "hex": b.iter().map(|x| format!("{x:02x}")).collect::<String>() }),
    }
}

fn from_json(table: &str, v: &Value) -> Result<Sql, ExportError> {
    let bad = |detail: String| ExportError::BadValue { table: table.to_string(), detail };
    Ok(match v {
        Value::Null => Sql::Null,
        Value::Bool(b) => Sql::Integer(i64::from(*b)),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Sql::Integer(i),
            None => Sql::Real(n.as_f64().ok_or_else(|| bad(format!("number {n}")))?),
        },
        Value::String(s) => Sql::Text(s.clone()),
        Value::Object(o) => {
            let hex =
                o.get("hex").and_then(Value::as_str).ok_or_else(|| bad("an object that is not {\"hex\": …}".into()))?;
            Sql::Blob(unhex(hex).ok_or_else(|| bad("a blob that is not hex".into()))?)
        }
        Value::Array(_) => return Err(bad("an array where a value belongs".into())),
    })
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| s.get(i..i + 2).and_then(|b| u8::from_str_radix(b, 16).ok())).collect()
}

/// Rows a freshly migrated database already holds: an empty one may still have these.
fn seeded(conn: &Connection, table: &str) -> Result<u64, StoreError> {
    let n: i64 = conn.query_row(&format!("SELECT count(*) FROM \"{table}\""), [], |r| r.get(0))?;
    Ok(n.max(0) as u64)
}

/// Write `doc` into `conn` in one transaction. Without `merge`, the database must hold no
/// more than a new one does (`fresh` counts per table, taken from a new database), and its
/// seeded rows are replaced by the export's. With `merge`, a row identical to one already
/// here is skipped; one whose integer key is held by a different row comes in under a new
/// id, its references following ([`merge`]), unless its natural key or a seeded table's key
/// says it is a row already here; any other conflict keeps the row here.
pub fn import(
    conn: &mut Connection,
    doc: &ExportDoc,
    fresh: &BTreeMap<String, u64>,
    merge: bool,
) -> Result<ImportReport, ExportError> {
    if doc.format != FORMAT {
        return Err(ExportError::NotAnExport(doc.format.clone()));
    }
    if doc.version > VERSION {
        return Err(ExportError::TooNew { found: doc.version });
    }
    let here: u32 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if doc.schema != here {
        return Err(ExportError::SchemaMismatch { found: doc.schema, here });
    }
    let tables = data_tables(conn)?;
    for name in doc.tables.keys() {
        if !tables.contains(name) {
            return Err(ExportError::UnknownTable(name.clone()));
        }
    }
    if !merge {
        for t in &tables {
            let rows = seeded(conn, t)?;
            if rows > fresh.get(t).copied().unwrap_or(0) {
                return Err(ExportError::NotEmpty { table: t.clone(), rows });
            }
        }
    }
    // The rows go in as they were exported, references included, in table-name order: with
    // the checks on, a child table sorted before its parent would be refused (and a
    // cascading delete of a seeded row would remove imported ones). Off for the import only.
    conn.pragma_update(None, "foreign_keys", false)?;
    let seeded: Vec<String> = fresh.iter().filter(|(_, n)| **n > 0).map(|(t, _)| t.clone()).collect();
    let result = import_rows(conn, doc, &tables, &seeded, merge);
    conn.pragma_update(None, "foreign_keys", true)?;
    result
}

fn import_rows(
    conn: &mut Connection,
    doc: &ExportDoc,
    tables: &[String],
    seeded: &[String],
    merge: bool,
) -> Result<ImportReport, ExportError> {
    let tx = conn.transaction()?;
    let mut report = ImportReport::default();
    let renumber = if merge { merge::Renumber::plan(&tx, doc, tables, seeded)? } else { merge::Renumber::default() };
    report.renumbered = renumber.renumbered();
    for (name, dump) in doc.tables.iter().filter(|(n, _)| tables.contains(n)) {
        if !merge {
            tx.execute(&format!("DELETE FROM \"{name}\""), [])?;
        }
        insert_rows(&tx, name, &renumber.apply(&tx, name, dump)?, merge, &mut report)?;
    }
    tx.commit()?;
    Ok(report)
}

fn insert_rows(
    tx: &Connection,
    name: &str,
    dump: &TableDump,
    merge: bool,
    report: &mut ImportReport,
) -> Result<(), ExportError> {
    let cols = dump.columns.iter().map(|c| format!("\"{}\"", c.replace('"', "\"\""))).collect::<Vec<_>>().join(", ");
    let marks = vec!["?"; dump.columns.len()].join(", ");
    let verb = if merge { "INSERT OR IGNORE" } else { "INSERT" };
    let mut stmt = tx.prepare(&format!("{verb} INTO \"{name}\" ({cols}) VALUES ({marks})"))?;
    for row in &dump.rows {
        if row.len() != dump.columns.len() {
            return Err(ExportError::BadValue { table: name.into(), detail: "a row of the wrong length".into() });
        }
        let values = row.iter().map(|v| from_json(name, v)).collect::<Result<Vec<_>, _>>()?;
        let n = stmt.execute(params_from_iter(values))?;
        *report.inserted.entry(name.to_string()).or_default() += n as u64;
        if n == 0 {
            *report.skipped.entry(name.to_string()).or_default() += 1;
        }
    }
    Ok(())
}

/// Row counts of every data table: what a new database holds, for [`import`]'s emptiness test.
pub fn row_counts(conn: &Connection) -> Result<BTreeMap<String, u64>, StoreError> {
    data_tables(conn)?.into_iter().map(|t| Ok((t.clone(), seeded(conn, &t)?))).collect()
}

mod merge;

#[cfg(test)]
mod tests;
