//! `episodes`: what happened, one row per remembered exchange (with its vector in
//! `episode_vec`, written beside it by [`super::VectorRepo`]). Recall's reads are in
//! [`super::RecallRepo`]; everything else on the table is here.

use super::CachedSql;
use super::StoreError;
use rusqlite::{Connection, OptionalExtension, params};

/// An episode to write; the JSON columns come already serialized.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewEpisode<'a> {
    pub intent: &'a str,
    pub context: &'a str,
    pub action: Option<&'a str>,
    pub emotion: Option<&'a str>,
    pub outcome: Option<&'a str>,
    pub gist: &'a str,
    pub salience: u8,
    pub freshness: f64,
    pub topic: Option<&'a str>,
    pub thread_id: Option<&'a str>,
    pub exchange_id: Option<&'a str>,
    pub created_at: i64,
    pub salience_factors: &'a str,
    pub open_loops: &'a str,
}

/// An episode waiting for semantic consolidation.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingEpisode {
    pub id: i64,
    pub gist: String,
    pub topic: Option<String>,
}

/// An episode as the decay pass reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct DecayingEpisode {
    pub id: i64,
    pub activation: f64,
    /// When it was last used, or written.
    pub accessed_at: i64,
    pub reliability: String,
}

pub struct EpisodesRepo<'c>(pub &'c Connection);

impl EpisodesRepo<'_> {
    /// Write an episode. Returns its id.
    pub fn insert(&self, e: &NewEpisode<'_>) -> Result<i64, StoreError> {
        self.0.exec(
            "INSERT INTO episodes (intent, context, action, emotion, outcome, gist, salience, freshness, topic,
                                   thread_id, exchange_id, created_at, updated_at, salience_factors, open_loops)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?12, ?13, ?14)",
            params![
                e.intent,
                e.context,
                e.action,
                e.emotion,
                e.outcome,
                e.gist,
                e.salience,
                e.freshness,
                e.topic,
                e.thread_id,
                e.exchange_id,
                e.created_at,
                e.salience_factors,
                e.open_loops,
            ],
        )?;
        Ok(self.0.last_insert_rowid())
    }

    /// The live episode of an exchange, if one was written.
    pub fn of_exchange(&self, exchange_id: &str) -> Result<Option<i64>, StoreError> {
        Ok(self
            .0
            .row("SELECT id FROM episodes WHERE exchange_id = ?1 AND deleted_at IS NULL", params![exchange_id], |r| {
                r.get(0)
            })
            .optional()?)
    }

    /// How many live episodes wait for semantic consolidation.
    pub fn pending_count(&self) -> Result<i64, StoreError> {
        Ok(self.0.row(
            "SELECT COUNT(*) FROM episodes WHERE semantic_consolidation_status = 'pending' AND deleted_at IS NULL",
            [],
            |r| r.get(0),
        )?)
    }

    /// When the oldest live episode waiting for consolidation was written.
    pub fn oldest_pending_at(&self) -> Result<Option<i64>, StoreError> {
        Ok(self
            .0
            .row(
                "SELECT MIN(created_at) FROM episodes WHERE semantic_consolidation_status = 'pending' AND deleted_at IS NULL",
                [],
                |r| r.get(0),
            )
            .optional()?
            .flatten())
    }

    /// Up to `limit` live episodes waiting for consolidation, oldest first.
    pub fn pending_batch(&self, limit: usize) -> Result<Vec<PendingEpisode>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT id, gist, topic FROM episodes WHERE semantic_consolidation_status = 'pending' AND deleted_at IS NULL
             ORDER BY id LIMIT ?1",
        )?;
        let rows = stmt.query_map(params![limit as i64], |r| {
            Ok(PendingEpisode { id: r.get(0)?, gist: r.get(1)?, topic: r.get(2)? })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Mark an episode's consolidation `done` or `failed`.
    pub fn set_consolidation(&self, id: i64, status: &str) -> Result<(), StoreError> {
        self.0.exec("UPDATE episodes SET semantic_consolidation_status = ?2 WHERE id = ?1", params![id, status])?;
        Ok(())
    }

    /// The mean salience of the `window` live episodes before `id` (`None`: there are none).
    pub fn mean_salience_before(&self, id: i64, window: i64) -> Result<Option<f64>, StoreError> {
        Ok(self.0.row(
            "SELECT AVG(salience) FROM (SELECT salience FROM episodes WHERE id < ?1 AND deleted_at IS NULL
                                        ORDER BY id DESC LIMIT ?2)",
            params![id, window],
            |r| r.get(0),
        )?)
    }

    /// How many episodes are live (the decay gate's richness).
    pub fn live_count(&self) -> Result<i64, StoreError> {
        Ok(self.0.row("SELECT COUNT(*) FROM episodes WHERE deleted_at IS NULL", [], |r| r.get(0))?)
    }

    /// Live episodes above the activation floor not used since `unused_since`.
    pub fn for_decay(&self, floor: f64, unused_since: i64) -> Result<Vec<DecayingEpisode>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT id, activation_score, COALESCE(last_accessed_at, created_at), reliability FROM episodes
             WHERE deleted_at IS NULL AND activation_score > ?1 AND COALESCE(last_accessed_at, created_at) < ?2",
        )?;
        let rows = stmt.query_map(params![floor, unused_since], |r| {
            Ok(DecayingEpisode { id: r.get(0)?, activation: r.get(1)?, accessed_at: r.get(2)?, reliability: r.get(3)? })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub fn set_activation(&self, id: i64, activation: f64) -> Result<(), StoreError> {
        self.0
            .prepare_cached("UPDATE episodes SET activation_score = ?2 WHERE id = ?1")?
            .execute(params![id, activation])?;
        Ok(())
    }

    /// The gists of the most salient live episodes, newest first among equals.
    pub fn most_salient_gists(&self, limit: usize) -> Result<Vec<String>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT gist FROM episodes WHERE deleted_at IS NULL ORDER BY salience DESC, created_at DESC LIMIT ?1",
        )?;
        let rows = stmt.query_map(params![limit as i64], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// `(newest updated_at or 0, row count)`: changes whenever an episode is added, changed or removed.
    pub fn version(&self) -> Result<(i64, i64), StoreError> {
        Ok(self
            .0
            .row("SELECT COALESCE(MAX(updated_at), 0), COUNT(*) FROM episodes", [], |r| Ok((r.get(0)?, r.get(1)?)))?)
    }
}
