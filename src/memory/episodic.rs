//! The episodic worker: each committed exchange becomes a durable episode.
//!
//! Phase D of a turn queues a job on [`ENCODE_QUEUE`] with `{thread_id, exchange_id, topic,
//! user_text, response, mode, created_at}`. The episodic worker (`super::workers`)
//! claims those jobs and [`process`] builds an [`EpisodeDraft`] with [`build_episode`]
//! (deterministic: no model), embeds its gist and
//! writes the `episodes` row, its `episode_vec` row and the job's completion in one
//! transaction, so a crash either loses nothing or leaves the job `running`, which
//! `JobsRepo::recover_interrupted` requeues at the next start.
//!
//! A failed embedding does not lose the episode: it is stored without a vector (still found
//! by full-text and keyword recall) and the failure is logged. A failed write is recorded
//! with `JobsRepo::fail` and retried later, up to the job's bounded attempts.
//!
//! ## Salience (docs/cognition.md §9.2)
//!
//! Three factors, each 0–3, read from the user's message:
//! - novelty: 1 for ≥ 4 content words, 2 for ≥ 10; +1 for a specific detail (a number, or a
//!   capitalised word that does not start a sentence: a name or a place);
//! - emotional: one per distinct emotion word (at most 2), +1 for an exclamation mark;
//! - commitment: one per distinct commitment phrase ("I will", "remind", "deadline", …).
//!
//! Then `s = 0.4·novelty/3 + 0.4·emotional/3 + 0.2·commitment/3`, ×1.25 when the exchange is
//! unresolved (the user asked a question, or the reply asked back: CLARIFY), clamped to
//! [0.1, 1.0]; the stored salience is `round(10·s)` in 1–10 and freshness starts at `s`.

use crate::llm::Llm;
use crate::store::{
    Db, ENCODE_QUEUE, EpisodesRepo, Job, JobState, JobsRepo, NewEpisode, StoreError, VecTable, VectorRepo, now_ts,
};
use crate::text::clip::clip;
use crate::text::{has_any, is_content_word, normalize, words};
use rusqlite::Connection;
use serde::Serialize;
use serde_json::{Value, json};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How long the worker sleeps when the queue is empty (a committed turn wakes it sooner).
pub const POLL: Duration = Duration::from_millis(500);
/// A failed write is retried after this many seconds (while attempts remain).
pub const RETRY_S: i64 = 30;
/// The user's statement is kept up to this many characters.
pub const MAX_USER_CHARS: usize = 300;
/// The reply's first sentence is kept up to this many characters.
pub const MAX_REPLY_CHARS: usize = 200;

/// The salience inputs (docs/cognition.md §9.2), stored as the episode's `salience_factors`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SalienceFactors {
    pub novelty: u8,
    pub emotional: u8,
    pub commitment: u8,
    pub unresolved: bool,
}

impl SalienceFactors {
    /// `s` on 0.1–1.0 (see the module docs).
    pub fn score(&self) -> f64 {
        let s = 0.4 * f64::from(self.novelty) / 3.0
            + 0.4 * f64::from(self.emotional) / 3.0
            + 0.2 * f64::from(self.commitment) / 3.0;
        let s = if self.unresolved { s * 1.25 } else { s };
        s.clamp(0.1, 1.0)
    }

    /// The stored integer salience, 1–10.
    pub fn salience(&self) -> u8 {
        ((10.0 * self.score()).round() as u8).clamp(1, 10)
    }
}

/// One exchange, ready to be stored as an episode.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EpisodeDraft {
    pub thread_id: Option<String>,
    pub exchange_id: Option<String>,
    pub topic: Option<String>,
    /// The user's statement, plus the reply's first sentence.
    pub gist: String,
    /// The delivered mode (`RESPOND`, `ACT`, …).
    pub action: Option<String>,
    /// The reply's first sentence, if there was a reply.
    pub outcome: Option<String>,
    /// `{type, direction}` (docs/cognition.md §9.2 vocabularies).
    pub intent: Value,
    /// `{situational, conversational, constraints}`.
    pub context: Value,
    /// `{type, valence, intensity, arc}` when the message carries an emotion word.
    pub emotion: Option<Value>,
    pub factors: SalienceFactors,
    /// 1–10.
    pub salience: u8,
    /// Starts equal to salience, on 0–1.
    pub freshness: f64,
    pub open_loops: Vec<String>,
    pub created_at: i64,
}

