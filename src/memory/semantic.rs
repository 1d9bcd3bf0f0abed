//! Semantic consolidation: pending episodes become concepts and relationships in the graph
//! that `associate`, recall and drift activate (docs/cognition.md §9.3).
//!
//! ## Trigger
//! The episodic worker calls [`maybe_enqueue`] in the transaction that writes an episode; it
//! queues a job on [`SEMANTIC_QUEUE`] when [`trigger`] fires: 20 pending episodes, or an
//! episode whose salience is ≥ 1.4 × the rolling average of the previous 20 (both on the
//! stored 1–10 scale, so the comparison never mixes scales) with ≥ 300 s since the last job.
//! The worker adds the idle fallback on its poll ([`idle_due`]): pending episodes that have
//! waited 15 minutes. No job is queued while one is outstanding.
//!
//! ## A job
//! It takes up to [`BATCH`] pending episodes, extracts each one (the lightweight model with a
//! strict schema when `llm.memory_uses_model()`, else, or when the model's answer is
//! unusable, the deterministic extractor of [`super::concepts`]), embeds every concept as
//! "name (type): definition" in one call, and then, in one transaction, matches or creates
//! the concepts, upserts the relationships, marks the episodes `done` and completes the job.
//! A failed embedding still stores the concepts (matched by name only). A failed write is
//! retried up to [`MAX_ATTEMPTS`]; after that the job is `failed` and so are its episodes, so
//! nothing is retried forever.

use super::concepts::{
    CONCEPT_TYPES, Concept, EpisodeText, Extraction, MAX_DEFINITION_CHARS, MAX_NAME_CHARS, REL_TYPES, Relationship,
    extract_batch,
};
use super::semantic_store::{Counts, embed_text, pending_batch, store_consolidation};
use crate::config::Role;
use crate::llm::{ChatRequest, Llm, Message, ResponseFormat};
use crate::store::{Db, EpisodesRepo, Job, JobKind, JobsRepo, StoreError, now_ts};
use crate::text::clip::clip;
use rusqlite::Connection;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

pub const SEMANTIC_QUEUE: JobKind = JobKind::Semantic;
pub const PROMPT: &str = include_str!("../../prompts/memory/semantic.md");
/// Pending episodes that trigger a job.
pub const TRIGGER_PENDING: i64 = 20;
/// Salience trigger: this multiple of the rolling average…
pub const SALIENCE_RATIO: f64 = 1.4;
/// …and at least this long since the last job (seconds).
pub const MIN_GAP_S: i64 = 300;
/// Idle fallback: the oldest pending episode has waited this long (seconds).
pub const IDLE_S: i64 = 900;
/// Episodes in the rolling salience average.
pub const ROLLING_WINDOW: i64 = 20;
/// The rolling average before any episode exists: the middle of the 1–10 scale.
pub const DEFAULT_AVG_SALIENCE: f64 = 5.0;
/// Episodes one job consolidates.
pub const BATCH: usize = 20;
pub const MAX_ATTEMPTS: u32 = 3;
pub const RETRY_S: i64 = 60;
/// How often the worker looks for work (and checks the idle fallback).
pub const POLL: Duration = Duration::from_secs(2);

pub use super::workers::run_semantic_worker;

/// Why a job was queued (stored in its payload).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TriggerReason {
    Count,
    Salience,
    Idle,
}

impl TriggerReason {
    pub fn as_str(self) -> &'static str {
        match self {
            TriggerReason::Count => "count",
            TriggerReason::Salience => "salience",
            TriggerReason::Idle => "idle",
        }
    }
}

/// What the trigger reads, as of one new episode.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TriggerInput {
    /// Pending episodes, the new one included.
    pub pending: i64,
    /// The new episode's salience, 1–10.
    pub salience: u8,
    /// Mean salience (1–10) of the episodes before it.
    pub rolling_avg: f64,
    /// Seconds since the last job was queued; `None` if there never was one.
    pub since_last_run_s: Option<i64>,
    /// A job is already queued or running.
    pub outstanding: bool,
}

