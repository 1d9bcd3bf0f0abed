//! An int8 linear layer for the embedding encoder: weights quantized once per output row,
//! activations per token row, products summed in i32.
//!
//! Why our own kernel: candle's Q8_0 product spends most of a sentence's time on its spinning
//! thread barrier and on per-block f16 scales when the two cores are shared, and was slower
//! than its own F32 path here. With AVX-512 VNNI one instruction does 64 byte products; the
//! weights are laid out so one load feeds 16 outputs of up to 8 token rows at once. Other CPUs
//! take the plain loop, which gives the same integers, so the same vectors.

/// Outputs per weight group: one 512-bit register of i32 sums.
const LANES: usize = 16;
/// Token rows that share each loaded weight group.
const ROWS: usize = 8;

pub(super) struct Int8Linear {
    /// Groups of 16 outputs; in each, for every 4 inputs, the 16 outputs' 4 bytes side by side.
    packed: Vec<i8>,
    /// Per output: its weight scale, and the sum of its int8 weights (undoes the +128 shift).
    scale: Vec<f32>,
    row_sum: Vec<i32>,
    bias: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

impl Int8Linear {
    /// `weights` row-major `[outputs, inputs]` as stored; `outputs` a multiple of 16 and
    /// `inputs` of 4 (every MiniLM layer is).
    pub(super) fn new(weights: &[f32], bias: Vec<f32>, inputs: usize) -> Result<Int8Linear, String> {
        let outputs = bias.len();
        if weights.len() != outputs * inputs || !outputs.is_multiple_of(LANES) || !inputs.is_multiple_of(4) {
            return Err(format!("linear of {} weights is not {outputs}×{inputs} in whole groups", weights.len()));
        }
        let mut q = vec![0i8; weights.len()];
        let mut scale = Vec::with_capacity(outputs);
        let mut row_sum = Vec::with_capacity(outputs);
        for (row, out) in weights.chunks_exact(inputs).zip(q.chunks_exact_mut(inputs)) {
            let s = quantize(row, out);
            scale.push(s);
            row_sum.push(out.iter().map(|&v| i32::from(v)).sum());
        }
        let mut packed = Vec::with_capacity(q.len());
        for group in 0..outputs / LANES {
            for k4 in 0..inputs / 4 {
                for lane in 0..LANES {
                    let start = (group * LANES + lane) * inputs + 4 * k4;
                    packed.extend_from_slice(&q[start..start + 4]);
                }
            }
        }
        Ok(Int8Linear { packed, scale, row_sum, bias, inputs, outputs })
    }

    /// `out = x · Wᵀ + b` for every row of `x` (`inputs` wide).
    pub(super) fn apply(&self, x: &[f32], out: &mut Vec<f32>) {
        let rows = x.len() / self.inputs;
        let mut xq = vec![0u8; rows * self.inputs];
        let mut x_scale = Vec::with_capacity(rows);
        let mut signed = vec![0i8; self.inputs];
        for (row, dst) in x.chunks_exact(self.inputs).zip(xq.chunks_exact_mut(self.inputs)) {
            x_scale.push(quantize(row, &mut signed));
            dst.iter_mut().zip(&signed).for_each(|(d, &s)| *d = (i16::from(s) + 128) as u8);
        }
        let mut sums = vec![0i32; rows * self.outputs];
        self.products(&xq, rows, &mut sums);
        out.clear();
        out.reserve(rows * self.outputs);
        for (r, row) in sums.chunks_exact(self.outputs).enumerate() {
            out.extend(
                row.iter()
                    .enumerate()
                    .map(|(n, &acc)| (acc - 128 * self.row_sum[n]) as f32 * x_scale[r] * self.scale[n] + self.bias[n]),
            );
        }
    }

    /// `sums[r][n] = Σ_k xq[r][k] · w[n][k]` (unsigned × signed bytes).
    fn products(&self, xq: &[u8], rows: usize, sums: &mut [i32]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512vnni") {
            // SAFETY: the features are present; slice lengths are checked inside.
            unsafe { self.products_vnni(xq, rows, sums) };
            return;
        }
        self.products_plain(xq, rows, sums);
    }

