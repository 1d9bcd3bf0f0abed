//! all-MiniLM-L6-v2's encoder written out over plain slices, with its matrix products in
//! int8 (`int8.rs`: weights and activations quantized per block of 32 values).
//!
//! Why not candle's `BertModel`: a single sentence is ~17 tokens, so each of its ~150 tensor
//! ops is tiny and the time went to op dispatch, temporaries and f32 gemm's small-matrix
//! overhead rather than arithmetic. Here the texts of one call are packed end to end (no
//! padding, no mask): every linear layer runs once over all their tokens, and attention and
//! pooling run per text. Each block is quantized on its own, so a text's vector does not
//! depend on what it was batched with.
//!
//! Everything between the products (layer norms, GELU, attention, pooling) is written as
//! loops that vectorise, and compiled twice more for AVX-512 and AVX2 (`embed` picks one at
//! run time): the project builds for baseline x86-64, where they would get SSE's 4 lanes.
//! Sums are taken in a fixed order of 8 partial sums whatever the lane count, so every
//! version gives the same bits.

use std::cell::RefCell;

use super::int8::{BLOCK, Int8Linear as Linear, Quantized};

/// What the loader needs to know of the model's `config.json`.
pub(super) struct Dims {
    pub hidden: usize,
    pub heads: usize,
    pub intermediate: usize,
    pub layers: usize,
    pub eps: f32,
}

struct Norm {
    gamma: Vec<f32>,
    beta: Vec<f32>,
    eps: f32,
}

