//! What the generation thread does with each token besides decoding it: its
//! log-probability, the stop-string filter, and the outbox that carries the text to the
//! caller.

use crate::llm::Token;
use std::sync::Mutex;
use tokio::sync::Notify;

/// Streamed text on its way from the generation thread to the caller.
///
/// The thread appends and rings; the caller takes everything waiting at once. Pieces without
/// a log-probability are merged as they arrive, so a caller that is busy (or a reply that
/// needs no log-probabilities) gets a few larger pieces instead of one message per token.
#[derive(Default)]
pub(super) struct Outbox {
    pending: Mutex<Vec<Token>>,
    pub(super) ready: Notify,
}

impl Outbox {
    pub(super) fn push(&self, piece: String, logprob: Option<f64>) {
        if let Ok(mut p) = self.pending.lock() {
            match p.last_mut() {
                Some(last) if logprob.is_none() && last.logprob.is_none() => last.text.push_str(&piece),
                _ => p.push(Token { text: piece, logprob }),
            }
        }
        // A stored permit: a ring while the caller is not waiting is not lost.
        self.ready.notify_one();
    }

    pub(super) fn take(&self) -> Vec<Token> {
        self.pending.lock().map(|mut p| std::mem::take(&mut *p)).unwrap_or_default()
    }
}

/// Natural-log probability of `token` under the raw logits.
///
/// Runs over the whole vocabulary (49,152 logits) for every generated token, so it is
/// written to vectorise: f32 throughout and a polynomial `exp` instead of libm's, which
/// the compiler cannot turn into SIMD. Its error (~1e-6) is far below what the
/// regulator's low-confidence spans (logprob ≤ −2.0) can notice (docs/cognition.md §13.3).
pub(super) fn log_softmax_at(logits: &[f32], token: usize) -> Option<f64> {
    let target = *logits.get(token)?;
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    // Eight partial sums: independent lanes the compiler can keep in one vector register.
    let mut lanes = [0f32; 8];
    let mut chunks = logits.chunks_exact(8);
    for c in &mut chunks {
        for (acc, &l) in lanes.iter_mut().zip(c) {
            *acc += exp_nonpositive(l - max);
        }
    }
    let tail: f32 = chunks.remainder().iter().map(|&l| exp_nonpositive(l - max)).sum();
    let sum = lanes.iter().sum::<f32>() + tail;
    Some(f64::from(target - max) - f64::from(sum).ln())
}

/// `e^x` for `x <= 0` (relative error ~2e-7): `x = n·ln2 + r`, `|r| <= ln2/2`, a degree-6
/// Taylor polynomial for `e^r` and `2^n` built in the exponent bits. Below -87 the
/// result would leave f32's normal range; there it is clamped, which a sum of
/// probabilities that includes `e^0 = 1` cannot notice.
#[inline(always)]
fn exp_nonpositive(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    // Adding 1.5·2^23 rounds to the nearest integer without a rounding instruction.
    const ROUND: f32 = 12_582_912.0;
    let x = x.max(-87.0);
    let n = (x * LOG2E + ROUND) - ROUND;
    let r = x - n * LN2_HI - n * LN2_LO;
    let p = 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0))))));
    let scale = f32::from_bits(((n as i32 + 127) as u32) << 23);
    p * scale
}

/// Holds back text that might be the start of a stop string, so a stop string is
/// never shown to the user and never part of the result.
pub(super) struct StopFilter<'a> {
    stops: &'a [String],
    /// Everything accepted so far (what the reply is).
    pub(super) text: String,
    /// Accepted but not yet emitted.
    held: String,
}

impl<'a> StopFilter<'a> {
    pub(super) fn new(stops: &'a [String]) -> Self {
        StopFilter { stops, text: String::new(), held: String::new() }
    }

