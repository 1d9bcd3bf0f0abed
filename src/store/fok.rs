//! `fok`: the feeling of knowing per topic (0–5, five minutes). Recall sets it; context
//! assembly reads it.

use super::CachedSql;
use super::StoreError;
use rusqlite::{Connection, OptionalExtension, params};

pub struct FokRepo<'c>(pub &'c Connection);

impl FokRepo<'_> {
    /// The topic's score, unless absent or expired.
    pub fn score(&self, topic: &str, now: i64) -> Result<Option<i64>, StoreError> {
        Ok(self
            .0
            .row("SELECT score FROM fok WHERE topic = ?1 AND expires_at > ?2", params![topic, now], |r| r.get(0))
            .optional()?)
    }

    /// Set the topic's score until `expires_at`.
    pub fn set(&self, topic: &str, score: i64, expires_at: i64) -> Result<(), StoreError> {
        self.0.exec(
            "INSERT INTO fok (topic, score, expires_at) VALUES (?1, ?2, ?3)
             ON CONFLICT(topic) DO UPDATE SET score = excluded.score, expires_at = excluded.expires_at",
            params![topic, score, expires_at],
        )?;
        Ok(())
    }
}
