//! The write-ahead log's upkeep, moved off the commit path.
//!
//! SQLite's default checkpoints the WAL inside whichever commit pushes it past 1,000 pages, so
//! one turn in a few dozen paid for copying every page the others wrote (the commit's p99 at
//! 100k memories was ~5 ms against a 0.6 ms median; docs/architecture.md §9). While the
//! `checkpoint` worker runs, the connection's own checkpoint only fires past
//! [`WAL_BACKSTOP_PAGES`] (a bound that holds even if the worker stalls), and the worker copies
//! the log back with a PASSIVE checkpoint between turns: it never waits on a reader or writer,
//! so at worst it copies less and the next run finishes the job.

use super::StoreError;
use rusqlite::Connection;

/// `wal_autocheckpoint` while the worker keeps the log short: far above what the worker lets
/// build up between two runs, so a commit only ever checkpoints if the worker has stopped.
pub const WAL_BACKSTOP_PAGES: i64 = 16_384;

/// `journal_size_limit`: once a checkpoint has copied the whole log, the next write that starts
/// it over cuts the file back to this many bytes, so one burst does not keep a large file.
pub const WAL_KEEP_BYTES: i64 = 4 << 20;

/// What one PASSIVE checkpoint found and did (SQLite's own three numbers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WalCheckpoint {
    /// Another connection held a lock it needed; what it could copy it copied.
    pub busy: bool,
    /// Frames in the log (-1 for a database without one: in memory).
    pub log_frames: i64,
    /// Of those, frames now copied into the database file.
    pub checkpointed: i64,
}

impl WalCheckpoint {
    /// Every frame is in the database: the next write starts the log over.
    pub fn complete(&self) -> bool {
        !self.busy && self.checkpointed >= self.log_frames
    }
}

/// Take the checkpoint off the connection's commits (the worker does it from now on).
pub fn hand_checkpoints_to_worker(conn: &Connection) -> Result<(), StoreError> {
    conn.pragma_update(None, "wal_autocheckpoint", WAL_BACKSTOP_PAGES)?;
    conn.pragma_update(None, "journal_size_limit", WAL_KEEP_BYTES)?;
    Ok(())
}

/// The connection's `wal_autocheckpoint` now (1,000 until the worker takes over).
pub fn autocheckpoint_pages(conn: &Connection) -> Result<i64, StoreError> {
    Ok(conn.pragma_query_value(None, "wal_autocheckpoint", |r| r.get(0))?)
}

/// Where the log stood when [`checkpoint_and_restart`] last started it over: the connection's
/// write counters then. While they stand still the log holds only the restart's one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Restarted {
    total_changes: u64,
    data_version: i64,
}

fn restart_mark(conn: &Connection) -> Result<Restarted, StoreError> {
    let data_version = conn.pragma_query_value(None, "data_version", |r| r.get(0))?;
    Ok(Restarted { total_changes: conn.total_changes(), data_version })
}

/// The worker's run: a PASSIVE checkpoint, then, when it copied the whole log, start the log over
/// at once. The first write into a log that starts over writes its header and syncs it (an
/// fsync, ~4 ms on the bench machine, with `synchronous = NORMAL` too); left to the next write,
/// that was the first write of the next turn, before its first token (docs/architecture.md §9).
/// Rewriting `application_id` (unused by the store) with its own value is the smallest write
/// there is: one page, no data changed. `last` is the previous run's mark: while nothing was
/// written since (this connection's changes and other connections' `data_version` both
/// unmoved) the log holds only that page, and nothing is done, so an idle store is not synced
/// every run. Returns the checkpoint (`None` when skipped) and the mark for the next run.
pub fn checkpoint_and_restart(
    conn: &Connection,
    last: Option<Restarted>,
) -> Result<(Option<WalCheckpoint>, Option<Restarted>), StoreError> {
    if let Some(mark) = last
        && restart_mark(conn)? == mark
    {
        return Ok((None, Some(mark)));
    }
    let done = checkpoint_passive(conn)?;
    // An in-memory database has no log (-1 frames).
    if done.log_frames < 0 || !done.complete() {
        return Ok((Some(done), None));
    }
    let id: i64 = conn.pragma_query_value(None, "application_id", |r| r.get(0))?;
    conn.pragma_update(None, "application_id", id)?;
    Ok((Some(done), Some(restart_mark(conn)?)))
}

