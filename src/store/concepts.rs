//! `semantic_concepts`: the concept graph's nodes (their vectors in `concept_vec`, edges in
//! [`super::RelationshipsRepo`]). Recall's reads are in [`super::RecallRepo`].

use super::CachedSql;
use super::StoreError;
use rusqlite::{Connection, OptionalExtension, params};

mod graph;
pub use graph::{GraphNodeRow, Probationer};

/// A concept's fields as extraction gives them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConceptFields<'a> {
    pub name: &'a str,
    pub concept_type: &'a str,
    pub definition: &'a str,
    pub abstraction_level: i64,
    pub domain: Option<&'a str>,
}

/// What reinforcing a concept reads.
#[derive(Debug, Clone, PartialEq)]
pub struct ConceptStrength {
    pub strength: f64,
    pub consolidation_count: i64,
    /// JSON array of episode ids.
    pub source_episodes: String,
}

/// A concept as the decay pass reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct DecayingConcept {
    pub id: i64,
    pub strength: f64,
    pub decay_resistance: f64,
    pub reliability: String,
    /// When it was last used, reinforced or written.
    pub accessed_at: i64,
    pub at_floor_since: Option<i64>,
}

pub struct ConceptsRepo<'c>(pub &'c Connection);

impl ConceptsRepo<'_> {
    /// The live concept of this name (any case) and type.
    pub fn live_by_name(&self, name: &str, concept_type: &str) -> Result<Option<i64>, StoreError> {
        Ok(self
            .0
            .row(
                "SELECT id FROM semantic_concepts
                 WHERE name = ?1 COLLATE NOCASE AND concept_type = ?2 AND deleted_at IS NULL LIMIT 1",
                params![name, concept_type],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// The concept of this name (any case) and type, forgotten or not.
    pub fn any_by_name(&self, name: &str, concept_type: &str) -> Result<Option<i64>, StoreError> {
        Ok(self
            .0
            .row(
                "SELECT id FROM semantic_concepts WHERE name = ?1 COLLATE NOCASE AND concept_type = ?2 LIMIT 1",
                params![name, concept_type],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// The ids of the live concepts named `name` (any case), of any type.
    pub fn live_ids_named(&self, name: &str) -> Result<Vec<i64>, StoreError> {
        let mut stmt = self
            .0
            .prepare_cached("SELECT id FROM semantic_concepts WHERE name = ?1 COLLATE NOCASE AND deleted_at IS NULL")?;
        let rows = stmt.query_map(params![name], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Whether `id` is a live concept.
    pub fn is_live(&self, id: i64) -> Result<bool, StoreError> {
        let live: Option<i64> = self
            .0
            .row("SELECT id FROM semantic_concepts WHERE id = ?1 AND deleted_at IS NULL", params![id], |r| r.get(0))
            .optional()?;
        Ok(live.is_some())
    }

    pub fn strength(&self, id: i64) -> Result<ConceptStrength, StoreError> {
        Ok(self.0.row(
            "SELECT strength, consolidation_count, source_episodes FROM semantic_concepts WHERE id = ?1",
            params![id],
            |r| Ok(ConceptStrength { strength: r.get(0)?, consolidation_count: r.get(1)?, source_episodes: r.get(2)? }),
        )?)
    }

    /// One more mention: the new strength, count, resistance and sources.
    pub fn reinforce(
        &self,
        id: i64,
        strength: f64,
        count: i64,
        decay_resistance: f64,
        source_episodes: &str,
        now: i64,
    ) -> Result<(), StoreError> {
        self.0.exec(
            "UPDATE semantic_concepts SET strength = ?2, consolidation_count = ?3, decay_resistance = ?4,
                    source_episodes = ?5, last_reinforced_at = ?6, updated_at = ?6, at_floor_since = NULL
             WHERE id = ?1",
            params![id, strength, count, decay_resistance, source_episodes, now],
        )?;
        Ok(())
    }

    /// Add `by` to a live concept's strength, at most 10 (drift's rescue of a decaying seed);
    /// it is no longer at the floor.
    pub fn strengthen(&self, id: i64, by: f64, now: i64) -> Result<(), StoreError> {
        self.0.exec(
            "UPDATE semantic_concepts SET strength = min(10.0, strength + ?2), at_floor_since = NULL, updated_at = ?3
             WHERE id = ?1 AND deleted_at IS NULL",
            params![id, by, now],
        )?;
        Ok(())
    }

    /// Bring a forgotten concept back as new, on its own row.
    pub fn revive(&self, id: i64, c: &ConceptFields<'_>, source_episodes: &str, now: i64) -> Result<(), StoreError> {
        self.0.exec(
            "UPDATE semantic_concepts SET definition = ?2, abstraction_level = ?3, domain = ?4, strength = 1.0,
                    activation = 1.0, confidence = 0.5, utility = 0.5, decay_resistance = 0.5,
                    consolidation_count = 0, access_count = 0, source_episodes = ?5, created_at = ?6,
                    updated_at = ?6, last_accessed_at = NULL, last_reinforced_at = NULL, deleted_at = NULL,
                    at_floor_since = NULL, reliability = 'reliable'
             WHERE id = ?1",
            params![id, c.definition, c.abstraction_level, c.domain, source_episodes, now],
        )?;
        Ok(())
    }

    /// A new concept. Returns its id.
    pub fn insert(&self, c: &ConceptFields<'_>, source_episodes: &str, now: i64) -> Result<i64, StoreError> {
        self.0.exec(
            "INSERT INTO semantic_concepts (name, concept_type, definition, abstraction_level, domain, confidence,
                                            source_episodes, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, 0.5, ?6, ?7, ?7)",
            params![c.name, c.concept_type, c.definition, c.abstraction_level, c.domain, source_episodes, now],
        )?;
        Ok(self.0.last_insert_rowid())
    }

    /// Set a concept's reliability; `force` for a resolution, otherwise only downwards (the rank guard).
    pub fn set_reliability(&self, id: i64, state: &str, force: bool) -> Result<bool, StoreError> {
        Ok(self.0.exec(&super::traits::guarded_update("semantic_concepts"), params![id, state, force])? > 0)
    }

    /// `(name, definition)` of a concept.
    pub fn name_and_definition(&self, id: i64) -> Result<(String, String), StoreError> {
        Ok(self
            .0
            .prepare_cached("SELECT name, definition FROM semantic_concepts WHERE id = ?1")?
            .query_row(params![id], |r| Ok((r.get(0)?, r.get(1)?)))?)
    }

    /// The names of the strongest live concepts.
    pub fn strongest_names(&self, limit: usize) -> Result<Vec<String>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT name FROM semantic_concepts WHERE deleted_at IS NULL ORDER BY strength DESC, updated_at DESC LIMIT ?1",
        )?;
        let rows = stmt.query_map(params![limit as i64], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// How many concepts are live (the decay gate's richness).
    pub fn live_count(&self) -> Result<i64, StoreError> {
        Ok(self.0.row("SELECT COUNT(*) FROM semantic_concepts WHERE deleted_at IS NULL", [], |r| r.get(0))?)
    }

    /// Every live concept, for one decay pass.
    pub fn for_decay(&self) -> Result<Vec<DecayingConcept>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT id, strength, decay_resistance, reliability,
                    COALESCE(last_accessed_at, last_reinforced_at, created_at), at_floor_since
             FROM semantic_concepts WHERE deleted_at IS NULL",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(DecayingConcept {
                id: r.get(0)?,
                strength: r.get(1)?,
                decay_resistance: r.get(2)?,
                reliability: r.get(3)?,
                accessed_at: r.get(4)?,
                at_floor_since: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// A decay step: the new strength and the floor stamp.
    pub fn set_decayed(&self, id: i64, strength: f64, at_floor_since: Option<i64>) -> Result<(), StoreError> {
        self.0
            .prepare_cached("UPDATE semantic_concepts SET strength = ?2, at_floor_since = ?3 WHERE id = ?1")?
            .execute(params![id, strength, at_floor_since])?;
        Ok(())
    }

    /// Soft-delete: the row stays (episodes' and the audit's references keep resolving) with
    /// `deleted_at`; `updated_at` moves so caches keyed on it notice.
    pub fn soft_delete(&self, id: i64, now: i64) -> Result<(), StoreError> {
        self.0.exec("UPDATE semantic_concepts SET deleted_at = ?2, updated_at = ?2 WHERE id = ?1", params![id, now])?;
        Ok(())
    }

    /// `(newest updated_at or 0, row count)`: changes whenever a concept is added, changed or removed.
    pub fn version(&self) -> Result<(i64, i64), StoreError> {
        Ok(self.0.row("SELECT COALESCE(MAX(updated_at), 0), COUNT(*) FROM semantic_concepts", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?)
    }
}
