//! The memory chunker worker: each committed exchange becomes gists, facts, a style
//! observation and user traits (docs/cognition.md §9.7).
//!
//! Phase D queues a job on [`CHUNK_QUEUE`] beside the episodic `encode` job, with the same
//! payload. The worker claims it and extracts one of two ways:
//! - with the lightweight model when [`Llm::memory_uses_model`] (an endpoint, or `[llm]
//!   memory_extraction = "llm"`): one strict-JSON call ([`super::chunk_model`]), time-boxed;
//! - otherwise, and whenever that call fails for any reason (timeout, invalid JSON after the
//!   bounded repairs, model down), deterministically ([`super::extract`]). A model failure never
//!   fails the job, so it is never retried for the model's sake.
//!
//! Traits that pass the speaker-confidence gate are embedded ("key: value", one batch) before
//! the write; a failed embedding stores them without a vector. Then every write of the job
//! (gists, facts, style, traits with their vectors, a `memory_chunk` log row) and the job's
//! completion go in one transaction: the UI and the other workers see all of a chunk or none.
//! A failed write goes back to the queue through `JobsRepo::fail` (bounded attempts); a job
//! left `running` by a crash is requeued by `JobsRepo::recover_interrupted` at the next start.

use super::chunk_model;
use super::extract::{Extraction, extract};
use super::shortterm::{apply_with_vectors, fact_embedding_text, load_topic, plan_facts, plan_gists};
use super::style::{observe, observe_and_save};
use super::traits::{Origin, TraitDecision, adjusted_confidence, store_trait};
use crate::config::Role;
use crate::llm::Llm;
use crate::store::{CHUNK_QUEUE, Db, InteractionLogRepo, Job, JobState, JobsRepo, StoreError, now_ts};
use rusqlite::Connection;
use serde::Serialize;
use serde_json::{Value, json};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

pub use super::workers::run_chunker_worker;

/// How long the worker sleeps when the queue is empty (a committed turn wakes it sooner).
pub const POLL: Duration = Duration::from_millis(500);
/// A failed write is retried after this many seconds (while attempts remain).
pub const RETRY_S: i64 = 30;
/// The model call never takes longer than this, whatever the request timeout.
pub const MODEL_TIMEOUT_CAP: Duration = Duration::from_secs(30);
/// Topic of exchanges whose payload names none.
pub const DEFAULT_TOPIC: &str = "general";

/// One exchange, as the chunk job carries it.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkInput {
    pub thread_id: Option<String>,
    pub exchange_id: Option<String>,
    pub topic: String,
    pub user_text: String,
    pub response: String,
    pub created_at: i64,
}

impl ChunkInput {
    /// `None` for exchanges with nothing to learn from: mode IGNORE or an empty message.
    pub fn from_payload(p: &Value) -> Option<ChunkInput> {
        let user = p["user_text"].as_str().unwrap_or("").trim();
        if p["mode"].as_str().unwrap_or("").eq_ignore_ascii_case("IGNORE") || user.is_empty() {
            return None;
        }
        Some(ChunkInput {
            thread_id: p["thread_id"].as_str().map(str::to_string),
            exchange_id: p["exchange_id"].as_str().map(str::to_string),
            topic: p["topic"].as_str().filter(|t| !t.trim().is_empty()).unwrap_or(DEFAULT_TOPIC).to_string(),
            user_text: user.to_string(),
            response: p["response"].as_str().unwrap_or("").to_string(),
            created_at: p["created_at"].as_i64().unwrap_or_else(now_ts),
        })
    }
}

/// What one job stored.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ChunkSummary {
    pub gists: usize,
    pub facts: usize,
    /// `(key, decision)` per trait observation.
    pub traits: Vec<(String, TraitDecision)>,
    /// The style profile's observation count after this job, if the message had words.
    pub style_observations: Option<u32>,
}

/// Every write of one job and its completion, in one transaction. `vectors[i]` belongs to
/// `ex.traits[i]`; facts are stored without vectors (see [`store_chunk_with`]).
pub fn store_chunk(
    c: &mut Connection,
    job_id: i64,
    input: &ChunkInput,
    ex: &Extraction,
    vectors: &[Option<Vec<f32>>],
    source: &str,
    now: i64,
) -> Result<ChunkSummary, StoreError> {
    store_chunk_with(c, job_id, input, ex, vectors, &[], source, now)
}

