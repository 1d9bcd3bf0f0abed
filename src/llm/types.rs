//! The vocabulary every provider speaks.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChatRole {
    System,
    User,
    Assistant,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: ChatRole,
    pub content: String,
}

impl Message {
    pub fn system(content: impl Into<String>) -> Message {
        Message { role: ChatRole::System, content: content.into() }
    }
    pub fn user(content: impl Into<String>) -> Message {
        Message { role: ChatRole::User, content: content.into() }
    }
    pub fn assistant(content: impl Into<String>) -> Message {
        Message { role: ChatRole::Assistant, content: content.into() }
    }
}

/// What shape the reply must have.
#[derive(Debug, Clone, PartialEq)]
pub enum ResponseFormat {
    Text,
    /// Any JSON object (`response_format: json_object`).
    JsonObject,
    /// JSON matching `schema` (`response_format: json_schema` where the server has it).
    JsonSchema {
        name: String,
        schema: serde_json::Value,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    pub max_tokens: u32,
    pub temperature: f32,
    pub stop: Vec<String>,
    pub format: ResponseFormat,
    /// Ask for per-token log-probabilities where the backend can give them.
    pub logprobs: bool,
    /// Which cached prompt prefix a backend that keeps one per kind (the built-in model) reads
    /// and extends; a remote server never sees it.
    pub kind: PromptKind,
}

/// The kinds of prompt whose prefixes are cached apart: the reply's conversation prefix
/// (persona and history, hundreds of tokens) is worth keeping while a helper call (triage,
/// the critic, extraction) runs with its own short system prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PromptKind {
    /// Everything but the reply: short system prompts, one-off inputs.
    #[default]
    Helper,
    /// The reply: persona, then the conversation so far.
    Conversation,
}

impl ChatRequest {
    pub fn new(messages: Vec<Message>) -> ChatRequest {
        ChatRequest {
            messages,
            max_tokens: 512,
            temperature: 0.7,
            stop: Vec::new(),
            format: ResponseFormat::Text,
            logprobs: true,
            kind: PromptKind::Helper,
        }
    }

    /// Characters across all messages: a cheap, backend-independent prompt size.
    pub fn prompt_chars(&self) -> usize {
        self.messages.iter().map(|m| m.content.len()).sum()
    }
}

/// One streamed piece of a reply.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub text: String,
    /// Natural-log probability of this token, when the backend reports it.
    pub logprob: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    Stop,
    Length,
}

/// A finished reply.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    pub text: String,
    pub tokens_in: u32,
    pub tokens_out: u32,
    pub finish: FinishReason,
}

/// Why a model call failed. Every variant has a one-line Display fit for the UI.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    #[error("{provider} is unreachable: {reason}")]
    Unreachable { provider: String, reason: String },
    #[error("{provider} did not answer within {ms} ms")]
    Timeout { provider: String, ms: u64 },
    /// `hint` names where the key comes from (file:line); it is filled on the first refusal
    /// of a process only, so a session of failing turns says it once, not on every reply.
    #[error("{provider} rejected the API key (HTTP {status}){hint}")]
    Auth { provider: String, status: u16, hint: String },
    /// `retry_after_s` is the server's `Retry-After` in seconds, when it sent one: the
    /// earliest a retry can be welcome, so the backoff waits at least that long.
    #[error("{provider} is rate limiting requests (HTTP 429)")]
    RateLimited { provider: String, retry_after_s: Option<u64> },
    #[error("{provider} failed with HTTP {status}: {detail}")]
    Http { provider: String, status: u16, detail: String },
    #[error("{provider} sent a malformed response: {detail}")]
    Protocol { provider: String, detail: String },
    #[error("{provider} returned an empty reply")]
    Empty { provider: String },
    #[error("the request was cancelled")]
    Cancelled,
    #[error("the model's output is not valid {what}: {detail}")]
    InvalidOutput { what: String, detail: String, raw: String },
    #[error("model `{model}` is not available from {provider}: {detail}")]
    ModelUnavailable { provider: String, model: String, detail: String },
    #[error("local inference failed: {0}")]
    Local(String),
}

impl LlmError {
    /// Worth another attempt: the failure may be transient.
    pub fn is_retryable(&self) -> bool {
        match self {
            LlmError::Unreachable { .. } | LlmError::RateLimited { .. } | LlmError::Protocol { .. } => true,
            LlmError::Http { status, .. } => *status >= 500,
            _ => false,
        }
    }
}
