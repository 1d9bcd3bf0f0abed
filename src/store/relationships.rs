//! `semantic_relationships`: the concept graph's edges, signed (`contradicts` inhibits).

use super::StoreError;
use super::browse::row_object;
use rusqlite::{Connection, params};
use serde_json::Value;

/// An edge to write. A symmetric one is stored once, lower id first (the caller orders it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewEdge<'a> {
    pub source: i64,
    pub target: i64,
    pub rel_type: &'a str,
    pub strength: f64,
    /// Signed: negative inhibits.
    pub weight: f64,
    pub bidirectional: bool,
}

/// An excitatory edge as spreading activation walks it.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeRow {
    pub id: i64,
    pub source: i64,
    pub target: i64,
    pub strength: f64,
    pub bidirectional: bool,
}

pub struct RelationshipsRepo<'c>(pub &'c Connection);

impl RelationshipsRepo<'_> {
    /// Insert the edge, or strengthen the same one: a repeat keeps the larger strength (the
    /// weight's sign follows) and gains confidence.
    pub fn upsert(&self, e: &NewEdge<'_>, now: i64) -> Result<(), StoreError> {
        self.0.execute(
            "INSERT INTO semantic_relationships (source_id, target_id, rel_type, strength, weight, confidence,
                                                 bidirectional, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, 0.5, ?6, ?7, ?7)
             ON CONFLICT (source_id, target_id, rel_type) DO UPDATE SET
                 strength = max(strength, excluded.strength),
                 weight = CASE WHEN excluded.weight < 0 THEN -max(strength, excluded.strength)
                               ELSE max(strength, excluded.strength) END,
                 confidence = min(1.0, confidence + 0.1),
                 updated_at = excluded.updated_at",
            params![e.source, e.target, e.rel_type, e.strength, e.weight, e.bidirectional, now],
        )?;
        Ok(())
    }

    /// Every edge of positive weight.
    pub fn excitatory(&self) -> Result<Vec<EdgeRow>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT id, source_id, target_id, strength, bidirectional FROM semantic_relationships WHERE weight > 0",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(EdgeRow {
                id: r.get(0)?,
                source: r.get(1)?,
                target: r.get(2)?,
                strength: r.get(3)?,
                bidirectional: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
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
        Ok(self.0.execute("DELETE FROM semantic_relationships WHERE source_id = ?1 OR target_id = ?1", [concept])?)
    }
}
