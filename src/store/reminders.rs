//! `reminders`: what the schedule skill sets and the scheduler fires.

use super::CachedSql;
use super::StoreError;
use rusqlite::{Connection, OptionalExtension, Row, params};

/// One stored reminder.
#[derive(Debug, Clone, PartialEq)]
pub struct ReminderRow {
    pub id: i64,
    pub message: String,
    /// ISO local time, as the user sees it.
    pub due_at: String,
    /// Unix seconds, what the scheduler compares.
    pub due_ts: i64,
    /// `notification` or `prompt`.
    pub item_type: String,
    pub recurrence: Option<String>,
    /// `pending`, `fired` or `cancelled`.
    pub state: String,
    pub thread_id: Option<String>,
    pub fired_at: Option<i64>,
}

/// A reminder to set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewReminder<'a> {
    pub message: &'a str,
    pub due_at: &'a str,
    pub due_ts: i64,
    pub item_type: &'a str,
    pub recurrence: Option<&'a str>,
    pub thread_id: Option<&'a str>,
}

const COLUMNS: &str = "id, message, due_at, due_ts, item_type, recurrence, state, thread_id, fired_at";

fn from_row(r: &Row<'_>) -> rusqlite::Result<ReminderRow> {
    Ok(ReminderRow {
        id: r.get(0)?,
        message: r.get(1)?,
        due_at: r.get(2)?,
        due_ts: r.get(3)?,
        item_type: r.get(4)?,
        recurrence: r.get(5)?,
        state: r.get(6)?,
        thread_id: r.get(7)?,
        fired_at: r.get(8)?,
    })
}

pub struct RemindersRepo<'c>(pub &'c Connection);

impl RemindersRepo<'_> {
    fn many(&self, condition: &str, params: impl rusqlite::Params) -> Result<Vec<ReminderRow>, StoreError> {
        let mut stmt = self.0.prepare_cached(&format!("SELECT {COLUMNS} FROM reminders WHERE {condition}"))?;
        let rows = stmt.query_map(params, from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub fn get(&self, id: i64) -> Result<Option<ReminderRow>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM reminders WHERE id = ?1");
        Ok(self.0.prepare_cached(&sql)?.query_row([id], from_row).optional()?)
    }

    /// The pending reminder with this message (any case), time and recurrence, if one is set.
    pub fn pending_duplicate(
        &self,
        message: &str,
        due_at: &str,
        recurrence: Option<&str>,
    ) -> Result<Option<ReminderRow>, StoreError> {
        let found = self.many(
            "state = 'pending' AND message = ?1 COLLATE NOCASE AND due_at = ?2 AND recurrence IS ?3
             ORDER BY id LIMIT 1",
            params![message, due_at, recurrence],
        )?;
        Ok(found.into_iter().next())
    }

    /// Set a reminder, pending. Returns its id.
    pub fn insert(&self, r: &NewReminder<'_>, created_at: i64) -> Result<i64, StoreError> {
        self.0.exec(
            "INSERT INTO reminders (message, due_at, due_ts, item_type, recurrence, state, thread_id, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, 'pending', ?6, ?7)",
            params![r.message, r.due_at, r.due_ts, r.item_type, r.recurrence, r.thread_id, created_at],
        )?;
        Ok(self.0.last_insert_rowid())
    }

    /// Pending reminders due in `[lo, hi)`, soonest first, at most `limit`.
    pub fn pending_between(&self, lo: i64, hi: i64, limit: usize) -> Result<Vec<ReminderRow>, StoreError> {
        self.many(
            "state = 'pending' AND due_ts >= ?1 AND due_ts < ?2 ORDER BY due_ts, id LIMIT ?3",
            params![lo, hi, limit as i64],
        )
    }

    /// Every pending reminder, soonest first.
    pub fn pending(&self) -> Result<Vec<ReminderRow>, StoreError> {
        self.many("state = 'pending' ORDER BY due_ts, id", [])
    }

    pub fn pending_count(&self) -> Result<i64, StoreError> {
        Ok(self.0.row("SELECT COUNT(*) FROM reminders WHERE state = 'pending'", [], |r| r.get(0))?)
    }

    /// Pending reminders due at or before `now`, in due order.
    pub fn due(&self, now: i64) -> Result<Vec<ReminderRow>, StoreError> {
        self.many("state = 'pending' AND due_ts <= ?1 ORDER BY due_ts, id", params![now])
    }

    /// Cancel a pending reminder. Returns whether it was pending.
    pub fn cancel(&self, id: i64) -> Result<bool, StoreError> {
        Ok(self.0.exec("UPDATE reminders SET state = 'cancelled' WHERE id = ?1 AND state = 'pending'", [id])? > 0)
    }

    /// A recurring reminder fired: it stays pending at its next occurrence.
    pub fn reschedule(&self, id: i64, due_at: &str, due_ts: i64, fired_at: i64) -> Result<(), StoreError> {
        self.0.exec(
            "UPDATE reminders SET due_at = ?2, due_ts = ?3, fired_at = ?4 WHERE id = ?1",
            params![id, due_at, due_ts, fired_at],
        )?;
        Ok(())
    }

    /// A one-shot reminder fired.
    pub fn mark_fired(&self, id: i64, fired_at: i64) -> Result<(), StoreError> {
        self.0.exec("UPDATE reminders SET state = 'fired', fired_at = ?2 WHERE id = ?1", params![id, fired_at])?;
        Ok(())
    }
}