    /// Add a piece; returns (text safe to emit now, whether a stop string was hit).
    pub(super) fn push(&mut self, piece: &str) -> (String, bool) {
        self.held.push_str(piece);
        for stop in self.stops.iter().filter(|s| !s.is_empty()) {
            if let Some(at) = self.held.find(stop.as_str()) {
                let emit = self.held[..at].to_string();
                self.text.push_str(&emit);
                self.held.clear();
                return (emit, true);
            }
        }
        // Keep the longest suffix that is a prefix of some stop string.
        let keep = self
            .stops
            .iter()
            .flat_map(|s| (1..s.len().min(self.held.len() + 1)).rev().map(move |n| &s[..n]))
            .filter(|p| self.held.ends_with(p) && self.held.is_char_boundary(self.held.len() - p.len()))
            .map(str::len)
            .max()
            .unwrap_or(0);
        let cut = self.held.len() - keep;
        let emit: String = self.held.drain(..cut).collect();
        self.text.push_str(&emit);
        (emit, false)
    }

    /// The generation ended without a stop string: release what was held.
    pub(super) fn finish(&mut self) -> String {
        let rest = std::mem::take(&mut self.held);
        self.text.push_str(&rest);
        rest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_strings_are_never_emitted_even_across_pieces() {
        let stops = vec!["\nUser:".to_string()];
        let mut f = StopFilter::new(&stops);
        let mut shown = String::new();
        for piece in ["Hello", " there", "\nUs", "er: more"] {
            let (emit, stopped) = f.push(piece);
            shown.push_str(&emit);
            if stopped {
                break;
            }
        }
        assert_eq!(shown, "Hello there");
        assert_eq!(f.text, "Hello there");

        let mut f = StopFilter::new(&stops);
        let (a, _) = f.push("a\nU");
        assert_eq!(a, "a");
        assert_eq!(f.finish(), "\nU");
        assert_eq!(f.text, "a\nU");
    }

    #[test]
    fn the_outbox_merges_pieces_without_logprobs_and_keeps_the_others_apart() {
        let o = Outbox::default();
        o.push("Hel".into(), None);
        o.push("lo".into(), None);
        o.push(" there".into(), Some(-0.5));
        o.push("!".into(), Some(-0.1));
        o.push(" Bye".into(), None);
        let got = o.take();
        let want = [("Hello", None), (" there", Some(-0.5)), ("!", Some(-0.1)), (" Bye", None)]
            .map(|(t, l)| Token { text: t.into(), logprob: l });
        assert_eq!(got, want);
        assert!(o.take().is_empty());
    }

    #[test]
    fn log_softmax_is_a_log_probability() {
        let lp = log_softmax_at(&[0.0, 0.0], 1).unwrap();
        assert!((lp - 0.5f64.ln()).abs() < 1e-9);
        assert_eq!(log_softmax_at(&[1.0], 3), None);
    }

    /// The straightforward f64 computation the fast one must agree with.
    fn log_softmax_f64(logits: &[f32], token: usize) -> f64 {
        let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
        let sum: f64 = logits.iter().map(|&l| (l as f64 - max).exp()).sum();
        logits[token] as f64 - max - sum.ln()
    }

    #[test]
    fn fast_log_softmax_matches_f64_over_a_full_vocabulary() {
        // Logits spread like a small model's (a few peaks, a long tail, some far below the
        // max), generated by a fixed LCG so the test is deterministic.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (state >> 40) as f32 / (1u64 << 24) as f32
        };
        for spread in [1.0f32, 8.0, 40.0, 200.0] {
            let logits: Vec<f32> = (0..49_157).map(|_| (next() - 0.7) * spread).collect();
            for token in [0, 17, 4_096, 49_156] {
                let fast = log_softmax_at(&logits, token).unwrap();
                let exact = log_softmax_f64(&logits, token);
                assert!((fast - exact).abs() < 1e-3, "spread {spread} token {token}: {fast} vs {exact}");
            }
            let best = (0..logits.len()).max_by(|&a, &b| logits[a].total_cmp(&logits[b])).unwrap();
            let fast = log_softmax_at(&logits, best).unwrap();
            assert!((fast - log_softmax_f64(&logits, best)).abs() < 1e-3);
        }
    }

    #[test]
    fn polynomial_exp_tracks_libm_down_to_the_clamp() {
        let mut x = 0.0f32;
        while x > -100.0 {
            let (fast, exact) = (exp_nonpositive(x) as f64, (x as f64).exp());
            let tolerance = if x < -87.0 { 1e-37 } else { exact * 1e-6 };
            assert!((fast - exact).abs() <= tolerance, "exp({x}) = {fast}, libm {exact}");
            x -= 0.0137;
        }
    }
}