const COMMITMENT: &[&str] = &[
    "i will",
    "i'll",
    "i am going to",
    "i'm going to",
    "i promise",
    "i have to",
    "i need to",
    "i must",
    "i plan to",
    "we will",
    "we'll",
    "remind",
    "reminder",
    "deadline",
    "due",
    "appointment",
    "don't forget",
    "dont forget",
    "by tomorrow",
    "next week",
];

const POSITIVE: &[&str] = &[
    "love",
    "happy",
    "excited",
    "thrilled",
    "glad",
    "proud",
    "grateful",
    "relieved",
    "amazing",
    "wonderful",
    "delighted",
];
const NEGATIVE: &[&str] = &[
    "hate",
    "sad",
    "angry",
    "upset",
    "worried",
    "anxious",
    "nervous",
    "scared",
    "afraid",
    "frustrated",
    "stressed",
    "lonely",
    "tired",
    "exhausted",
    "overwhelmed",
    "sorry",
    "miss",
    "hurt",
    "furious",
    "depressed",
    "terrible",
    "awful",
    "disappointed",
    "annoyed",
    "heartbroken",
    "afraid",
];
const PROBLEM: &[&str] = &["error", "bug", "broken", "fix", "crash", "crashes", "fails", "failing", "issue", "problem"];
const WH: &[&str] =
    &["what", "why", "how", "when", "where", "who", "which", "should", "can", "could", "is", "are", "do"];

/// The first sentence of `text` (up to and including its terminator, or the first line).
pub fn first_sentence(text: &str) -> &str {
    let t = text.trim();
    let mut end = t.len();
    for (i, ch) in t.char_indices() {
        if ch == '\n' {
            end = i;
            break;
        }
        if matches!(ch, '.' | '!' | '?') {
            let next = t[i + ch.len_utf8()..].chars().next();
            if next.is_none_or(char::is_whitespace) {
                end = i + ch.len_utf8();
                break;
            }
        }
    }
    t[..end].trim()
}

/// The salience factors of a user message (and whether the reply asked back).
pub fn salience_factors(user_text: &str, clarified: bool) -> SalienceFactors {
    let lower = normalize(user_text);
    let ws = words(&lower);
    let content = ws.iter().filter(|w| is_content_word(w)).count();
    let detail = user_text.chars().any(|c| c.is_ascii_digit()) || has_proper_noun(user_text);
    let novelty = (u8::from(content >= 4) + u8::from(content >= 10) + u8::from(detail)).min(3);
    let emotions = POSITIVE.iter().chain(NEGATIVE).filter(|e| ws.contains(e)).count().min(2) as u8;
    let emotional = (emotions + u8::from(user_text.contains('!'))).min(3);
    let commitment = COMMITMENT.iter().filter(|p| has_any(&ws, &[p])).count().min(3) as u8;
    SalienceFactors { novelty, emotional, commitment, unresolved: is_question(&ws, user_text) || clarified }
}

fn is_question(ws: &[&str], text: &str) -> bool {
    text.contains('?') || ws.first().is_some_and(|w| WH.contains(w) && ws.len() > 2)
}

/// A capitalised word that does not start a sentence and is not "I" ("I'm", "I'll"…).
fn has_proper_noun(text: &str) -> bool {
    let mut sentence_start = true;
    for token in text.split_whitespace() {
        let word = token.trim_matches(|c: char| !c.is_alphanumeric());
        let capital = word.chars().next().is_some_and(char::is_uppercase);
        let pronoun = word == "I" || word.starts_with("I'") || word.starts_with("I\u{2019}");
        if capital && !sentence_start && !pronoun && word.chars().count() > 1 {
            return true;
        }
        sentence_start = token.ends_with(['.', '!', '?', ':']);
    }
    false
}

