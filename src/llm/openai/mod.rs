//! Any OpenAI-compatible HTTP backend: OpenAI itself, Ollama, llama.cpp's server, vLLM, LM Studio.
//!
//! async-openai supplies the client, the SSE decoding and the endpoints, but two of its
//! defaults are replaced:
//! - Requests and replies go through its `byot` calls with our own lenient serde shapes.
//!   Local servers omit or null fields its typed structs require (Ollama leaves out
//!   `top_logprobs`, for one), and a single chunk that fails to parse would sink a reply.
//! - The HTTP transport is ours, installed as a tower service. The default one retries 429,
//!   5xx and connect failures with backoff, but retries belong to the `Llm` layer, which
//!   must see a 429 at once. Ours also keeps the status of every non-2xx answer: the
//!   default drops it when a 4xx body is not OpenAI's exact error shape, and llama.cpp's
//!   and vLLM's are not.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_openai::Client;
use async_openai::config::OpenAIConfig;
use async_openai::error::{ApiError, ApiErrorResponse, OpenAIError};
use async_openai::middleware::HttpRequestFactory;
use async_trait::async_trait;
use futures::StreamExt;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

mod http;

use crate::llm::Provider;
use crate::llm::types::{ChatRequest, ChatRole, Completion, FinishReason, LlmError, ResponseFormat, Token};
pub use http::list_models;
use http::{error_message, estimate_tokens, innermost_cause, names_missing_model, request_body, send};

/// Long enough for a slow LAN, short enough that a blackholed host fails well inside
/// the `Llm` layer's overall timeout with a useful "unreachable" instead of a bare timeout.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// Error details end up on one UI line.
const DETAIL_CHARS: usize = 200;

pub struct OpenAiProvider {
    name: String,
    base_url: String,
    client: Client<OpenAIConfig>,
    /// Kept only to scrub it out of error details, since some servers echo the key back.
    api_key: Option<String>,
    /// Set once the server has refused `logprobs`, so later calls don't pay a failed round trip.
    no_logprobs: AtomicBool,
    /// Set once the server has refused `json_schema`; later calls ask for `json_object`.
    no_json_schema: AtomicBool,
    /// Where the key comes from ("config.toml:4: api_key_env = …"), for the first 401.
    key_origin: Option<String>,
    /// Set once a refused key has been explained, so the explanation is not repeated per turn.
    auth_explained: AtomicBool,
}

impl fmt::Debug for OpenAiProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiProvider")
            .field("name", &self.name)
            .field("base_url", &self.base_url)
            .field("has_key", &self.api_key.is_some())
            .finish_non_exhaustive()
    }
}

impl OpenAiProvider {
    /// `base_url` includes the version segment, e.g. `http://localhost:11434/v1`.
    pub fn new(name: &str, base_url: &str, api_key: Option<String>) -> OpenAiProvider {
        let base_url = base_url.trim_end_matches('/').to_string();
        // A key read from a file often carries a newline; async-openai panics building
        // the header from a value HTTP can't carry, so such a key is dropped instead and
        // the server's 401 explains the rest.
        let api_key = api_key.map(|k| k.trim().to_string()).filter(|k| !k.is_empty()).filter(|k| {
            let valid = reqwest::header::HeaderValue::from_str(&format!("Bearer {k}")).is_ok();
            if !valid {
                tracing::warn!(
                    provider = name,
                    "API key contains characters not allowed in an HTTP header; sending none"
                );
            }
            valid
        });
        let has_key = api_key.is_some();

        let http = reqwest::Client::builder().connect_timeout(CONNECT_TIMEOUT).build().unwrap_or_default();
        // `OpenAIConfig::new` reads OPENAI_* variables; each is overridden so that a key or
        // organisation meant for OpenAI never reaches a local server.
        let config = OpenAIConfig::new()
            .with_api_base(base_url.clone())
            .with_api_key(api_key.clone().unwrap_or_default())
            .with_org_id("")
            .with_project_id("");
        let transport = http.clone();
        let client = Client::build(http, config)
            .with_http_service(tower::service_fn(move |factory| send(transport.clone(), factory, has_key)));

        OpenAiProvider {
            name: name.to_string(),
            base_url,
            client,
            api_key,
            no_logprobs: AtomicBool::new(false),
            no_json_schema: AtomicBool::new(false),
            key_origin: None,
            auth_explained: AtomicBool::new(false),
        }
    }

    /// Name the config line the key comes from, quoted the first time the server refuses it.
    pub fn with_key_origin(mut self, origin: String) -> OpenAiProvider {
        self.key_origin = Some(origin);
        self
    }

    /// The explanation for a refused key: in full the first time, empty after.
    fn auth_hint(&self) -> String {
        if self.auth_explained.swap(true, Ordering::Relaxed) {
            return String::new();
        }
        let hint = match &self.key_origin {
            Some(origin) => format!(": the key is wrong or missing; it comes from {origin}"),
            None => ": the key is wrong or missing; check the key variable named in the config".to_string(),
        };
        tracing::warn!(provider = %self.name, "API key refused{hint}");
        hint
    }

