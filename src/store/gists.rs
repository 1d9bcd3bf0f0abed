//! `gists`: a topic's short-lived summaries (30 min). Every statement on the table is here
//! but the expiry sweep of the decay pass ([`super::expired_rows`]).

use super::CachedSql;
use super::{Gist, StoreError};
use rusqlite::{Connection, params};

/// A live, non-cold-start gist of a topic.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveGist {
    pub id: i64,
    pub gist_type: String,
    pub content: String,
    pub confidence: f64,
    pub created_at: i64,
}

/// A gist to write.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewGist<'a> {
    pub topic: &'a str,
    pub thread_id: Option<&'a str>,
    pub gist_type: &'a str,
    pub content: &'a str,
    /// 0–10.
    pub confidence: f64,
}

pub struct GistsRepo<'c>(pub &'c Connection);

impl GistsRepo<'_> {
    /// The topic's live gists, newest first, at most `limit`: what context assembly reads.
    pub fn for_context(&self, topic: &str, now: i64, limit: usize) -> Result<Vec<Gist>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT gist_type, content, confidence, is_cold_start FROM gists
             WHERE topic = ?1 AND expires_at > ?2 ORDER BY created_at DESC, id DESC LIMIT ?3",
        )?;
        let rows = stmt.query_map(params![topic, now, limit as i64], |r| {
            Ok(Gist { gist_type: r.get(0)?, content: r.get(1)?, confidence: r.get(2)?, cold_start: r.get(3)? })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Keep the topic's live gists alive until at least `expires_at` (reading them refreshes them).
    /// A row already alive that long is left as it is, so reading a topic twice within the clock's
    /// second writes nothing.
    pub fn extend_live(&self, topic: &str, now: i64, expires_at: i64) -> Result<(), StoreError> {
        self.0.exec(
            "UPDATE gists SET expires_at = ?2 WHERE topic = ?1 AND expires_at > ?3 AND expires_at < ?2",
            params![topic, expires_at, now],
        )?;
        Ok(())
    }

    /// Drop the topic's expired gists (decay records the rest; these were never read again).
    pub fn sweep_topic(&self, topic: &str, now: i64) -> Result<usize, StoreError> {
        Ok(self.0.exec("DELETE FROM gists WHERE topic = ?1 AND expires_at <= ?2", params![topic, now])?)
    }

    /// The topic's non-cold-start gists, oldest first (call [`Self::sweep_topic`] first for live ones).
    pub fn of_topic(&self, topic: &str) -> Result<Vec<LiveGist>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT id, gist_type, content, confidence, created_at FROM gists
             WHERE topic = ?1 AND is_cold_start = 0 ORDER BY created_at, id",
        )?;
        let rows = stmt.query_map(params![topic], |r| {
            Ok(LiveGist {
                id: r.get(0)?,
                gist_type: r.get(1)?,
                content: r.get(2)?,
                confidence: r.get(3)?,
                created_at: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Write a gist that lives until `expires_at`. Returns its id.
    pub fn insert(&self, g: &NewGist<'_>, now: i64, expires_at: i64) -> Result<i64, StoreError> {
        self.0.exec(
            "INSERT INTO gists (topic, thread_id, gist_type, content, confidence, created_at, expires_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![g.topic, g.thread_id, g.gist_type, g.content, g.confidence, now, expires_at],
        )?;
        Ok(self.0.last_insert_rowid())
    }

    pub fn delete(&self, id: i64) -> Result<(), StoreError> {
        self.0.exec("DELETE FROM gists WHERE id = ?1", params![id])?;
        Ok(())
    }

    /// How many real (not cold-start, not drift) gists are live: a term of context warmth.
    pub fn live_count(&self, now: i64) -> Result<i64, StoreError> {
        Ok(self.0.row(
            "SELECT COUNT(*) FROM gists WHERE expires_at > ?1 AND is_cold_start = 0 AND gist_type != 'drift'",
            params![now],
            |r| r.get(0),
        )?)
    }
}
