//! `topic_adjustments`: every change the topic stability regulator made to a topic or boundary
//! parameter, with the pressure that drove it and, once re-checked, whether it was kept. The
//! same shape as `routing_adjustments`, whose statements it shares.

use super::routing_adjustments::AdjustmentLog;
use super::{AdjustmentRow, StoreError};
use rusqlite::Connection;
use serde_json::Value;

pub struct TopicAdjustmentsRepo<'c>(pub &'c Connection);

impl TopicAdjustmentsRepo<'_> {
    /// The table's statements, as the stability machinery records through them.
    pub fn log(&self) -> AdjustmentLog<'_> {
        AdjustmentLog::new(self.0, "topic_adjustments")
    }

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
        self.log().insert(parameter, old_value, new_value, pressure, metrics, now)
    }

    /// Every change made at or after `since`, oldest first.
    pub fn since(&self, since: i64) -> Result<Vec<AdjustmentRow>, StoreError> {
        self.log().since(since)
    }

    /// Store the re-check's metrics; `reverted_at` when the change was taken back.
    pub fn close(&self, id: i64, metrics: &Value, reverted_at: Option<i64>) -> Result<(), StoreError> {
        self.log().close(id, metrics, reverted_at)
    }
}