    fn products_plain(&self, xq: &[u8], rows: usize, sums: &mut [i32]) {
        let k4s = self.inputs / 4;
        for r in 0..rows {
            let x = &xq[r * self.inputs..][..self.inputs];
            for group in 0..self.outputs / LANES {
                let w = &self.packed[group * k4s * LANES * 4..][..k4s * LANES * 4];
                for lane in 0..LANES {
                    let mut acc = 0i32;
                    for k4 in 0..k4s {
                        let wl = &w[(k4 * LANES + lane) * 4..][..4];
                        let xl = &x[4 * k4..][..4];
                        acc += wl.iter().zip(xl).map(|(&a, &b)| i32::from(a) * i32::from(b)).sum::<i32>();
                    }
                    sums[r * self.outputs + group * LANES + lane] = acc;
                }
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512vnni")]
    unsafe fn products_vnni(&self, xq: &[u8], rows: usize, sums: &mut [i32]) {
        use std::arch::x86_64::*;
        let k4s = self.inputs / 4;
        assert!(xq.len() >= rows * self.inputs && sums.len() >= rows * self.outputs);
        assert!(self.packed.len() >= self.outputs / LANES * k4s * LANES * 4);
        for group in 0..self.outputs / LANES {
            let w = self.packed[group * k4s * LANES * 4..].as_ptr();
            let mut first = 0;
            while first < rows {
                let n = ROWS.min(rows - first);
                let mut acc = [_mm512_setzero_si512(); ROWS];
                for k4 in 0..k4s {
                    // SAFETY: group and k4 are in range of `packed` (asserted above).
                    let wv = unsafe { _mm512_loadu_si512(w.add(k4 * LANES * 4).cast()) };
                    for (r, a) in acc.iter_mut().enumerate().take(n) {
                        let at = (first + r) * self.inputs + 4 * k4;
                        let x4 = i32::from_le_bytes([xq[at], xq[at + 1], xq[at + 2], xq[at + 3]]);
                        *a = _mm512_dpbusd_epi32(*a, _mm512_set1_epi32(x4), wv);
                    }
                }
                for (r, a) in acc.iter().enumerate().take(n) {
                    let dst = &mut sums[(first + r) * self.outputs + group * LANES..][..LANES];
                    // SAFETY: `dst` is 16 i32 wide.
                    unsafe { _mm512_storeu_si512(dst.as_mut_ptr().cast(), *a) };
                }
                first += n;
            }
        }
    }
}

/// Symmetric int8 of one row; returns the scale (value = q · scale).
fn quantize(row: &[f32], out: &mut [i8]) -> f32 {
    let max = row.iter().fold(0f32, |m, v| m.max(v.abs()));
    let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
    let inv = 1.0 / scale;
    out.iter_mut().zip(row).for_each(|(q, v)| *q = (v * inv).round().clamp(-127.0, 127.0) as i8);
    scale
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(n: usize, seed: f32) -> Vec<f32> {
        (0..n).map(|i| (i as f32 * 0.7373 + seed).sin() * 3.0).collect()
    }

    #[test]
    fn the_fast_and_plain_products_agree_and_track_f32() {
        let (inputs, outputs, rows) = (64, 32, 11);
        let w = values(inputs * outputs, 0.3);
        let bias = values(outputs, 1.1);
        let x = values(rows * inputs, 2.9);
        let layer = Int8Linear::new(&w, bias.clone(), inputs).unwrap();
        let mut out = Vec::new();
        layer.apply(&x, &mut out);

        let xq: Vec<u8> = (0..rows * inputs).map(|i| (i * 37 % 256) as u8).collect();
        let (mut fast, mut plain) = (vec![0; rows * outputs], vec![0; rows * outputs]);
        layer.products(&xq, rows, &mut fast);
        layer.products_plain(&xq, rows, &mut plain);
        assert_eq!(fast, plain);

        for r in 0..rows {
            for n in 0..outputs {
                let exact: f32 = bias[n] + (0..inputs).map(|k| x[r * inputs + k] * w[n * inputs + k]).sum::<f32>();
                let got = out[r * outputs + n];
                // Rounding error grows with the operands' sizes, not the (possibly cancelled) result.
                let norm = |v: &[f32]| v.iter().map(|a| a * a).sum::<f32>().sqrt();
                let bound = 0.01 * norm(&x[r * inputs..][..inputs]) * norm(&w[n * inputs..][..inputs]);
                assert!((got - exact).abs() < bound, "row {r} out {n}: {got} vs {exact}");
            }
        }
    }

    #[test]
    fn shapes_that_do_not_fill_whole_groups_are_refused() {
        assert!(Int8Linear::new(&[0.0; 8 * 15], vec![0.0; 15], 8).is_err());
        assert!(Int8Linear::new(&[0.0; 6 * 16], vec![0.0; 16], 6).is_err());
    }
}
