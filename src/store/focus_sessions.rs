//! `focus_sessions`: what the user said they are focusing on, and until when.

use super::CachedSql;
use super::StoreError;
use rusqlite::{Connection, OptionalExtension, params};

/// An open session: id, description, started_at, ends_at.
pub type OpenSession = (i64, String, i64, Option<i64>);

pub struct FocusSessionsRepo<'c>(pub &'c Connection);

impl FocusSessionsRepo<'_> {
    /// Start a session (any open one is cleared first: one at a time). Returns its id.
    pub fn start(&self, description: &str, thread_id: &str, now: i64, ends_at: i64) -> Result<i64, StoreError> {
        self.0.exec("UPDATE focus_sessions SET cleared_at = ?1 WHERE cleared_at IS NULL", params![now])?;
        self.0.exec(
            "INSERT INTO focus_sessions (description, source, thread_id, started_at, ends_at)
             VALUES (?1, 'explicit', ?2, ?3, ?4)",
            params![description, thread_id, now, ends_at],
        )?;
        Ok(self.0.last_insert_rowid())
    }

    /// The newest session neither cleared nor over at `now`, of any thread.
    pub fn active(&self, now: i64) -> Result<Option<OpenSession>, StoreError> {
        Ok(self
            .0
            .row(
                "SELECT id, description, started_at, ends_at FROM focus_sessions
                 WHERE cleared_at IS NULL AND (ends_at IS NULL OR ends_at > ?1) ORDER BY id DESC LIMIT 1",
                params![now],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .optional()?)
    }

    /// What the newest open session of `thread_id` (or of no thread) is on.
    pub fn active_in_thread(&self, thread_id: &str, now: i64) -> Result<Option<String>, StoreError> {
        Ok(self
            .0
            .row(
                "SELECT description FROM focus_sessions WHERE (thread_id = ?1 OR thread_id IS NULL)
                     AND cleared_at IS NULL AND (ends_at IS NULL OR ends_at > ?2) ORDER BY id DESC LIMIT 1",
                params![thread_id, now],
                |r| r.get(0),
            )
            .optional()?)
    }

    pub fn clear(&self, id: i64, now: i64) -> Result<(), StoreError> {
        self.0.exec("UPDATE focus_sessions SET cleared_at = ?2 WHERE id = ?1", params![id, now])?;
        Ok(())
    }
}