    /// Opens the SSE stream, stepping down once per feature when the server answers 400
    /// to one it doesn't support. A step-down is remembered only once the smaller request
    /// has been accepted, so an unrelated 400 doesn't switch a feature off for good.
    async fn open_stream(
        &self,
        model: &str,
        req: &ChatRequest,
        cancel: &CancellationToken,
    ) -> Result<async_openai::types::stream::StreamResponse<Chunk>, LlmError> {
        let mut logprobs = req.logprobs && !self.no_logprobs.load(Ordering::Relaxed);
        let mut schema = !self.no_json_schema.load(Ordering::Relaxed);
        let (mut dropped_logprobs, mut dropped_schema) = (false, false);
        loop {
            let body = request_body(model, req, logprobs, schema);
            let chat = self.client.chat();
            let opened = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(LlmError::Cancelled),
                opened = chat.create_stream_byot(body) => opened,
            };
            let error = match opened {
                Ok(stream) => {
                    if dropped_logprobs {
                        self.no_logprobs.store(true, Ordering::Relaxed);
                        tracing::info!(provider = %self.name, "server refuses logprobs; no longer asking");
                    }
                    if dropped_schema {
                        self.no_json_schema.store(true, Ordering::Relaxed);
                        tracing::info!(provider = %self.name, "server refuses json_schema; using json_object");
                    }
                    return Ok(stream);
                }
                Err(error) => error,
            };
            let OpenAIError::ApiError(ApiErrorResponse { status_code, api_error }) = &error else {
                return Err(self.map_error(error, model));
            };
            if status_code.as_u16() != 400 {
                return Err(self.map_error(error, model));
            }
            let uses_schema = schema && matches!(req.format, ResponseFormat::JsonSchema { .. });
            let body = api_error.message.to_lowercase();
            let blames_logprobs = body.contains("logprob");
            let blames_schema = ["json_schema", "response_format", "schema"].iter().any(|w| body.contains(w));
            // When the body names neither, logprobs go first: losing them costs less.
            if logprobs && (blames_logprobs || !(uses_schema && blames_schema)) {
                tracing::debug!(provider = %self.name, "HTTP 400 with logprobs; retrying without");
                logprobs = false;
                dropped_logprobs = true;
            } else if uses_schema {
                tracing::debug!(provider = %self.name, "HTTP 400 with json_schema; retrying with json_object");
                schema = false;
                dropped_schema = true;
            } else {
                return Err(self.map_error(error, model));
            }
        }
    }

    fn map_error(&self, error: OpenAIError, model: &str) -> LlmError {
        let provider = self.name.clone();
        match error {
            OpenAIError::ApiError(ApiErrorResponse { status_code, api_error }) => {
                let retry_after_s = http::retry_after(&api_error);
                self.map_status(status_code.as_u16(), &api_error.message, model, retry_after_s)
            }
            OpenAIError::Reqwest(e) if e.is_builder() => {
                let reason = format!("invalid base URL {}: {}", self.base_url, innermost_cause(&e));
                LlmError::Unreachable { provider, reason: self.scrub(&reason) }
            }
            OpenAIError::Reqwest(e) if e.is_connect() || e.is_timeout() || e.is_request() => {
                LlmError::Unreachable { provider, reason: self.scrub(&innermost_cause(&e)) }
            }
            OpenAIError::Reqwest(e) => LlmError::Protocol { provider, detail: self.scrub(&innermost_cause(&e)) },
            OpenAIError::JSONDeserialize(e, _) => LlmError::Protocol { provider, detail: format!("invalid JSON: {e}") },
            other => LlmError::Protocol { provider, detail: self.scrub(&other.to_string()) },
        }
    }

    fn map_status(&self, status: u16, body: &str, model: &str, retry_after_s: Option<u64>) -> LlmError {
        let provider = self.name.clone();
        let mut detail = self.scrub(&error_message(body));
        if detail.is_empty() {
            let reason = reqwest::StatusCode::from_u16(status).ok().and_then(|s| s.canonical_reason());
            detail = reason.unwrap_or("no details").to_string();
        }
        match status {
            401 | 403 => LlmError::Auth { provider, status, hint: self.auth_hint() },
            429 => LlmError::RateLimited { provider, retry_after_s },
            404 if names_missing_model(body) => {
                LlmError::ModelUnavailable { provider, model: model.to_string(), detail }
            }
            _ => LlmError::Http { provider, status, detail },
        }
    }

    /// A failure after the stream opened: the connection broke or a chunk was unreadable.
    fn stream_error(&self, error: OpenAIError, tokens: usize, model: &str) -> LlmError {
        let provider = self.name.clone();
        match error {
            OpenAIError::JSONDeserialize(e, _) => LlmError::Protocol {
                provider,
                detail: format!("invalid JSON in the stream after {tokens} tokens: {e}"),
            },
            OpenAIError::StreamError(e) => {
                LlmError::Protocol { provider, detail: self.scrub(&format!("stream broke after {tokens} tokens: {e}")) }
            }
            other => self.map_error(other, model),
        }
    }

    /// One line, at most [`DETAIL_CHARS`], with the key blanked out.
    fn scrub(&self, text: &str) -> String {
        let mut text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if let Some(key) = &self.api_key {
            text = text.replace(key.as_str(), "[redacted]");
        }
        match text.char_indices().nth(DETAIL_CHARS) {
            Some((cut, _)) => format!("{}…", &text[..cut]),
            None => text,
        }
    }
}