/// The docs/cognition.md §9.3 trigger on one scale (1–10).
pub fn trigger(i: &TriggerInput) -> Option<TriggerReason> {
    if i.outstanding || i.pending <= 0 {
        return None;
    }
    if i.pending >= TRIGGER_PENDING {
        return Some(TriggerReason::Count);
    }
    let gap_ok = i.since_last_run_s.is_none_or(|s| s >= MIN_GAP_S);
    (f64::from(i.salience) >= SALIENCE_RATIO * i.rolling_avg && gap_ok).then_some(TriggerReason::Salience)
}

/// The idle fallback: the oldest pending episode was written at least [`IDLE_S`] ago.
pub fn idle_due(oldest_pending_at: Option<i64>, now: i64, outstanding: bool) -> bool {
    !outstanding && oldest_pending_at.is_some_and(|t| now - t >= IDLE_S)
}

fn outstanding(c: &Connection) -> Result<bool, StoreError> {
    JobsRepo(c).is_live(SEMANTIC_QUEUE)
}

fn enqueue(c: &Connection, reason: TriggerReason) -> Result<i64, StoreError> {
    JobsRepo(c).enqueue(SEMANTIC_QUEUE, &json!({"reason": reason.as_str()}), MAX_ATTEMPTS)
}

/// Called in the transaction that wrote episode `episode_id`: queue a job if the trigger fires.
pub fn maybe_enqueue(
    c: &Connection,
    episode_id: i64,
    salience: u8,
    now: i64,
) -> Result<Option<TriggerReason>, StoreError> {
    let episodes = EpisodesRepo(c);
    let pending = episodes.pending_count()?;
    let avg = episodes.mean_salience_before(episode_id, ROLLING_WINDOW)?;
    let last = JobsRepo(c).last_queued_at(SEMANTIC_QUEUE)?;
    let input = TriggerInput {
        pending,
        salience,
        rolling_avg: avg.unwrap_or(DEFAULT_AVG_SALIENCE),
        since_last_run_s: last.map(|t| now - t),
        outstanding: outstanding(c)?,
    };
    let reason = trigger(&input);
    if let Some(r) = reason {
        enqueue(c, r)?;
    }
    Ok(reason)
}

/// The worker's poll: queue an idle job if pending episodes have waited long enough.
pub fn enqueue_if_idle(c: &Connection, now: i64) -> Result<bool, StoreError> {
    let oldest = EpisodesRepo(c).oldest_pending_at()?;
    let due = idle_due(oldest, now, outstanding(c)?);
    if due {
        enqueue(c, TriggerReason::Idle)?;
    }
    Ok(due)
}

/// The strict schema the model's answer must match (docs/cognition.md §9.3 extraction JSON).
pub fn extraction_schema() -> Value {
    serde_json::json!({
        "type": "object",
        "required": ["concepts", "relationships"],
        "additionalProperties": false,
        "properties": {
            "concepts": {"type": "array", "maxItems": 12, "items": {
                "type": "object",
                "required": ["name", "type", "definition", "abstraction_level", "domain"],
                "additionalProperties": false,
                "properties": {
                    "name": {"type": "string", "minLength": 1},
                    "type": {"type": "string", "enum": CONCEPT_TYPES},
                    "definition": {"type": "string"},
                    "abstraction_level": {"type": "integer", "minimum": 1, "maximum": 5},
                    "domain": {"type": "string"}
                }
            }},
            "relationships": {"type": "array", "maxItems": 20, "items": {
                "type": "object",
                "required": ["source", "target", "type", "strength"],
                "additionalProperties": false,
                "properties": {
                    "source": {"type": "string", "minLength": 1},
                    "target": {"type": "string", "minLength": 1},
                    "type": {"type": "string", "enum": REL_TYPES},
                    "strength": {"type": "number", "minimum": 0.5, "maximum": 1.0}
                }
            }}
        }
    })
}

