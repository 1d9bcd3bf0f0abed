//! `world_state`: what is true of the world right now. Context assembly reads it in
//! [`super::TurnRepo::topic_context`].

use super::StoreError;
use rusqlite::{Connection, params};

pub struct WorldStateRepo<'c>(pub &'c Connection);

impl WorldStateRepo<'_> {
    /// Whether any entry is live at `now`.
    pub fn any_live(&self, now: i64) -> Result<bool, StoreError> {
        Ok(self.0.query_row(
            "SELECT EXISTS (SELECT 1 FROM world_state WHERE expires_at IS NULL OR expires_at > ?1)",
            params![now],
            |r| r.get(0),
        )?)
    }
}
