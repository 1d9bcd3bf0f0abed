//! `fok`: the feeling of knowing per topic (0–5, five minutes). Context assembly reads it in
//! [`super::TurnRepo::topic_context`]; recall sets it.

use super::StoreError;
use rusqlite::{Connection, params};

pub struct FokRepo<'c>(pub &'c Connection);

impl FokRepo<'_> {
    /// Set the topic's score until `expires_at`.
    pub fn set(&self, topic: &str, score: i64, expires_at: i64) -> Result<(), StoreError> {
        self.0.execute(
            "INSERT INTO fok (topic, score, expires_at) VALUES (?1, ?2, ?3)
             ON CONFLICT(topic) DO UPDATE SET score = excluded.score, expires_at = excluded.expires_at",
            params![topic, score, expires_at],
        )?;
        Ok(())
    }
}
