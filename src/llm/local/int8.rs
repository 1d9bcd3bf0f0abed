//! An int8 linear layer for the embedding encoder, Q8_0 on both operands: weights and
//! activations each quantized per block of 32 inputs with their own scale, each block's
//! products summed exactly in i32 and then added into an f32 sum at the two scales' product.
//!
//! Why blocks on both sides: one scale per token row lets BERT's few large hidden values set
//! the step for all 384, and one per weight row does the same to the weights; together they
//! moved SNLI pair cosines by up to 0.022 against F32 (docs/architecture.md §9). With a scale
//! per 32 values on each side the worst gap is under 0.01.
//!
//! Why our own kernel: candle's Q8_0 product spends most of a sentence's time on its spinning
//! thread barrier and on f16 scales when the two cores are shared. With AVX-512 VNNI one
//! instruction does 64 byte products; the weights are laid out so one block's 8 loads feed
//! 16 outputs of up to 8 token rows. CPUs without it take an AVX2 loop or the plain one; all
//! three compute the same integers and add them in the same order with the same fused
//! multiply-adds, so they give bit-identical vectors.

/// Inputs per scale, on both operands.
pub(super) const BLOCK: usize = 32;
/// Outputs per weight group: one 512-bit register of i32 sums.
const LANES: usize = 16;
/// Token rows that share each loaded weight block.
const ROWS: usize = 8;
/// Four-input steps per block (`vpdpbusd` takes 4 bytes per lane).
const STEPS: usize = BLOCK / 4;
/// Bytes of one group's block: 16 outputs × 32 inputs.
const GROUP_BLOCK: usize = LANES * BLOCK;

pub(super) struct Int8Linear {
    /// By group of 16 outputs, then block of 32 inputs, then 4-input step: the 16 outputs'
    /// 4 bytes side by side (what one `vpdpbusd` multiplies).
    packed: Vec<i8>,
    /// Per group, block and lane (the same order): the weight block's scale.
    scale: Vec<f32>,
    /// Per group, block and lane: −128 × the block's int8 weight sum, which undoes the +128
    /// that makes the activations unsigned for `vpdpbusd`.
    shift: Vec<i32>,
    bias: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

/// Activation rows quantized for [`Int8Linear::apply`]: per block of 32 a scale,
/// and the values as `q + 128` (unsigned, which is what `vpdpbusd` wants).
#[derive(Default)]
pub(super) struct Quantized {
    bytes: Vec<u8>,
    scales: Vec<f32>,
    inputs: usize,
}

impl Quantized {
    /// Quantizes every `inputs`-wide row of `x` (`inputs` a multiple of [`BLOCK`]). Inlined
    /// into the encoder's per-CPU copies, where it vectorises to their width.
    #[inline(always)]
    pub(super) fn fill(&mut self, x: &[f32], inputs: usize) {
        self.inputs = inputs;
        self.bytes.clear();
        self.bytes.resize(x.len(), 0);
        self.scales.clear();
        self.scales.resize(x.len() / BLOCK, 0.0);
        let blocks = x.as_chunks::<BLOCK>().0.iter().zip(self.bytes.as_chunks_mut::<BLOCK>().0);
        for ((block, dst), scale) in blocks.zip(&mut self.scales) {
            let mut q = [0i8; BLOCK];
            *scale = quantize(block, &mut q);
            dst.iter_mut().zip(q).for_each(|(d, q)| *d = (q as u8) ^ 0x80);
        }
    }

    fn rows(&self) -> usize {
        self.bytes.len().checked_div(self.inputs).unwrap_or(0)
    }
}

impl Int8Linear {
    /// `weights` row-major `[outputs, inputs]` as stored; `outputs` a multiple of 16 and
    /// `inputs` of 32 (every MiniLM layer is).
    pub(super) fn new(weights: &[f32], bias: Vec<f32>, inputs: usize) -> Result<Int8Linear, String> {
        let outputs = bias.len();
        if weights.len() != outputs * inputs || !outputs.is_multiple_of(LANES) || !inputs.is_multiple_of(BLOCK) {
            return Err(format!("linear of {} weights is not {outputs}×{inputs} in whole blocks", weights.len()));
        }
        let blocks = inputs / BLOCK;
        let mut packed = vec![0i8; weights.len()];
        let mut scale = vec![0f32; outputs * blocks];
        let mut shift = vec![0i32; outputs * blocks];
        for (n, row) in weights.chunks_exact(inputs).enumerate() {
            let (group, lane) = (n / LANES, n % LANES);
            for (b, block) in row.as_chunks::<BLOCK>().0.iter().enumerate() {
                let mut q = [0i8; BLOCK];
                let at = (group * blocks + b) * LANES + lane;
                scale[at] = quantize(block, &mut q);
                shift[at] = -128 * q.iter().map(|&v| i32::from(v)).sum::<i32>();
                for (step, four) in q.chunks_exact(4).enumerate() {
                    let dst = (group * blocks + b) * GROUP_BLOCK + (step * LANES + lane) * 4;
                    packed[dst..dst + 4].copy_from_slice(four);
                }
            }
        }
        Ok(Int8Linear { packed, scale, shift, bias, inputs, outputs })
    }

