//! Reads for answering questions about the user: every live trait and every live fact of
//! any topic, not just the slice context assembly injects.

use super::{StoreError, TraitRow};
use rusqlite::Connection;

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
        super::TraitsRepo(self.0).not_superseded(PROFILE_ROWS)
    }

    /// Unexpired facts of every topic, newest first (so a changed fact wins over the old one).
    pub fn facts(&self, now: i64) -> Result<Vec<FactRow>, StoreError> {
        super::FactsRepo(self.0).unexpired(now, PROFILE_ROWS)
    }
}
