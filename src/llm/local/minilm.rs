//! all-MiniLM-L6-v2's encoder written out over plain slices, with its matrix products in
//! int8 (`int8.rs`: weights quantized once at load, activations per token row).
//!
//! Why not candle's `BertModel`: a single sentence is ~17 tokens, so each of its ~150 tensor
//! ops is tiny and the time went to op dispatch, temporaries and f32 gemm's small-matrix
//! overhead rather than arithmetic (candle's own Q8_0 product was slower still, see `int8.rs`). Here the texts of one call are packed end to end (no
//! padding, no mask): every linear layer runs once over all their tokens, and attention and
//! pooling run per text. Each row is quantized on its own, so a text's vector does not depend
//! on what it was batched with.

use candle_core::cpu::erf::erf_f32;
use candle_core::safetensors::MmapedSafetensors;
use candle_core::{DType, Device};
use candle_transformers::models::bert::Config;

use super::int8::Int8Linear as Linear;

struct Norm {
    gamma: Vec<f32>,
    beta: Vec<f32>,
    eps: f32,
}

impl Norm {
    /// In place over every row: BERT's LayerNorm.
    fn apply(&self, x: &mut [f32]) {
        let width = self.gamma.len();
        for row in x.chunks_exact_mut(width) {
            let mean = row.iter().sum::<f32>() / width as f32;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / width as f32;
            let scale = 1.0 / (var + self.eps).sqrt();
            for ((v, g), b) in row.iter_mut().zip(&self.gamma).zip(&self.beta) {
                *v = (*v - mean) * scale * g + b;
            }
        }
    }
}

struct Layer {
    /// Query, key and value as one product: three weight matrices stacked by output row.
    qkv: Linear,
    attn_out: Linear,
    attn_norm: Norm,
    up: Linear,
    down: Linear,
    out_norm: Norm,
}

pub(super) struct Encoder {
    /// Word, position and type-0 embedding rows, `hidden` wide.
    words: Vec<f32>,
    positions: Vec<f32>,
    type0: Vec<f32>,
    embed_norm: Norm,
    layers: Vec<Layer>,
    hidden: usize,
    heads: usize,
    max_positions: usize,
}

/// Per-call buffers, reused across the layers of that call.
#[derive(Default)]
struct Scratch {
    qkv: Vec<f32>,
    context: Vec<f32>,
    projected: Vec<f32>,
    wide: Vec<f32>,
    scores: Vec<f32>,
}

impl Encoder {
    pub(super) fn load(weights: &MmapedSafetensors, config: &Config) -> Result<Encoder, String> {
        let read = |name: &str| -> Result<Vec<f32>, String> {
            let t = weights.load(name, &Device::Cpu).map_err(|e| format!("{name}: {e}"))?;
            t.to_dtype(DType::F32)
                .and_then(|t| t.flatten_all())
                .and_then(|t| t.to_vec1())
                .map_err(|e| format!("{name}: {e}"))
        };
        let hidden = config.hidden_size;
        if config.num_attention_heads == 0 || !hidden.is_multiple_of(config.num_attention_heads) {
            return Err(format!("{hidden} wide hidden state does not split into {} heads", config.num_attention_heads));
        }
        let eps = config.layer_norm_eps as f32;
        let norm = |prefix: &str| -> Result<Norm, String> {
            Ok(Norm { gamma: read(&format!("{prefix}.weight"))?, beta: read(&format!("{prefix}.bias"))?, eps })
        };
        let linear = |prefix: &str, inputs: usize| -> Result<Linear, String> {
            Linear::new(&read(&format!("{prefix}.weight"))?, read(&format!("{prefix}.bias"))?, inputs)
        };
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for i in 0..config.num_hidden_layers {
            let p = format!("encoder.layer.{i}");
            let (mut w, mut b) = (Vec::with_capacity(3 * hidden * hidden), Vec::with_capacity(3 * hidden));
            for part in ["query", "key", "value"] {
                w.extend(read(&format!("{p}.attention.self.{part}.weight"))?);
                b.extend(read(&format!("{p}.attention.self.{part}.bias"))?);
            }
            layers.push(Layer {
                qkv: Linear::new(&w, b, hidden)?,
                attn_out: linear(&format!("{p}.attention.output.dense"), hidden)?,
                attn_norm: norm(&format!("{p}.attention.output.LayerNorm"))?,
                up: linear(&format!("{p}.intermediate.dense"), hidden)?,
                down: linear(&format!("{p}.output.dense"), config.intermediate_size)?,
                out_norm: norm(&format!("{p}.output.LayerNorm"))?,
            });
        }
        let words = read("embeddings.word_embeddings.weight")?;
        let positions = read("embeddings.position_embeddings.weight")?;
        let types = read("embeddings.token_type_embeddings.weight")?;
        if types.len() < hidden || words.len() % hidden != 0 || positions.len() % hidden != 0 {
            return Err("embedding tables are not a whole number of rows".to_string());
        }
        Ok(Encoder {
            max_positions: positions.len() / hidden,
            words,
            positions,
            type0: types[..hidden].to_vec(),
            embed_norm: norm("embeddings.LayerNorm")?,
            layers,
            hidden,
            heads: config.num_attention_heads,
        })
    }

