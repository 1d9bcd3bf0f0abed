//! `user_traits`: what the user is, as the chunker learned it, the user stated it and decay
//! wears it down. Every statement on the table is here.

use super::CachedSql;
use super::{StoreError, TraitRow};
use rusqlite::{Connection, OptionalExtension, params};

/// The stored row, as the docs/cognition.md §9.5 store rules need it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredTrait {
    pub id: i64,
    pub value: String,
    pub confidence: f64,
    pub reinforcement_count: u32,
    pub last_reinforced_at: Option<i64>,
    /// reliable | uncertain | contradicted | superseded.
    pub reliability: String,
}

/// What [`TraitsRepo::set_explicit`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExplicitWrite {
    /// No current value under the key: a new row.
    Inserted(i64),
    /// The same value again: counted (its reliability untouched: the rank guard).
    Reinforced(i64),
    /// A different value: the old row is superseded (kept for "used to"), the new one is current.
    Superseded { old: i64, new: i64 },
}

/// SQL for a reliability state's rank (docs/cognition.md §10.1): reliable 4 … superseded 1.
const RANK: &str = "CASE {} WHEN 'reliable' THEN 4 WHEN 'uncertain' THEN 3 WHEN 'contradicted' THEN 2 ELSE 1 END";

/// A trait to insert or overwrite with: the values an observation carries once its confidence
/// was adjusted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TraitWrite<'a> {
    pub key: &'a str,
    pub value: &'a str,
    pub category: &'a str,
    pub confidence: f64,
    /// `explicit` or `inferred`.
    pub source: &'a str,
    pub is_literal: bool,
    /// When the user said it.
    pub observed_at: i64,
}

/// One trait as the decay pass reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct DecayingTrait {
    pub id: i64,
    pub confidence: f64,
    pub reinforcement_count: i64,
    pub category: String,
    pub source: String,
    pub reliability: String,
    pub at_floor_since: Option<i64>,
}

/// `UPDATE {table} SET reliability = ?2 WHERE id = ?1` under the rank guard: unless `?3`
/// (a resolution) the new state must rank lower.
pub(super) fn guarded_update(table: &str) -> String {
    format!(
        "UPDATE {table} SET reliability = ?2 WHERE id = ?1 AND reliability != ?2 AND (?3 OR {} < {})",
        RANK.replace("{}", "?2"),
        RANK.replace("{}", "reliability")
    )
}

pub struct TraitsRepo<'c>(pub &'c Connection);

