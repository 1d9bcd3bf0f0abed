//! An embedding provider for worker tests: the double's word-hash embedding
//! ([`embedding_of_size`]) at the store's dimension. Texts that share words are near, as with a
//! real model, and nothing needs model files. It serves no chat.

use super::openai_double::embedding_of_size;
use async_trait::async_trait;
use chalie::llm::{ChatRequest, Completion, LlmError, Provider, Token};
use chalie::store::EMBEDDING_DIM;
use tokio_util::sync::CancellationToken;

pub struct WordHash;

#[async_trait]
impl Provider for WordHash {
    fn name(&self) -> &str {
        "wordhash"
    }

    async fn chat(
        &self,
        model: &str,
        _req: &ChatRequest,
        _on_token: &mut (dyn FnMut(Token) + Send),
        _cancel: &CancellationToken,
    ) -> Result<Completion, LlmError> {
        Err(LlmError::ModelUnavailable {
            provider: "wordhash".into(),
            model: model.into(),
            detail: "embeds only".into(),
        })
    }

    async fn embed(&self, _model: &str, inputs: &[String]) -> Result<Vec<Vec<f32>>, LlmError> {
        Ok(inputs.iter().map(|t| embedding_of_size(t, EMBEDDING_DIM)).collect())
    }
}