    /// Mean-pooled, L2-normalised last hidden states, one per token sequence.
    pub(super) fn embed(&self, texts: &[&[u32]]) -> Result<Vec<Vec<f32>>, String> {
        let h = self.hidden;
        let vocab = self.words.len() / h;
        let total: usize = texts.iter().map(|t| t.len()).sum();
        let mut x = Vec::with_capacity(total * h);
        for ids in texts {
            if ids.len() > self.max_positions {
                return Err(format!("{} tokens exceed {} positions", ids.len(), self.max_positions));
            }
            for (pos, &id) in ids.iter().enumerate() {
                let id = id as usize;
                if id >= vocab {
                    return Err(format!("token id {id} is outside the vocabulary of {vocab}"));
                }
                let (word, place) = (&self.words[id * h..][..h], &self.positions[pos * h..][..h]);
                x.extend(word.iter().zip(place).zip(&self.type0).map(|((w, p), t)| w + p + t));
            }
        }
        self.embed_norm.apply(&mut x);

        let mut s = Scratch::default();
        for layer in &self.layers {
            self.layer(layer, texts, &mut x, &mut s);
        }

        let mut start = 0;
        Ok(texts
            .iter()
            .map(|ids| {
                let rows = &x[start * h..(start + ids.len()) * h];
                start += ids.len();
                let mut mean = vec![0f32; h];
                for row in rows.chunks_exact(h) {
                    mean.iter_mut().zip(row).for_each(|(m, v)| *m += v);
                }
                let norm = mean.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
                mean.iter_mut().for_each(|m| *m /= norm);
                mean
            })
            .collect())
    }

    fn layer(&self, l: &Layer, texts: &[&[u32]], x: &mut [f32], s: &mut Scratch) {
        l.qkv.apply(x, &mut s.qkv);
        self.attention(texts, s);
        l.attn_out.apply(&s.context, &mut s.projected);
        x.iter_mut().zip(&s.projected).for_each(|(v, a)| *v += a);
        l.attn_norm.apply(x);

        l.up.apply(x, &mut s.wide);
        s.wide.iter_mut().for_each(|v| *v = 0.5 * *v * (1.0 + erf_f32(*v * std::f32::consts::FRAC_1_SQRT_2)));
        l.down.apply(&s.wide, &mut s.projected);
        x.iter_mut().zip(&s.projected).for_each(|(v, d)| *v += d);
        l.out_norm.apply(x);
    }

    /// Softmax attention within each text, every head, from `s.qkv` into `s.context`.
    fn attention(&self, texts: &[&[u32]], s: &mut Scratch) {
        let h = self.hidden;
        let dim = h / self.heads;
        let scale = 1.0 / (dim as f32).sqrt();
        let stride = 3 * h;
        s.context.clear();
        s.context.resize(s.qkv.len() / 3, 0.0);
        let mut first = 0;
        for ids in texts {
            let len = ids.len();
            s.scores.resize(len, 0.0);
            for head in 0..self.heads {
                let off = head * dim;
                for i in first..first + len {
                    let q = &s.qkv[i * stride + off..][..dim];
                    for (j, score) in (first..first + len).zip(s.scores.iter_mut()) {
                        let k = &s.qkv[j * stride + h + off..][..dim];
                        *score = q.iter().zip(k).map(|(a, b)| a * b).sum::<f32>() * scale;
                    }
                    let max = s.scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                    let mut sum = 0.0;
                    s.scores.iter_mut().for_each(|v| {
                        *v = (*v - max).exp();
                        sum += *v;
                    });
                    let out = &mut s.context[i * h + off..][..dim];
                    for (j, p) in (first..first + len).zip(&s.scores) {
                        let v = &s.qkv[j * stride + 2 * h + off..][..dim];
                        out.iter_mut().zip(v).for_each(|(o, v)| *o += p / sum * v);
                    }
                }
            }
            first += len;
        }
    }
}
