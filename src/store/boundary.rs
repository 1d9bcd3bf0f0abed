//! The boundary detector's state per thread (`boundary_state`, `boundary_recent`, migration
//! 0024): its scalars as JSON and its two EWMAs in one row, and the block rule's window of
//! recent messages one row each, so a turn writes the one message the window took in (in the
//! row of the one that left) instead of ~25 KB of base64 JSON spilling into six or seven
//! overflow pages. The detector's arithmetic is in `cognition::boundary`; what goes in the JSON
//! is the caller's.

use super::turn::{BOUNDARY_TTL_S, blob, unblob};
use super::{CachedSql, StoreError, TurnRepo};
use rusqlite::{OptionalExtension, params};
use std::ops::Range;

/// One thread's stored detector state.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BoundaryRow {
    /// The detector's JSON: its scalars, and for a state stored before migration 0024
    /// (`window` None) its vectors too.
    pub state: String,
    pub ewma_fast: Option<Vec<f32>>,
    pub ewma_slow: Option<Vec<f32>>,
    /// `None`: the window is inline in `state` (a state stored before migration 0024).
    pub window: Option<BoundaryWindow>,
}

/// The block rule's last messages, oldest first, and the first one's sequence number: the
/// detector numbers every message its window takes in and never reuses a number within a
/// state, so a message is its `(thread, seq)` row from the turn it came in to the turn it left.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BoundaryWindow {
    pub first_seq: u64,
    /// Content weight and unit embedding.
    pub messages: Vec<(f32, Vec<f32>)>,
}

impl BoundaryWindow {
    /// The sequence numbers the window holds.
    pub fn seqs(&self) -> Range<u64> {
        self.first_seq..self.first_seq.saturating_add(self.messages.len() as u64)
    }
}

