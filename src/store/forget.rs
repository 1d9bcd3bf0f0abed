//! Forgetting one memory by its id (`memory forget ID`, the F3 browser) as deeply as a
//! forget asked for in conversation: the row, its vector and code, its FTS terms, the graph
//! edges of a concept, open uncertainties about it, and every other place its words were
//! copied to (through [`super::purge`]). The record in `memory_deletions` says which row and
//! how many rows per table went, never what they said.

use super::browse::{MemoryId, MemoryLayer, get_row};
use super::purge::{Purge, PurgeCounts, purge_in, settle};
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

/// What was forgotten: counts only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Forgotten {
    pub id: MemoryId,
    /// The `memory_deletions` row that records it.
    pub deletion_id: i64,
    /// Graph edges removed with a concept.
    pub relationships: usize,
    /// Open uncertainties about it, closed as decayed.
    pub uncertainties: usize,
    /// Rows removed or redacted, per table.
    pub rows: PurgeCounts,
    /// Exchanges with a chat line now forgotten (the TUI redacts them on screen).
    pub lines: Vec<String>,
    /// The words that were purged, for the caller to purge the files too (session logs,
    /// diagnostics log). Never serialised.
    #[serde(skip)]
    pub needles: Vec<String>,
}

/// Forget `id` and everything its words were copied to.
pub fn forget(conn: &mut Connection, id: MemoryId) -> Result<Forgotten, ForgetError> {
    let Some(row) = get_row(conn, id)? else {
        let recorded: bool = conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM memory_deletions WHERE layer = ?1 AND row_id = ?2)",
            params![id.layer.kind(), id.row.to_string()],
            |r| r.get(0),
        )?;
        return Err(if recorded { ForgetError::AlreadyForgotten { id } } else { ForgetError::NotFound { id } });
    };
    if id.layer.soft_deleted() && !row.get("deleted_at").is_none_or(Value::is_null) {
        return Err(ForgetError::AlreadyForgotten { id });
    }
    let text = |k: &str| row.get(k).and_then(Value::as_str).map(str::to_string);
    let needles: Vec<String> = match id.layer {
        MemoryLayer::Episodes => text("gist").into_iter().collect(),
        MemoryLayer::Traits => text("trait_value").into_iter().collect(),
        MemoryLayer::Facts => text("value").into_iter().collect(),
        MemoryLayer::Gists => text("content").into_iter().collect(),
        MemoryLayer::Concepts => text("name").into_iter().collect(),
        MemoryLayer::Lists => text("name").into_iter().collect(),
        MemoryLayer::Reminders => text("message").into_iter().collect(),
        MemoryLayer::World => text("value").into_iter().collect(),
        MemoryLayer::Thoughts => text("content").into_iter().collect(),
    };
    let mut needles = needles;
    let exchanges: Vec<String> = match id.layer {
        MemoryLayer::Episodes => text("exchange_id").into_iter().collect(),
        _ => Vec::new(),
    };
    // An episode's exchange goes with it, and what the user said there is what its copies
    // (topic names, traits, facts) were made of.
    for line in super::purge::user_lines_of(conn, &exchanges)? {
        needles.extend(crate::text::needles::needles_of(&line));
    }
    let now = now_ts();
    let tx = conn.transaction()?;
    let table = id.layer.table();
    let mut relationships = 0;
    match id.layer {
        // Items and history go with it (ON DELETE CASCADE).
        MemoryLayer::Lists | MemoryLayer::Reminders | MemoryLayer::Gists => {
            tx.execute(&format!("DELETE FROM {table} WHERE id = ?1"), [id.row])?;
        }
        MemoryLayer::World => {
            tx.execute("DELETE FROM world_state WHERE rowid = ?1", [id.row])?;
        }
        // Its curiosity thread goes with it; its words elsewhere (a REFLECT gist, a delivered
        // message) go through the purge.
        MemoryLayer::Thoughts => {
            tx.execute("DELETE FROM curiosity_threads WHERE drift_thought_id = ?1", [id.row])?;
            tx.execute("DELETE FROM drift_thoughts WHERE id = ?1", [id.row])?;
        }
        MemoryLayer::Facts => {
            super::VectorRepo(&tx).wipe(super::VecTable::Facts, id.row)?;
            tx.execute("DELETE FROM facts WHERE id = ?1", [id.row])?;
        }
        MemoryLayer::Episodes => {
            super::VectorRepo(&tx).wipe(super::VecTable::Episodes, id.row)?;
            tx.execute("DELETE FROM episodes WHERE id = ?1", [id.row])?;
        }
        MemoryLayer::Traits => {
            super::VectorRepo(&tx).wipe(super::VecTable::Traits, id.row)?;
            tx.execute("DELETE FROM user_traits WHERE id = ?1", [id.row])?;
        }
        MemoryLayer::Concepts => {
            super::VectorRepo(&tx).wipe(super::VecTable::Concepts, id.row)?;
            relationships = super::RelationshipsRepo(&tx).delete_of_concept(id.row)?;
            tx.execute("DELETE FROM semantic_concepts WHERE id = ?1", [id.row])?;
        }
    }
    let key = id.row.to_string();
    let detail = format!("the user asked to forget {id}");
    let uncertainties = close_uncertainties(&tx, id.layer.kind(), &key, "forgotten", &detail, now)?;
    let p = Purge {
        needles: needles.clone(),
        exchanges,
        kind: id.layer.kind().to_string(),
        row: Some(id.row),
        block_only: Vec::new(),
        trait_slots: Vec::new(),
    };
    // One commit for the row and every copy of its words: all or nothing under a kill.
    let purged = purge_in(&tx, &p)?;
    tx.commit()?;
    settle(conn)?;
    let mut rows = purged.rows;
    *rows.entry(table.to_string()).or_default() += 1;
    let deletion_id: i64 = conn.query_row(
        "SELECT id FROM memory_deletions WHERE layer = ?1 AND row_id = ?2 ORDER BY id DESC LIMIT 1",
        params![id.layer.kind(), key],
        |r| r.get(0),
    )?;
    Ok(Forgotten { id, deletion_id, relationships, uncertainties, rows, lines: purged.lines, needles })
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
