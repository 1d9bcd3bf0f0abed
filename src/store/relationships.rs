//! `semantic_relationships`: the concept graph's edges. `weight` is the one signed measure of an
//! edge (negative inhibits; docs/cognition.md §9.4); symmetric edges are stored once, lower id
//! first, and expanded both ways by whoever walks them.

use super::CachedSql;
use super::StoreError;
use super::browse::row_object;
use rusqlite::{Connection, params};
use serde_json::Value;

/// The bound the schema's CHECK enforces and the learning rule clamps to (parameters §12.2).
pub const WEIGHT_BOUND: f64 = 10.0;

/// An edge to write. A symmetric one is stored once, lower id first (the caller orders it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewEdge<'a> {
    pub source: i64,
    pub target: i64,
    pub rel_type: &'a str,
    /// Signed: negative inhibits.
    pub weight: f64,
    pub bidirectional: bool,
}

/// An edge as activation reads it, both signs.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeRow {
    pub id: i64,
    pub source: i64,
    pub target: i64,
    pub weight: f64,
    pub bidirectional: bool,
}

/// An edge with its ends' names, for inspection.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedEdge {
    pub id: i64,
    pub source: String,
    pub target: String,
    pub rel_type: String,
    pub weight: f64,
    pub bidirectional: bool,
    pub origin: String,
}

pub struct RelationshipsRepo<'c>(pub &'c Connection);

