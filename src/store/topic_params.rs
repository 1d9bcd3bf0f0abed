//! `topic_params`: every version of the regulated topic and boundary parameters, newest last.
//! Versions are only ever added, so the audit can show what the detector ran with when.

use super::CachedSql;
use super::StoreError;
use rusqlite::{Connection, OptionalExtension, params};

/// One stored version; `params` is the JSON object (name → value) the engine reads.
#[derive(Debug, Clone, PartialEq)]
pub struct TopicParamsVersion {
    pub version: u32,
    pub params: String,
    pub author: String,
    pub reason: Option<String>,
    pub created_at: i64,
}

pub struct TopicParamsRepo<'c>(pub &'c Connection);

impl TopicParamsRepo<'_> {
    /// The newest version, if any was stored.
    pub fn latest(&self) -> Result<Option<TopicParamsVersion>, StoreError> {
        Ok(self
            .0
            .row(
                "SELECT version, params, author, reason, created_at FROM topic_params ORDER BY version DESC LIMIT 1",
                [],
                |r| {
                    Ok(TopicParamsVersion {
                        version: r.get(0)?,
                        params: r.get(1)?,
                        author: r.get(2)?,
                        reason: r.get(3)?,
                        created_at: r.get(4)?,
                    })
                },
            )
            .optional()?)
    }

    /// Add a version.
    pub fn insert(&self, version: u32, params: &str, author: &str, reason: &str, now: i64) -> Result<(), StoreError> {
        self.0.exec(
            "INSERT INTO topic_params (version, params, author, reason, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![version, params, author, reason, now],
        )?;
        Ok(())
    }
}
