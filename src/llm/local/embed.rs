//! all-MiniLM-L6-v2 sentence embeddings on the CPU.
//!
//! Matches sentence-transformers: mean of the last hidden states over real tokens (the
//! attention mask), then L2-normalised, so a dot product is the cosine similarity.
//! What the assistant runs is the int8 encoder in `minilm.rs` (Q8_0 on weights and
//! activations, `int8.rs`); candle's F32 BERT on the same files is the reference it is held
//! to ([`Embedder::load_f32`]): every SNLI premise/hypothesis cosine within 0.01 of it, each
//! vector within 0.99 of its F32 twin. The two are one embedding space (the database records
//! the model, not the arithmetic), so either reads the other's stored vectors.

use std::fs;
use std::path::Path;

use candle_core::safetensors::MmapedSafetensors;
use candle_core::{DType, Device, Shape, Tensor};
use candle_nn::var_builder::SimpleBackend;
use candle_nn::{Init, VarBuilder};
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{Encoding, Tokenizer, TruncationParams};

use super::minilm::{Dims, Encoder};
use crate::llm::LlmError;

const MODEL: &str = "all-minilm-l6-v2";
/// sentence-transformers' `max_seq_length` for this model. tokenizer.json says 128,
/// which would cut long texts shorter than the reference implementation does.
const MAX_TOKENS: usize = 256;

/// Rows × padded length per forward pass. Texts are sorted by length and cut into
/// passes of at most this many tokens (a longer text goes alone), which keeps padding
/// small: 32 SNLI sentences (8–38 tokens) took twice the CPU time in one pass padded
/// to 38 as in passes of 128 tokens; passes of 64, 256 or 512 tokens were slower too.
const TOKENS_PER_PASS: usize = 128;

pub struct Embedder {
    model: Model,
    tokenizer: Tokenizer,
    pad_id: u32,
}

enum Model {
    Int8(Encoder),
    F32(BertModel),
}

// The provider shares one embedder across `spawn_blocking` tasks behind an Arc.
const _: fn() = || {
    fn shared<T: Send + Sync>() {}
    shared::<Embedder>();
};

impl Embedder {
    pub const DIM: usize = 384;

    /// The int8 encoder: what the assistant runs.
    pub fn load(dir: &Path) -> Result<Embedder, LlmError> {
        Self::load_as(dir, false)
    }

    /// candle's F32 BERT on the same files: the reference the int8 encoder is measured and
    /// tested against (about 4× slower on one sentence).
    pub fn load_f32(dir: &Path) -> Result<Embedder, LlmError> {
        Self::load_as(dir, true)
    }

    fn load_as(dir: &Path, f32_reference: bool) -> Result<Embedder, LlmError> {
        let [config_path, tokenizer_path, weights_path] =
            ["config.json", "tokenizer.json", "model.safetensors"].map(|f| dir.join(f));
        for path in [&config_path, &tokenizer_path, &weights_path] {
            if !path.is_file() {
                return Err(unavailable(format!("{} is missing; run `chalie-tui models fetch`", path.display())));
            }
        }
        let bad = |path: &Path, e: &dyn std::fmt::Display| unavailable(format!("cannot load {}: {e}", path.display()));

        let config = fs::read_to_string(&config_path).map_err(|e| bad(&config_path, &e))?;
        let config: Config = serde_json::from_str(&config).map_err(|e| bad(&config_path, &e))?;
        if config.hidden_size != Self::DIM {
            let e = format!("hidden_size is {}, expected {}", config.hidden_size, Self::DIM);
            return Err(bad(&config_path, &e));
        }

        let mut tokenizer = Tokenizer::from_file(&tokenizer_path).map_err(|e| bad(&tokenizer_path, &e))?;
        // The file pads everything to 128 tokens; `embed` pads each pass to its own
        // longest text instead, so a single text is never padded at all.
        let pad_id = tokenizer.get_padding().map_or(0, |p| p.pad_id);
        tokenizer.with_padding(None);
        let truncation = TruncationParams { max_length: MAX_TOKENS, ..Default::default() };
        tokenizer.with_truncation(Some(truncation)).map_err(|e| bad(&tokenizer_path, &e))?;

        // SAFETY: the mapping lives only while the weights are copied out during load, and
        // the fetcher replaces model files by rename, never by writing into them.
        let weights = unsafe { MmapedSafetensors::new(&weights_path) }.map_err(|e| bad(&weights_path, &e))?;
        let model = if f32_reference {
            let vb = VarBuilder::from_backend(Box::new(TransposedLinears(weights)), DType::F32, Device::Cpu);
            Model::F32(BertModel::load(vb, &config).map_err(|e| bad(&weights_path, &e))?)
        } else {
            let read = |name: &str| -> Result<Vec<f32>, String> {
                let t = weights.load(name, &Device::Cpu).map_err(|e| format!("{name}: {e}"))?;
                t.to_dtype(DType::F32)
                    .and_then(|t| t.flatten_all())
                    .and_then(|t| t.to_vec1())
                    .map_err(|e| format!("{name}: {e}"))
            };
            let dims = Dims {
                hidden: config.hidden_size,
                heads: config.num_attention_heads,
                intermediate: config.intermediate_size,
                layers: config.num_hidden_layers,
                eps: config.layer_norm_eps as f32,
            };
            Model::Int8(Encoder::load(&read, &dims).map_err(|e| bad(&weights_path, &e))?)
        };
        Ok(Embedder { model, tokenizer, pad_id })
    }

