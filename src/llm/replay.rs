//! A provider that answers from a session log instead of a model, for `--replay --rerun`.
//!
//! Every recorded call (one `llm_start` and what followed under its `call_id`) becomes a
//! [`Recording`]. A call is answered by the first unused recording of its role with the same
//! prompt digest (robust to background calls interleaving differently this time); failing that,
//! by the next unused recording of its role within the same turn (the prompt changed because
//! something upstream did, and order is all that is left to match on); failing that, it fails
//! the way an unreachable model would, so the engine takes the same fallback a live failure
//! gets. [`ReplayStats`] counts each kind, so a rerun says how faithful it was.

use super::layer::embed_digest;
use super::{ChatRequest, Completion, FinishReason, LlmError, Provider, Token, prompt_digest};
use crate::config::Role;
use crate::events::EngineEvent;
use async_trait::async_trait;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio_util::sync::CancellationToken;

/// The provider name replayed calls report.
pub const REPLAY_PROVIDER: &str = "replay";

/// How a recorded call ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Text(String),
    Vectors(Vec<Vec<f32>>),
    /// The call failed for good; the recorded error text.
    Failed(String),
}

/// One recorded model call.
#[derive(Debug, Clone, PartialEq)]
pub struct Recording {
    pub role: Role,
    pub model: String,
    pub digest: String,
    /// Index of the user message it followed (0 before the first).
    pub turn: usize,
    pub tokens: Vec<Token>,
    pub tokens_in: u32,
    pub tokens_out: u32,
    pub outcome: Outcome,
}

/// How calls were answered: `exact` by role and prompt digest, `by_order` by role and order
/// within the turn, `missing` with no recording (failed as an unreachable model would).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ReplayStats {
    pub exact: u32,
    pub by_order: u32,
    pub missing: u32,
}

impl ReplayStats {
    /// What happened since `earlier` (a snapshot of the same book).
    pub fn since(&self, earlier: &ReplayStats) -> ReplayStats {
        ReplayStats {
            exact: self.exact.saturating_sub(earlier.exact),
            by_order: self.by_order.saturating_sub(earlier.by_order),
            missing: self.missing.saturating_sub(earlier.missing),
        }
    }
}

struct State {
    recordings: Vec<Recording>,
    used: Vec<bool>,
    turn: usize,
    stats: ReplayStats,
}

/// The recorded calls of one session, shared by the per-role providers.
pub struct ReplayBook {
    state: Mutex<State>,
}

