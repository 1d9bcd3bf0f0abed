//! `routing_adjustments`: every change the routing stability regulator made to a router
//! weight, with the pressure that drove it and, once re-checked, whether it was kept.

use super::StoreError;
use rusqlite::{Connection, params};
use serde_json::Value;

/// One stored adjustment.
#[derive(Debug, Clone, PartialEq)]
pub struct AdjustmentRow {
    pub id: i64,
    pub parameter: String,
    pub old_value: f64,
    pub new_value: f64,
    pub pressure: String,
    /// `{"before": .., "after": .., "verdict": ..}`; `after` once the change was re-checked.
    pub metrics: Option<Value>,
    pub reverted_at: Option<i64>,
    pub created_at: i64,
}

pub struct RoutingAdjustmentsRepo<'c>(pub &'c Connection);

impl RoutingAdjustmentsRepo<'_> {
    /// The table's statements, as the stability machinery records through them.
    pub fn log(&self) -> AdjustmentLog<'_> {
        AdjustmentLog::new(self.0, "routing_adjustments")
    }
}

/// The statements of a stability regulator's audit table. `routing_adjustments` and
/// `topic_adjustments` have one shape (each regulator keeps its own history, so that one
/// never re-checks or reverts the other's changes); their repositories share this.
pub struct AdjustmentLog<'c> {
    conn: &'c Connection,
    /// One of the two table names above, never user input.
    table: &'static str,
}

impl<'c> AdjustmentLog<'c> {
    pub(super) fn new(conn: &'c Connection, table: &'static str) -> AdjustmentLog<'c> {
        AdjustmentLog { conn, table }
    }
}

impl AdjustmentLog<'_> {
    pub fn insert(
        &self,
        parameter: &str,
        old_value: f64,
        new_value: f64,
        pressure: &str,
        metrics: &Value,
        now: i64,
    ) -> Result<i64, StoreError> {
        self.conn.execute(
            &format!(
                "INSERT INTO {} (parameter, old_value, new_value, pressure, metrics, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                self.table
            ),
            params![parameter, old_value, new_value, pressure, metrics.to_string(), now],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    pub fn since(&self, since: i64) -> Result<Vec<AdjustmentRow>, StoreError> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT id, parameter, old_value, new_value, pressure, metrics, reverted_at, created_at
             FROM {} WHERE created_at >= ?1 ORDER BY created_at, id",
            self.table
        ))?;
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

    pub fn close(&self, id: i64, metrics: &Value, reverted_at: Option<i64>) -> Result<(), StoreError> {
        self.conn.execute(
            &format!("UPDATE {} SET metrics = ?2, reverted_at = ?3 WHERE id = ?1", self.table),
            params![id, metrics.to_string(), reverted_at],
        )?;
        Ok(())
    }
}
