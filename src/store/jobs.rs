//! The durable work queue behind the in-process workers.
//!
//! A job is claimed by flipping it to `running`; finishing deletes nothing, it marks
//! `done`. If the process dies mid-job, [`JobsRepo::recover_interrupted`] at the next
//! start puts it back in the queue, so consolidation work is never lost.
//!
//! Queues are named by [`JobKind`], never by free text: a job can only be queued on a
//! queue that exists, and `background::registry` maps every kind to the worker that claims
//! it, so a queue nobody drains cannot be written.

use super::{CachedSql, StoreError, now_ts};
use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;
use std::fmt;

/// Every queue of the `jobs` table. Adding one is adding a variant here and its worker in
/// `background::registry::worker_for` (which will not compile until it has one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum JobKind {
    /// One committed exchange to store as an episode (Phase D).
    Encode,
    /// The same exchange, for gists, facts, style and traits (Phase D).
    Chunk,
    /// Consolidating pending episodes into concepts (queued by the episodic worker).
    Semantic,
    /// Re-embedding every vector after an embedding-model change.
    Reembed,
}

impl JobKind {
    pub const ALL: [JobKind; 4] = [JobKind::Encode, JobKind::Chunk, JobKind::Semantic, JobKind::Reembed];

    /// The name stored in `jobs.queue` (what existing databases already hold).
    pub const fn as_str(self) -> &'static str {
        match self {
            JobKind::Encode => "encode",
            JobKind::Chunk => "chunk",
            JobKind::Semantic => "semantic",
            JobKind::Reembed => "reembed",
        }
    }

    pub fn parse(s: &str) -> Option<JobKind> {
        JobKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

impl fmt::Display for JobKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl ToSql for JobKind {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::from(self.as_str()))
    }
}

/// Where one job is in its life. Stored as text in `jobs.state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JobState {
    Queued,
    Running,
    Done,
    /// Out of attempts (or never claimable): kept for the record, never retried.
    Failed,
}

impl JobState {
    pub const fn as_str(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Done => "done",
            JobState::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<JobState> {
        [JobState::Queued, JobState::Running, JobState::Done, JobState::Failed].into_iter().find(|k| k.as_str() == s)
    }

    /// Done or failed: nothing more will happen to the job.
    pub const fn is_finished(self) -> bool {
        matches!(self, JobState::Done | JobState::Failed)
    }
}

impl fmt::Display for JobState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl ToSql for JobState {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::from(self.as_str()))
    }
}

impl FromSql for JobState {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        let s = value.as_str()?;
        JobState::parse(s).ok_or_else(|| FromSqlError::Other(format!("unknown job state {s:?}").into()))
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub id: i64,
    pub kind: JobKind,
    pub payload: Value,
    pub attempts: u32,
    pub max_attempts: u32,
}

/// What the jobs table says about one queue, for the status view.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueueActivity {
    /// Jobs waiting or running.
    pub depth: i64,
    /// When a job of this queue last finished or failed (unix seconds).
    pub last_run: Option<i64>,
    /// The error of the newest job that recorded one.
    pub last_error: Option<String>,
}

/// Done jobs kept per queue when old ones are pruned (see [`JobsRepo::prune_done`]).
pub const DONE_KEPT: i64 = 512;
/// How often, in job ids, completing a job prunes: often enough that the table never holds
/// more than `DONE_KEPT` + this many done rows per queue, rarely enough to cost nothing.
const PRUNE_EVERY: i64 = 64;

pub struct JobsRepo<'c>(pub &'c Connection);