impl ReplayBook {
    /// Collect the recorded calls from a session's events, in order. Calls that never finished
    /// (the session ended mid-call) are left out: there is nothing to answer with.
    pub fn from_events<'a>(events: impl IntoIterator<Item = &'a EngineEvent>) -> ReplayBook {
        let mut recordings: Vec<Option<Recording>> = Vec::new();
        let mut open: HashMap<String, usize> = HashMap::new();
        let mut finished: Vec<bool> = Vec::new();
        let mut turn = 0;
        for event in events {
            match event {
                EngineEvent::UserMessage { .. } => turn += 1,
                EngineEvent::LlmStart { call_id, role, model, prompt_digest, .. } => {
                    open.insert(call_id.clone(), recordings.len());
                    recordings.push(Some(Recording {
                        role: *role,
                        model: model.clone(),
                        digest: prompt_digest.clone(),
                        turn,
                        tokens: Vec::new(),
                        tokens_in: 0,
                        tokens_out: 0,
                        outcome: Outcome::Failed(String::new()),
                    }));
                    finished.push(false);
                }
                EngineEvent::LlmToken { call_id, text, logprob } => {
                    if let Some(r) = open.get(call_id).and_then(|&i| recordings[i].as_mut()) {
                        r.tokens.push(Token { text: text.clone(), logprob: *logprob });
                    }
                }
                EngineEvent::LlmComplete { call_id, text } => {
                    finish(&open, &mut recordings, &mut finished, call_id, Outcome::Text(text.clone()));
                }
                EngineEvent::LlmEmbedded { call_id, vectors } => {
                    finish(&open, &mut recordings, &mut finished, call_id, Outcome::Vectors(vectors.0.clone()));
                }
                EngineEvent::LlmFailed { call_id, error, will_retry: false } => {
                    finish(&open, &mut recordings, &mut finished, call_id, Outcome::Failed(error.clone()));
                }
                EngineEvent::LlmFailed { call_id, will_retry: true, .. } => {
                    // The retry streams afresh: drop what the failed attempt streamed.
                    if let Some(r) = open.get(call_id).and_then(|&i| recordings[i].as_mut()) {
                        r.tokens.clear();
                    }
                }
                EngineEvent::LlmCost { call_id, tokens_in, tokens_out, .. } => {
                    if let Some(r) = open.get(call_id).and_then(|&i| recordings[i].as_mut()) {
                        (r.tokens_in, r.tokens_out) = (*tokens_in, *tokens_out);
                    }
                }
                _ => {}
            }
        }
        let recordings: Vec<Recording> =
            recordings.into_iter().zip(finished).filter_map(|(r, done)| r.filter(|_| done)).collect();
        let used = vec![false; recordings.len()];
        ReplayBook { state: Mutex::new(State { recordings, used, turn: 0, stats: ReplayStats::default() }) }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere while holding the lock leaves the book usable: its data is plain.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The user message being rerun now (1-based, as the recordings count them).
    pub fn begin_turn(&self, turn: usize) {
        self.lock().turn = turn;
    }

    pub fn stats(&self) -> ReplayStats {
        self.lock().stats
    }

    pub fn len(&self) -> usize {
        self.lock().recordings.len()
    }

    /// Recordings no call has taken (yet): the rerun made fewer calls than the session did.
    pub fn unused(&self) -> usize {
        self.lock().used.iter().filter(|u| !**u).count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The model each role was recorded with (the first call's), for the replay routes.
    pub fn models(&self) -> HashMap<Role, String> {
        let mut out = HashMap::new();
        for r in &self.lock().recordings {
            out.entry(r.role).or_insert_with(|| r.model.clone());
        }
        out
    }

    /// Take the recording that answers a call of `role` with `digest`, if any: a chat call
    /// (`vectors` false) only takes text or failures, an embedding call only vectors or failures.
    pub fn take(&self, role: Role, digest: &str, vectors: bool) -> Option<Recording> {
        let mut s = self.lock();
        let State { recordings, used, turn, stats } = &mut *s;
        let kind_fits = |o: &Outcome| match o {
            Outcome::Text(_) => !vectors,
            Outcome::Vectors(_) => vectors,
            Outcome::Failed(_) => true,
        };
        let free = |i: &usize| !used[*i] && recordings[*i].role == role && kind_fits(&recordings[*i].outcome);
        let exact = (0..recordings.len()).find(|i| free(i) && recordings[*i].digest == digest);
        let found = match exact {
            Some(i) => {
                stats.exact += 1;
                Some(i)
            }
            None => {
                let i = (0..recordings.len()).find(|i| free(i) && recordings[*i].turn == *turn);
                if i.is_some() {
                    stats.by_order += 1;
                } else {
                    stats.missing += 1;
                }
                i
            }
        };
        found.map(|i| {
            used[i] = true;
            recordings[i].clone()
        })
    }
}

fn finish(
    open: &HashMap<String, usize>,
    recordings: &mut [Option<Recording>],
    finished: &mut [bool],
    call_id: &str,
    outcome: Outcome,
) {
    if let Some(&i) = open.get(call_id)
        && let Some(r) = recordings[i].as_mut()
    {
        r.outcome = outcome;
        finished[i] = true;
    }
}

/// One role's view of the book, as the `Llm` layer's provider for that role.
pub struct ReplayProvider {
    role: Role,
    book: Arc<ReplayBook>,
}

impl ReplayProvider {
    pub fn new(role: Role, book: Arc<ReplayBook>) -> ReplayProvider {
        ReplayProvider { role, book }
    }

    fn missing(&self, model: &str) -> LlmError {
        LlmError::ModelUnavailable {
            provider: REPLAY_PROVIDER.into(),
            model: model.into(),
            detail: NO_RECORDING.into(),
        }
    }
}

/// The detail of the error a rerun answers with when the log holds no output for a call.
pub const NO_RECORDING: &str = "the session log has no recorded output for this call";

/// True for a rerun's "no recording" answer. The model was never asked, so this says nothing
/// about whether the model works: the self-model must not count it as a failing role.
pub fn is_unrecorded(e: &LlmError) -> bool {
    matches!(e, LlmError::ModelUnavailable { provider, detail, .. } if provider == REPLAY_PROVIDER && detail == NO_RECORDING)
}

/// The recorded failure as an error of the same kind, so the engine names the same fallback.
/// Never a retryable kind: the recording already holds the outcome after any retries.
pub fn recorded_failure(error: &str) -> LlmError {
    let provider = REPLAY_PROVIDER.to_string();
    if error.contains("did not answer within") {
        LlmError::Timeout { provider, ms: 0 }
    } else if error.contains("cancelled") {
        LlmError::Cancelled
    } else if error.contains("malformed response") || error.contains("empty reply") {
        LlmError::Empty { provider }
    } else if error.contains("unreachable") || error.contains("is not available") {
        LlmError::ModelUnavailable { provider, model: String::new(), detail: format!("recorded: {error}") }
    } else {
        LlmError::Local(format!("recorded failure: {error}"))
    }
}

#[async_trait]
impl Provider for ReplayProvider {
    fn name(&self) -> &str {
        REPLAY_PROVIDER
    }

    async fn chat(
        &self,
        model: &str,
        req: &ChatRequest,
        on_token: &mut (dyn FnMut(Token) + Send),
        cancel: &CancellationToken,
    ) -> Result<Completion, LlmError> {
        if cancel.is_cancelled() {
            return Err(LlmError::Cancelled);
        }
        let Some(rec) = self.book.take(self.role, &prompt_digest(req), false) else {
            return Err(self.missing(model));
        };
        let text = match rec.outcome {
            Outcome::Text(text) => text,
            Outcome::Failed(error) => return Err(recorded_failure(&error)),
            Outcome::Vectors(_) => return Err(self.missing(model)),
        };
        if rec.tokens.is_empty() {
            on_token(Token { text: text.clone(), logprob: None });
        }
        for t in rec.tokens {
            on_token(t);
        }
        Ok(Completion { text, tokens_in: rec.tokens_in, tokens_out: rec.tokens_out, finish: FinishReason::Stop })
    }

    async fn embed(&self, model: &str, inputs: &[String]) -> Result<Vec<Vec<f32>>, LlmError> {
        let Some(rec) = self.book.take(self.role, &embed_digest(inputs), true) else {
            return Err(self.missing(model));
        };
        match rec.outcome {
            Outcome::Vectors(v) if v.len() == inputs.len() => Ok(v),
            Outcome::Failed(error) => Err(recorded_failure(&error)),
            // A batch of another size cannot answer this one.
            _ => Err(self.missing(model)),
        }
    }
}

#[cfg(test)]
mod tests;
