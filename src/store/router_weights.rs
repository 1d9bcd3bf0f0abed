//! `router_weights`: every version of the router's weights, newest last. A routing decision
//! names the version it was made with, so versions are only ever added.

use super::CachedSql;
use super::StoreError;
use rusqlite::{Connection, OptionalExtension, params};

/// One stored version; `weights` is the JSON the router reads.
#[derive(Debug, Clone, PartialEq)]
pub struct WeightsVersion {
    pub version: u32,
    pub weights: String,
    pub author: String,
}

pub struct RouterWeightsRepo<'c>(pub &'c Connection);

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<WeightsVersion> {
    Ok(WeightsVersion { version: r.get(0)?, weights: r.get(1)?, author: r.get(2)? })
}

impl RouterWeightsRepo<'_> {
    /// The newest version, if any was stored.
    pub fn latest(&self) -> Result<Option<WeightsVersion>, StoreError> {
        Ok(self
            .0
            .row("SELECT version, weights, author FROM router_weights ORDER BY version DESC LIMIT 1", [], from_row)
            .optional()?)
    }

    /// The newest version written by someone other than `author`.
    pub fn latest_not_by(&self, author: &str) -> Result<Option<WeightsVersion>, StoreError> {
        Ok(self
            .0
            .row(
                "SELECT version, weights, author FROM router_weights WHERE author <> ?1 ORDER BY version DESC LIMIT 1",
                [author],
                from_row,
            )
            .optional()?)
    }

    /// One stored version (a rerun with `--weights-version`).
    pub fn get(&self, version: u32) -> Result<Option<WeightsVersion>, StoreError> {
        Ok(self
            .0
            .row("SELECT version, weights, author FROM router_weights WHERE version = ?1", [version], from_row)
            .optional()?)
    }

    /// Add a version.
    pub fn insert(&self, version: u32, weights: &str, author: &str, reason: &str, now: i64) -> Result<(), StoreError> {
        self.0.exec(
            "INSERT INTO router_weights (version, weights, author, reason, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![version, weights, author, reason, now],
        )?;
        Ok(())
    }
}