/// Turn a schema-valid model answer into an extraction. Relationships must join two of the
/// listed concepts (no self-loops). An empty answer is an answer (the exchange held nothing
/// worth keeping); `None` only when the shape is wrong.
pub fn from_model(v: &Value, topic: Option<&str>) -> Option<Extraction> {
    let mut concepts: Vec<Concept> = Vec::new();
    for c in v["concepts"].as_array()? {
        let name = clip(c["name"].as_str().unwrap_or("").trim(), MAX_NAME_CHARS);
        let ty = c["type"].as_str().unwrap_or("");
        if name.is_empty()
            || !CONCEPT_TYPES.contains(&ty)
            || concepts.iter().any(|k| k.name.eq_ignore_ascii_case(&name))
        {
            continue;
        }
        let domain = c["domain"].as_str().map(str::trim).filter(|d| !d.is_empty()).or(topic);
        concepts.push(Concept {
            name,
            concept_type: ty.into(),
            definition: clip(c["definition"].as_str().unwrap_or("").trim(), MAX_DEFINITION_CHARS),
            abstraction_level: c["abstraction_level"].as_u64().unwrap_or(3).clamp(1, 5) as u8,
            domain: domain.map(str::to_string),
        });
    }
    let known = |n: &str| concepts.iter().find(|k| k.name.eq_ignore_ascii_case(n.trim())).map(|k| k.name.clone());
    let relationships = v["relationships"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| {
            let (source, target) = (known(r["source"].as_str()?)?, known(r["target"].as_str()?)?);
            let rel_type = r["type"].as_str().filter(|t| REL_TYPES.contains(t))?;
            (source != target).then(|| Relationship {
                source,
                target,
                rel_type: rel_type.into(),
                strength: r["strength"].as_f64().unwrap_or(0.5).clamp(0.5, 1.0),
            })
        })
        .collect();
    Some(Extraction { concepts, relationships })
}

/// The model request for one episode: the prompt, then the episode as JSON.
pub fn extraction_request(ep: &EpisodeText) -> ChatRequest {
    let input = json!({"gist": ep.gist, "topic": ep.topic});
    let mut req = ChatRequest::new(vec![Message::system(PROMPT.trim()), Message::user(input.to_string())]);
    req.max_tokens = 700;
    req.temperature = 0.1;
    req.logprobs = false;
    req.format = ResponseFormat::JsonSchema { name: "semantic_extraction".into(), schema: extraction_schema() };
    req
}

/// What one pass of the worker did.
#[derive(Debug, Clone, PartialEq)]
pub enum Processed {
    /// The batch was consolidated. `by_model`: episodes the model extracted (the rest took
    /// the deterministic path); `embed_error`: why concepts were matched by name only.
    Done { job_id: i64, counts: Counts, by_model: usize, embed_error: Option<String> },
    /// The write failed; `permanent` when the job is out of attempts (its episodes are then
    /// marked `failed`).
    Failed { job_id: i64, error: String, permanent: bool },
}

/// Extract each episode: the model's answer where asked for and usable, else `fallback`.
async fn extract_all(
    llm: &Llm,
    batch: &[EpisodeText],
    mut fallback: Vec<Extraction>,
    cancel: &CancellationToken,
) -> (Vec<Extraction>, usize) {
    if !llm.memory_uses_model() {
        return (fallback, 0);
    }
    let timeout = Duration::from_millis(llm.settings().request_timeout_ms);
    let mut by_model = 0;
    for (ep, slot) in batch.iter().zip(fallback.iter_mut()) {
        let answer =
            llm.structured(Role::Lightweight, &extraction_request(ep), &extraction_schema(), timeout, cancel).await;
        match answer.map(|v| from_model(&v, ep.topic.as_deref())) {
            Ok(Some(ex)) => {
                *slot = ex;
                by_model += 1;
            }
            Ok(None) => tracing::warn!(episode = ep.id, "semantic extraction: unusable answer, deterministic fallback"),
            Err(e) => tracing::warn!(episode = ep.id, "semantic extraction failed, deterministic fallback: {e}"),
        }
    }
    (fallback, by_model)
}