impl Norm {
    /// In place over every row: BERT's LayerNorm.
    #[inline(always)]
    fn apply(&self, x: &mut [f32]) {
        let width = self.gamma.len();
        for row in x.chunks_exact_mut(width) {
            let mean = sum8(row, |v| v) / width as f32;
            let var = sum8(row, |v| (v - mean) * (v - mean)) / width as f32;
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

/// Per-thread buffers, kept between calls: a sentence's few hundred kilobytes of
/// activations are then neither allocated nor faulted in again on every embedding.
#[derive(Default)]
struct Scratch {
    x: Vec<f32>,
    qkv: Vec<f32>,
    context: Vec<f32>,
    projected: Vec<f32>,
    wide: Vec<f32>,
    scores: Vec<f32>,
    /// One head's keys, transposed: `dim` rows of one value per token.
    keys: Vec<f32>,
    quantized: Quantized,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::default();
}

impl Encoder {
    /// `read` returns a named tensor of the checkpoint as f32, flattened.
    pub(super) fn load(read: &dyn Fn(&str) -> Result<Vec<f32>, String>, dims: &Dims) -> Result<Encoder, String> {
        let hidden = dims.hidden;
        if dims.heads == 0 || !hidden.is_multiple_of(dims.heads) {
            return Err(format!("{hidden} wide hidden state does not split into {} heads", dims.heads));
        }
        if !hidden.is_multiple_of(BLOCK) || !dims.intermediate.is_multiple_of(BLOCK) {
            return Err(format!("widths {hidden} and {} are not whole blocks of {BLOCK}", dims.intermediate));
        }
        let eps = dims.eps;
        let norm = |prefix: &str| -> Result<Norm, String> {
            Ok(Norm { gamma: read(&format!("{prefix}.weight"))?, beta: read(&format!("{prefix}.bias"))?, eps })
        };
        let linear = |prefix: &str, inputs: usize| -> Result<Linear, String> {
            Linear::new(&read(&format!("{prefix}.weight"))?, read(&format!("{prefix}.bias"))?, inputs)
        };
        let mut layers = Vec::with_capacity(dims.layers);
        for i in 0..dims.layers {
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
                down: linear(&format!("{p}.output.dense"), dims.intermediate)?,
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
            heads: dims.heads,
        })
    }

    /// Mean-pooled, L2-normalised last hidden states, one per token sequence.
    pub(super) fn embed(&self, texts: &[&[u32]]) -> Result<Vec<Vec<f32>>, String> {
        let vocab = self.words.len() / self.hidden;
        for ids in texts {
            if ids.len() > self.max_positions {
                return Err(format!("{} tokens exceed {} positions", ids.len(), self.max_positions));
            }
            if let Some(id) = ids.iter().find(|&&id| id as usize >= vocab) {
                return Err(format!("token id {id} is outside the vocabulary of {vocab}"));
            }
        }
        SCRATCH.with_borrow_mut(|s| {
            #[cfg(target_arch = "x86_64")]
            {
                if std::arch::is_x86_feature_detected!("avx512f") {
                    // SAFETY: the feature is present.
                    return Ok(unsafe { self.forward_avx512(texts, s) });
                }
                if std::arch::is_x86_feature_detected!("avx2") {
                    // SAFETY: the feature is present.
                    return Ok(unsafe { self.forward_avx2(texts, s) });
                }
            }
            Ok(self.forward(texts, s))
        })
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    fn forward_avx512(&self, texts: &[&[u32]], s: &mut Scratch) -> Vec<Vec<f32>> {
        self.forward(texts, s)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn forward_avx2(&self, texts: &[&[u32]], s: &mut Scratch) -> Vec<Vec<f32>> {
        self.forward(texts, s)
    }

    /// Token ids already checked against the tables.
    #[inline(always)]
    fn forward(&self, texts: &[&[u32]], s: &mut Scratch) -> Vec<Vec<f32>> {
        let h = self.hidden;
        let mut x = std::mem::take(&mut s.x);
        x.clear();
        for ids in texts {
            for (pos, &id) in ids.iter().enumerate() {
                let (word, place) = (&self.words[id as usize * h..][..h], &self.positions[pos * h..][..h]);
                x.extend(word.iter().zip(place).zip(&self.type0).map(|((w, p), t)| w + p + t));
            }
        }
        self.embed_norm.apply(&mut x);
        for layer in &self.layers {
            self.layer(layer, texts, &mut x, s);
        }

        let mut start = 0;
        let vectors = texts
            .iter()
            .map(|ids| {
                let rows = &x[start * h..(start + ids.len()) * h];
                start += ids.len();
                let mut mean = vec![0f32; h];
                for row in rows.chunks_exact(h) {
                    mean.iter_mut().zip(row).for_each(|(m, v)| *m += v);
                }
                let norm = sum8(&mean, |v| v * v).sqrt().max(1e-12);
                mean.iter_mut().for_each(|m| *m /= norm);
                mean
            })
            .collect();
        s.x = x;
        vectors
    }

    #[inline(always)]
    fn layer(&self, l: &Layer, texts: &[&[u32]], x: &mut [f32], s: &mut Scratch) {
        l.qkv.apply(x, &mut s.quantized, &mut s.qkv);
        self.attention(texts, s);
        l.attn_out.apply(&s.context, &mut s.quantized, &mut s.projected);
        x.iter_mut().zip(&s.projected).for_each(|(v, a)| *v += a);
        l.attn_norm.apply(x);

        l.up.apply(x, &mut s.quantized, &mut s.wide);
        gelu(&mut s.wide);
        l.down.apply(&s.wide, &mut s.quantized, &mut s.projected);
        x.iter_mut().zip(&s.projected).for_each(|(v, d)| *v += d);
        l.out_norm.apply(x);
    }

    /// Softmax attention within each text, every head, from `s.qkv` into `s.context`. Each
    /// head's keys are copied out transposed and padded to whole groups of [`KEYS`], so a
    /// query's scores against them are sums held in registers across the head's dimensions,
    /// not a horizontal sum per key; values are summed the same way per group of outputs.
    #[inline(always)]
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
            let padded = len.next_multiple_of(KEYS);
            s.scores.resize(padded, 0.0);
            s.keys.clear();
            s.keys.resize(dim * padded, 0.0);
            let rows = &s.qkv[first * stride..][..len * stride];
            for head in 0..self.heads {
                let off = head * dim;
                for (j, row) in rows.chunks_exact(stride).enumerate() {
                    for (d, &k) in row[h + off..][..dim].iter().enumerate() {
                        s.keys[d * padded + j] = k;
                    }
                }
                for (i, row) in rows.chunks_exact(stride).enumerate() {
                    let q = &row[off..][..dim];
                    for (group, scores) in s.scores.as_chunks_mut::<KEYS>().0.iter_mut().enumerate() {
                        let mut acc = [0f32; KEYS];
                        for (&q, keys) in q.iter().zip(s.keys.chunks_exact(padded)) {
                            let q = q * scale;
                            let keys = &keys[group * KEYS..][..KEYS];
                            acc.iter_mut().zip(keys).for_each(|(a, k)| *a += q * k);
                        }
                        *scores = acc;
                    }
                    let scores = &mut s.scores[..len];
                    let max = scores.iter().fold(f32::NEG_INFINITY, |m, &v| if v > m { v } else { m });
                    scores.iter_mut().for_each(|v| *v = exp(*v - max));
                    let sum = sum8(scores, |v| v);
                    let out = &mut s.context[(first + i) * h + off..][..dim];
                    for (chunk, out) in out.chunks_mut(KEYS).enumerate() {
                        let mut acc = [0f32; KEYS];
                        for (p, row) in scores.iter().zip(rows.chunks_exact(stride)) {
                            let v = &row[2 * h + off + chunk * KEYS..][..out.len()];
                            acc.iter_mut().zip(v).for_each(|(a, v)| *a += p * v);
                        }
                        out.iter_mut().zip(acc).for_each(|(o, a)| *o = a / sum);
                    }
                }
            }
            first += len;
        }
    }
}

/// Keys scored (and head dimensions summed) per register-held group in `attention`.
const KEYS: usize = 16;

/// eˣ for x ≤ 0 (softmax's shifted scores), Cephes' `expf`: x = n·ln2 + r, a degree-5
/// polynomial for eʳ, 2ⁿ put into the exponent bits. Within 2 ulps, and unlike libm's it
/// vectorises.
#[inline(always)]
fn exp(x: f32) -> f32 {
    const ROUND: f32 = 12_582_912.0;
    let x = x.max(-87.0);
    let n = (x * std::f32::consts::LOG2_E + ROUND) - ROUND;
    let r = x - n * 0.693_359_4 - n * -2.121_944_4e-4;
    let mut p = 1.987_569_1e-4_f32;
    for c in [1.398_199_9e-3, 8.333_452e-3, 4.166_579_6e-2, 0.166_666_66, 0.5] {
        p = p * r + c;
    }
    let y = p * r * r + r + 1.0;
    y * f32::from_bits(((n as i32 + 127) << 23) as u32)
}

/// `Σ f(v)` in 8 interleaved partial sums: the order a vector unit can keep, so the loop
/// vectorises (a plain running sum is one long dependency chain) and gives the same bits at
/// every lane count.
#[inline(always)]
fn sum8(values: &[f32], f: impl Fn(f32) -> f32) -> f32 {
    let mut acc = [0f32; 8];
    let chunks = values.chunks_exact(8);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (a, &v) in acc.iter_mut().zip(chunk) {
            *a += f(v);
        }
    }
    for (a, &v) in acc.iter_mut().zip(rest) {
        *a += f(v);
    }
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]))
}

