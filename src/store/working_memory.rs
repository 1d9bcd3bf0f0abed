//! `working_memory`: the last few turns of each thread (24 h).

use super::{StoreError, WmEntry};
use rusqlite::{Connection, OptionalExtension, params};

pub struct WorkingMemoryRepo<'c>(pub &'c Connection);

impl WorkingMemoryRepo<'_> {
    /// The thread's newest `limit` live entries, oldest first.
    pub fn recent(&self, thread_id: &str, now: i64, limit: usize) -> Result<Vec<WmEntry>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT role, content, created_at FROM (
                 SELECT id, role, content, created_at FROM working_memory
                 WHERE thread_id = ?1 AND expires_at > ?2 ORDER BY id DESC LIMIT ?3
             ) ORDER BY id",
        )?;
        let rows = stmt.query_map(params![thread_id, now, limit as i64], |r| {
            Ok(WmEntry { role: r.get(0)?, content: r.get(1)?, created_at: r.get(2)? })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Append one entry, keep the thread's newest `keep` and move the whole thread's expiry to
    /// `expires_at`.
    pub fn append(
        &self,
        thread_id: &str,
        role: &str,
        content: &str,
        now: i64,
        keep: usize,
        expires_at: i64,
    ) -> Result<(), StoreError> {
        self.0.execute(
            "INSERT INTO working_memory (thread_id, role, content, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![thread_id, role, content, now, expires_at],
        )?;
        self.0.execute(
            "DELETE FROM working_memory WHERE thread_id = ?1 AND id NOT IN (
                 SELECT id FROM working_memory WHERE thread_id = ?1 ORDER BY id DESC LIMIT ?2)",
            params![thread_id, keep as i64],
        )?;
        self.0.execute(
            "UPDATE working_memory SET expires_at = ?2 WHERE thread_id = ?1",
            params![thread_id, expires_at],
        )?;
        Ok(())
    }

    /// How many live entries the most recently active thread has (0 when none is live).
    pub fn latest_thread_len(&self, now: i64) -> Result<i64, StoreError> {
        let thread: Option<String> = self
            .0
            .query_row(
                "SELECT thread_id FROM working_memory WHERE expires_at > ?1 ORDER BY id DESC LIMIT 1",
                params![now],
                |r| r.get(0),
            )
            .optional()?;
        let Some(t) = thread else { return Ok(0) };
        Ok(self.0.query_row(
            "SELECT COUNT(*) FROM working_memory WHERE thread_id = ?1 AND expires_at > ?2",
            params![t, now],
            |r| r.get(0),
        )?)
    }
}