/// [`store_chunk`] with the facts' vectors, by their [`fact_embedding_text`].
#[allow(clippy::too_many_arguments)]
pub fn store_chunk_with(
    c: &mut Connection,
    job_id: i64,
    input: &ChunkInput,
    ex: &Extraction,
    vectors: &[Option<Vec<f32>>],
    fact_vectors: &[(String, Vec<f32>)],
    source: &str,
    now: i64,
) -> Result<ChunkSummary, StoreError> {
    let tx = c.transaction()?;
    // The user asked to forget this exchange while its job waited: it is not learned again.
    if let Some(x) = &input.exchange_id
        && crate::store::exchange_forgotten(&tx, x)?
    {
        JobsRepo(&tx).complete(job_id)?;
        tx.commit()?;
        return Ok(ChunkSummary { gists: 0, facts: 0, traits: Vec::new(), style_observations: None });
    }
    let (live_gists, live_facts) = load_topic(&tx, &input.topic, now)?;
    // A password, key, card or id number is never written into a gist, fact or trait.
    let pair = secret_pair;
    let gists: Vec<_> = ex.gists.iter().filter(|g| !crate::text::privacy::has_secret(&g.content)).cloned().collect();
    let facts: Vec<_> = ex.facts.iter().filter(|f| !pair(&f.key, &f.value)).cloned().collect();
    let gist_plan = plan_gists(&live_gists, &gists);
    let fact_plan = plan_facts(&live_facts, &facts);
    let (gists, facts) =
        apply_with_vectors(&tx, &input.topic, input.thread_id.as_deref(), &gist_plan, &fact_plan, fact_vectors, now)?;
    let style_observations = match &ex.style {
        Some(s) => Some(observe_and_save(&tx, s)?.observations),
        None => None,
    };
    let origin = Origin {
        thread_id: input.thread_id.as_deref(),
        exchange_id: input.exchange_id.as_deref(),
        topic: Some(&input.topic),
    };
    let mut traits = Vec::with_capacity(ex.traits.len());
    // The rows this exchange wrote (not the ones it only reinforced): what a forget of it takes.
    let mut written: Vec<i64> = Vec::new();
    for (i, t) in ex.traits.iter().enumerate() {
        if pair(&t.key, &t.value) {
            continue;
        }
        let v = vectors.get(i).and_then(Option::as_deref);
        let (id, decision) = store_trait(&tx, t, input.created_at, now, v, origin)?;
        if decision.changes_value() || matches!(decision, TraitDecision::KeepOld) {
            written.extend(id);
        }
        traits.push((t.key.clone(), decision));
    }
    let summary = ChunkSummary { gists, facts, traits, style_observations };
    let payload = json!({"source": source, "summary": summary, "trait_ids": written});
    InteractionLogRepo(&tx).append(origin, "memory_chunk", &payload, now)?;
    JobsRepo(&tx).complete(job_id)?;
    tx.commit()?;
    Ok(summary)
}

/// What one pass of the worker did.
#[derive(Debug, Clone, PartialEq)]
pub enum Processed {
    /// Written. `source` is `model` or `deterministic`; `fallback` says why the model's answer
    /// was not used, when it was asked; `embed_error` why traits have no vector.
    Stored {
        job_id: i64,
        source: &'static str,
        fallback: Option<String>,
        embed_error: Option<String>,
        summary: ChunkSummary,
    },
    /// Nothing to learn from (IGNORE or empty); the job is done.
    Skipped { job_id: i64 },
    /// The write failed; `permanent` when the job is out of attempts.
    Failed { job_id: i64, error: String, permanent: bool },
}

/// The model's extraction, or the deterministic one with the reason the model's was not used.
/// `None` when `shutdown` fired mid-call.
async fn extraction(
    llm: &Llm,
    input: &ChunkInput,
    shutdown: &CancellationToken,
) -> Option<(Extraction, &'static str, Option<String>)> {
    if !llm.memory_uses_model() {
        return Some((extract(&input.user_text), "deterministic", None));
    }
    let req = chunk_model::request(&input.user_text, &input.response);
    let timeout = Duration::from_millis(llm.settings().request_timeout_ms).min(MODEL_TIMEOUT_CAP);
    let schema = chunk_model::schema();
    let reply = tokio::select! {
        r = llm.structured(Role::Lightweight, &req, &schema, timeout, shutdown) => r,
        _ = shutdown.cancelled() => return None,
    };
    match reply {
        Ok(v) => {
            let mut ex = chunk_model::parse(&v);
            ex.style = ex.style.or_else(|| observe(&input.user_text));
            Some((ex, "model", None))
        }
        Err(_) if shutdown.is_cancelled() => None,
        Err(e) => {
            let why = crate::describe(&e);
            tracing::info!(exchange_id = ?input.exchange_id, "memory extraction falls back to rules: {why}");
            Some((extract(&input.user_text), "deterministic", Some(why)))
        }
    }
}

