//! Keeping the vector tables in the configured embedding model's space.
//!
//! At start the embedding model is asked for two short vectors ([`probe`]); their size is the
//! model's. [`reconcile`] compares model and size with what the database records
//! (`store::embedding_space`): on a change the tables are recreated at the new size and a
//! job on [`REEMBED_QUEUE`] is queued in the same transaction. The re-embed worker works
//! through `reembed_pending` [`BATCH`] rows at a time, each batch's vectors and its removal
//! from the worklist in one transaction, so a crash (the job stays `running` and is requeued
//! at the next start) or a failed model call (the job is retried) resumes where it stopped.
//! Progress goes out as [`EngineEvent::Reembed`]. Text recall is untouched meanwhile; vector
//! recall finds what has been re-embedded so far.
//!
//! A model whose size the tables cannot take (no vectors, vectors of different sizes, 0 or
//! more than [`MAX_EMBEDDING_DIM`]) is a warning notice: the tables stay as they are and
//! memories are stored without vectors, as before.

use crate::config::Role;
use crate::events::{EngineEvent, EventBus, NoticeLevel};
use crate::llm::Llm;
use crate::store::{
    Db, Job, JobKind, JobsRepo, MAX_EMBEDDING_DIM, StoreError, Switch, VecTable, VectorRepo, embedding_space,
    pending_count, pending_vectors, take_pending,
};
use rusqlite::Connection;
use serde_json::json;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

pub use super::workers::run_reembed_worker;

/// The durable queue of re-embedding jobs (one live job at most).
pub const REEMBED_QUEUE: JobKind = JobKind::Reembed;
/// Rows embedded per model call and per transaction.
pub const BATCH: usize = 32;
/// A failed batch is retried after this many seconds.
pub const RETRY_S: i64 = 10;
/// Claims (each batch failure and each restart is one) before the job is left `failed`
/// (about 15 minutes of a failing model); the next start queues what is left again.
const MAX_ATTEMPTS: u32 = 90;
/// When the model could not be asked at start, how often the re-embed worker asks again.
pub const PROBE_RETRY: Duration = Duration::from_secs(60);
/// How long the worker sleeps when there is nothing to re-embed.
pub const POLL: Duration = Duration::from_secs(2);
/// What the probe embeds: two texts of different lengths, so a model whose size depends on
/// its input is caught.
const PROBE_TEXTS: [&str; 2] =
    ["hello", "a longer sentence to check that the vector size does not depend on the input"];

/// What the embedding model's answer to the probe says about its size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    Dim(usize),
    /// The vectors cannot be stored; the text says why ("returned vectors of 0 dimensions").
    Unusable(String),
    /// The call failed (endpoint down, no embedding role): nothing learned.
    Failed(String),
}

/// What [`reconcile`] found and did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reconciled {
    NoModel,
    ProbeFailed(String),
    Unusable(String),
    Switched { model: String, dim: usize, switch: Switch },
}

/// How the database names the embedding role's model ("ollama/nomic-embed-text").
pub fn model_name(llm: &Llm) -> Option<String> {
    llm.route(Role::Embedding).map(|r| format!("{}/{}", r.provider.name(), r.model))
}

/// The size of `vectors` if the tables can hold it.
pub fn usable_dim(vectors: &[Vec<f32>]) -> Result<usize, String> {
    let Some(first) = vectors.first() else {
        return Err("returned no vectors".into());
    };
    let dim = first.len();
    if let Some(other) = vectors.iter().map(Vec::len).find(|&d| d != dim) {
        return Err(format!("returned vectors of different sizes ({dim} and {other} dimensions)"));
    }
    if dim == 0 || dim > MAX_EMBEDDING_DIM {
        return Err(format!("returned {dim}-dimensional vectors (vector memory holds 1 to {MAX_EMBEDDING_DIM})"));
    }
    Ok(dim)
}

/// Ask the embedding model for the size of its vectors.
pub async fn probe(llm: &Llm) -> Probe {
    let texts = PROBE_TEXTS.map(String::from);
    match llm.embed(&texts).await {
        Ok(v) if v.len() != texts.len() => {
            Probe::Unusable(format!("returned {} vectors for {} texts", v.len(), texts.len()))
        }
        Ok(v) => usable_dim(&v).map_or_else(Probe::Unusable, Probe::Dim),
        Err(e) => Probe::Failed(crate::describe(&e)),
    }
}

