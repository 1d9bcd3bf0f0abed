//! `working_memory`: the last few turns of each thread (24 h). A turn's reads and writes are
//! in [`super::TurnRepo`]; this is what background work asks of it.

use super::StoreError;
use rusqlite::{Connection, OptionalExtension, params};

pub struct WorkingMemoryRepo<'c>(pub &'c Connection);

impl WorkingMemoryRepo<'_> {
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
