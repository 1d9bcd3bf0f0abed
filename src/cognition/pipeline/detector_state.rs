//! The boundary detector's state between turns: taken from this process's kept copy when the
//! store still holds what this process last wrote, else read from the store, and written back
//! with only the window's new message (`store::BoundaryRow`, migration 0024).

use crate::cognition::boundary::{BoundaryParams, BoundaryState};
use crate::store::{BOUNDARY_TTL_S, BoundaryRow, BoundaryWindow, StampedCopies, StoreError, TurnRepo};
use std::ops::Range;

/// The boundary detector's state as this process last wrote it, under the tables' stamp after
/// that write (`TurnRepo::boundary_stamp`). A turn that finds the tables at that stamp takes
/// the state from here instead of reading and parsing the stored one; any other write to them
/// (another thread's, another process's, a forget's edit, a rolled-back savepoint's) draws
/// another stamp, and the stored rows are read.
static KEPT_BOUNDARY: StampedCopies<Kept> = StampedCopies::new();

#[derive(Clone)]
struct Kept {
    /// The stored row's, which the read compares with the clock.
    expires_at: i64,
    state: BoundaryState,
}

/// What of a loaded state's window the rows hold, as of the stamp it was read at.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct InStore {
    seqs: Range<u64>,
    stamp: i64,
}

/// The thread's detector state for this turn (run with `params`), and what of its window is
/// stored already (for [`save`]). A missing, unreadable or expired state is a cold start, none
/// of whose window is stored.
pub(super) fn load(
    repo: &TurnRepo,
    thread_id: &str,
    now: i64,
    params: &BoundaryParams,
) -> Result<(BoundaryState, InStore), StoreError> {
    let stamp = repo.boundary_stamp()?;
    Ok(stored(repo, thread_id, stamp, now, params)?
        .map(|s| (s.state.with_params(params.clone()), s.rows))
        .filter(|(s, _)| !s.expired(now))
        .map_or_else(
            || (BoundaryState::new(params.clone()), InStore { seqs: 0..0, stamp }),
            |(s, seqs)| (s, InStore { seqs, stamp }),
        ))
}

/// A stored state as [`stored`] finds it.
#[derive(Debug, PartialEq)]
struct Stored {
    state: BoundaryState,
    /// The window's messages stored as rows.
    rows: Range<u64>,
    /// Taken from this process's copy.
    kept: bool,
}

/// The thread's unexpired stored state, the tables being at `stamp`.
fn stored(
    repo: &TurnRepo,
    thread_id: &str,
    stamp: i64,
    now: i64,
    params: &BoundaryParams,
) -> Result<Option<Stored>, StoreError> {
    if let Some(kept) = KEPT_BOUNDARY.get(thread_id, stamp).filter(|k| k.expires_at > now) {
        let rows = kept.state.recent_seqs();
        return Ok(Some(Stored { state: kept.state, rows, kept: true }));
    }
    Ok(repo.boundary_state(thread_id, now)?.and_then(|row| from_row(row, params)))
}

/// A stored state; `None` when its JSON is unreadable. One stored before migration 0024 has
/// its vectors in the JSON and none of its window in rows (its next save writes them).
fn from_row(row: BoundaryRow, params: &BoundaryParams) -> Option<Stored> {
    let mut state = BoundaryState::from_json(&row.state, params.clone())?;
    let rows = row.window.as_ref().map_or(0..0, BoundaryWindow::seqs);
    put_back(&mut state, row);
    Some(Stored { state, rows, kept: false })
}

/// Writes the thread's state after this turn and keeps it as this process's copy. `stored`
/// is what [`load`] said of its window; a write by anyone else since makes it unknown, and the
/// whole window is written.
pub(super) fn save(
    repo: &TurnRepo,
    thread_id: &str,
    mut state: BoundaryState,
    stored: InStore,
    now: i64,
) -> Result<(), StoreError> {
    let stored = if repo.boundary_stamp()? == stored.stamp { stored.seqs } else { 0..0 };
    // The vectors move into the row and back: the JSON holds only the scalars.
    let (ewma_fast, ewma_slow) = (state.ewma_fast.take(), state.ewma_slow.take());
    let window = BoundaryWindow { first_seq: state.recent_seq, messages: std::mem::take(&mut state.recent) };
    let row = BoundaryRow { state: state.to_json(), ewma_fast, ewma_slow, window: Some(window) };
    let saved = repo.save_boundary_state(thread_id, &row, stored, now);
    put_back(&mut state, row);
    KEPT_BOUNDARY.put(thread_id, saved?, Kept { expires_at: now + BOUNDARY_TTL_S, state });
    Ok(())
}

/// Moves a row's vectors into the state (a row stored before migration 0024 has none: they
/// were in its JSON).
fn put_back(state: &mut BoundaryState, row: BoundaryRow) {
    if let Some(window) = row.window {
        (state.ewma_fast, state.ewma_slow) = (row.ewma_fast, row.ewma_slow);
        (state.recent_seq, state.recent) = (window.first_seq, window.messages);
    }
}

#[cfg(test)]
mod tests;