/// Probe the model and bring the vector tables to its space, queuing the re-embedding of
/// what is stored when they change. An unusable size is a warning notice.
pub async fn reconcile(db: &Db, llm: &Llm, bus: &EventBus) -> Result<Reconciled, StoreError> {
    let Some(model) = model_name(llm) else {
        return Ok(Reconciled::NoModel);
    };
    let dim = match probe(llm).await {
        Probe::Dim(d) => d,
        Probe::Unusable(why) => {
            tracing::warn!(model, "embedding model unusable for vector memory: {why}");
            bus.notice(
                NoticeLevel::Warn,
                format!("vector memory is off: the embedding model {model} {why}; recall uses text only"),
            );
            return Ok(Reconciled::Unusable(why));
        }
        Probe::Failed(why) => {
            tracing::warn!(model, "could not learn the embedding size: {why}");
            return Ok(Reconciled::ProbeFailed(why));
        }
    };
    let m = model.clone();
    let (switch, queued) = db
        .call(move |c| {
            let tx = c.transaction()?;
            let switch = crate::store::switch_model(&tx, &m, dim)?;
            if matches!(switch, Switch::Recreated { .. }) {
                // A job still working for an earlier model has nothing left to do.
                JobsRepo(&tx).close_queue(REEMBED_QUEUE)?;
            }
            // Work left with no job to do it (a new switch, or a job that gave up last time).
            let live = JobsRepo(&tx).is_live(REEMBED_QUEUE)?;
            let left = pending_count(&tx)?;
            let mut queued = None;
            if !live && left > 0 {
                let total = match switch {
                    Switch::Recreated { pending } => pending,
                    _ => left,
                };
                let payload = json!({"model": m, "dim": dim, "total": total});
                JobsRepo(&tx).enqueue(REEMBED_QUEUE, &payload, MAX_ATTEMPTS)?;
                queued = Some((total, left));
            }
            tx.commit()?;
            Ok((switch, queued))
        })
        .await?;
    if let Some((total, left)) = queued {
        tracing::info!(model, dim, total, left, "re-embedding stored memories for the embedding model");
        bus.emit(EngineEvent::Reembed { model: model.clone(), done: total - left.min(total), total });
    }
    Ok(Reconciled::Switched { model, dim, switch })
}

/// What one batch of a job did.
#[derive(Debug, Clone, PartialEq)]
pub enum Batch {
    /// `done` of `total` rows have their new vector.
    Progress { done: u64, total: u64 },
    /// Nothing is left; the job is done.
    Finished { total: u64 },
    /// The model call failed or gave vectors of the wrong size; the job is queued again.
    Failed(String),
    /// The recorded model is no longer the job's: it is closed without writing.
    Superseded,
}

struct JobSpec {
    model: String,
    dim: usize,
    total: u64,
}

fn spec(job: &Job) -> Option<JobSpec> {
    let p = &job.payload;
    Some(JobSpec {
        model: p["model"].as_str()?.to_string(),
        dim: usize::try_from(p["dim"].as_u64()?).ok()?,
        total: p["total"].as_u64()?,
    })
}

fn is_current(c: &Connection, s: &JobSpec) -> Result<bool, StoreError> {
    let space = embedding_space(c)?;
    Ok(space.dim == s.dim && space.model.as_deref() == Some(s.model.as_str()))
}

/// Write one batch's vectors and take its rows off the worklist, in one transaction
/// (completing the job when nothing is left). `None` when the job was superseded.
fn write_batch(
    c: &mut Connection,
    job_id: i64,
    s: &JobSpec,
    rows: &[(VecTable, i64)],
    vectors: &[Option<Vec<f32>>],
) -> Result<Option<u64>, StoreError> {
    let tx = c.transaction()?;
    if !is_current(&tx, s)? {
        JobsRepo(&tx).complete(job_id)?;
        tx.commit()?;
        return Ok(None);
    }
    for (&(table, id), v) in rows.iter().zip(vectors) {
        let still = take_pending(&tx, table, id)?;
        if let Some(v) = v.as_ref().filter(|_| still) {
            VectorRepo(&tx).upsert(table, id, v)?;
        }
    }
    let left = pending_count(&tx)?;
    if left == 0 {
        JobsRepo(&tx).complete(job_id)?;
    }
    tx.commit()?;
    Ok(Some(s.total.saturating_sub(left)))
}