impl JobsRepo<'_> {
    pub fn enqueue(&self, kind: JobKind, payload: &Value, max_attempts: u32) -> Result<i64, StoreError> {
        let now = now_ts();
        self.0.exec(
            "INSERT INTO jobs (queue, payload, max_attempts, run_after, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?4, ?4)",
            params![kind, payload.to_string(), max_attempts, now],
        )?;
        Ok(self.0.last_insert_rowid())
    }

    /// Take the oldest ready job of `kind`, if any.
    pub fn claim(&self, kind: JobKind) -> Result<Option<Job>, StoreError> {
        let now = now_ts();
        let row = self
            .0
            .query_row(
                "UPDATE jobs SET state = ?3, attempts = attempts + 1, updated_at = ?2
                 WHERE id = (SELECT id FROM jobs WHERE queue = ?1 AND state = ?4 AND run_after <= ?2
                             ORDER BY id LIMIT 1)
                 RETURNING id, payload, attempts, max_attempts",
                params![kind, now, JobState::Running, JobState::Queued],
                |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, u32>(2)?, r.get::<_, u32>(3)?)),
            )
            .optional()?;
        row.map(|(id, payload, attempts, max_attempts)| {
            Ok(Job { id, kind, payload: serde_json::from_str(&payload)?, attempts, max_attempts })
        })
        .transpose()
    }

    /// Mark a job done. Every [`PRUNE_EVERY`]th job also prunes old done rows, so the queue
    /// table stays the size of its live work plus a short history instead of growing by two
    /// rows a turn forever.
    pub fn complete(&self, id: i64) -> Result<(), StoreError> {
        self.0.execute(
            "UPDATE jobs SET state = ?3, updated_at = ?2 WHERE id = ?1",
            params![id, now_ts(), JobState::Done],
        )?;
        if id % PRUNE_EVERY == 0 {
            self.prune_done()?;
        }
        Ok(())
    }

    /// Delete done jobs beyond the newest [`DONE_KEPT`] of each queue. A done job's work is
    /// in its own tables (the episode, the gists, the concepts); the rows kept answer "when
    /// did this queue last run?" and "is this exchange's work done?" for recent exchanges,
    /// and an exchange whose row is gone reads as finished (`exchange_state` gives `None`).
    /// Failed jobs stay: they are the record of what went wrong. Returns how many went.
    pub fn prune_done(&self) -> Result<usize, StoreError> {
        Ok(self.0.execute(
            "DELETE FROM jobs WHERE id IN (
                 SELECT id FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY queue ORDER BY id DESC) AS n
                                 FROM jobs WHERE state = ?1)
                 WHERE n > ?2)",
            params![JobState::Done, DONE_KEPT],
        )?)
    }

    /// Record a failure: retried after `retry_in_s` until its attempts run out, then
    /// left as `failed` (never retried forever).
    pub fn fail(&self, id: i64, error: &str, retry_in_s: i64) -> Result<(), StoreError> {
        let now = now_ts();
        self.0.execute(
            "UPDATE jobs SET last_error = ?2, updated_at = ?3,
                 state = CASE WHEN attempts >= max_attempts THEN ?5 ELSE ?6 END,
                 run_after = ?3 + ?4
             WHERE id = ?1",
            params![id, error, now, retry_in_s, JobState::Failed, JobState::Queued],
        )?;
        Ok(())
    }

    /// Requeue jobs left `running` by a previous process. Returns how many.
    pub fn recover_interrupted(&self) -> Result<usize, StoreError> {
        Ok(self.0.execute(
            "UPDATE jobs SET state = ?2, updated_at = ?1 WHERE state = ?3",
            params![now_ts(), JobState::Queued, JobState::Running],
        )?)
    }

    /// Close, as `failed`, every unfinished job on a queue that is no [`JobKind`] (older
    /// versions queued `episode` jobs on a silence gap that no worker ever claimed), so
    /// "is the queue empty?" can become true. Returns how many.
    pub fn retire_unclaimable(&self) -> Result<usize, StoreError> {
        let known: Vec<&str> = JobKind::ALL.iter().map(|k| k.as_str()).collect();
        let list = serde_json::to_string(&known)?;
        Ok(self.0.execute(
            "UPDATE jobs SET state = ?2, updated_at = ?1, last_error = 'no worker claims this queue'
             WHERE state IN (?3, ?4) AND queue NOT IN (SELECT value FROM json_each(?5))",
            params![now_ts(), JobState::Failed, JobState::Queued, JobState::Running, list],
        )?)
    }

    /// The state of the newest `kind` job queued for one exchange, or `None` when the
    /// exchange queued none there.
    pub fn exchange_state(&self, kind: JobKind, exchange_id: &str) -> Result<Option<JobState>, StoreError> {
        Ok(self
            .0
            .query_row(
                "SELECT state FROM jobs WHERE queue = ?1 AND json_extract(payload, '$.exchange_id') = ?2
                 ORDER BY id DESC LIMIT 1",
                params![kind, exchange_id],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Whether `kind` has a job waiting or running.
    pub fn is_live(&self, kind: JobKind) -> Result<bool, StoreError> {
        Ok(self.0.query_row(
            "SELECT EXISTS (SELECT 1 FROM jobs WHERE queue = ?1 AND state IN (?2, ?3))",
            params![kind, JobState::Queued, JobState::Running],
            |r| r.get(0),
        )?)
    }

    /// When the newest `kind` job was queued (unix seconds), if ever.
    pub fn last_queued_at(&self, kind: JobKind) -> Result<Option<i64>, StoreError> {
        Ok(self.0.query_row("SELECT MAX(created_at) FROM jobs WHERE queue = ?1", params![kind], |r| r.get(0))?)
    }

    /// Close every waiting or running job of `kind` as done (their work was superseded).
    pub fn close_queue(&self, kind: JobKind) -> Result<usize, StoreError> {
        Ok(self.0.execute(
            "UPDATE jobs SET state = ?3, updated_at = ?2 WHERE queue = ?1 AND state IN (?4, ?5)",
            params![kind, now_ts(), JobState::Done, JobState::Queued, JobState::Running],
        )?)
    }

    /// Jobs waiting or running, per the whole queue table (for "is the mind idle?").
    pub fn pending_count(&self) -> Result<i64, StoreError> {
        Ok(self.0.query_row(
            "SELECT COUNT(*) FROM jobs WHERE state IN (?1, ?2)",
            params![JobState::Queued, JobState::Running],
            |r| r.get(0),
        )?)
    }

    /// Jobs of `kind` waiting or running.
    pub fn depth(&self, kind: JobKind) -> Result<i64, StoreError> {
        Ok(self.0.query_row(
            "SELECT COUNT(*) FROM jobs WHERE queue = ?1 AND state IN (?2, ?3)",
            params![kind, JobState::Queued, JobState::Running],
            |r| r.get(0),
        )?)
    }

    /// Depth, last finish and last error of `kind`'s queue.
    pub fn activity(&self, kind: JobKind) -> Result<QueueActivity, StoreError> {
        let last_run = self.0.query_row(
            "SELECT MAX(updated_at) FROM jobs WHERE queue = ?1 AND state IN (?2, ?3)",
            params![kind, JobState::Done, JobState::Failed],
            |r| r.get(0),
        )?;
        let last_error = self
            .0
            .query_row(
                "SELECT last_error FROM jobs WHERE queue = ?1 AND last_error IS NOT NULL ORDER BY updated_at DESC, id DESC LIMIT 1",
                params![kind],
                |r| r.get(0),
            )
            .optional()?;
        Ok(QueueActivity { depth: self.depth(kind)?, last_run, last_error })
    }
}

/// Wait until one exchange's `kind` job is done or failed, at most `cap`: headless
/// commands exit only once their turn's memory work is committed. Returns the last state.
pub async fn wait_for_exchange_job(
    db: &super::Db,
    kind: JobKind,
    exchange_id: &str,
    cap: std::time::Duration,
) -> Result<Option<JobState>, StoreError> {
    let deadline = tokio::time::Instant::now() + cap;
    loop {
        let x = exchange_id.to_string();
        let state = db.call(move |c| JobsRepo(c).exchange_state(kind, &x)).await?;
        let finished = state.is_none_or(JobState::is_finished);
        if finished || tokio::time::Instant::now() >= deadline {
            return Ok(state);
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}
