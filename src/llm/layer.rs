//! `Llm`: the one door to every model. Routing by role, a deadline per call,
//! bounded retries, the event stream, and validated structured output.

use super::schema::{extract_json, validate};
use super::{ChatRequest, Completion, LlmError, Message, Provider, Token};
use crate::config::{LlmSettings, Role};
use crate::events::{EngineEvent, EventBus};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

tokio::task_local! {
    /// Whom the model calls of the current task are for (see [`EngineEvent::LlmStart`]'s
    /// `origin`): set by the engine around a turn and by the worker loop around a job, so a
    /// token can be tied to the reply it belongs to while memory workers call models too.
    pub static ORIGIN: String;
}

/// The current task's origin, if one was set.
pub fn current_origin() -> Option<String> {
    ORIGIN.try_with(Clone::clone).ok()
}

/// The origin of a turn's calls.
pub fn exchange_origin(exchange_id: &str) -> String {
    format!("exchange:{exchange_id}")
}

/// Where a role's calls go.
#[derive(Clone)]
pub struct Route {
    pub provider: Arc<dyn Provider>,
    pub model: String,
    /// True for the built-in CPU models (shown as "built-in" in the UI).
    pub builtin: bool,
}

pub struct Llm {
    routes: HashMap<Role, Route>,
    bus: EventBus,
    settings: LlmSettings,
}

/// Repair rounds for structured output: the first answer plus this many retries
/// with the validation error fed back.
const MAX_REPAIRS: usize = 2;

impl Llm {
    pub fn new(bus: EventBus, settings: LlmSettings, routes: impl IntoIterator<Item = (Role, Route)>) -> Llm {
        Llm { routes: routes.into_iter().collect(), bus, settings }
    }

    pub fn route(&self, role: Role) -> Option<&Route> {
        self.routes.get(&role)
    }

    /// "ollama/qwen3:8b" or "local/smollm2-135m-instruct (built-in)".
    pub fn describe(&self, role: Role) -> String {
        match self.routes.get(&role) {
            Some(r) if r.builtin => format!("{}/{} (built-in)", r.provider.name(), r.model),
            Some(r) => format!("{}/{}", r.provider.name(), r.model),
            None => "none".into(),
        }
    }

    pub fn settings(&self) -> &LlmSettings {
        &self.settings
    }

    /// Whether triage and the router's tie-breaker ask the lightweight model (`[llm] triage`;
    /// `auto` means yes unless the lightweight role is the built-in model).
    pub fn pre_routing_uses_model(&self) -> bool {
        self.settings.triage.asks_model(self.lightweight_builtin())
    }

    /// Whether the memory workers ask the lightweight model to extract (`[llm]
    /// memory_extraction`, same rule as [`Llm::pre_routing_uses_model`]).
    pub fn memory_uses_model(&self) -> bool {
        self.settings.memory_extraction.asks_model(self.lightweight_builtin())
    }

    /// Whether the post-action critic asks the lightweight model (`[llm] critic`, same rule).
    pub fn critic_uses_model(&self) -> bool {
        self.settings.critic.asks_model(self.lightweight_builtin())
    }

    /// Whether the concept graph's v2 router asks the lightweight model (`[llm] graph_router`,
    /// same rule).
    pub fn graph_router_uses_model(&self) -> bool {
        self.settings.graph_router.asks_model(self.lightweight_builtin())
    }

    /// A missing lightweight route counts as built-in: `auto` then stays deterministic.
    fn lightweight_builtin(&self) -> bool {
        self.routes.get(&Role::Lightweight).is_none_or(|r| r.builtin)
    }

    /// A chat call with the configured request timeout.
    pub async fn chat(
        &self,
        role: Role,
        req: &ChatRequest,
        on_token: &mut (dyn FnMut(&Token) + Send),
        cancel: &CancellationToken,
    ) -> Result<Completion, LlmError> {
        let timeout = Duration::from_millis(self.settings.request_timeout_ms);
        self.chat_within(role, req, timeout, on_token, cancel).await
    }

