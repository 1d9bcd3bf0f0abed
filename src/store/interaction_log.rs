//! `interaction_log`: the append-only record of what happened in an exchange that no other
//! table keeps (trait conflicts for the uncertainty engine to come, what a chunk job learned).

use super::CachedSql;
use super::StoreError;
use rusqlite::{Connection, params};
use serde_json::Value;

/// Where one exchange's thread and topic are.
#[derive(Debug, Clone, Copy, Default)]
pub struct LogOrigin<'a> {
    pub thread_id: Option<&'a str>,
    pub exchange_id: Option<&'a str>,
    pub topic: Option<&'a str>,
}

pub struct InteractionLogRepo<'c>(pub &'c Connection);

impl InteractionLogRepo<'_> {
    /// Append one event. Returns its row id.
    pub fn append(&self, at: LogOrigin<'_>, event_type: &str, payload: &Value, now: i64) -> Result<i64, StoreError> {
        self.0.exec(
            "INSERT INTO interaction_log (thread_id, exchange_id, topic, event_type, payload, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![at.thread_id, at.exchange_id, at.topic, event_type, payload.to_string(), now],
        )?;
        Ok(self.0.last_insert_rowid())
    }

    /// The payload field `field` of every event of `event_type`, in order.
    pub fn payload_field(&self, event_type: &str, field: &str) -> Result<Vec<Option<String>>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT json_extract(payload, '$.' || ?2) FROM interaction_log WHERE event_type = ?1 ORDER BY id",
        )?;
        let rows = stmt.query_map(params![event_type, field], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