/// Whether a key/value pair holds a password, key, card or id number. A key names what the
/// value is ("password"), so the pair is read as one sentence too.
fn secret_pair(k: &str, v: &str) -> bool {
    let secret = crate::text::privacy::has_secret;
    secret(v) || secret(k) || secret(&format!("{} is {v}", k.replace('_', " ")))
}

/// The traits' and facts' vectors.
type Vectors = (Vec<Option<Vec<f32>>>, Vec<(String, Vec<f32>)>);

/// Embeddings for the traits that will be stored (`None` where rejected or on failure) and
/// for the facts that may be (by their text; the plan decides in the write), in one call.
async fn embed_memories(llm: &Llm, ex: &Extraction, dim: usize) -> (Vectors, Option<String>) {
    let wanted: Vec<usize> = (0..ex.traits.len())
        .filter(|&i| adjusted_confidence(ex.traits[i].confidence, ex.traits[i].source).is_some())
        .collect();
    let mut fact_texts: Vec<String> = ex
        .facts
        .iter()
        .filter(|f| f.confidence >= super::shortterm::MIN_FACT_CONFIDENCE && !secret_pair(&f.key, &f.value))
        .take(super::shortterm::FACTS_PER_EXCHANGE)
        .map(|f| fact_embedding_text(&f.key, &f.value))
        .collect();
    fact_texts.dedup();
    let mut out = vec![None; ex.traits.len()];
    if wanted.is_empty() && fact_texts.is_empty() {
        return ((out, Vec::new()), None);
    }
    let mut texts: Vec<String> = wanted.iter().map(|&i| ex.traits[i].embedding_text()).collect();
    texts.extend(fact_texts.iter().cloned());
    match llm.embed(&texts).await {
        Ok(v) if v.len() == texts.len() && v.iter().all(|x| x.len() == dim) => {
            let mut v = v.into_iter();
            for (i, e) in wanted.into_iter().zip(v.by_ref()) {
                out[i] = Some(e);
            }
            ((out, fact_texts.into_iter().zip(v).collect()), None)
        }
        Ok(v) => {
            let got = v.first().map_or(0, Vec::len);
            (
                (out, Vec::new()),
                Some(format!("the embedding model returned {got} dimensions, the vector tables hold {dim}")),
            )
        }
        Err(e) => ((out, Vec::new()), Some(crate::describe(&e))),
    }
}

/// Claim and process one chunk job. `Ok(None)` when the queue is empty or `shutdown` fired
/// mid-job (the job then stays `running` and is requeued at the next start).
pub async fn process_next(db: &Db, llm: &Llm, shutdown: &CancellationToken) -> Result<Option<Processed>, StoreError> {
    crate::background::claim_and_run(db, CHUNK_QUEUE, |job| process(db, llm, job, shutdown)).await
}

/// Process one claimed chunk job (see [`process_next`]); `Ok(None)` when `shutdown` fired.
pub async fn process(
    db: &Db,
    llm: &Llm,
    job: Job,
    shutdown: &CancellationToken,
) -> Result<Option<Processed>, StoreError> {
    let job_id = job.id;
    let Some(input) = ChunkInput::from_payload(&job.payload) else {
        db.call(move |c| JobsRepo(c).complete(job_id)).await?;
        return Ok(Some(Processed::Skipped { job_id }));
    };
    let Some((ex, source, fallback)) = extraction(llm, &input, shutdown).await else {
        return Ok(None);
    };
    let dim = db.call(|c| crate::store::embedding_dim(c)).await?;
    let ((vectors, fact_vectors), embed_error) = tokio::select! {
        r = embed_memories(llm, &ex, dim) => r,
        _ = shutdown.cancelled() => return Ok(None),
    };
    if let Some(error) = &embed_error {
        tracing::warn!(job_id, "traits and facts stored without vectors: {error}");
    }
    let stored =
        db.call(move |c| store_chunk_with(c, job_id, &input, &ex, &vectors, &fact_vectors, source, now_ts())).await;
    match stored {
        Ok(summary) => Ok(Some(Processed::Stored { job_id, source, fallback, embed_error, summary })),
        Err(StoreError::Closed) => Err(StoreError::Closed),
        Err(e) => {
            let error = crate::describe(&e);
            tracing::warn!(job_id, "could not store the memory chunk: {error}");
            let msg = error.clone();
            db.call(move |c| JobsRepo(c).fail(job_id, &msg, RETRY_S)).await?;
            Ok(Some(Processed::Failed { job_id, error, permanent: job.attempts >= job.max_attempts }))
        }
    }
}