    /// A chat call that must finish within `timeout`, retries included. Retries
    /// happen only for transient failures and only while nothing has been streamed
    /// (a retry after tokens reached the user would show them twice).
    pub async fn chat_within(
        &self,
        role: Role,
        req: &ChatRequest,
        timeout: Duration,
        on_token: &mut (dyn FnMut(&Token) + Send),
        cancel: &CancellationToken,
    ) -> Result<Completion, LlmError> {
        let route = self.routes.get(&role).ok_or_else(|| LlmError::ModelUnavailable {
            provider: "config".into(),
            model: role.as_str().into(),
            detail: "no model is assigned to this role".into(),
        })?;
        let provider = route.provider.name().to_string();
        let call_id = uuid::Uuid::now_v7().to_string();
        self.bus.emit(EngineEvent::LlmStart {
            call_id: call_id.clone(),
            role,
            provider: provider.clone(),
            model: route.model.clone(),
            prompt_chars: req.prompt_chars(),
            prompt_digest: prompt_digest(req),
            origin: current_origin(),
        });
        let started = Instant::now();
        let deadline = started + timeout;
        let mut attempt = 0;
        loop {
            let streamed = AtomicBool::new(false);
            let call_cancel = cancel.child_token();
            let mut sink = |t: Token| {
                streamed.store(true, Ordering::Relaxed);
                self.bus.emit(EngineEvent::LlmToken {
                    call_id: call_id.clone(),
                    text: t.text.clone(),
                    logprob: t.logprob,
                });
                on_token(&t);
            };
            let result = match tokio::time::timeout_at(
                deadline,
                route.provider.chat(&route.model, req, &mut sink, &call_cancel),
            )
            .await
            {
                Ok(r) => r,
                Err(_) => {
                    // Stop the backend too: a local generation thread keeps going otherwise.
                    call_cancel.cancel();
                    Err(LlmError::Timeout { provider: provider.clone(), ms: timeout.as_millis() as u64 })
                }
            };
            match result {
                Ok(c) => {
                    self.bus.emit(EngineEvent::LlmComplete { call_id: call_id.clone(), text: c.text.clone() });
                    self.bus.emit(EngineEvent::LlmCost {
                        call_id,
                        provider,
                        tokens_in: c.tokens_in,
                        tokens_out: c.tokens_out,
                        wall_ms: started.elapsed().as_millis() as u64,
                    });
                    return Ok(c);
                }
                Err(e) => {
                    let wait = retry_delay(attempt, &e, deadline.saturating_duration_since(Instant::now()));
                    let backoff = wait.unwrap_or_default();
                    let will_retry = e.is_retryable()
                        && !streamed.load(Ordering::Relaxed)
                        && attempt < self.settings.max_retries
                        && !cancel.is_cancelled()
                        && wait.is_some();
                    tracing::warn!(%provider, role = role.as_str(), attempt, will_retry, "model call failed: {e}");
                    self.explain_once(&e);
                    self.bus.emit(EngineEvent::LlmFailed {
                        call_id: call_id.clone(),
                        error: e.to_string(),
                        will_retry,
                    });
                    if !will_retry {
                        return Err(e);
                    }
                    attempt += 1;
                    tokio::select! {
                        _ = tokio::time::sleep(backoff) => {}
                        _ = cancel.cancelled() => return Err(LlmError::Cancelled),
                    }
                }
            }
        }
    }

    /// A refused key is worth a status line the first time (the error then names the config
    /// line the key comes from); later refusals only fail their calls.
    fn explain_once(&self, e: &LlmError) {
        if let LlmError::Auth { hint, .. } = e
            && !hint.is_empty()
        {
            self.bus.notice(crate::events::NoticeLevel::Warn, e.to_string());
        }
    }