/// Build the episode of one exchange from its encode job's payload. `None` for exchanges
/// with nothing to remember: mode IGNORE, or an empty user message.
pub fn build_episode(payload: &Value) -> Option<EpisodeDraft> {
    let mode = payload["mode"].as_str().unwrap_or("");
    let user = payload["user_text"].as_str().unwrap_or("").trim();
    if mode.eq_ignore_ascii_case("IGNORE") || user.is_empty() {
        return None;
    }
    let reply = payload["response"].as_str().unwrap_or("");
    let outcome = Some(clip(first_sentence(reply), MAX_REPLY_CHARS)).filter(|s| !s.is_empty());
    let user_clip = clip(user, MAX_USER_CHARS);
    let gist = match &outcome {
        Some(first) => format!("{user_clip} — reply: {first}"),
        None => user_clip.clone(),
    };
    let factors = salience_factors(user, mode.eq_ignore_ascii_case("CLARIFY"));
    let lower = normalize(user);
    let ws = words(&lower);
    let question = is_question(&ws, user);
    let (kind, direction) = if factors.commitment > 0 {
        ("planning", "decision-making")
    } else if question && ws.iter().any(|w| PROBLEM.contains(w)) {
        ("problem-solving", "narrowing")
    } else if question {
        ("exploration", "open-ended")
    } else if factors.emotional > 0 {
        ("reflection", "sense-making")
    } else {
        ("exploration", "sense-making")
    };
    let emotion = POSITIVE.iter().chain(NEGATIVE).find(|e| ws.contains(e)).map(|e| {
        let valence = if POSITIVE.contains(e) { "positive" } else { "negative" };
        json!({"type": e, "valence": valence, "intensity": f64::from(factors.emotional) / 3.0, "arc": "stable"})
    });
    let short = clip(user, 120);
    let mut open_loops = Vec::new();
    if question {
        open_loops.push(format!("question: {short}"));
    }
    if factors.commitment > 0 {
        open_loops.push(format!("commitment: {short}"));
    }
    let topic = payload["topic"].as_str().map(str::to_string);
    let score = factors.score();
    Some(EpisodeDraft {
        thread_id: payload["thread_id"].as_str().map(str::to_string),
        exchange_id: payload["exchange_id"].as_str().map(str::to_string),
        context: json!({"situational": "", "conversational": topic.clone().unwrap_or_default(), "constraints": []}),
        topic,
        gist,
        action: Some(mode.to_ascii_uppercase()).filter(|m| !m.is_empty()),
        outcome,
        intent: json!({"type": kind, "direction": direction}),
        emotion,
        salience: factors.salience(),
        freshness: score,
        factors,
        open_loops,
        created_at: payload["created_at"].as_i64().unwrap_or_else(now_ts),
    })
}

/// Insert `draft` (and its vector, when given) into `episodes` / `episode_vec`. Runs in the
/// caller's transaction, if any. Returns the episode id.
pub fn insert_episode(c: &Connection, draft: &EpisodeDraft, embedding: Option<&[f32]>) -> Result<i64, StoreError> {
    let (intent, context) = (draft.intent.to_string(), draft.context.to_string());
    let emotion = draft.emotion.as_ref().map(Value::to_string);
    let (factors, open_loops) = (serde_json::to_string(&draft.factors)?, serde_json::to_string(&draft.open_loops)?);
    let id = EpisodesRepo(c).insert(&NewEpisode {
        intent: &intent,
        context: &context,
        action: draft.action.as_deref(),
        emotion: emotion.as_deref(),
        outcome: draft.outcome.as_deref(),
        gist: &draft.gist,
        salience: draft.salience,
        freshness: draft.freshness,
        topic: draft.topic.as_deref(),
        thread_id: draft.thread_id.as_deref(),
        exchange_id: draft.exchange_id.as_deref(),
        created_at: draft.created_at,
        salience_factors: &factors,
        open_loops: &open_loops,
    })?;
    if let Some(v) = embedding {
        VectorRepo(c).upsert(VecTable::Episodes, id, v)?;
    }
    Ok(id)
}

