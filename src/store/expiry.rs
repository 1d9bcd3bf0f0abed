//! The short-lived tables' expiry: the rows past their time, as the JSON snapshots
//! `memory_deletions` keeps, and their removal. One place for the five tables, because the
//! decay pass treats them alike.

use super::StoreError;
use super::browse::row_object;
use rusqlite::{Connection, params};
use serde_json::Value;

/// A table whose rows carry `expires_at`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShortLived {
    Gists,
    Facts,
    WorkingMemory,
    Fok,
    WorldState,
}

impl ShortLived {
    pub const ALL: [ShortLived; 5] =
        [ShortLived::Gists, ShortLived::Facts, ShortLived::WorkingMemory, ShortLived::Fok, ShortLived::WorldState];

    fn table(self) -> &'static str {
        match self {
            ShortLived::Gists => "gists",
            ShortLived::Facts => "facts",
            ShortLived::WorkingMemory => "working_memory",
            ShortLived::Fok => "fok",
            ShortLived::WorldState => "world_state",
        }
    }

    /// The layer name `memory_deletions` records (the memory browser's kinds, so a user's
    /// "forget" and decay name the same row alike).
    pub fn layer(self) -> &'static str {
        match self {
            ShortLived::Gists => "gist",
            ShortLived::Facts => "fact",
            ShortLived::WorkingMemory => "working_memory",
            ShortLived::Fok => "fok",
            ShortLived::WorldState => "world",
        }
    }

    /// The column naming a row.
    pub fn key_column(self) -> &'static str {
        match self {
            ShortLived::Fok => "topic",
            ShortLived::WorldState => "key",
            _ => "id",
        }
    }
}

/// The rows of `table` expired at `now`, each as a JSON object of its columns.
pub fn expired_rows(c: &Connection, table: ShortLived, now: i64) -> Result<Vec<Value>, StoreError> {
    let mut stmt = c.prepare(&format!("SELECT * FROM {} WHERE expires_at <= ?1", table.table()))?;
    let names: Vec<String> = stmt.column_names().map(str::to_string).collect();
    let rows = stmt.query_map(params![now], |r| row_object(r, &names).map(Value::Object))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Remove the rows of `table` expired at `now` (a fact with its vector). Returns how many.
pub fn delete_expired(c: &Connection, table: ShortLived, now: i64) -> Result<usize, StoreError> {
    if table == ShortLived::Facts {
        let mut stmt = c.prepare_cached("DELETE FROM facts WHERE expires_at <= ?1 RETURNING id")?;
        let ids: Vec<i64> = stmt.query_map(params![now], |r| r.get(0))?.collect::<Result<_, _>>()?;
        for &id in &ids {
            super::VectorRepo(c).delete(super::VecTable::Facts, id)?;
        }
        return Ok(ids.len());
    }
    Ok(c.execute(&format!("DELETE FROM {} WHERE expires_at <= ?1", table.table()), params![now])?)
}