impl TurnRepo<'_> {
    /// The thread's detector state, unless expired. A window whose rows are not all there
    /// (another writer's doing) makes the state unreadable: `None`, as for a missing one.
    pub fn boundary_state(&self, thread_id: &str, now: i64) -> Result<Option<BoundaryRow>, StoreError> {
        type Stored = (String, Option<Vec<u8>>, Option<Vec<u8>>, Option<i64>, Option<i64>);
        let row: Option<Stored> = self
            .0
            .row(
                "SELECT state, ewma_fast, ewma_slow, recent_seq, recent_len FROM boundary_state
                 WHERE thread_id = ?1 AND expires_at > ?2",
                params![thread_id, now],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
            )
            .optional()?;
        let Some((state, fast, slow, seq, len)) = row else { return Ok(None) };
        let window = match (seq.map(u64::try_from), len.map(usize::try_from)) {
            (_, None) => None,
            (Some(Ok(first_seq)), Some(Ok(len))) => {
                let messages = self.window_rows(thread_id, first_seq, len)?;
                if messages.len() != len {
                    return Ok(None);
                }
                Some(BoundaryWindow { first_seq, messages })
            }
            _ => return Ok(None),
        };
        let (ewma_fast, ewma_slow) = (fast.as_deref().map(unblob), slow.as_deref().map(unblob));
        Ok(Some(BoundaryRow { state, ewma_fast, ewma_slow, window }))
    }

    fn window_rows(&self, thread_id: &str, first_seq: u64, len: usize) -> Result<Vec<(f32, Vec<f32>)>, StoreError> {
        let (from, to) = (sql_seq(first_seq), sql_seq(first_seq.saturating_add(len as u64)));
        let mut stmt = self.0.prepare_cached(
            "SELECT weight, embedding FROM boundary_recent WHERE thread_id = ?1 AND seq >= ?2 AND seq < ?3 ORDER BY seq",
        )?;
        let rows = stmt.query_map(params![thread_id, from, to], |r| {
            Ok((r.get::<_, f64>(0)? as f32, unblob(&r.get::<_, Vec<u8>>(1)?)))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The `boundary_state` and `boundary_recent` tables' stamp (`topic_stamps`, migrations
    /// 0023 and 0024): drawn anew by every write to either, so a state this process wrote under
    /// a stamp is the stored one while the tables have that stamp.
    pub fn boundary_stamp(&self) -> Result<i64, StoreError> {
        Ok(self.0.row("SELECT boundary FROM topic_stamps WHERE id = 0", [], |r| r.get(0))?)
    }

    /// Stores the thread's detector state (expiring [`BOUNDARY_TTL_S`] after `now`); returns
    /// the tables' stamp after the write. `stored` is the window's messages the rows hold now,
    /// as read or written before (empty when not known): only the others are written, and
    /// every other row of the thread goes (a window that moved on, or one of a state that
    /// expired or was replaced).
    pub fn save_boundary_state(
        &self,
        thread_id: &str,
        row: &BoundaryRow,
        stored: Range<u64>,
        now: i64,
    ) -> Result<i64, StoreError> {
        let (seq, len) = match &row.window {
            Some(w) => (Some(sql_seq(w.first_seq)), Some(w.messages.len() as i64)),
            None => (None, None),
        };
        self.0.exec(
            "INSERT INTO boundary_state (thread_id, state, updated_at, expires_at, ewma_fast, ewma_slow, recent_seq, recent_len)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
             ON CONFLICT(thread_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at,
                 expires_at = excluded.expires_at, ewma_fast = excluded.ewma_fast, ewma_slow = excluded.ewma_slow,
                 recent_seq = excluded.recent_seq, recent_len = excluded.recent_len",
            params![
                thread_id,
                row.state,
                now,
                now + BOUNDARY_TTL_S,
                row.ewma_fast.as_deref().map(blob),
                row.ewma_slow.as_deref().map(blob),
                seq,
                len
            ],
        )?;
        let keep = row.window.as_ref().map_or(0..0, BoundaryWindow::seqs);
        if let Some(w) = &row.window {
            // A message that left gives its row to one that came in: rewritten in place, no
            // page freed or taken (a delete and an insert did both every other turn, two
            // rows a page, and wrote the freelist and the header with them).
            let mut left = stored.clone().filter(|s| !keep.contains(s));
            for (seq, (weight, embedding)) in keep.clone().zip(&w.messages).filter(|(s, _)| !stored.contains(s)) {
                let values = (sql_seq(seq), f64::from(*weight), blob(embedding));
                let moved = match left.next() {
                    // OR REPLACE: a row of an expired or replaced state may hold the number.
                    Some(old) => self.0.exec(
                        "UPDATE OR REPLACE boundary_recent SET seq = ?3, weight = ?4, embedding = ?5
                         WHERE thread_id = ?1 AND seq = ?2",
                        params![thread_id, sql_seq(old), values.0, values.1, values.2],
                    )?,
                    None => 0,
                };
                if moved == 0 {
                    self.0.exec(
                        "INSERT OR REPLACE INTO boundary_recent (thread_id, seq, weight, embedding) VALUES (?1, ?2, ?3, ?4)",
                        params![thread_id, values.0, values.1, values.2],
                    )?;
                }
            }
        }
        self.0.exec(
            "DELETE FROM boundary_recent WHERE thread_id = ?1 AND (seq < ?2 OR seq >= ?3)",
            params![thread_id, sql_seq(keep.start), sql_seq(keep.end)],
        )?;
        self.boundary_stamp()
    }
}

/// The thread's window rows, whatever state they belong to (for tests of what a save leaves).
#[cfg(test)]
pub(crate) fn window_rows(c: &rusqlite::Connection, thread_id: &str) -> usize {
    c.query_row("SELECT count(*) FROM boundary_recent WHERE thread_id = ?1", [thread_id], |r| r.get::<_, i64>(0))
        .map_or(0, |n| n as usize)
}

/// A sequence number as SQLite's INTEGER (numbers past `i64::MAX`, which a thread never
/// reaches, stay at it).
fn sql_seq(seq: u64) -> i64 {
    i64::try_from(seq).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests;