/// Store the episode, queue semantic consolidation if its trigger fires
/// ([`super::semantic::maybe_enqueue`]) and complete the job, in one transaction. An exchange that already has
/// an episode (a job run twice) completes without a second row: returns `None`.
pub fn store_episode(
    c: &mut Connection,
    job_id: i64,
    draft: &EpisodeDraft,
    embedding: Option<&[f32]>,
) -> Result<Option<i64>, StoreError> {
    let tx = c.transaction()?;
    // The user asked to forget this exchange while its job waited: it is not learned again.
    if let Some(x) = &draft.exchange_id
        && crate::store::exchange_forgotten(&tx, x)?
    {
        JobsRepo(&tx).complete(job_id)?;
        tx.commit()?;
        return Ok(None);
    }
    let existing: Option<i64> = match &draft.exchange_id {
        Some(x) => EpisodesRepo(&tx).of_exchange(x)?,
        None => None,
    };
    let id = match existing {
        Some(_) => None,
        None => {
            let id = insert_episode(&tx, draft, embedding)?;
            super::semantic::maybe_enqueue(&tx, id, draft.salience, now_ts())?;
            Some(id)
        }
    };
    JobsRepo(&tx).complete(job_id)?;
    tx.commit()?;
    Ok(id)
}

/// What one pass of the worker did.
#[derive(Debug, Clone, PartialEq)]
pub enum Processed {
    /// The episode was written; `embed_error` says why it has no vector, if it has none.
    Stored { job_id: i64, episode_id: i64, embed_error: Option<String> },
    /// Nothing to remember (IGNORE, empty, or already stored); the job is done.
    Skipped { job_id: i64, reason: &'static str },
    /// The write failed; `permanent` when the job is out of attempts.
    Failed { job_id: i64, error: String, permanent: bool },
}

/// Claim and process one encode job. `Ok(None)` when the queue is empty or `shutdown` fired
/// mid-job (the job then stays `running`, and is requeued at the next start).
pub async fn process_next(db: &Db, llm: &Llm, shutdown: &CancellationToken) -> Result<Option<Processed>, StoreError> {
    crate::background::claim_and_run(db, ENCODE_QUEUE, |job| process(db, llm, job, shutdown)).await
}

/// Process one claimed encode job (see [`process_next`]); `Ok(None)` when `shutdown` fired.
pub async fn process(
    db: &Db,
    llm: &Llm,
    job: Job,
    shutdown: &CancellationToken,
) -> Result<Option<Processed>, StoreError> {
    let job_id = job.id;
    let Some(draft) = build_episode(&job.payload) else {
        db.call(move |c| JobsRepo(c).complete(job_id)).await?;
        return Ok(Some(Processed::Skipped { job_id, reason: "nothing to remember" }));
    };
    let draft = super::episode_model::write(db, llm, draft, &job.payload, shutdown).await;
    if shutdown.is_cancelled() {
        return Ok(None);
    }
    let embedded = tokio::select! {
        r = llm.embed(std::slice::from_ref(&draft.gist)) => r,
        _ = shutdown.cancelled() => return Ok(None),
    };
    let dim = db.call(|c| crate::store::embedding_dim(c)).await?;
    let (embedding, embed_error) = match embedded {
        Ok(mut v) if v.len() == 1 && v[0].len() == dim => (Some(v.remove(0)), None),
        Ok(v) => {
            let got = v.first().map_or(0, Vec::len);
            (None, Some(format!("the embedding model returned {got} dimensions, the vector tables hold {dim}")))
        }
        Err(e) => (None, Some(crate::describe(&e))),
    };
    if let Some(error) = &embed_error {
        tracing::warn!(job_id, exchange_id = ?draft.exchange_id, "episode stored without a vector: {error}");
    }
    let stored = db.call(move |c| store_episode(c, job_id, &draft, embedding.as_deref())).await;
    match stored {
        Ok(Some(episode_id)) => Ok(Some(Processed::Stored { job_id, episode_id, embed_error })),
        Ok(None) => Ok(Some(Processed::Skipped { job_id, reason: "already stored" })),
        Err(StoreError::Closed) => Err(StoreError::Closed),
        Err(e) => {
            let error = crate::describe(&e);
            tracing::warn!(job_id, "could not store the episode: {error}");
            let msg = error.clone();
            db.call(move |c| JobsRepo(c).fail(job_id, &msg, RETRY_S)).await?;
            Ok(Some(Processed::Failed { job_id, error, permanent: job.attempts >= job.max_attempts }))
        }
    }
}

/// The state of `exchange_id`'s encode job, or `None` when the exchange queued none.
pub fn encode_state(c: &Connection, exchange_id: &str) -> Result<Option<JobState>, StoreError> {
    JobsRepo(c).exchange_state(ENCODE_QUEUE, exchange_id)
}

/// Wait until `exchange_id`'s encode job is `done` or `failed`, at most `cap`. Returns its
/// last state (`None`: the exchange had nothing to encode).
pub async fn wait_for_encoding(db: &Db, exchange_id: &str, cap: Duration) -> Result<Option<JobState>, StoreError> {
    crate::store::wait_for_exchange_job(db, ENCODE_QUEUE, exchange_id, cap).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload(user: &str, reply: &str, mode: &str) -> Value {
        json!({"thread_id": "t", "exchange_id": "x1", "topic": "travel", "user_text": user,
               "response": reply, "mode": mode, "created_at": 1_800_000_000})
    }

    #[test]
    fn gist_is_the_statement_plus_the_first_sentence() {
        let d = build_episode(&payload(
            "  I'm flying to Lisbon on May 3rd.  ",
            "Have a great trip! Lisbon is lovely in May.",
            "RESPOND",
        ))
        .unwrap();
        assert_eq!(d.gist, "I'm flying to Lisbon on May 3rd. — reply: Have a great trip!");
        assert_eq!(d.outcome.as_deref(), Some("Have a great trip!"));
        assert_eq!(d.action.as_deref(), Some("RESPOND"));
        assert_eq!(d.topic.as_deref(), Some("travel"));
        assert_eq!(d.exchange_id.as_deref(), Some("x1"));
        assert_eq!(d.created_at, 1_800_000_000);
        let long = "word ".repeat(100);
        let d = build_episode(&payload(&long, "", "ACKNOWLEDGE")).unwrap();
        assert_eq!(d.gist.chars().count(), MAX_USER_CHARS, "no reply: the statement alone, clipped");
        assert!(d.gist.ends_with('…'));
    }

    #[test]
    fn ignore_and_empty_are_skipped() {
        assert!(build_episode(&payload("hmm", "", "IGNORE")).is_none());
        assert!(build_episode(&payload("   ", "ok", "RESPOND")).is_none());
        assert!(build_episode(&json!({})).is_none());
    }

    #[test]
    fn salience_formula() {
        // Plain small talk: low.
        let plain = salience_factors("nice weather", false);
        assert_eq!(plain, SalienceFactors { novelty: 0, emotional: 0, commitment: 0, unresolved: false });
        assert_eq!(plain.salience(), 1, "clamped to 0.1");
        // A commitment with a deadline, a name and a number.
        let f = salience_factors("I will send Maria the quarterly report by the deadline on the 14th", false);
        assert_eq!(f.commitment, 2, "{f:?}");
        assert_eq!(f.novelty, 2, "{f:?}");
        let s = 0.4 * 2.0 / 3.0 + 0.2 * 2.0 / 3.0;
        assert!((f.score() - s).abs() < 1e-12);
        assert_eq!(f.salience(), 4);
        // Emotion and an exclamation.
        let e = salience_factors("I'm so worried and stressed about the exam!", false);
        assert_eq!(e.emotional, 3);
        // A question is unresolved: ×1.25.
        let q = salience_factors("Why is my build broken again after the upgrade?", false);
        assert!(q.unresolved);
        let base = SalienceFactors { unresolved: false, ..q };
        assert!((q.score() - (base.score() * 1.25).min(1.0)).abs() < 1e-12);
        // Everything at the top: clamped to 1.0, salience 10.
        let top = SalienceFactors { novelty: 3, emotional: 3, commitment: 3, unresolved: true };
        assert_eq!(top.score(), 1.0);
        assert_eq!(top.salience(), 10);
    }

    #[test]
    fn intent_and_open_loops() {
        let d = build_episode(&payload("Remind me to call the dentist tomorrow", "Done.", "ACT")).unwrap();
        assert_eq!(d.intent, json!({"type": "planning", "direction": "decision-making"}));
        assert!(d.open_loops.iter().any(|l| l.starts_with("commitment:")));
        let d =
            build_episode(&payload("Why does the build crash with this error?", "Let me look.", "RESPOND")).unwrap();
        assert_eq!(d.intent["type"], "problem-solving");
        assert!(d.factors.unresolved);
        let d = build_episode(&payload("I feel so happy about the new job", "Congratulations!", "RESPOND")).unwrap();
        assert_eq!(d.intent["type"], "reflection");
        assert_eq!(d.emotion.as_ref().unwrap()["valence"], "positive");
        let d = build_episode(&payload("tell me more", "Which part?", "CLARIFY")).unwrap();
        assert!(d.factors.unresolved, "the reply asked back");
        assert!((d.freshness - d.factors.score()).abs() < 1e-12);
    }

    #[test]
    fn first_sentence_cases() {
        assert_eq!(first_sentence("One. Two."), "One.");
        assert_eq!(first_sentence("Version 1.5 is out. Yes."), "Version 1.5 is out.");
        assert_eq!(first_sentence("line one\nline two"), "line one");
        assert_eq!(first_sentence("no terminator"), "no terminator");
        assert_eq!(first_sentence(""), "");
    }

    #[test]
    fn store_is_atomic_and_idempotent() {
        let mut c = crate::store::open_in_memory().unwrap();
        let p = payload("I will visit Porto in June", "Sounds lovely.", "RESPOND");
        let job = JobsRepo(&c).enqueue(ENCODE_QUEUE, &p, 3).unwrap();
        JobsRepo(&c).claim(ENCODE_QUEUE).unwrap().unwrap();
        let d = build_episode(&p).unwrap();
        let v = vec![1.0 / (crate::store::EMBEDDING_DIM as f32).sqrt(); crate::store::EMBEDDING_DIM];
        let id = store_episode(&mut c, job, &d, Some(&v)).unwrap().unwrap();
        assert_eq!(encode_state(&c, "x1").unwrap(), Some(JobState::Done));
        assert!(VectorRepo(&c).contains(VecTable::Episodes, id).unwrap());
        assert_eq!(store_episode(&mut c, job, &d, Some(&v)).unwrap(), None, "a second run adds no row");
        // A bad vector rolls the whole write back: no episode, the job stays running.
        let job2 = JobsRepo(&c).enqueue(ENCODE_QUEUE, &payload("x", "", "RESPOND"), 3).unwrap();
        JobsRepo(&c).claim(ENCODE_QUEUE).unwrap().unwrap();
        let mut d2 = build_episode(&payload("another thing entirely", "", "RESPOND")).unwrap();
        d2.exchange_id = Some("x2".into());
        assert!(store_episode(&mut c, job2, &d2, Some(&[0.5; 8])).is_err());
        assert_eq!(crate::store::fixtures::Fixture(&c).count("episodes", "", []), 1);
        let state: JobState = crate::store::fixtures::Fixture(&c).value("jobs", "state", "id = ?1", [job2]);
        assert_eq!(state, JobState::Running);
        assert_eq!(encode_state(&c, "nope").unwrap(), None);
    }
}