/// Re-embed the next `n` rows of `job` (claimed by the caller).
pub async fn run_batch(db: &Db, llm: &Llm, job: &Job, n: usize) -> Result<Batch, StoreError> {
    let job_id = job.id;
    let Some(s) = spec(job) else {
        db.call(move |c| JobsRepo(c).fail(job_id, "malformed re-embed job", 0)).await?;
        return Ok(Batch::Failed("malformed re-embed job".into()));
    };
    let (current, rows) = {
        let (model, dim) = (s.model.clone(), s.dim);
        db.call(move |c| {
            let s = JobSpec { model, dim, total: 0 };
            Ok((is_current(c, &s)?, pending_vectors(c, n)?))
        })
        .await?
    };
    if !current {
        db.call(move |c| JobsRepo(c).complete(job_id)).await?;
        return Ok(Batch::Superseded);
    }
    let texts: Vec<String> = rows.iter().filter_map(|r| r.text.clone()).collect();
    let embedded = if texts.is_empty() {
        Ok(Vec::new())
    } else {
        match llm.embed(&texts).await {
            Ok(v) if v.len() == texts.len() && v.iter().all(|x| x.len() == s.dim) => Ok(v),
            Ok(v) => Err(format!(
                "the embedding model returned {} vectors of {} dimensions for {} texts, expected {} dimensions",
                v.len(),
                v.first().map_or(0, Vec::len),
                texts.len(),
                s.dim
            )),
            Err(e) => Err(crate::describe(&e)),
        }
    };
    let mut embedded = match embedded {
        Ok(v) => v.into_iter(),
        Err(error) => {
            let msg = error.clone();
            db.call(move |c| JobsRepo(c).fail(job_id, &msg, RETRY_S)).await?;
            return Ok(Batch::Failed(error));
        }
    };
    let keys: Vec<(VecTable, i64)> = rows.iter().map(|r| (r.table, r.id)).collect();
    let vectors: Vec<Option<Vec<f32>>> = rows.iter().map(|r| r.text.as_ref().and_then(|_| embedded.next())).collect();
    let total = s.total;
    match db.call(move |c| write_batch(c, job_id, &s, &keys, &vectors)).await? {
        None => Ok(Batch::Superseded),
        Some(done) if done >= total => Ok(Batch::Finished { total }),
        Some(done) => Ok(Batch::Progress { done, total }),
    }
}

/// Claim the re-embed job, if any, and run it batch by batch until it finishes, fails or
/// `shutdown` fires (then it stays `running`, and the next start requeues it). Returns the
/// last batch's outcome.
pub async fn process_next(
    db: &Db,
    llm: &Llm,
    bus: &EventBus,
    shutdown: &CancellationToken,
) -> Result<Option<Batch>, StoreError> {
    crate::background::claim_and_run(db, REEMBED_QUEUE, |job| process(db, llm, bus, job, shutdown)).await
}

/// Run one claimed re-embed job batch by batch (see [`process_next`]).
pub async fn process(
    db: &Db,
    llm: &Llm,
    bus: &EventBus,
    job: Job,
    shutdown: &CancellationToken,
) -> Result<Option<Batch>, StoreError> {
    let model = job.payload["model"].as_str().unwrap_or_default().to_string();
    loop {
        let outcome = tokio::select! {
            r = run_batch(db, llm, &job, BATCH) => r?,
            _ = shutdown.cancelled() => return Ok(None),
        };
        match &outcome {
            Batch::Progress { done, total } => {
                bus.emit(EngineEvent::Reembed { model: model.clone(), done: *done, total: *total })
            }
            Batch::Finished { total } => {
                tracing::info!(model, total, "re-embedding finished");
                bus.emit(EngineEvent::Reembed { model: model.clone(), done: *total, total: *total });
                return Ok(Some(outcome));
            }
            Batch::Failed(e) => {
                tracing::warn!(model, "re-embedding paused, retried in {RETRY_S} s: {e}");
                if job.attempts >= job.max_attempts {
                    bus.notice(NoticeLevel::Warn, format!("re-embedding memories for {model} gave up: {e}"));
                }
                return Ok(Some(outcome));
            }
            Batch::Superseded => return Ok(Some(outcome)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_the_tables_cannot_hold_are_named() {
        assert_eq!(usable_dim(&[vec![0.1; 768], vec![0.2; 768]]), Ok(768));
        assert_eq!(usable_dim(&[]), Err("returned no vectors".into()));
        assert!(usable_dim(&[vec![0.1; 768], vec![0.1; 1024]]).is_err_and(|e| e.contains("different sizes")));
        assert!(usable_dim(&[vec![]]).is_err_and(|e| e.contains("0-dimensional")));
        assert!(usable_dim(&[vec![0.1; MAX_EMBEDDING_DIM + 1]]).is_err_and(|e| e.contains("4097-dimensional")));
        assert_eq!(usable_dim(&[vec![0.1; MAX_EMBEDDING_DIM]]), Ok(MAX_EMBEDDING_DIM));
    }
}
