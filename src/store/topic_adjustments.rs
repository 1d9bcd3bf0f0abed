//! `topic_adjustments`: every change the topic stability regulator made to a topic or boundary
//! parameter, with the pressure that drove it and, once re-checked, whether it was kept.

use super::{AdjustmentRow, StoreError};
use rusqlite::{Connection, params};
use serde_json::Value;

pub struct TopicAdjustmentsRepo<'c>(pub &'c Connection);

impl TopicAdjustmentsRepo<'_> {
    /// Record a change; returns its id.
    pub fn insert(
        &self,
        parameter: &str,
        old_value: f64,
        new_value: f64,
        pressure: &str,
        metrics: &Value,
        now: i64,
    ) -> Result<i64, StoreError> {
        self.0.execute(
            "INSERT INTO topic_adjustments (parameter, old_value, new_value, pressure, metrics, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![parameter, old_value, new_value, pressure, metrics.to_string(), now],
        )?;
        Ok(self.0.last_insert_rowid())
    }

    /// Every change made at or after `since`, oldest first.
    pub fn since(&self, since: i64) -> Result<Vec<AdjustmentRow>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT id, parameter, old_value, new_value, pressure, metrics, reverted_at, created_at
             FROM topic_adjustments WHERE created_at >= ?1 ORDER BY created_at, id",
        )?;
        let rows = stmt.query_map(params![since], |r| {
            Ok((
                AdjustmentRow {
                    id: r.get(0)?,
                    parameter: r.get(1)?,
                    old_value: r.get(2)?,
                    new_value: r.get(3)?,
                    pressure: r.get(4)?,
                    metrics: None,
                    reverted_at: r.get(6)?,
                    created_at: r.get(7)?,
                },
                r.get::<_, Option<String>>(5)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (mut a, metrics) = row?;
            a.metrics = metrics.map(|m| serde_json::from_str(&m)).transpose()?;
            out.push(a);
        }
        Ok(out)
    }

    /// Store the re-check's metrics; `reverted_at` when the change was taken back.
    pub fn close(&self, id: i64, metrics: &Value, reverted_at: Option<i64>) -> Result<(), StoreError> {
        self.0.execute(
            "UPDATE topic_adjustments SET metrics = ?2, reverted_at = ?3 WHERE id = ?1",
            params![id, metrics.to_string(), reverted_at],
        )?;
        Ok(())
    }
}
