//! `world_state`: what is true of the world right now (context assembly reads it).

use super::StoreError;
use rusqlite::{Connection, params};

pub struct WorldStateRepo<'c>(pub &'c Connection);

impl WorldStateRepo<'_> {
    /// `(key, value)` of the live entries, newest first, at most `limit`.
    pub fn live(&self, now: i64, limit: usize) -> Result<Vec<(String, String)>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT key, value FROM world_state WHERE expires_at IS NULL OR expires_at > ?1 ORDER BY updated_at DESC LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![now, limit as i64], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Whether any entry is live at `now`.
    pub fn any_live(&self, now: i64) -> Result<bool, StoreError> {
        Ok(self.0.query_row(
            "SELECT EXISTS (SELECT 1 FROM world_state WHERE expires_at IS NULL OR expires_at > ?1)",
            params![now],
            |r| r.get(0),
        )?)
    }
}
