//! `gists`: a topic's short-lived summaries (30 min). Context assembly's read and TTL refresh
//! are in [`super::TurnRepo::topic_context`]; everything else on the table is here.

use super::StoreError;
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
    /// Drop the topic's expired gists (decay records the rest; these were never read again).
    pub fn sweep_topic(&self, topic: &str, now: i64) -> Result<usize, StoreError> {
        Ok(self.0.execute("DELETE FROM gists WHERE topic = ?1 AND expires_at <= ?2", params![topic, now])?)
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
        self.0.execute(
            "INSERT INTO gists (topic, thread_id, gist_type, content, confidence, created_at, expires_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![g.topic, g.thread_id, g.gist_type, g.content, g.confidence, now, expires_at],
        )?;
        Ok(self.0.last_insert_rowid())
    }

    pub fn delete(&self, id: i64) -> Result<(), StoreError> {
        self.0.execute("DELETE FROM gists WHERE id = ?1", params![id])?;
        Ok(())
    }

    /// How many real (not cold-start) gists are live: a term of context warmth.
    pub fn live_count(&self, now: i64) -> Result<i64, StoreError> {
        Ok(self.0.query_row(
            "SELECT COUNT(*) FROM gists WHERE expires_at > ?1 AND is_cold_start = 0",
            params![now],
            |r| r.get(0),
        )?)
    }
}
