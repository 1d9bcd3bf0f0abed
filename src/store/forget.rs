//! Forgetting one memory on the user's word, completely: the row, and whatever would bring it
//! back into a reply (its embedding, which kNN recall would still find; a concept's graph
//! edges, which spreading activation would still walk; open uncertainties about it, which
//! would still be surfaced). All in one transaction, recorded in `memory_deletions` with a
//! snapshot, so forgetting is auditable and never half done.

use super::browse::{MemoryId, MemoryLayer, get_row};
use super::vectors::{VecTable, VectorRepo};
use super::{StoreError, now_ts};
use rusqlite::{Connection, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, thiserror::Error)]
pub enum ForgetError {
    #[error("there is no {id}")]
    NotFound { id: MemoryId },
    #[error("{id} was already forgotten")]
    AlreadyForgotten { id: MemoryId },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<rusqlite::Error> for ForgetError {
    fn from(e: rusqlite::Error) -> Self {
        ForgetError::Store(StoreError::Sqlite(e))
    }
}

/// What was forgotten.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Forgotten {
    pub id: MemoryId,
    /// The `memory_deletions` row that records it.
    pub deletion_id: i64,
    /// Graph edges removed with a concept.
    pub relationships: usize,
    /// Open uncertainties about it, closed as decayed.
    pub uncertainties: usize,
    /// The row as it was.
    pub snapshot: Value,
}

/// Forget `id`. Episodes and concepts are soft-deleted (other rows name them: a concept's
/// `source_episodes`, the audit trail), every other layer's row is removed.
pub fn forget(conn: &mut Connection, id: MemoryId) -> Result<Forgotten, ForgetError> {
    let tx = conn.transaction()?;
    let Some(mut snapshot) = get_row(&tx, id)? else {
        let recorded: bool = tx.query_row(
            "SELECT EXISTS (SELECT 1 FROM memory_deletions WHERE layer = ?1 AND row_id = ?2)",
            params![id.layer.kind(), id.row.to_string()],
            |r| r.get(0),
        )?;
        return Err(if recorded { ForgetError::AlreadyForgotten { id } } else { ForgetError::NotFound { id } });
    };
    if id.layer.soft_deleted() && !snapshot.get("deleted_at").is_none_or(Value::is_null) {
        return Err(ForgetError::AlreadyForgotten { id });
    }
    let now = now_ts();
    let table = id.layer.table();
    let mut relationships = 0;
    match id.layer {
        MemoryLayer::Episodes | MemoryLayer::Concepts => {
            // updated_at moves too: caches keyed on it (the autobiography) must notice.
            tx.execute(
                &format!("UPDATE {table} SET deleted_at = ?2, updated_at = ?2 WHERE id = ?1"),
                params![id.row, now],
            )?;
        }
        MemoryLayer::Lists => {
            let items = list_items(&tx, id.row)?;
            snapshot.insert("items".into(), items);
            // Items and history go with it (ON DELETE CASCADE).
            tx.execute("DELETE FROM lists WHERE id = ?1", [id.row])?;
        }
        _ => {
            tx.execute(&format!("DELETE FROM {table} WHERE id = ?1"), [id.row])?;
        }
    }
    match id.layer {
        MemoryLayer::Episodes => VectorRepo(&tx).delete(VecTable::Episodes, id.row)?,
        MemoryLayer::Traits => VectorRepo(&tx).delete(VecTable::Traits, id.row)?,
        MemoryLayer::Concepts => {
            VectorRepo(&tx).delete(VecTable::Concepts, id.row)?;
            relationships = super::RelationshipsRepo(&tx).delete_of_concept(id.row)?;
        }
        _ => {}
    }
    let key = id.row.to_string();
    let detail = format!("the user asked to forget {id}");
    let uncertainties = close_uncertainties(&tx, id.layer.kind(), &key, "forgotten", &detail, now)?;
    let snapshot = Value::Object(snapshot);
    let deletion_id = record_deletion(&tx, id.layer.kind(), &key, "user", &snapshot, now)?;
    tx.commit()?;
    Ok(Forgotten { id, deletion_id, relationships, uncertainties, snapshot })
}

/// Record one deletion (by the user or by decay) with a snapshot of what was deleted, so
/// forgetting is auditable. Returns the `memory_deletions` row id.
pub fn record_deletion(
    c: &Connection,
    layer: &str,
    row_id: &str,
    reason: &str,
    snapshot: &Value,
    now: i64,
) -> Result<i64, StoreError> {
    c.execute(
        "INSERT INTO memory_deletions (layer, row_id, reason, detail, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![layer, row_id, reason, snapshot.to_string(), now],
    )?;
    Ok(c.last_insert_rowid())
}

/// Close the open uncertainties about one memory as `decayed` (docs/cognition.md §10: a memory that is gone
/// leaves nothing to resolve). Returns how many were closed.
pub fn close_uncertainties(
    c: &Connection,
    kind: &str,
    row_id: &str,
    strategy: &str,
    detail: &str,
    now: i64,
) -> Result<usize, StoreError> {
    Ok(c.execute(
        "UPDATE uncertainties SET state = 'decayed', resolution_strategy = ?3, resolution_detail = ?4, resolved_at = ?5
         WHERE state IN ('open', 'surfaced')
           AND ((memory_a_type = ?1 AND memory_a_id = ?2) OR (memory_b_type = ?1 AND memory_b_id = ?2))",
        params![kind, row_id, strategy, detail, now],
    )?)
}

fn list_items(conn: &Connection, list: i64) -> Result<Value, StoreError> {
    let mut stmt = conn.prepare("SELECT content, checked FROM list_items WHERE list_id = ?1 ORDER BY id")?;
    let items = stmt.query_map([list], |r| {
        Ok(serde_json::json!({"content": r.get::<_, String>(0)?, "checked": r.get::<_, bool>(1)?}))
    })?;
    Ok(Value::Array(items.collect::<Result<_, _>>()?))
}
