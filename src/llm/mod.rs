//! The LLM layer: every model call the cognition stack makes goes through here.
//!
//! Call sites name a role (primary, lightweight, strong, embedding); the config maps
//! roles to a provider and model. Every call is bounded in time, retried only while
//! nothing has been streamed yet, reported on the event bus, and — for structured
//! output — validated, so callers either get usable data or a typed error and take
//! their deterministic fallback.

mod layer;
pub mod local;
pub mod openai;
mod provider;
pub mod replay;
pub mod resolve;
pub mod schema;
mod types;

pub use layer::{Llm, ORIGIN, Route, current_origin, embed_digest, exchange_origin, prompt_digest};
pub use provider::Provider;
pub use types::{
    ChatRequest, ChatRole, Completion, FinishReason, LlmError, Message, PromptKind, ResponseFormat, Token,
};