    /// `out = x · Wᵀ + b` for every row of `x` (`inputs` wide), quantizing `x` into `q` first.
    #[inline(always)]
    pub(super) fn apply(&self, x: &[f32], q: &mut Quantized, out: &mut Vec<f32>) {
        q.fill(x, self.inputs);
        self.apply_quantized(q, out);
    }

    /// `out = x · Wᵀ + b` for rows already quantized at this layer's width.
    fn apply_quantized(&self, x: &Quantized, out: &mut Vec<f32>) {
        assert_eq!(x.inputs, self.inputs, "activations quantized at another width");
        let rows = x.rows();
        out.clear();
        out.resize(rows * self.outputs, 0.0);
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512vnni") {
                // SAFETY: the features are present; every index is checked against the lengths.
                return unsafe { self.apply_vnni(x, out) };
            }
            if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
                // SAFETY: as above.
                return unsafe { self.apply_avx2(x, out) };
            }
        }
        self.apply_plain(x, out);
    }

    /// The reference loop, and what CPUs without AVX2 run.
    fn apply_plain(&self, x: &Quantized, out: &mut [f32]) {
        let blocks = self.inputs / BLOCK;
        for (r, row) in out.chunks_exact_mut(self.outputs).enumerate() {
            let xq = &x.bytes[r * self.inputs..][..self.inputs];
            let xs = &x.scales[r * blocks..][..blocks];
            for (n, o) in row.iter_mut().enumerate() {
                let (group, lane) = (n / LANES, n % LANES);
                let mut acc = self.bias[n];
                for (b, x_scale) in xs.iter().enumerate() {
                    let w = &self.packed[(group * blocks + b) * GROUP_BLOCK..][..GROUP_BLOCK];
                    let mut sum = 0i32;
                    for step in 0..STEPS {
                        let four = &w[(step * LANES + lane) * 4..][..4];
                        let xs4 = &xq[b * BLOCK + step * 4..][..4];
                        sum += four
                            .iter()
                            .zip(xs4)
                            .map(|(&w, &x)| i32::from(w) * i32::from((x ^ 0x80) as i8))
                            .sum::<i32>();
                    }
                    let at = (group * blocks + b) * LANES + lane;
                    acc = (sum as f32).mul_add(self.scale[at] * x_scale, acc);
                }
                *o = acc;
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512vnni")]
    fn apply_vnni(&self, x: &Quantized, out: &mut [f32]) {
        use std::arch::x86_64::*;
        let blocks = self.inputs / BLOCK;
        let rows = x.rows();
        assert!(x.bytes.len() >= rows * self.inputs && x.scales.len() >= rows * blocks);
        assert!(out.len() >= rows * self.outputs);
        assert!(self.packed.len() >= self.outputs * self.inputs && self.scale.len() >= self.outputs * blocks);
        assert!(self.shift.len() >= self.outputs * blocks && self.bias.len() >= self.outputs);
        let (xb, xs) = (x.bytes.as_ptr(), x.scales.as_ptr());
        for group in 0..self.outputs / LANES {
            // SAFETY (every pointer below): group < outputs / 16, b < blocks and r < rows,
            // so each read or write lies inside the lengths asserted above.
            let bias = unsafe { _mm512_loadu_ps(self.bias.as_ptr().add(group * LANES)) };
            let mut first = 0;
            while first < rows {
                let n = ROWS.min(rows - first);
                let mut acc = [bias; ROWS];
                for b in 0..blocks {
                    let gb = group * blocks + b;
                    let w = unsafe { self.packed.as_ptr().add(gb * GROUP_BLOCK) };
                    let mut wv = [_mm512_setzero_si512(); STEPS];
                    for (s, v) in wv.iter_mut().enumerate() {
                        *v = unsafe { _mm512_loadu_si512(w.add(s * LANES * 4).cast()) };
                    }
                    let shift = unsafe { _mm512_loadu_si512(self.shift.as_ptr().add(gb * LANES).cast()) };
                    let scale = unsafe { _mm512_loadu_ps(self.scale.as_ptr().add(gb * LANES)) };
                    for (r, a) in acc.iter_mut().enumerate().take(n) {
                        let row = first + r;
                        let xp = unsafe { xb.add(row * self.inputs + b * BLOCK) };
                        let mut sum = shift;
                        for (s, wv) in wv.iter().enumerate() {
                            let x4 = unsafe { xp.add(4 * s).cast::<i32>().read_unaligned() };
                            sum = _mm512_dpbusd_epi32(sum, _mm512_set1_epi32(x4), *wv);
                        }
                        let step = _mm512_mul_ps(scale, _mm512_set1_ps(unsafe { *xs.add(row * blocks + b) }));
                        *a = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), step, *a);
                    }
                }
                for (r, a) in acc.iter().enumerate().take(n) {
                    unsafe { _mm512_storeu_ps(out.as_mut_ptr().add((first + r) * self.outputs + group * LANES), *a) };
                }
                first += n;
            }
        }
    }

    /// Without VNNI: `vpmaddubsw` multiplies unsigned by signed bytes into saturating i16
    /// pairs, so it is given |w| and x carrying w's sign (both at most 127: no pair can
    /// saturate), which makes no +128 shift and no correction.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn apply_avx2(&self, x: &Quantized, out: &mut [f32]) {
        use std::arch::x86_64::*;
        let blocks = self.inputs / BLOCK;
        let rows = x.rows();
        assert!(x.bytes.len() >= rows * self.inputs && x.scales.len() >= rows * blocks);
        assert!(out.len() >= rows * self.outputs);
        assert!(self.packed.len() >= self.outputs * self.inputs && self.scale.len() >= self.outputs * blocks);
        assert!(self.bias.len() >= self.outputs);
        let (xb, xs) = (x.bytes.as_ptr(), x.scales.as_ptr());
        let (ones, flip) = (_mm256_set1_epi16(1), _mm256_set1_epi8(-128));
        // Eight outputs at a time: a group's lanes 0–7, then 8–15.
        for half in 0..self.outputs / 8 {
            let (group, lo) = (half / 2, (half % 2) * 8);
            // SAFETY (every pointer below): as in `apply_vnni`, inside the asserted lengths.
            let bias = unsafe { _mm256_loadu_ps(self.bias.as_ptr().add(half * 8)) };
            let mut first = 0;
            while first < rows {
                let n = ROWS.min(rows - first);
                let mut acc = [bias; ROWS];
                for b in 0..blocks {
                    let gb = group * blocks + b;
                    let w = unsafe { self.packed.as_ptr().add(gb * GROUP_BLOCK + lo * 4) };
                    let (mut wv, mut wabs) = ([_mm256_setzero_si256(); STEPS], [_mm256_setzero_si256(); STEPS]);
                    for (s, (v, a)) in wv.iter_mut().zip(&mut wabs).enumerate() {
                        *v = unsafe { _mm256_loadu_si256(w.add(s * LANES * 4).cast()) };
                        *a = _mm256_abs_epi8(*v);
                    }
                    let scale = unsafe { _mm256_loadu_ps(self.scale.as_ptr().add(gb * LANES + lo)) };
                    for (r, a) in acc.iter_mut().enumerate().take(n) {
                        let row = first + r;
                        let xp = unsafe { xb.add(row * self.inputs + b * BLOCK) };
                        let mut sum = _mm256_setzero_si256();
                        for (s, (wv, wabs)) in wv.iter().zip(&wabs).enumerate() {
                            let x4 = unsafe { xp.add(4 * s).cast::<i32>().read_unaligned() };
                            let signed = _mm256_xor_si256(_mm256_set1_epi32(x4), flip);
                            let pairs = _mm256_maddubs_epi16(*wabs, _mm256_sign_epi8(signed, *wv));
                            sum = _mm256_add_epi32(sum, _mm256_madd_epi16(pairs, ones));
                        }
                        let step = _mm256_mul_ps(scale, _mm256_set1_ps(unsafe { *xs.add(row * blocks + b) }));
                        *a = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), step, *a);
                    }
                }
                for (r, a) in acc.iter().enumerate().take(n) {
                    unsafe { _mm256_storeu_ps(out.as_mut_ptr().add((first + r) * self.outputs + half * 8), *a) };
                }
                first += n;
            }
        }
    }
}

/// Symmetric int8 of one block; returns the scale (value = q · scale). Written to vectorise
/// at any lane count: the maximum in 8 lanes, rounding half to even by the 1.5·2²³ trick
/// (exact here, every value being at most 127 in size) rather than a libm call per value.
#[inline(always)]
fn quantize(block: &[f32; BLOCK], out: &mut [i8; BLOCK]) -> f32 {
    const ROUND: f32 = 12_582_912.0;
    let mut lanes = [0f32; 8];
    for chunk in block.as_chunks::<8>().0 {
        for (m, v) in lanes.iter_mut().zip(chunk) {
            *m = if v.abs() > *m { v.abs() } else { *m };
        }
    }
    let max = lanes.iter().fold(0f32, |a, &b| if b > a { b } else { a });
    let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
    let inv = 1.0 / scale;
    out.iter_mut().zip(block).for_each(|(q, v)| *q = ((v * inv + ROUND) - ROUND) as i8);
    scale
}

#[cfg(test)]
mod tests;