    /// One unit vector per text, in order. Batching is much cheaper per text than one
    /// call each, so callers should pass everything they have at once.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, LlmError> {
        // One text is encoded on this thread: `encode_batch` hands even one to rayon's pool.
        let encodings = match texts {
            [one] => vec![self.tokenizer.encode(*one, true).map_err(local)?],
            _ => self.tokenizer.encode_batch(texts.to_vec(), true).map_err(local)?,
        };
        let mut order: Vec<usize> = (0..encodings.len()).collect();
        order.sort_by_key(|&i| encodings[i].len());

        let mut out = vec![Vec::new(); encodings.len()];
        let mut rest = order.as_slice();
        while !rest.is_empty() {
            // Sorted ascending, so the last text taken is the pass's longest.
            let fits = (1..=rest.len()).take_while(|&n| n * encodings[rest[n - 1]].len() <= TOKENS_PER_PASS).last();
            let (pass, tail) = rest.split_at(fits.unwrap_or(1));
            let batch: Vec<&Encoding> = pass.iter().map(|&i| &encodings[i]).collect();
            let vectors = match &self.model {
                Model::Int8(encoder) => {
                    let ids: Vec<&[u32]> = batch.iter().map(|e| e.get_ids()).collect();
                    encoder.embed(&ids).map_err(local)?
                }
                Model::F32(bert) => self.forward(bert, &batch).map_err(local)?,
            };
            for (&i, v) in pass.iter().zip(vectors) {
                out[i] = v;
            }
            rest = tail;
        }
        Ok(out)
    }

    /// Pads to the longest in `batch`; the mask keeps padding out of attention and pooling.
    fn forward(&self, model: &BertModel, batch: &[&Encoding]) -> candle_core::Result<Vec<Vec<f32>>> {
        let len = batch.iter().map(|e| e.len()).max().unwrap_or(0);
        let shape = (batch.len(), len);
        let (mut ids, mut mask) = (Vec::with_capacity(shape.0 * len), Vec::with_capacity(shape.0 * len));
        for e in batch {
            ids.extend(e.get_ids().iter().copied().chain(std::iter::repeat(self.pad_id)).take(len));
            mask.extend(e.get_attention_mask().iter().copied().chain(std::iter::repeat(0)).take(len));
        }
        let ids = Tensor::from_vec(ids, shape, &Device::Cpu)?;
        let mask = Tensor::from_vec(mask, shape, &Device::Cpu)?;
        let hidden = model.forward(&ids, &ids.zeros_like()?, Some(&mask))?;

        let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
        let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
        let counts = mask.sum(1)?.clamp(1e-9, f64::MAX)?;
        let mean = summed.broadcast_div(&counts)?;
        let norms = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
        mean.broadcast_div(&norms)?.to_vec2()
    }
}

/// Hands candle's BERT its Linear weights stored transposed. `Linear` multiplies by
/// `weight.t()`; laid out as in the file that is a strided matrix which gemm gathers
/// element by element on every call (a tenth of a single sentence's time); stored
/// transposed, `weight.t()` is contiguous. Same values, so the same embeddings.
struct TransposedLinears(MmapedSafetensors);

impl SimpleBackend for TransposedLinears {
    fn get(&self, shape: Shape, name: &str, init: Init, dtype: DType, dev: &Device) -> candle_core::Result<Tensor> {
        transposed_if_linear(name, SimpleBackend::get(&self.0, shape, name, init, dtype, dev)?)
    }

    fn get_unchecked(&self, name: &str, dtype: DType, dev: &Device) -> candle_core::Result<Tensor> {
        transposed_if_linear(name, SimpleBackend::get_unchecked(&self.0, name, dtype, dev)?)
    }

    fn contains_tensor(&self, name: &str) -> bool {
        SimpleBackend::contains_tensor(&self.0, name)
    }
}

/// Embedding tables are also 2-D, but they are indexed by row, not multiplied.
fn transposed_if_linear(name: &str, t: Tensor) -> candle_core::Result<Tensor> {
    if t.rank() == 2 && !name.contains("embeddings") { t.t()?.contiguous()?.t() } else { Ok(t) }
}

fn unavailable(detail: String) -> LlmError {
    LlmError::ModelUnavailable { provider: "local".to_string(), model: MODEL.to_string(), detail }
}

fn local(e: impl std::fmt::Display) -> LlmError {
    LlmError::Local(format!("embedding with {MODEL}: {e}"))
}