/// The state of `exchange_id`'s chunk job, or `None` when the exchange queued none.
pub fn chunk_state(c: &Connection, exchange_id: &str) -> Result<Option<JobState>, StoreError> {
    JobsRepo(c).exchange_state(CHUNK_QUEUE, exchange_id)
}

/// Wait until `exchange_id`'s chunk job is `done` or `failed`, at most `cap` (headless `ask`
/// exits only once its turn's traits are stored). Returns its last state.
pub async fn wait_for_chunk(db: &Db, exchange_id: &str, cap: Duration) -> Result<Option<JobState>, StoreError> {
    crate::store::wait_for_exchange_job(db, CHUNK_QUEUE, exchange_id, cap).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_with_nothing_to_learn_are_skipped() {
        let p = |user: &str, mode: &str| {
            json!({"thread_id": "t", "exchange_id": "x", "topic": "", "user_text": user,
                                               "response": "ok", "mode": mode, "created_at": 5})
        };
        assert_eq!(ChunkInput::from_payload(&p("hmm", "IGNORE")), None);
        assert_eq!(ChunkInput::from_payload(&p("  ", "RESPOND")), None);
        let input = ChunkInput::from_payload(&p(" I live in Porto ", "RESPOND")).unwrap();
        assert_eq!(
            (input.topic.as_str(), input.user_text.as_str(), input.created_at),
            (DEFAULT_TOPIC, "I live in Porto", 5)
        );
    }

    #[test]
    fn a_failed_write_leaves_nothing_and_the_job_running() {
        let mut c = crate::store::open_in_memory().unwrap();
        let payload = json!({"topic": "home", "user_text": "I live in Porto", "mode": "RESPOND", "created_at": 5});
        let job = JobsRepo(&c).enqueue(CHUNK_QUEUE, &payload, 3).unwrap();
        JobsRepo(&c).claim(CHUNK_QUEUE).unwrap().unwrap();
        let input = ChunkInput::from_payload(&payload).unwrap();
        let ex = extract(&input.user_text);
        assert!(!ex.traits.is_empty() && !ex.gists.is_empty());
        // A vector of the wrong size fails the trait write after the gists and facts were written.
        let bad = vec![Some(vec![0.5f32; 8]); ex.traits.len()];
        assert!(store_chunk(&mut c, job, &input, &ex, &bad, "deterministic", 10).is_err());
        let f = crate::store::fixtures::Fixture(&c);
        assert_eq!(f.count("gists", "", []) + f.count("facts", "", []), 0);
        assert_eq!(f.count("kv_state", "namespace = 'adaptive'", []), 0);
        assert_eq!(f.count("jobs", "state = 'running'", []), 1);
        let s = store_chunk(&mut c, job, &input, &ex, &[], "deterministic", 10).unwrap();
        assert_eq!((s.gists, s.facts, s.style_observations), (1, 1, Some(1)));
        assert!(matches!(s.traits[..], [(ref k, TraitDecision::Insert { .. })] if k == "location"));
        assert_eq!(crate::store::fixtures::Fixture(&c).count("jobs", "state = 'done'", []), 1);
        // The log row names the trait row it wrote, for a forget of this exchange.
        let logged = crate::store::InteractionLogRepo(&c).payload_field("memory_chunk", "trait_ids").unwrap();
        let porto: i64 = crate::store::TraitsRepo(&c).find("location").unwrap().unwrap().id;
        assert_eq!(logged, [Some(format!("[{porto}]"))]);
    }
}
