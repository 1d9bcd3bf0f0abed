//! `graph_changes` (migration 0020): the concept graph's writes, row by row, so a kept copy of
//! the graph catches up by re-reading the rows that changed instead of every concept and edge
//! (`memory::graph::cache`; at 1M memories the full read is ~280 ms).

use super::relationships::EdgeRow;
use super::{CachedSql, GraphNodeRow, StoreError};
use rusqlite::{Connection, OptionalExtension, params};

/// What one logged write touched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphChange {
    /// A concept: its id now, and before the write (None for an insert).
    Concept { id: i64, old_id: Option<i64> },
    /// An edge: its id, and its two ends before the write (None for an insert).
    Edge { id: i64, old_ends: Option<(i64, i64)> },
}

/// Where the graph stands: its version (None when the row is missing) and the newest log entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GraphMark {
    pub version: Option<i64>,
    pub seq: i64,
}

pub struct GraphLogRepo<'c>(pub &'c Connection);

impl GraphLogRepo<'_> {
    /// The graph's version and the log's newest entry, read by one statement (one snapshot),
    /// so the two agree.
    pub fn mark(&self) -> Result<GraphMark, StoreError> {
        let (version, seq): (Option<String>, i64) = self.0.row(
            "SELECT (SELECT value FROM kv_state WHERE namespace = 'graph' AND key = 'version'),
                    (SELECT COALESCE(MAX(seq), 0) FROM graph_changes)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        Ok(GraphMark { version: version.and_then(|v| v.trim().parse().ok()), seq })
    }

    /// The entries after `seq`, oldest first, at most `limit` + 1 of them (so a caller can
    /// tell "more than it wants" from "exactly that many").
    pub fn since(&self, seq: i64, limit: usize) -> Result<Vec<GraphChange>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT kind, row_id, old_a, old_b FROM graph_changes WHERE seq > ?1 ORDER BY seq LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![seq, limit.saturating_add(1).min(i64::MAX as usize) as i64], |r| {
            let (kind, id, a, b): (i64, i64, Option<i64>, Option<i64>) = (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?);
            Ok(if kind == 0 {
                GraphChange::Concept { id, old_id: a }
            } else {
                GraphChange::Edge { id, old_ends: a.zip(b) }
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Concept `id` as activation reads it, and whether it is live; None when no row has the id.
    pub fn node(&self, id: i64) -> Result<Option<(GraphNodeRow, bool)>, StoreError> {
        Ok(self
            .0
            .row(
                "SELECT c.id, c.name, c.threshold, COALESCE(t.potential, 0.0), COALESCE(t.trace, 0.0), c.probation,
                        c.deleted_at IS NULL
                 FROM semantic_concepts c LEFT JOIN concept_traces t ON t.id = c.id WHERE c.id = ?1",
                params![id],
                |r| Ok((GraphNodeRow::from_row(r)?, r.get(6)?)),
            )
            .optional()?)
    }

    /// Edge `id`, whatever its ends; None when it is gone.
    pub fn edge(&self, id: i64) -> Result<Option<EdgeRow>, StoreError> {
        Ok(self
            .0
            .row(
                "SELECT id, source_id, target_id, weight, bidirectional FROM semantic_relationships WHERE id = ?1",
                params![id],
                edge_row,
            )
            .optional()?)
    }

    /// Every edge with concept `id` at either end (live or not at the other).
    pub fn edges_of(&self, id: i64) -> Result<Vec<EdgeRow>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT id, source_id, target_id, weight, bidirectional FROM semantic_relationships WHERE source_id = ?1
             UNION
             SELECT id, source_id, target_id, weight, bidirectional FROM semantic_relationships WHERE target_id = ?1",
        )?;
        let rows = stmt.query_map(params![id], edge_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

fn edge_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<EdgeRow> {
    Ok(EdgeRow { id: r.get(0)?, source: r.get(1)?, target: r.get(2)?, weight: r.get(3)?, bidirectional: r.get(4)? })
}