/// Copy what the log holds into the database without waiting for anyone.
pub fn checkpoint_passive(conn: &Connection) -> Result<WalCheckpoint, StoreError> {
    let (busy, log_frames, checkpointed) = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?))
    })?;
    Ok(WalCheckpoint { busy: busy != 0, log_frames, checkpointed })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::KvStateRepo;

    fn wal_pages(conn: &Connection) -> i64 {
        // A PASSIVE checkpoint that copies nothing is not possible; read the log's size instead.
        let path = conn.path().map(|p| format!("{p}-wal")).unwrap_or_default();
        std::fs::metadata(path).map(|m| m.len() as i64 / 4096).unwrap_or(0)
    }

    /// `rows` commits of about a page each (a rewrite of the same bytes writes no page: new keys).
    fn write_pages(conn: &Connection, first: usize, rows: usize) {
        let blob = "x".repeat(3000);
        for i in first..first + rows {
            KvStateRepo(conn).set_text("bench", &format!("k{i}"), &format!("{blob}{i}"), 0).unwrap();
        }
    }

    #[test]
    fn with_the_worker_in_charge_commits_leave_the_log_to_it_and_its_checkpoint_empties_it() {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::store::open(&dir.path().join("chalie.db")).unwrap();
        hand_checkpoints_to_worker(&conn).unwrap();
        // ~1,500 pages: past SQLite's default 1,000-page checkpoint, which would have run.
        write_pages(&conn, 0, 1_500);
        // Left alone the log would restart near 1,000 frames; held, it keeps all ~6,000.
        let before = wal_pages(&conn);
        assert!(before > 2_000, "the commits checkpointed themselves: {before} pages");

        let done = checkpoint_passive(&conn).unwrap();
        assert!(done.complete(), "{done:?}");
        assert!(done.log_frames > 2_000, "{done:?}");

        // The next write starts the log over and cuts the file to the kept size.
        write_pages(&conn, 1_500, 1);
        let after = std::fs::metadata(dir.path().join("chalie.db-wal")).unwrap().len() as i64;
        assert!(after <= WAL_KEEP_BYTES + 64 * 1024, "{after} bytes");
        let second = checkpoint_passive(&conn).unwrap();
        assert!(second.log_frames < 10, "the log started over: {second:?}");
    }

    #[test]
    fn the_worker_starts_the_log_over_itself_and_leaves_an_idle_log_alone() {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::store::open(&dir.path().join("chalie.db")).unwrap();
        hand_checkpoints_to_worker(&conn).unwrap();
        write_pages(&conn, 0, 20);
        let (done, mark) = checkpoint_and_restart(&conn, None).unwrap();
        let done = done.expect("checkpointed");
        assert!(done.complete() && done.log_frames >= 20, "{done:?}");
        let mark = mark.expect("the log was started over");
        // The restart wrote one frame (page 1), which the next checkpoint would find alone.
        // Nothing written since: the run does nothing, and the log keeps that one frame.
        assert_eq!(checkpoint_and_restart(&conn, Some(mark)).unwrap(), (None, Some(mark)));
        assert_eq!(checkpoint_passive(&conn).unwrap().log_frames, 1, "the log was started over");
        // A write moves the counters: the next run checkpoints and starts over again.
        write_pages(&conn, 20, 1);
        let (done, again) = checkpoint_and_restart(&conn, Some(mark)).unwrap();
        assert!(done.is_some_and(|d| d.complete()), "{done:?}");
        assert!(again.is_some_and(|m| m != mark));
        // The data is the data: application_id kept its value.
        let id: i64 = conn.pragma_query_value(None, "application_id", |r| r.get(0)).unwrap();
        assert_eq!(id, 0);
        // In memory there is no log to start over.
        let mem = crate::store::open_in_memory().unwrap();
        assert_eq!(checkpoint_and_restart(&mem, None).unwrap().1, None);
    }

    #[test]
    fn the_backstop_bounds_the_log_when_no_checkpoint_runs() {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::store::open(&dir.path().join("chalie.db")).unwrap();
        conn.pragma_update(None, "wal_autocheckpoint", 200).unwrap();
        write_pages(&conn, 0, 1_000);
        // With a 200-page backstop, each commit past it copies the log back: never far above it.
        let frames = checkpoint_passive(&conn).unwrap().log_frames;
        assert!(frames < 400, "{frames} frames");
        assert_eq!(autocheckpoint_pages(&conn).unwrap(), 200);
        hand_checkpoints_to_worker(&conn).unwrap();
        assert_eq!(autocheckpoint_pages(&conn).unwrap(), WAL_BACKSTOP_PAGES);
    }
}
