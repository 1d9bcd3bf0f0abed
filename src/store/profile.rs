//! Reads for answering questions about the user: every live trait and every live fact of
//! any topic, not just the slice context assembly injects.

use super::{StoreError, TraitRow};
use rusqlite::{Connection, params};

/// At most this many rows of each kind are read; far more than a person states.
const PROFILE_ROWS: i64 = 1_000;

/// One stored topic fact.
#[derive(Debug, Clone, PartialEq)]
pub struct FactRow {
    pub id: i64,
    pub key: String,
    pub value: String,
}

pub struct ProfileRepo<'c>(pub &'c Connection);

impl ProfileRepo<'_> {
    /// Every trait that is not superseded, at any confidence: an answer says how sure it is.
    pub fn traits(&self) -> Result<Vec<TraitRow>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT trait_key, trait_value, category, confidence, reliability FROM user_traits
             WHERE reliability != 'superseded' ORDER BY updated_at DESC, id DESC LIMIT ?1",
        )?;
        let rows = stmt.query_map(params![PROFILE_ROWS], TraitRow::from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Unexpired facts of every topic, newest first (so a changed fact wins over the old one).
    pub fn facts(&self, now: i64) -> Result<Vec<FactRow>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT id, key, value FROM facts WHERE expires_at > ?1 ORDER BY updated_at DESC, id DESC LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![now, PROFILE_ROWS], |r| {
            Ok(FactRow { id: r.get(0)?, key: r.get(1)?, value: r.get(2)? })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
