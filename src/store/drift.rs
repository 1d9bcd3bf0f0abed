//! `drift_thoughts` and what a drift cycle reads (docs/cognition.md §14): the thoughts with
//! their delivery state, and the concept and episode rows seeding draws from.

use super::CachedSql;
use super::StoreError;
use crate::vocab::drift::DriftCycle;
use rusqlite::{Connection, OptionalExtension, params};

/// A thought to store.
#[derive(Debug, Clone, PartialEq)]
pub struct NewThought<'a> {
    pub kind: &'a str,
    pub content: &'a str,
    pub seed_concept_id: Option<i64>,
    pub seed_strategy: Option<&'a str>,
    pub energy: Option<f64>,
    pub action: &'a str,
    pub topic: Option<&'a str>,
    pub author: &'a str,
    /// kept | deferred | delivered
    pub state: &'a str,
    pub expires_at: Option<i64>,
    pub cycle: &'a DriftCycle,
}

/// A deferred COMMUNICATE waiting for its moment.
#[derive(Debug, Clone, PartialEq)]
pub struct Deferred {
    pub id: i64,
    pub kind: String,
    pub content: String,
    pub topic: Option<String>,
}

/// A concept row as seeding reads it: id, name, strength, confidence, last reinforcement
/// (or creation), source episodes (JSON array).
pub type ConceptRow = (i64, String, f64, f64, i64, String);
/// An episode row: id, gist, topic, salience, created_at.
pub type EpisodeRow = (i64, String, Option<String>, f64, i64);

pub struct DriftRepo<'c>(pub &'c Connection);

impl DriftRepo<'_> {
    pub fn insert(&self, t: &NewThought<'_>, now: i64) -> Result<i64, StoreError> {
        let cycle = serde_json::to_string(t.cycle)?;
        self.0.exec(
            "INSERT INTO drift_thoughts (thought_type, content, seed_concept_id, seed_strategy, energy, action,
                 topic, author, state, expires_at, delivered_at, cycle, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, CASE WHEN ?9 = 'delivered' THEN ?12 END, ?11, ?12)",
            params![
                t.kind,
                t.content,
                t.seed_concept_id,
                t.seed_strategy,
                t.energy,
                t.action,
                t.topic,
                t.author,
                t.state,
                t.expires_at,
                cycle,
                now
            ],
        )?;
        Ok(self.0.last_insert_rowid())
    }

    /// Deferred thoughts past their 48 h become `expired`. Returns how many.
    pub fn expire(&self, now: i64) -> Result<usize, StoreError> {
        Ok(self.0.exec(
            "UPDATE drift_thoughts SET state = 'expired' WHERE state = 'deferred' AND expires_at <= ?1",
            params![now],
        )?)
    }

    /// The oldest live deferred thought.
    pub fn next_deferred(&self, now: i64) -> Result<Option<Deferred>, StoreError> {
        Ok(self
            .0
            .row(
                "SELECT id, thought_type, content, topic FROM drift_thoughts
                 WHERE state = 'deferred' AND (expires_at IS NULL OR expires_at > ?1) ORDER BY created_at, id LIMIT 1",
                params![now],
                |r| Ok(Deferred { id: r.get(0)?, kind: r.get(1)?, content: r.get(2)?, topic: r.get(3)? }),
            )
            .optional()?)
    }

    pub fn mark_delivered(&self, id: i64, now: i64) -> Result<(), StoreError> {
        self.0
            .exec("UPDATE drift_thoughts SET state = 'delivered', delivered_at = ?2 WHERE id = ?1", params![id, now])?;
        Ok(())
    }

    pub fn state_of(&self, id: i64) -> Result<Option<String>, StoreError> {
        Ok(self.0.row("SELECT state FROM drift_thoughts WHERE id = ?1", params![id], |r| r.get(0)).optional()?)
    }

    /// The newest thoughts' contents (novelty compares against them).
    pub fn recent_contents(&self, limit: usize) -> Result<Vec<String>, StoreError> {
        let mut stmt =
            self.0.prepare_cached("SELECT content FROM drift_thoughts ORDER BY created_at DESC, id DESC LIMIT ?1")?;
        let rows = stmt.query_map(params![limit as i64], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// How many `kind` thoughts went to REFLECT since `since`.
    pub fn reflected_since(&self, kind: &str, since: i64) -> Result<u32, StoreError> {
        Ok(self.0.row(
            "SELECT COUNT(*) FROM drift_thoughts WHERE action = 'REFLECT' AND thought_type = ?1 AND created_at >= ?2",
            params![kind, since],
            |r| r.get(0),
        )?)
    }

    /// The stored cycle reports, newest first.
    pub fn recent_cycles(&self, limit: usize) -> Result<Vec<(i64, DriftCycle)>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT id, cycle FROM drift_thoughts WHERE cycle IS NOT NULL ORDER BY created_at DESC, id DESC LIMIT ?1",
        )?;
        let rows = stmt.query_map(params![limit as i64], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
        let mut out = Vec::new();
        for row in rows {
            let (id, json) = row?;
            if let Ok(c) = serde_json::from_str(&json) {
                out.push((id, c));
            }
        }
        Ok(out)
    }

    /// Live concepts, for seeding.
    pub fn concepts(&self) -> Result<Vec<ConceptRow>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT id, name, strength, confidence, COALESCE(last_reinforced_at, created_at), source_episodes
             FROM semantic_concepts WHERE deleted_at IS NULL",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Live episodes since `since`, newest first, at most `limit`.
    pub fn episodes_since(&self, since: i64, limit: usize) -> Result<Vec<EpisodeRow>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT id, gist, topic, salience, created_at FROM episodes
             WHERE deleted_at IS NULL AND created_at >= ?1 ORDER BY created_at DESC, id DESC LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![since, limit as i64], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get::<_, i64>(3)? as f64, r.get(4)?))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub fn last_episode_at(&self) -> Result<Option<i64>, StoreError> {
        Ok(self.0.row("SELECT MAX(created_at) FROM episodes WHERE deleted_at IS NULL", [], |r| r.get(0))?)
    }

    /// Topics with their interaction count since `since`.
    pub fn topic_counts(&self, since: i64) -> Result<Vec<(String, u32)>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT topic, COUNT(*) FROM interaction_log WHERE topic IS NOT NULL AND created_at >= ?1
             GROUP BY topic ORDER BY COUNT(*) DESC, topic",
        )?;
        let rows = stmt.query_map(params![since], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// When the user last wrote, in any thread.
    pub fn last_user_message_at(&self) -> Result<Option<i64>, StoreError> {
        Ok(self.0.row("SELECT MAX(created_at) FROM chat_history WHERE role = 'user'", [], |r| r.get(0))?)
    }
}

