//! The graph state of `semantic_concepts` rows (threshold, potential, trace, probation): what
//! activation, learning and neurogenesis read and write (docs/cognition.md §9.4).

use super::super::{CachedSql, StoreError};
use super::ConceptsRepo;
use rusqlite::{OptionalExtension, params};

/// A live concept as activation reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphNodeRow {
    pub id: i64,
    pub name: String,
    pub threshold: f64,
    pub potential: f64,
    pub trace: f64,
    pub probation: bool,
}

impl GraphNodeRow {
    /// The columns `id, name, threshold, potential, trace, probation`, first in a row.
    pub(in crate::store) fn from_row(r: &rusqlite::Row) -> rusqlite::Result<GraphNodeRow> {
        Ok(GraphNodeRow {
            id: r.get(0)?,
            name: r.get(1)?,
            threshold: r.get(2)?,
            potential: r.get(3)?,
            trace: r.get(4)?,
            probation: r.get(5)?,
        })
    }
}

/// A probationary node, for the confirmation and expiry rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probationer {
    pub id: i64,
    pub created_at: i64,
    pub fired_count: i64,
}

impl ConceptsRepo<'_> {
    /// Every live concept with its graph state.
    pub fn graph_nodes(&self) -> Result<Vec<GraphNodeRow>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT c.id, c.name, c.threshold, COALESCE(t.potential, 0.0), COALESCE(t.trace, 0.0), c.probation
             FROM semantic_concepts c LEFT JOIN concept_traces t ON t.id = c.id
             WHERE c.deleted_at IS NULL ORDER BY c.id",
        )?;
        let rows = stmt.query_map([], GraphNodeRow::from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// `(live nodes, of which probationary)`.
    pub fn graph_counts(&self) -> Result<(i64, i64), StoreError> {
        Ok(self.0.query_row(
            "SELECT COUNT(*), COALESCE(SUM(probation), 0) FROM semantic_concepts WHERE deleted_at IS NULL",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?)
    }

    /// Persist one activation: every trace × `trace_factor` (tiny ones to 0), then each fired
    /// node's trace, count and time; potentials are cleared, then `potentials` (what a call with
    /// reset off leaves for the next) are written.
    pub fn save_activation(
        &self,
        trace_factor: f64,
        fired: &[(i64, f64)],
        potentials: &[(i64, f64)],
        now: i64,
    ) -> Result<(), StoreError> {
        super::super::in_savepoint(self.0, || self.write_activation(trace_factor, fired, potentials, now))
    }

    /// [`Self::save_activation`]'s writes, to the narrow `concept_traces` (migration 0021): the
    /// decay and the reset touch only its few rows (one per concept with a trace or a
    /// potential), and a row both leave at 0 goes. A fired node's count and time go to the
    /// narrow `concept_firings` (migration 0025), so the wide concept rows are not written at
    /// all. An id with no concept row is skipped, as the UPDATEs of the wide row skipped it (the
    /// tables' foreign keys would refuse it).
    fn write_activation(
        &self,
        trace_factor: f64,
        fired: &[(i64, f64)],
        potentials: &[(i64, f64)],
        now: i64,
    ) -> Result<(), StoreError> {
        self.0
            .prepare_cached(
                "UPDATE concept_traces SET potential = 0.0,
                     trace = CASE WHEN trace * ?1 < 1e-4 THEN 0.0 ELSE trace * ?1 END",
            )?
            .execute(params![trace_factor])?;
        let mut count = self.0.prepare_cached(
            "INSERT INTO concept_firings (id, fired_count, last_fired_at) SELECT id, 1, ?2 FROM semantic_concepts
             WHERE id = ?1
             ON CONFLICT (id) DO UPDATE SET fired_count = fired_count + 1, last_fired_at = excluded.last_fired_at",
        )?;
        let mut fire = self.0.prepare_cached(
            "INSERT INTO concept_traces (id, trace) VALUES (?1, ?2) ON CONFLICT (id) DO UPDATE SET trace = excluded.trace",
        )?;
        for (id, trace) in fired {
            if count.execute(params![id, now])? > 0 {
                fire.execute(params![id, trace])?;
            }
        }
        let mut pot = self.0.prepare_cached(
            "INSERT INTO concept_traces (id, potential) SELECT id, ?2 FROM semantic_concepts WHERE id = ?1
             ON CONFLICT (id) DO UPDATE SET potential = excluded.potential",
        )?;
        for (id, p) in potentials {
            pot.execute(params![id, p])?;
        }
        self.0.prepare_cached("DELETE FROM concept_traces WHERE trace = 0.0 AND potential = 0.0")?.execute([])?;
        Ok(())
    }

    /// The live node grown from the text whose deterministic key is `key`.
    pub fn by_graph_key(&self, key: &str) -> Result<Option<i64>, StoreError> {
        Ok(self
            .0
            .row("SELECT id FROM semantic_concepts WHERE graph_key = ?1 AND deleted_at IS NULL", params![key], |r| {
                r.get(0)
            })
            .optional()?)
    }

    /// A probationary node grown from a message. A forgotten row of the same key is reused
    /// (the key is unique), so the id stays deterministic for the text.
    pub fn insert_grown(&self, key: &str, name: &str, threshold: f64, now: i64) -> Result<i64, StoreError> {
        super::super::in_savepoint(self.0, || self.write_grown(key, name, threshold, now))
    }

    /// [`Self::insert_grown`]'s writes. A reused row starts again unfired: its firings go first
    /// (the upsert below takes the `graph_key` branch exactly when such a row exists).
    fn write_grown(&self, key: &str, name: &str, threshold: f64, now: i64) -> Result<i64, StoreError> {
        self.0.exec(
            "DELETE FROM concept_firings WHERE id IN (SELECT id FROM semantic_concepts WHERE graph_key = ?1)",
            params![key],
        )?;
        self.0.exec(
            "INSERT INTO semantic_concepts (name, concept_type, definition, threshold, probation, graph_key,
                                            seed_count, confidence, created_at, updated_at)
             VALUES (?1, 'grown', ?1, ?2, 1, ?3, 1, 0.5, ?4, ?4)
             ON CONFLICT (graph_key) WHERE graph_key IS NOT NULL DO UPDATE SET
                 deleted_at = NULL, probation = 1, seed_count = 1, threshold = ?2,
                 created_at = ?4, updated_at = ?4
             ON CONFLICT (name, concept_type) DO UPDATE SET deleted_at = NULL, updated_at = ?4",
            params![name, threshold, key, now],
        )?;
        Ok(self.0.row("SELECT id FROM semantic_concepts WHERE graph_key = ?1", params![key], |r| r.get(0))?)
    }

    /// A message asked for a grown node again.
    pub fn bump_seed_count(&self, id: i64, now: i64) -> Result<(), StoreError> {
        self.0.exec(
            "UPDATE semantic_concepts SET seed_count = seed_count + 1, last_accessed_at = ?2 WHERE id = ?1",
            params![id, now],
        )?;
        Ok(())
    }

    /// Every live probationary node.
    pub fn probationers(&self) -> Result<Vec<Probationer>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT c.id, c.created_at, COALESCE(f.fired_count, 0)
             FROM semantic_concepts c LEFT JOIN concept_firings f ON f.id = c.id
             WHERE c.probation = 1 AND c.deleted_at IS NULL",
        )?;
        let rows =
            stmt.query_map([], |r| Ok(Probationer { id: r.get(0)?, created_at: r.get(1)?, fired_count: r.get(2)? }))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// A probationary node confirmed: durable from now on.
    pub fn confirm(&self, id: i64) -> Result<(), StoreError> {
        self.0.execute("UPDATE semantic_concepts SET probation = 0 WHERE id = ?1", params![id])?;
        Ok(())
    }

    /// How many nodes were grown since `since`.
    pub fn grown_since(&self, since: i64) -> Result<i64, StoreError> {
        Ok(self.0.query_row(
            "SELECT COUNT(*) FROM semantic_concepts WHERE graph_key IS NOT NULL AND created_at >= ?1",
            params![since],
            |r| r.get(0),
        )?)
    }
}

#[cfg(test)]
mod tests;