    /// A structured call: the reply must be a JSON object valid against `schema`.
    /// An invalid reply is shown its error and asked again (bounded); the final
    /// failure is `LlmError::InvalidOutput`, on which callers take their fallback.
    pub async fn structured(
        &self,
        role: Role,
        req: &ChatRequest,
        schema: &Value,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<Value, LlmError> {
        let deadline = Instant::now() + timeout;
        let mut req = req.clone();
        let mut last = (String::new(), String::new());
        for _ in 0..=MAX_REPAIRS {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            let c = self.chat_within(role, &req, left, &mut |_| {}, cancel).await?;
            match extract_json(&c.text).and_then(|v| validate(&v, schema).map(|()| v)) {
                Ok(v) => return Ok(v),
                Err(reason) => {
                    req.messages.push(Message::assistant(c.text.clone()));
                    req.messages.push(Message::user(format!(
                        "That reply was not usable: {reason}. Answer again with only the JSON object."
                    )));
                    last = (reason, c.text);
                }
            }
        }
        let what = match &req.format {
            super::ResponseFormat::JsonSchema { name, .. } => format!("`{name}` JSON"),
            _ => "JSON".into(),
        };
        Err(LlmError::InvalidOutput { what, detail: last.0, raw: last.1 })
    }

    /// Let `role`'s backend decode the start of a coming prompt in idle time
    /// ([`Provider::prefill`]). Nothing is generated and nothing answers a call, so it is not
    /// reported as one; a failure only costs the next call its head start.
    pub async fn prefill(&self, role: Role, req: &ChatRequest) {
        let Some(route) = self.routes.get(&role) else { return };
        if let Err(e) = route.provider.prefill(&route.model, req).await {
            tracing::debug!("prefill for {} skipped: {}", role.as_str(), crate::describe(&e));
        }
    }

    /// Embed a batch with the embedding role's model. Reported like a chat call (start, then
    /// the vectors or the failure, then the cost) so a session log can answer it on a rerun.
    pub async fn embed(&self, inputs: &[String]) -> Result<Vec<Vec<f32>>, LlmError> {
        let route = self.routes.get(&Role::Embedding).ok_or_else(|| LlmError::ModelUnavailable {
            provider: "config".into(),
            model: "embedding".into(),
            detail: "no model is assigned to the embedding role".into(),
        })?;
        let provider = route.provider.name().to_string();
        let call_id = uuid::Uuid::now_v7().to_string();
        self.bus.emit(EngineEvent::LlmStart {
            call_id: call_id.clone(),
            role: Role::Embedding,
            provider: provider.clone(),
            model: route.model.clone(),
            prompt_chars: inputs.iter().map(String::len).sum(),
            prompt_digest: embed_digest(inputs),
            origin: current_origin(),
        });
        let started = Instant::now();
        let timeout = Duration::from_millis(self.settings.request_timeout_ms);
        let result = match tokio::time::timeout(timeout, route.provider.embed(&route.model, inputs)).await {
            Ok(r) => r,
            Err(_) => Err(LlmError::Timeout { provider: provider.clone(), ms: timeout.as_millis() as u64 }),
        };
        match &result {
            Ok(vectors) => {
                self.bus.emit(EngineEvent::LlmEmbedded {
                    call_id: call_id.clone(),
                    vectors: crate::events::PackedVectors(vectors.clone()),
                });
                self.bus.emit(EngineEvent::LlmCost {
                    call_id,
                    provider,
                    tokens_in: 0,
                    tokens_out: 0,
                    wall_ms: started.elapsed().as_millis() as u64,
                });
            }
            Err(e) => {
                self.explain_once(e);
                self.bus.emit(EngineEvent::LlmFailed { call_id, error: e.to_string(), will_retry: false });
            }
        }
        result
    }
}

/// A short, stable fingerprint of a request's prompt.
pub fn prompt_digest(req: &ChatRequest) -> String {
    let mut h = Sha256::new();
    for m in &req.messages {
        h.update(format!("{:?}\u{1f}", m.role).as_bytes());
        h.update(m.content.as_bytes());
        h.update([0x1e]);
    }
    h.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// The fingerprint of an embedding batch, in the same form as [`prompt_digest`].
pub fn embed_digest(inputs: &[String]) -> String {
    let mut h = Sha256::new();
    for text in inputs {
        h.update(text.as_bytes());
        h.update([0x1e]);
    }
    h.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// How long to wait before retry number `attempt + 1`, or `None` when that wait would reach
/// the call's deadline (`remaining`): a retry must finish inside the turn's time, never after.
/// Exponential from 200 ms, but never sooner than the server's `Retry-After` on a 429: an
/// earlier retry is only refused again and counts against the server's limit.
pub fn retry_delay(attempt: u32, error: &LlmError, remaining: Duration) -> Option<Duration> {
    let backoff = Duration::from_millis(200 << attempt.min(4));
    let wait = match error {
        LlmError::RateLimited { retry_after_s: Some(s), .. } => backoff.max(Duration::from_secs(*s)),
        _ => backoff,
    };
    (wait < remaining).then_some(wait)
}

#[cfg(test)]
mod retry_tests {
    use super::*;

    fn limited(retry_after_s: Option<u64>) -> LlmError {
        LlmError::RateLimited { provider: "p".into(), retry_after_s }
    }

    #[test]
    fn retry_after_sets_the_floor_of_the_wait() {
        let plenty = Duration::from_secs(30);
        assert_eq!(retry_delay(0, &limited(Some(1)), plenty), Some(Duration::from_secs(1)));
        assert_eq!(retry_delay(0, &limited(None), plenty), Some(Duration::from_millis(200)));
        // The exponential backoff still wins when it is the longer wait.
        assert_eq!(retry_delay(3, &limited(Some(1)), plenty), Some(Duration::from_millis(1600)));
    }

    #[test]
    fn a_wait_reaching_the_deadline_means_no_retry() {
        assert_eq!(retry_delay(0, &limited(Some(5)), Duration::from_secs(5)), None);
        assert_eq!(retry_delay(0, &limited(Some(4)), Duration::from_secs(5)), Some(Duration::from_secs(4)));
        let refused = LlmError::Unreachable { provider: "p".into(), reason: "r".into() };
        assert_eq!(retry_delay(0, &refused, Duration::from_millis(100)), None);
    }
}