/// Embed every distinct concept text of the batch in one call.
async fn embed_all(llm: &Llm, batch: &[Extraction], dim: usize) -> (HashMap<String, Vec<f32>>, Option<String>) {
    let mut texts: Vec<String> = batch.iter().flat_map(|e| e.concepts.iter().map(embed_text)).collect();
    texts.sort();
    texts.dedup();
    if texts.is_empty() {
        return (HashMap::new(), None);
    }
    match llm.embed(&texts).await {
        Ok(v) if v.len() == texts.len() && v.iter().all(|x| x.len() == dim) => {
            (texts.into_iter().zip(v).collect(), None)
        }
        Ok(v) => {
            let got = v.first().map_or(0, Vec::len);
            (HashMap::new(), Some(format!("the embedding model returned {got} dimensions, concept vectors hold {dim}")))
        }
        Err(e) => (HashMap::new(), Some(crate::describe(&e))),
    }
}

/// Claim and run one semantic job. `Ok(None)` when there is none, or `shutdown` fired
/// mid-job (the job then stays `running` and is requeued at the next start).
pub async fn process_next(db: &Db, llm: &Llm, shutdown: &CancellationToken) -> Result<Option<Processed>, StoreError> {
    crate::background::claim_and_run(db, SEMANTIC_QUEUE, |job| process(db, llm, job, shutdown)).await
}

/// Run one claimed semantic job (see [`process_next`]); `Ok(None)` when `shutdown` fired.
pub async fn process(
    db: &Db,
    llm: &Llm,
    job: Job,
    shutdown: &CancellationToken,
) -> Result<Option<Processed>, StoreError> {
    let job_id = job.id;
    let batch = db.call(|c| pending_batch(c, BATCH)).await?;
    let dim = db.call(|c| crate::store::embedding_dim(c)).await?;
    let deterministic = extract_batch(&batch);
    let work = async {
        let (extractions, by_model) = extract_all(llm, &batch, deterministic, shutdown).await;
        let (vectors, embed_error) = embed_all(llm, &extractions, dim).await;
        (extractions, by_model, vectors, embed_error)
    };
    let (extractions, by_model, vectors, embed_error) = tokio::select! {
        r = work => r,
        _ = shutdown.cancelled() => return Ok(None),
    };
    if let Some(e) = &embed_error {
        tracing::warn!(job_id, "concepts stored without vectors (matched by name only): {e}");
    }
    let ids: Vec<i64> = batch.iter().map(|e| e.id).collect();
    let pairs: Vec<(i64, Extraction)> = ids.iter().copied().zip(extractions).collect();
    let stored = db.call(move |c| store_consolidation(c, job_id, &pairs, &vectors, now_ts())).await;
    match stored {
        Ok(counts) => Ok(Some(Processed::Done { job_id, counts, by_model, embed_error })),
        Err(StoreError::Closed) => Err(StoreError::Closed),
        Err(e) => {
            let error = crate::describe(&e);
            let permanent = job.attempts >= job.max_attempts;
            let msg = error.clone();
            db.call(move |c| {
                let tx = c.transaction()?;
                JobsRepo(&tx).fail(job_id, &msg, RETRY_S)?;
                if permanent {
                    for id in &ids {
                        EpisodesRepo(&tx).set_consolidation(*id, "failed")?;
                    }
                }
                tx.commit()?;
                Ok(())
            })
            .await?;
            Ok(Some(Processed::Failed { job_id, error, permanent }))
        }
    }
}

#[cfg(test)]
mod tests;