#[async_trait]
impl Provider for OpenAiProvider {
    fn name(&self) -> &str {
        &self.name
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
        let mut stream = self.open_stream(model, req, cancel).await?;
        let mut text = String::new();
        let mut tokens = 0usize;
        let mut finish = None;
        let mut usage = None;
        loop {
            let next = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(LlmError::Cancelled),
                next = stream.next() => next,
            };
            let chunk = match next {
                None => break,
                Some(Ok(chunk)) => chunk,
                // The reply is whole once finish_reason has come; only the usage chunk is lost.
                Some(Err(OpenAIError::StreamError(_))) if finish.is_some() => break,
                Some(Err(e)) => return Err(self.stream_error(e, tokens, model)),
            };
            if let Some(error) = chunk.error {
                let message = match error {
                    Value::String(text) => text,
                    other => {
                        other.get("message").and_then(Value::as_str).map_or_else(|| other.to_string(), String::from)
                    }
                };
                let detail = self.scrub(&format!("error after {tokens} tokens: {message}"));
                return Err(LlmError::Protocol { provider: self.name.clone(), detail });
            }
            if chunk.usage.is_some() {
                usage = chunk.usage;
            }
            for choice in chunk.choices.unwrap_or_default() {
                if choice.index.unwrap_or(0) != 0 {
                    continue;
                }
                if let Some(piece) = choice.delta.and_then(|d| d.content).filter(|s| !s.is_empty()) {
                    text.push_str(&piece);
                    for t in ChoiceLogprobs::split(choice.logprobs, piece) {
                        tokens += 1;
                        on_token(t);
                    }
                }
                if let Some(reason) = choice.finish_reason {
                    finish = Some(if reason == "length" { FinishReason::Length } else { FinishReason::Stop });
                }
            }
        }
        // async-openai ends the stream on `[DONE]` and on a clean EOF alike, so
        // finish_reason is the only sign the reply is whole.
        let Some(finish) = finish else {
            return Err(LlmError::Protocol {
                provider: self.name.clone(),
                detail: format!("stream ended early after {tokens} tokens"),
            });
        };
        if text.is_empty() {
            return Err(LlmError::Empty { provider: self.name.clone() });
        }
        let usage = usage.unwrap_or_default();
        Ok(Completion {
            tokens_in: usage.prompt_tokens.unwrap_or_else(|| estimate_tokens(req.prompt_chars())),
            tokens_out: usage.completion_tokens.unwrap_or_else(|| estimate_tokens(text.chars().count())),
            text,
            finish,
        })
    }

    async fn embed(&self, model: &str, inputs: &[String]) -> Result<Vec<Vec<f32>>, LlmError> {
        if inputs.is_empty() {
            return Ok(Vec::new());
        }
        let body = json!({ "model": model, "input": inputs });
        let reply: EmbedReply =
            self.client.embeddings().create_byot(body).await.map_err(|e| self.map_error(e, model))?;
        let protocol = |detail: String| LlmError::Protocol { provider: self.name.clone(), detail };
        if reply.data.len() != inputs.len() {
            return Err(protocol(format!("asked for {} embeddings, got {}", inputs.len(), reply.data.len())));
        }
        let mut slots: Vec<Option<Vec<f32>>> = vec![None; inputs.len()];
        for (position, item) in reply.data.into_iter().enumerate() {
            let index = item.index.unwrap_or(position);
            match slots.get_mut(index) {
                Some(slot @ None) => *slot = Some(item.embedding),
                _ => return Err(protocol(format!("embedding index {index} is out of range or repeated"))),
            }
        }
        // Every slot is filled: as many items as slots, each landing in a distinct one.
        Ok(slots.into_iter().flatten().collect())
    }
}

/// A `chat.completion.chunk`, reduced to what we read, every field optional.
#[derive(Debug, Deserialize)]
struct Chunk {
    choices: Option<Vec<ChunkChoice>>,
    usage: Option<Usage>,
    /// Ollama and llama.cpp report a failure mid-stream as a data line of its own.
    error: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct ChunkChoice {
    index: Option<u32>,
    delta: Option<Delta>,
    finish_reason: Option<String>,
    logprobs: Option<ChoiceLogprobs>,
}

#[derive(Debug, Deserialize)]
struct Delta {
    content: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ChoiceLogprobs {
    content: Option<Vec<TokenLogprob>>,
}

#[derive(Debug, Deserialize)]
struct TokenLogprob {
    #[serde(default)]
    token: Option<String>,
    logprob: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
struct Usage {
    prompt_tokens: Option<u32>,
    completion_tokens: Option<u32>,
}

#[derive(Debug, Deserialize)]
struct EmbedReply {
    data: Vec<EmbedItem>,
}

#[derive(Debug, Deserialize)]
struct EmbedItem {
    index: Option<usize>,
    embedding: Vec<f32>,
}
