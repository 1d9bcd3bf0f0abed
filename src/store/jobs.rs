//! The durable work queue behind the in-process workers.
//!
//! A job is claimed by flipping it to `running`; finishing deletes nothing, it marks
//! `done`. If the process dies mid-job, [`JobsRepo::recover_interrupted`] at the next
//! start puts it back in the queue, so consolidation work is never lost.

use super::{StoreError, now_ts};
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub id: i64,
    pub queue: String,
    pub payload: Value,
    pub attempts: u32,
    pub max_attempts: u32,
}

pub struct JobsRepo<'c>(pub &'c Connection);

impl JobsRepo<'_> {
    pub fn enqueue(&self, queue: &str, payload: &Value, max_attempts: u32) -> Result<i64, StoreError> {
        let now = now_ts();
        self.0.execute(
            "INSERT INTO jobs (queue, payload, max_attempts, run_after, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?4, ?4)",
            params![queue, payload.to_string(), max_attempts, now],
        )?;
        Ok(self.0.last_insert_rowid())
    }

    /// Take the oldest ready job of `queue`, if any.
    pub fn claim(&self, queue: &str) -> Result<Option<Job>, StoreError> {
        let now = now_ts();
        let row = self
            .0
            .query_row(
                "UPDATE jobs SET state = 'running', attempts = attempts + 1, updated_at = ?2
                 WHERE id = (SELECT id FROM jobs WHERE queue = ?1 AND state = 'queued' AND run_after <= ?2
                             ORDER BY id LIMIT 1)
                 RETURNING id, queue, payload, attempts, max_attempts",
                params![queue, now],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, u32>(3)?,
                        r.get::<_, u32>(4)?,
                    ))
                },
            )
            .optional()?;
        row.map(|(id, queue, payload, attempts, max_attempts)| {
            Ok(Job { id, queue, payload: serde_json::from_str(&payload)?, attempts, max_attempts })
        })
        .transpose()
    }

    pub fn complete(&self, id: i64) -> Result<(), StoreError> {
        self.0.execute("UPDATE jobs SET state = 'done', updated_at = ?2 WHERE id = ?1", params![id, now_ts()])?;
        Ok(())
    }

    /// Record a failure: retried after `retry_in_s` until its attempts run out, then
    /// left as `failed` (never retried forever).
    pub fn fail(&self, id: i64, error: &str, retry_in_s: i64) -> Result<(), StoreError> {
        let now = now_ts();
        self.0.execute(
            "UPDATE jobs SET last_error = ?2, updated_at = ?3,
                 state = CASE WHEN attempts >= max_attempts THEN 'failed' ELSE 'queued' END,
                 run_after = ?3 + ?4
             WHERE id = ?1",
            params![id, error, now, retry_in_s],
        )?;
        Ok(())
    }

    /// Requeue jobs left `running` by a previous process. Returns how many.
    pub fn recover_interrupted(&self) -> Result<usize, StoreError> {
        Ok(self
            .0
            .execute("UPDATE jobs SET state = 'queued', updated_at = ?1 WHERE state = 'running'", params![now_ts()])?)
    }

    /// The state of the newest `queue` job queued for one exchange (`queued`, `running`,
    /// `done`, `failed`), or `None` when the exchange queued none there.
    pub fn exchange_state(&self, queue: &str, exchange_id: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .0
            .query_row(
                "SELECT state FROM jobs WHERE queue = ?1 AND json_extract(payload, '$.exchange_id') = ?2
                 ORDER BY id DESC LIMIT 1",
                params![queue, exchange_id],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Whether `queue` has a job waiting or running.
    pub fn is_live(&self, queue: &str) -> Result<bool, StoreError> {
        Ok(self.0.query_row(
            "SELECT EXISTS (SELECT 1 FROM jobs WHERE queue = ?1 AND state IN ('queued', 'running'))",
            params![queue],
            |r| r.get(0),
        )?)
    }

    /// Close every waiting or running job of `queue` as done (their work was superseded).
    pub fn close_queue(&self, queue: &str) -> Result<usize, StoreError> {
        Ok(self.0.execute(
            "UPDATE jobs SET state = 'done', updated_at = ?2 WHERE queue = ?1 AND state IN ('queued', 'running')",
            params![queue, now_ts()],
        )?)
    }

    /// Jobs waiting or running, per the whole queue table (for "is the mind idle?").
    pub fn pending_count(&self) -> Result<i64, StoreError> {
        Ok(self.0.query_row("SELECT COUNT(*) FROM jobs WHERE state IN ('queued', 'running')", [], |r| r.get(0))?)
    }
}

/// Wait until one exchange's `queue` job is `done` or `failed`, at most `cap`: headless
/// commands exit only once their turn's memory work is committed. Returns the last state.
pub async fn wait_for_exchange_job(
    db: &super::Db,
    queue: &'static str,
    exchange_id: &str,
    cap: std::time::Duration,
) -> Result<Option<String>, StoreError> {
    let deadline = tokio::time::Instant::now() + cap;
    loop {
        let x = exchange_id.to_string();
        let state = db.call(move |c| JobsRepo(c).exchange_state(queue, &x)).await?;
        let finished = matches!(state.as_deref(), None | Some("done" | "failed"));
        if finished || tokio::time::Instant::now() >= deadline {
            return Ok(state);
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}