/// A memory RECONCILE may compare: kind, id, (key, value) or (name, definition), category,
/// confidence, reinforcements, created_at, embedding.
pub type ReconcileRow = (&'static str, i64, String, String, String, f64, u32, i64, Vec<f32>);

impl DriftRepo<'_> {
    /// Traits and concepts with their vectors, most confident first, at most `limit` of each.
    pub fn reconcile_pool(&self, limit: usize) -> Result<Vec<ReconcileRow>, StoreError> {
        let mut out = self.reconcile_rows(
            "trait",
            "SELECT t.id, t.trait_key, t.trait_value, t.category, t.confidence, t.reinforcement_count, t.created_at, v.embedding
             FROM user_traits t JOIN trait_vec v ON v.id = t.id
             WHERE t.confidence > 0.3 AND t.reliability != 'superseded' ORDER BY t.confidence DESC LIMIT ?1",
            limit,
        )?;
        out.extend(self.reconcile_rows(
            "concept",
            "SELECT c.id, c.name, c.definition, COALESCE(c.domain, ''), c.confidence, c.consolidation_count, c.created_at, v.embedding
             FROM semantic_concepts c JOIN concept_vec v ON v.id = c.id
             WHERE c.deleted_at IS NULL AND c.reliability != 'superseded' ORDER BY c.confidence DESC LIMIT ?1",
            limit,
        )?);
        Ok(out)
    }

    /// One layer's part of [`Self::reconcile_pool`]: `sql` selects the eight columns in order.
    fn reconcile_rows(&self, kind: &'static str, sql: &str, limit: usize) -> Result<Vec<ReconcileRow>, StoreError> {
        let mut stmt = self.0.prepare_cached(sql)?;
        let rows = stmt.query_map(params![limit as i64], |r| {
            Ok((
                kind,
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
                super::vectors::dequantize(&r.get::<_, Vec<u8>>(7)?),
            ))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// `curiosity_threads`: the open questions SEED_THREAD starts.
pub struct CuriosityRepo<'c>(pub &'c Connection);

impl CuriosityRepo<'_> {
    pub fn open(
        &self,
        question: &str,
        seed: Option<i64>,
        topic: Option<&str>,
        thought: Option<i64>,
        now: i64,
    ) -> Result<i64, StoreError> {
        self.0.exec(
            "INSERT INTO curiosity_threads (question, seed_concept_id, topic, drift_thought_id, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![question, seed, topic, thought, now],
        )?;
        Ok(self.0.last_insert_rowid())
    }

    /// Whether an open thread on `seed` exists.
    pub fn open_on(&self, seed: i64) -> Result<bool, StoreError> {
        Ok(self.0.row(
            "SELECT EXISTS (SELECT 1 FROM curiosity_threads WHERE seed_concept_id = ?1 AND state = 'open')",
            params![seed],
            |r| r.get(0),
        )?)
    }

    /// Open threads of `topic`, oldest first.
    pub fn open_for_topic(&self, topic: &str) -> Result<Vec<(i64, String)>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT id, question FROM curiosity_threads WHERE topic = ?1 AND state = 'open' ORDER BY created_at, id",
        )?;
        let rows = stmt.query_map(params![topic], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The open threads of `topic`, oldest first, marked surfaced: the topic has come back, so
    /// each joins that turn's context once and is not brought back again.
    pub fn surface_for_topic(&self, topic: &str, now: i64) -> Result<Vec<String>, StoreError> {
        let open = self.open_for_topic(topic)?;
        for (id, _) in &open {
            self.0.exec(
                "UPDATE curiosity_threads SET state = 'surfaced', surfaced_at = ?2 WHERE id = ?1 AND state = 'open'",
                params![id, now],
            )?;
        }
        Ok(open.into_iter().map(|(_, q)| q).collect())
    }

    pub fn count_open(&self) -> Result<i64, StoreError> {
        Ok(self.0.row("SELECT COUNT(*) FROM curiosity_threads WHERE state = 'open'", [], |r| r.get(0))?)
    }
}
