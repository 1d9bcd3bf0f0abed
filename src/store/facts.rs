//! `facts`: a topic's key/value facts (24 h). Every statement on the table is here but the
//! expiry sweep of the decay pass ([`super::expired_rows`]).

use super::{FactRow, StoreError};
use rusqlite::{Connection, params};

/// A live fact of a topic.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveFact {
    pub id: i64,
    pub key: String,
    pub value: String,
    pub confidence: f64,
    pub updated_at: i64,
}

pub struct FactsRepo<'c>(pub &'c Connection);

impl FactsRepo<'_> {
    /// `(key, value)` of the topic's live facts, newest first, at most `limit`.
    pub fn for_context(&self, topic: &str, now: i64, limit: usize) -> Result<Vec<(String, String)>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT key, CASE reliability WHEN 'contradicted' THEN value || ' (contradicted by another memory: do not assert it)'
                    ELSE value END
             FROM facts WHERE topic = ?1 AND expires_at > ?2 AND reliability != 'superseded'
             ORDER BY updated_at DESC, id DESC LIMIT ?3",
        )?;
        let rows = stmt.query_map(params![topic, now, limit as i64], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Unexpired facts of every topic, newest first (a changed fact wins over the old one).
    pub fn unexpired(&self, now: i64, limit: i64) -> Result<Vec<FactRow>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT id, key, value FROM facts WHERE expires_at > ?1 AND reliability != 'superseded'
             ORDER BY updated_at DESC, id DESC LIMIT ?2",
        )?;
        let rows =
            stmt.query_map(params![now, limit], |r| Ok(FactRow { id: r.get(0)?, key: r.get(1)?, value: r.get(2)? }))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// `(id, value, reliability)` of the unexpired, not superseded facts stored under `key`
    /// in any topic, newest first (the uncertainty check's slot lookup).
    pub fn live_by_key(&self, key: &str, now: i64) -> Result<Vec<(i64, String, String)>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT id, value, reliability FROM facts WHERE key = ?1 AND expires_at > ?2 AND reliability != 'superseded'
             ORDER BY updated_at DESC, id DESC LIMIT 5",
        )?;
        let rows = stmt.query_map(params![key, now], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Set a fact's reliability; `force` for a resolution, otherwise only downwards (the rank guard).
    pub fn set_reliability(&self, id: i64, state: &str, force: bool) -> Result<bool, StoreError> {
        Ok(self.0.execute(&super::traits::guarded_update("facts"), params![id, state, force])? > 0)
    }

    /// Drop the topic's expired facts.
    pub fn sweep_topic(&self, topic: &str, now: i64) -> Result<usize, StoreError> {
        Ok(self.0.execute("DELETE FROM facts WHERE topic = ?1 AND expires_at <= ?2", params![topic, now])?)
    }

    /// Every fact of the topic (call [`Self::sweep_topic`] first for live ones).
    pub fn of_topic(&self, topic: &str) -> Result<Vec<LiveFact>, StoreError> {
        let mut stmt =
            self.0.prepare_cached("SELECT id, key, value, confidence, updated_at FROM facts WHERE topic = ?1")?;
        let rows = stmt.query_map(params![topic], |r| {
            Ok(LiveFact {
                id: r.get(0)?,
                key: r.get(1)?,
                value: r.get(2)?,
                confidence: r.get(3)?,
                updated_at: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub fn delete(&self, id: i64) -> Result<(), StoreError> {
        self.0.execute("DELETE FROM facts WHERE id = ?1", params![id])?;
        Ok(())
    }

    /// Set `key` of `topic`, live until `expires_at`. A conversation's value takes the row
    /// over (it becomes the conversation's); a value the user asked to remember makes a new
    /// row the user's and leaves an existing row's source alone.
    #[allow(clippy::too_many_arguments)]
    pub fn upsert(
        &self,
        topic: &str,
        key: &str,
        value: &str,
        confidence: f64,
        now: i64,
        expires_at: i64,
        origin: FactOrigin,
    ) -> Result<(), StoreError> {
        let (source, take_source) = match origin {
            FactOrigin::Conversation => ("conversation", "source = excluded.source, "),
            FactOrigin::User => ("user", ""),
        };
        self.0.execute(
            &format!(
                "INSERT INTO facts (topic, key, value, confidence, source, created_at, updated_at, expires_at)
                 VALUES (?1, ?2, ?3, ?4, '{source}', ?5, ?5, ?6)
                 ON CONFLICT(topic, key) DO UPDATE SET value = excluded.value, confidence = excluded.confidence,
                     {take_source}updated_at = excluded.updated_at, expires_at = excluded.expires_at"
            ),
            params![topic, key, value, confidence, now, expires_at],
        )?;
        Ok(())
    }
}

/// Where a fact came from: learned from the conversation, or stated by the user ("remember
/// that …").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FactOrigin {
    Conversation,
    User,
}
