//! An embedding provider for worker tests: each word of three letters or more hashes
//! (FNV-1a) to one dimension, then unit length. Texts that share words are near, as with a
//! real model, and nothing needs model files. It serves no chat.

use async_trait::async_trait;
use chalie::llm::{ChatRequest, Completion, LlmError, Provider, Token};
use chalie::store::EMBEDDING_DIM;
use tokio_util::sync::CancellationToken;

pub struct WordHash;

pub fn word_hash_embedding(text: &str) -> Vec<f32> {
    let mut v = vec![0f32; EMBEDDING_DIM];
    let lower = text.to_lowercase();
    for w in lower.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() >= 3) {
        let h = w.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
        v[(h % EMBEDDING_DIM as u64) as usize] += 1.0;
    }
    if v.iter().all(|x| *x == 0.0) {
        v[0] = 1.0;
    }
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / n).collect()
}

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
        Ok(inputs.iter().map(|t| word_hash_embedding(t)).collect())
    }
}