impl RelationshipsRepo<'_> {
    /// Insert the edge, or restate the same one: a restatement of the same sign keeps the larger
    /// magnitude (learning may have grown it) and gains confidence; one of the other sign leaves
    /// the weight to what learning made of it.
    pub fn upsert(&self, e: &NewEdge<'_>, now: i64) -> Result<(), StoreError> {
        let w = e.weight.clamp(-WEIGHT_BOUND, WEIGHT_BOUND);
        self.0.exec(
            "INSERT INTO semantic_relationships (source_id, target_id, rel_type, weight, confidence,
                                                 bidirectional, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, 0.5, ?5, ?6, ?6)
             ON CONFLICT (source_id, target_id, rel_type) DO UPDATE SET
                 weight = CASE WHEN (weight < 0) <> (excluded.weight < 0) THEN weight
                               WHEN excluded.weight < 0 THEN min(weight, excluded.weight)
                               ELSE max(weight, excluded.weight) END,
                 confidence = min(1.0, confidence + 0.1),
                 updated_at = excluded.updated_at",
            params![e.source, e.target, e.rel_type, w, e.bidirectional, now],
        )?;
        Ok(())
    }

    /// Every edge between two live concepts, both signs.
    pub fn graph_edges(&self) -> Result<Vec<EdgeRow>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT r.id, r.source_id, r.target_id, r.weight, r.bidirectional FROM semantic_relationships r
             JOIN semantic_concepts s ON s.id = r.source_id AND s.deleted_at IS NULL
             JOIN semantic_concepts t ON t.id = r.target_id AND t.deleted_at IS NULL",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(EdgeRow {
                id: r.get(0)?,
                source: r.get(1)?,
                target: r.get(2)?,
                weight: r.get(3)?,
                bidirectional: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// `(edges, of which inhibitory)`.
    pub fn counts(&self) -> Result<(i64, i64), StoreError> {
        Ok(self.0.row("SELECT COUNT(*), COALESCE(SUM(weight < 0), 0) FROM semantic_relationships", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?)
    }

    /// The `limit` edges of largest |weight| between live concepts.
    pub fn strongest(&self, limit: usize) -> Result<Vec<NamedEdge>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT r.id, s.name, t.name, r.rel_type, r.weight, r.bidirectional, r.origin
             FROM semantic_relationships r
             JOIN semantic_concepts s ON s.id = r.source_id AND s.deleted_at IS NULL
             JOIN semantic_concepts t ON t.id = r.target_id AND t.deleted_at IS NULL
             ORDER BY abs(r.weight) DESC, r.id LIMIT ?1",
        )?;
        let rows = stmt.query_map(params![limit as i64], |r| {
            Ok(NamedEdge {
                id: r.get(0)?,
                source: r.get(1)?,
                target: r.get(2)?,
                rel_type: r.get(3)?,
                weight: r.get(4)?,
                bidirectional: r.get(5)?,
                origin: r.get(6)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Add `delta` to an edge's weight, clamped to ±[`WEIGHT_BOUND`]; a carried edge also counts
    /// a firing.
    pub fn add_weight(&self, id: i64, delta: f64, carried: bool, now: i64) -> Result<(), StoreError> {
        self.0
            .prepare_cached(
                "UPDATE semantic_relationships
                 SET weight = max(-?3, min(?3, weight + ?2)), fired_count = fired_count + ?4,
                     last_fired_at = CASE WHEN ?4 > 0 THEN ?5 ELSE last_fired_at END, updated_at = ?5
                 WHERE id = ?1",
            )?
            .execute(params![id, delta, WEIGHT_BOUND, i64::from(carried), now])?;
        Ok(())
    }

    /// A learned edge between two co-firing concepts (nothing if that pair already has one).
    pub fn insert_learned(&self, source: i64, target: i64, weight: f64, now: i64) -> Result<bool, StoreError> {
        let w = weight.clamp(-WEIGHT_BOUND, WEIGHT_BOUND);
        Ok(self
            .0
            .prepare_cached(
                "INSERT OR IGNORE INTO semantic_relationships (source_id, target_id, rel_type, weight, origin,
                                                               created_at, updated_at)
                 VALUES (?1, ?2, 'co-fires', ?3, 'learned', ?4, ?4)",
            )?
            .execute(params![source, target, w, now])?
            > 0)
    }

    /// Every learned edge's weight times `factor` (the decay pass). Returns how many changed.
    pub fn scale_learned(&self, factor: f64) -> Result<usize, StoreError> {
        Ok(self.0.exec(
            "UPDATE semantic_relationships SET weight = weight * ?1 WHERE weight <> 0 AND origin <> 'extracted'",
            params![factor],
        )?)
    }

    /// The ids of learned edges with |weight| below `floor`.
    pub fn learned_weaker_than(&self, floor: f64) -> Result<Vec<i64>, StoreError> {
        let mut stmt = self
            .0
            .prepare_cached("SELECT id FROM semantic_relationships WHERE abs(weight) < ?1 AND origin <> 'extracted'")?;
        let rows = stmt.query_map(params![floor], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One edge as a JSON object of its columns (the snapshot a deletion records).
    pub fn snapshot(&self, id: i64) -> Result<Option<Value>, StoreError> {
        let mut stmt = self.0.prepare("SELECT * FROM semantic_relationships WHERE id = ?1")?;
        let names: Vec<String> = stmt.column_names().map(str::to_string).collect();
        let mut rows = stmt.query_map(params![id], |r| row_object(r, &names).map(Value::Object))?;
        Ok(rows.next().transpose()?)
    }

    pub fn delete(&self, id: i64) -> Result<(), StoreError> {
        self.0.exec("DELETE FROM semantic_relationships WHERE id = ?1", params![id])?;
        Ok(())
    }

    /// Every edge touching `concept`, each as a JSON object of its columns (the snapshot a
    /// deletion records).
    pub fn of_concept_snapshots(&self, concept: i64) -> Result<Vec<Value>, StoreError> {
        let mut stmt = self.0.prepare("SELECT * FROM semantic_relationships WHERE source_id = ?1 OR target_id = ?1")?;
        let names: Vec<String> = stmt.column_names().map(str::to_string).collect();
        let rows = stmt.query_map(params![concept], |r| row_object(r, &names).map(Value::Object))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Remove every edge touching `concept`. Returns how many.
    pub fn delete_of_concept(&self, concept: i64) -> Result<usize, StoreError> {
        Ok(self.0.exec("DELETE FROM semantic_relationships WHERE source_id = ?1 OR target_id = ?1", [concept])?)
    }
}
