//! One line per background task: what it is doing, when it last ran, how much waits on its
//! queue and its last error. The same report serves `chalie-tui status` (another process:
//! the workers' own board is not there, so what the database records stands in) and the
//! F1 popup (the running app's board).

use super::board::{RunState, WorkerStatus};
use super::registry::WorkerId;
use crate::store::{JobsRepo, StoreError};
use rusqlite::Connection;
use std::fmt;

/// One task's line.
#[derive(Debug, Clone, PartialEq)]
pub struct StatusLine {
    pub id: WorkerId,
    /// `None`: not known in this process (the report was made outside the running app).
    pub state: Option<RunState>,
    pub last_run: Option<i64>,
    pub depth: Option<i64>,
    pub last_error: Option<String>,
    /// Why the task does not run at all with this setup (e.g. reflection on the built-in model).
    pub note: Option<String>,
}

/// Where a task that cannot run with the engine's models says why (`kv_state`, namespace and
/// key per task), so `status` outside the running app can tell.
pub const OFF_NAMESPACE: &str = "worker_off";

/// Every task, in [`WorkerId::ALL`] order, as of `now` (unix seconds).
#[derive(Debug, Clone, PartialEq)]
pub struct StatusReport {
    pub now: i64,
    pub lines: Vec<StatusLine>,
}

/// The report from the database, with `live` (a board's snapshot) where this process runs
/// the workers. Queue depth is always read fresh; last run and last error come from the
/// board when it knows them, else from the jobs table (the memory layer adds the decay
/// engine's last pass: `memory::workers::status_report`).
pub fn report(c: &Connection, live: Option<&[WorkerStatus]>, now: i64) -> Result<StatusReport, StoreError> {
    let mut lines = Vec::with_capacity(WorkerId::ALL.len());
    for id in WorkerId::ALL {
        let board = live.and_then(|l| l.iter().find(|s| s.id == id));
        let (mut last_run, mut depth, mut last_error) = (None, None, None);
        if let Some(kind) = id.queue() {
            let a = JobsRepo(c).activity(kind)?;
            (last_run, depth, last_error) = (a.last_run, Some(a.depth), a.last_error);
        }
        if let Some(b) = board {
            last_run = b.last_run.or(last_run);
            last_error = b.last_error.clone().or(last_error);
        }
        let note = crate::store::KvStateRepo(c).get_text(OFF_NAMESPACE, id.name())?;
        lines.push(StatusLine { id, state: board.map(|b| b.state), last_run, depth, last_error, note });
    }
    Ok(StatusReport { now, lines })
}

impl StatusReport {
    /// The report from a board alone (no database at hand: the TUI's render).
    pub fn from_board(live: &[WorkerStatus], now: i64) -> StatusReport {
        let lines = WorkerId::ALL
            .into_iter()
            .map(|id| match live.iter().find(|s| s.id == id) {
                Some(s) => StatusLine {
                    id,
                    state: Some(s.state),
                    last_run: s.last_run,
                    depth: s.depth,
                    last_error: s.last_error.clone(),
                    note: None,
                },
                None => StatusLine { id, state: None, last_run: None, depth: None, last_error: None, note: None },
            })
            .collect();
        StatusReport { now, lines }
    }

    /// Each line as text, for a list that draws its own rows.
    pub fn rows(&self) -> Vec<String> {
        self.lines.iter().map(|l| l.render(self.now)).collect()
    }
}

impl StatusLine {
    fn render(&self, now: i64) -> String {
        let state = self.state.map_or("not running here", RunState::as_str);
        let last = self.last_run.map_or_else(|| "never".to_string(), |t| ago(now - t));
        let depth = self.depth.map_or_else(|| "-".to_string(), |d| d.to_string());
        let mut s = format!("{:<10} {:<16} last run {:<9} queue {:<4}", self.id.name(), state, last, depth);
        if let Some(n) = &self.note {
            s.push_str(" off: ");
            s.push_str(&one_line(n, 120));
        }
        if let Some(e) = &self.last_error {
            s.push_str(" error: ");
            s.push_str(&one_line(e, 120));
        }
        s.trim_end().to_string()
    }
}

/// `e` on one line, cut to `max` characters: an error can be a whole model answer.
fn one_line(e: &str, max: usize) -> String {
    let flat: String = e.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &flat[..i]),
        None => flat,
    }
}

/// "12s ago", "5m ago", "3h ago", "2d ago".
fn ago(secs: i64) -> String {
    let s = secs.max(0);
    match s {
        0..60 => format!("{s}s ago"),
        60..3600 => format!("{}m ago", s / 60),
        3600..86_400 => format!("{}h ago", s / 3600),
        _ => format!("{}d ago", s / 86_400),
    }
}

impl fmt::Display for StatusReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for row in self.rows() {
            writeln!(f, "{row}")?;
        }
        Ok(())
    }
}