fn stored(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredTrait> {
    Ok(StoredTrait {
        id: r.get(0)?,
        value: r.get(1)?,
        confidence: r.get(2)?,
        reinforcement_count: r.get::<_, i64>(3)?.clamp(0, i64::from(u32::MAX)) as u32,
        last_reinforced_at: r.get(4)?,
        reliability: r.get(5)?,
    })
}

impl TraitsRepo<'_> {
    /// The traits context assembly injects: at least `min_confidence`, not superseded (the
    /// past is [`Self::past_values`]); contradicted rows come too, for the prompt to flag; the
    /// user's own statements first, at most `limit`.
    pub fn for_context(&self, limit: usize, min_confidence: f64) -> Result<Vec<TraitRow>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT trait_key, trait_value, category, confidence, reliability FROM user_traits
             WHERE reliability != 'superseded' AND confidence >= ?2
             ORDER BY reliability = 'contradicted', (source = 'explicit') DESC, confidence DESC, updated_at DESC
             LIMIT ?1",
        )?;
        let rows = stmt.query_map(params![limit as i64, min_confidence], TraitRow::from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every trait that is not superseded, at any confidence, newest first, at most `limit`.
    pub fn not_superseded(&self, limit: i64) -> Result<Vec<TraitRow>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT trait_key, trait_value, category, confidence, reliability FROM user_traits
             WHERE reliability != 'superseded' ORDER BY updated_at DESC, id DESC LIMIT ?1",
        )?;
        let rows = stmt.query_map(params![limit], TraitRow::from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Store a trait the user stated: full confidence, reinforced when repeated. A different
    /// value never overwrites in place: the old row is superseded and kept (the "used to"
    /// value), the new row is current. A restatement does not raise a contradicted row's
    /// reliability (only a resolution does: the rank guard).
    pub fn set_explicit(&self, key: &str, value: &str, category: &str, now: i64) -> Result<ExplicitWrite, StoreError> {
        let write = TraitWrite {
            key,
            value,
            category,
            confidence: 1.0,
            source: "explicit",
            is_literal: true,
            observed_at: now,
        };
        match self.find(key)? {
            Some(old) if old.value.trim().eq_ignore_ascii_case(value.trim()) => {
                let count = old.reinforcement_count.saturating_add(1);
                self.reinforce(old.id, 1.0, count, "explicit", now, now)?;
                Ok(ExplicitWrite::Reinforced(old.id))
            }
            Some(old) => {
                let new = self.supersede_with(old.id, &write, now)?;
                Ok(ExplicitWrite::Superseded { old: old.id, new })
            }
            None => Ok(ExplicitWrite::Inserted(self.insert(&write, now)?)),
        }
    }

    /// Every row stored under `key`, current first, superseded last, newest first within.
    pub fn rows_for_key(&self, key: &str) -> Result<Vec<(StoredTrait, String)>, StoreError> {
        let mut stmt = self.0.prepare_cached(&format!(
            "SELECT id, trait_value, confidence, reinforcement_count, last_reinforced_at, reliability, source
             FROM user_traits WHERE trait_key = ?1 ORDER BY {} DESC, updated_at DESC, id DESC",
            RANK.replace("{}", "reliability")
        ))?;
        let rows = stmt.query_map(params![key], |r| Ok((stored(r)?, r.get(6)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Set a row's reliability. An ordinary update (`force` false) may only lower the rank;
    /// a resolution (`force` true) sets it either way (docs/cognition.md §10.1). Returns whether it changed.
    pub fn set_reliability(&self, id: i64, state: &str, force: bool, now: i64) -> Result<bool, StoreError> {
        let sql = format!(
            "UPDATE user_traits SET reliability = ?2, updated_at = ?4
             WHERE id = ?1 AND reliability != ?2 AND (?3 OR {} < {})",
            RANK.replace("{}", "?2"),
            RANK.replace("{}", "reliability")
        );
        Ok(self.0.exec(&sql, params![id, state, force, now])? > 0)
    }

    /// A new value taking over from row `old_id`: the old row becomes superseded (forced: a
    /// resolution), the new one is inserted current. Returns the new id.
    pub fn supersede_with(&self, old_id: i64, t: &TraitWrite<'_>, now: i64) -> Result<i64, StoreError> {
        self.set_reliability(old_id, "superseded", true, now)?;
        let new = self.insert(t, now)?;
        self.link_successor(old_id, new)?;
        Ok(new)
    }

    /// Row `old` was replaced by row `new` (the temporal_evolution link "used to … until"
    /// reads). A no-op unless `old` is superseded and both rows are traits of one key.
    pub fn link_successor(&self, old: i64, new: i64) -> Result<bool, StoreError> {
        Ok(self.0.exec(
            "UPDATE user_traits SET superseded_by = ?2 WHERE id = ?1 AND reliability = 'superseded' AND ?1 != ?2
               AND trait_key = (SELECT n.trait_key FROM user_traits n WHERE n.id = ?2)",
            params![old, new],
        )? > 0)
    }

    /// The row that replaced trait `id` and when it was stored, if it still exists.
    pub fn successor(&self, id: i64) -> Result<Option<(i64, String, i64)>, StoreError> {
        Ok(self
            .0
            .prepare_cached(
                "SELECT n.id, n.trait_value, n.created_at FROM user_traits o JOIN user_traits n ON n.id = o.superseded_by
                 WHERE o.id = ?1",
            )?
            .query_row(params![id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .optional()?)
    }

    /// A rival value stored beside a current one, both marked contradicted (docs/cognition.md §10.3).
    /// Returns the rival's id.
    pub fn insert_rival(&self, current_id: i64, t: &TraitWrite<'_>, now: i64) -> Result<i64, StoreError> {
        self.set_reliability(current_id, "contradicted", false, now)?;
        self.0.exec("UPDATE user_traits SET last_conflict_at = ?2 WHERE id = ?1", params![current_id, now])?;
        self.0.exec(
            "INSERT INTO user_traits (trait_key, trait_value, category, confidence, source, is_literal,
                 reinforcement_count, last_reinforced_at, last_conflict_at, created_at, updated_at, reliability)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1, ?7, ?8, ?8, ?8, 'contradicted')",
            params![t.key, t.value, t.category, t.confidence, t.source, t.is_literal, t.observed_at, now],
        )?;
        Ok(self.0.last_insert_rowid())
    }

    /// The confidence of row `id`.
    pub fn confidence_of(&self, id: i64) -> Result<Option<f64>, StoreError> {
        Ok(self.0.row("SELECT confidence FROM user_traits WHERE id = ?1", params![id], |r| r.get(0)).optional()?)
    }

    /// `(key, value, reliability)` of one row.
    pub fn describe(&self, id: i64) -> Result<Option<(String, String, String)>, StoreError> {
        Ok(self
            .0
            .row("SELECT trait_key, trait_value, reliability FROM user_traits WHERE id = ?1", params![id], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .optional()?)
    }

    /// Superseded values whose key has a current value, newest first: the "used to" lines
    /// context assembly shows as past.
    pub fn past_values(&self, limit: usize) -> Result<Vec<TraitRow>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT s.trait_key, s.trait_value, s.category, s.confidence, s.reliability,
                    COALESCE((SELECT n.created_at FROM user_traits n WHERE n.id = s.superseded_by), s.updated_at)
             FROM user_traits s
             WHERE s.reliability = 'superseded'
               AND EXISTS (SELECT 1 FROM user_traits c WHERE c.trait_key = s.trait_key AND c.reliability != 'superseded')
             ORDER BY s.updated_at DESC, s.id DESC LIMIT ?1",
        )?;
        let rows = stmt.query_map(params![limit as i64], TraitRow::from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The value held under `key`: the current row, else the newest contradicted one; never a
    /// superseded one (that is the past).
    pub fn find(&self, key: &str) -> Result<Option<StoredTrait>, StoreError> {
        Ok(self
            .0
            .row(
                &format!(
                    "SELECT id, trait_value, confidence, reinforcement_count, last_reinforced_at, reliability
                     FROM user_traits WHERE trait_key = ?1 AND reliability != 'superseded'
                     ORDER BY {} DESC, updated_at DESC, id DESC LIMIT 1",
                    RANK.replace("{}", "reliability")
                ),
                params![key],
                stored,
            )
            .optional()?)
    }

    /// A new trait, counted once. Returns its id.
    pub fn insert(&self, t: &TraitWrite<'_>, now: i64) -> Result<i64, StoreError> {
        self.0.exec(
            "INSERT INTO user_traits (trait_key, trait_value, category, confidence, source, is_literal,
                 reinforcement_count, last_reinforced_at, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1, ?7, ?8, ?8)",
            params![t.key, t.value, t.category, t.confidence, t.source, t.is_literal, t.observed_at, now],
        )?;
        Ok(self.0.last_insert_rowid())
    }

    /// The same value said again. An explicit restatement upgrades an inferred trait; it never
    /// downgrades.
    pub fn reinforce(
        &self,
        id: i64,
        confidence: f64,
        count: u32,
        source: &str,
        observed_at: i64,
        now: i64,
    ) -> Result<(), StoreError> {
        self.0.exec(
            "UPDATE user_traits SET confidence = ?2, reinforcement_count = ?3, last_reinforced_at = ?4,
                 updated_at = ?5, at_floor_since = NULL,
                 source = CASE WHEN ?6 = 'explicit' THEN 'explicit' ELSE source END
             WHERE id = ?1",
            params![id, confidence, count, observed_at, now, source],
        )?;
        Ok(())
    }

    /// A new value replacing the old one in place (the conflict is stamped). Kept for rows
    /// with nothing worth remembering as past; a user's changed value goes through
    /// [`Self::supersede_with`].
    pub fn overwrite(&self, id: i64, t: &TraitWrite<'_>, now: i64) -> Result<(), StoreError> {
        self.0.exec(
            "UPDATE user_traits SET trait_value = ?2, category = ?3, confidence = ?4, source = ?5, is_literal = ?6,
                 reinforcement_count = 1, last_reinforced_at = ?7, last_conflict_at = ?8, updated_at = ?8,
                 at_floor_since = NULL
             WHERE id = ?1",
            params![id, t.value, t.category, t.confidence, t.source, t.is_literal, t.observed_at, now],
        )?;
        Ok(())
    }

    /// A rival value that did not win: only the conflict is stamped.
    pub fn stamp_conflict(&self, id: i64, now: i64) -> Result<(), StoreError> {
        self.0.exec("UPDATE user_traits SET last_conflict_at = ?2 WHERE id = ?1", params![id, now])?;
        Ok(())
    }

    /// How many traits are stored (the decay gate's richness).
    pub fn count(&self) -> Result<i64, StoreError> {
        Ok(self.0.row("SELECT COUNT(*) FROM user_traits", [], |r| r.get(0))?)
    }

    /// Every trait, for one decay pass.
    pub fn for_decay(&self) -> Result<Vec<DecayingTrait>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT id, confidence, reinforcement_count, category, source, reliability, at_floor_since FROM user_traits",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(DecayingTrait {
                id: r.get(0)?,
                confidence: r.get(1)?,
                reinforcement_count: r.get(2)?,
                category: r.get(3)?,
                source: r.get(4)?,
                reliability: r.get(5)?,
                at_floor_since: r.get(6)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// A decay step: the new confidence and the floor stamp.
    pub fn set_decayed(&self, id: i64, confidence: f64, at_floor_since: Option<i64>) -> Result<(), StoreError> {
        self.0
            .prepare_cached("UPDATE user_traits SET confidence = ?2, at_floor_since = ?3 WHERE id = ?1")?
            .execute(params![id, confidence, at_floor_since])?;
        Ok(())
    }

    /// Remove the row (its vector and uncertainties are the caller's).
    pub fn delete(&self, id: i64) -> Result<(), StoreError> {
        self.0.exec("DELETE FROM user_traits WHERE id = ?1", params![id])?;
        Ok(())
    }

    /// `(key, value, category)` of the confident, unchallenged traits, most confident first:
    /// what the autobiography is written from.
    pub fn confident(&self, min_confidence: f64, limit: usize) -> Result<Vec<(String, String, String)>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT trait_key, trait_value, category FROM user_traits
             WHERE reliability IN ('reliable', 'uncertain') AND confidence >= ?1
             ORDER BY confidence DESC, updated_at DESC LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![min_confidence, limit as i64], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The current rows of one category at `min_confidence` or more, most confident first:
    /// the adaptive layer's micro-preferences, which are directives rather than facts.
    pub fn in_category(&self, category: &str, min_confidence: f64) -> Result<Vec<TraitRow>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT trait_key, trait_value, category, confidence, reliability FROM user_traits
             WHERE category = ?1 AND reliability != 'superseded' AND confidence >= ?2
             ORDER BY confidence DESC, updated_at DESC, id DESC",
        )?;
        let rows = stmt.query_map(params![category, min_confidence], TraitRow::from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Remove every row of one category, past values included (a reset of what the adaptive
    /// layer learned); how many went.
    pub fn delete_category(&self, category: &str) -> Result<usize, StoreError> {
        Ok(self.0.exec("DELETE FROM user_traits WHERE category = ?1", params![category])?)
    }

    /// `(newest updated_at or 0, row count)`: changes whenever a trait is added, changed or removed.
    pub fn version(&self) -> Result<(i64, i64), StoreError> {
        Ok(self.0.row("SELECT COALESCE(MAX(updated_at), 0), COUNT(*) FROM user_traits", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?)
    }
}
