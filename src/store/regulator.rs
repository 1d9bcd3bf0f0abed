//! `regulator_state`: one JSON document per user (docs/cognition.md §13.6). The store keeps the
//! text; the regulator owns its shape, so an older snapshot is read by the regulator's serde
//! defaults, not here.

use super::{StoreError, now_ts};
use rusqlite::{Connection, OptionalExtension, params};

pub struct RegulatorStateRepo<'c>(pub &'c Connection);

impl RegulatorStateRepo<'_> {
    pub fn load(&self, user_id: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .0
            .query_row("SELECT state FROM regulator_state WHERE user_id = ?1", params![user_id], |r| r.get(0))
            .optional()?)
    }

    pub fn save(&self, user_id: &str, state: &str) -> Result<(), StoreError> {
        self.0.execute(
            "INSERT INTO regulator_state (user_id, state, updated_at) VALUES (?1, ?2, ?3)
             ON CONFLICT(user_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at",
            params![user_id, state, now_ts()],
        )?;
        Ok(())
    }
}
