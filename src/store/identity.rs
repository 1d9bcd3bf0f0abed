//! `identity_vectors`: Chalie's own dimensions (docs/cognition.md §9.4), read and nudged by the
//! engines that tune them (the uncertainty tolerance, docs/cognition.md §10.6).

use super::CachedSql;
use super::StoreError;
use rusqlite::{Connection, OptionalExtension, params};

pub struct IdentityRepo<'c>(pub &'c Connection);

impl IdentityRepo<'_> {
    /// The current value of dimension `name`.
    pub fn current(&self, name: &str) -> Result<Option<f64>, StoreError> {
        Ok(self
            .0
            .row("SELECT current FROM identity_vectors WHERE name = ?1", params![name], |r| r.get(0))
            .optional()?)
    }

    /// Set the current value, clamped to the dimension's range. Returns the stored value.
    pub fn set_current(&self, name: &str, value: f64, now: i64) -> Result<Option<f64>, StoreError> {
        self.0.exec(
            "UPDATE identity_vectors SET current = MIN(max_value, MAX(min_value, ?2)), updated_at = ?3 WHERE name = ?1",
            params![name, value, now],
        )?;
        self.current(name)
    }
}
