//! The provider trait: one implementation per kind of backend.

use super::types::{ChatRequest, Completion, LlmError, Token};
use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

/// A backend that can chat and embed. Implementations speak their protocol and map
/// its failures to [`LlmError`]; timeouts, retries, events and output validation are
/// the [`Llm`](super::Llm) layer's job, the same for every provider.
#[async_trait]
pub trait Provider: Send + Sync {
    /// The config's name for this provider (e.g. "ollama", "local").
    fn name(&self) -> &str;

    /// Stream a chat completion, calling `on_token` for each piece as it arrives.
    /// Must return `Err(LlmError::Cancelled)` promptly once `cancel` fires.
    async fn chat(
        &self,
        model: &str,
        req: &ChatRequest,
        on_token: &mut (dyn FnMut(Token) + Send),
        cancel: &CancellationToken,
    ) -> Result<Completion, LlmError>;

    /// One vector per input, in order.
    async fn embed(&self, model: &str, inputs: &[String]) -> Result<Vec<Vec<f32>>, LlmError>;

    /// Get ready for a later call whose prompt starts with `req`'s messages (its last message
    /// may go on): a backend that keeps a prompt cache decodes them now, in idle time, so
    /// that call finds them cached. Returns once the work is queued, never waiting for it.
    /// A server that caches prefixes itself (or not at all) has nothing to do.
    async fn prefill(&self, _model: &str, _req: &ChatRequest) -> Result<(), LlmError> {
        Ok(())
    }
}