/// BERT's exact GELU, `x/2 · (1 + erf(x/√2))`, in place.
#[inline(always)]
fn gelu(v: &mut [f32]) {
    v.iter_mut().for_each(|x| *x = 0.5 * *x * (1.0 + erf(*x * std::f32::consts::FRAC_1_SQRT_2)));
}

/// erf to within a few f32 ulps: the rational approximation Eigen and XLA use (odd degree-13
/// numerator, even degree-8 denominator on [−4, 4], where erf reaches 1 in f32). Branch-free,
/// so `gelu` vectorises; the scalar `erf` it replaced was most of a sentence's time.
#[inline(always)]
fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let mut p = -2.726_142_4e-10_f32;
    for c in [2.770_681_5e-8, -2.101_024e-6, -5.692_506_2e-5, -7.349_906_4e-4, -2.954_6e-3, -1.609_603_3e-2] {
        p = p * x2 + c;
    }
    let mut q = -1.456_607_15e-5_f32;
    for c in [-2.133_740_5e-4, -1.682_827e-3, -7.373_329_3e-3, -1.426_473_9e-2] {
        q = q * x2 + c;
    }
    x * p / q
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_matches_a_reference_to_f32_precision() {
        // Reference: erf in f64 by its Taylor series (|x| < 3) or continued fraction.
        fn erf64(x: f64) -> f64 {
            let a = x.abs();
            let r = if a < 3.0 {
                let (mut sum, mut term, mut n) = (0.0, a, 0.0);
                loop {
                    let t = term / (2.0 * n + 1.0);
                    sum += t;
                    if t.abs() <= 1e-17 * sum.abs() {
                        break;
                    }
                    n += 1.0;
                    term *= -a * a / n;
                }
                sum * 2.0 / std::f64::consts::PI.sqrt()
            } else {
                let f = (1..80).rev().fold(0.0, |f, k| (k as f64 / 2.0) / (a + f));
                1.0 - (-a * a).exp() / std::f64::consts::PI.sqrt() / (a + f)
            };
            r.copysign(x)
        }
        let mut worst = 0f64;
        for i in -6000..=6000 {
            let x = i as f32 / 1000.0;
            worst = worst.max((f64::from(erf(x)) - erf64(f64::from(x))).abs());
        }
        assert!(worst < 5e-7, "erf is off by {worst}");
    }

    #[test]
    fn exp_matches_libm_where_softmax_uses_it() {
        // Below −87 it stays at e⁻⁸⁷ (~1.6e-38), which is nothing next to the row's largest term, 1.
        for i in 0..=17_400 {
            let x = -(i as f32) / 200.0;
            let (got, want) = (exp(x), x.exp());
            assert!((got - want).abs() <= 3.0 * f32::EPSILON * want, "exp({x}) = {got}, not {want}");
        }
        assert!(exp(-1000.0) < 2e-38);
    }

    /// A small encoder of made-up weights (64 wide, 2 heads, 2 layers).
    fn tiny() -> Encoder {
        let dims = Dims { hidden: 64, heads: 2, intermediate: 128, layers: 2, eps: 1e-12 };
        let read = |name: &str| -> Result<Vec<f32>, String> {
            let weight = name.ends_with(".weight");
            let n = match name {
                "embeddings.word_embeddings.weight" => 100 * 64,
                "embeddings.position_embeddings.weight" => 32 * 64,
                "embeddings.token_type_embeddings.weight" => 2 * 64,
                n if n.contains("LayerNorm") => 64,
                n if n.contains("intermediate") => {
                    if weight {
                        128 * 64
                    } else {
                        128
                    }
                }
                n if n.contains("layer.") && n.contains(".output.dense") && !n.contains("attention") && weight => {
                    64 * 128
                }
                _ if weight => 64 * 64,
                _ => 64,
            };
            let seed = name.len() as f32;
            let one = if name.ends_with("LayerNorm.weight") { 1.0 } else { 0.0 };
            Ok((0..n).map(|i| (i as f32 * 0.618 + seed).sin() * 0.5 + one).collect())
        };
        Encoder::load(&read, &dims).unwrap()
    }

    #[test]
    fn every_compiled_version_gives_the_same_bits() {
        let encoder = tiny();
        let texts: [&[u32]; 3] = [&[1, 5, 9, 2], &[1, 99, 3, 3, 7, 2], &[1, 2]];
        let plain = encoder.forward(&texts, &mut Scratch::default());
        assert_eq!(encoder.embed(&texts).unwrap(), plain, "the dispatched version");
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                // SAFETY: the feature is present.
                assert_eq!(unsafe { encoder.forward_avx512(&texts, &mut Scratch::default()) }, plain, "AVX-512");
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the feature is present.
                assert_eq!(unsafe { encoder.forward_avx2(&texts, &mut Scratch::default()) }, plain, "AVX2");
            }
        }
        for (v, ids) in plain.iter().zip(texts) {
            assert_eq!(&encoder.embed(&[ids]).unwrap()[0], v, "alone and packed with others");
            assert!((sum8(v, |x| x * x) - 1.0).abs() < 1e-5);
        }
        assert!(encoder.embed(&[&[100]]).is_err(), "an id outside the vocabulary");
        assert!(encoder.embed(&[&[1; 33]]).is_err(), "more tokens than positions");
    }

    #[test]
    fn sum8_is_the_sum() {
        let v: Vec<f32> = (0..37).map(|i| i as f32 * 0.5).collect();
        assert_eq!(sum8(&v, |v| v), 333.0);
        assert_eq!(sum8(&v[..3], |v| 2.0 * v), 3.0);
        assert_eq!(sum8(&[], |v| v), 0.0);
    }
}
