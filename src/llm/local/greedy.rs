//! Greedy decoding with a repetition penalty, on the logits as llama.cpp leaves them.
//!
//! llama.cpp's sampler chain (`penalties` then `greedy`) gives the same tokens, but for every
//! generated token it copies all 49,152 logits into a candidate array and looks each
//! candidate up in a hash map of recent tokens: a fixed cost per token that the plain greedy
//! loop of llama.cpp's own example does not pay (`benches/local_chat.rs` compares the two).
//! Here the penalty touches only the recent tokens themselves, in a scratch copy, and the
//! choice is two vectorisable passes (the maximum, then its first index).

use std::collections::VecDeque;

/// The chooser for one generation: the penalty covers the tokens it chose, as llama.cpp's
/// penalty sampler covers the tokens it accepted (the prompt's are not among them).
pub struct PenalizedGreedy {
    last_n: usize,
    penalty: f32,
    recent: VecDeque<i32>,
    scratch: Vec<f32>,
    seen: Vec<i32>,
}

impl PenalizedGreedy {
    pub fn new(last_n: usize, penalty: f32) -> PenalizedGreedy {
        PenalizedGreedy {
            last_n,
            penalty,
            recent: VecDeque::with_capacity(last_n),
            scratch: Vec::new(),
            seen: Vec::with_capacity(last_n),
        }
    }

    /// The next token: the first index of the largest logit once every token among the last
    /// `last_n` chosen has been penalised once (a positive logit divided by the penalty, any
    /// other multiplied by it, as llama.cpp does), remembered as chosen.
    pub fn pick(&mut self, logits: &[f32]) -> i32 {
        let token = if self.recent.is_empty() || self.penalty == 1.0 {
            first_argmax(logits)
        } else {
            self.scratch.clear();
            self.scratch.extend_from_slice(logits);
            self.seen.clear();
            self.seen.extend(self.recent.iter().copied());
            self.seen.sort_unstable();
            self.seen.dedup();
            for &t in &self.seen {
                if let Some(l) = usize::try_from(t).ok().and_then(|t| self.scratch.get_mut(t)) {
                    *l = if *l <= 0.0 { *l * self.penalty } else { *l / self.penalty };
                }
            }
            first_argmax(&self.scratch)
        };
        if self.last_n > 0 {
            if self.recent.len() == self.last_n {
                self.recent.pop_front();
            }
            self.recent.push_back(token);
        }
        token
    }
}

/// The first index of the largest value (0 for an empty slice; NaN never wins).
fn first_argmax(xs: &[f32]) -> i32 {
    // Eight independent lanes, so the maximum vectorises; then the first index holding it.
    let mut lanes = [f32::NEG_INFINITY; 8];
    let mut chunks = xs.chunks_exact(8);
    for c in &mut chunks {
        for (m, &x) in lanes.iter_mut().zip(c) {
            *m = m.max(x);
        }
    }
    let max = chunks.remainder().iter().fold(lanes.iter().copied().fold(f32::NEG_INFINITY, f32::max), |m, &x| m.max(x));
    xs.iter().position(|&x| x == max).unwrap_or(0) as i32
}

#[cfg(test)]
mod tests {
    use super::*;
    use llama_cpp_2::sampling::LlamaSampler;
    use llama_cpp_2::token::LlamaToken;
    use llama_cpp_2::token::data::LlamaTokenData;
    use llama_cpp_2::token::data_array::LlamaTokenDataArray;

    /// SplitMix64: logits with many near ties and repeats, from a seed.
    fn logits(seed: u64, n: usize) -> Vec<f32> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = s;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                z ^= z >> 31;
                // Coarse steps around zero: ties and both signs are common.
                ((z % 64) as f32 - 40.0) / 4.0
            })
            .collect()
    }

    #[test]
    fn it_chooses_what_llama_cpp_s_penalty_and_greedy_samplers_choose() {
        let n_vocab = 3_000;
        let mut chain =
            LlamaSampler::chain_simple([LlamaSampler::penalties(n_vocab, 64, 1.15, 0.0, 0.0), LlamaSampler::greedy()]);
        let mut ours = PenalizedGreedy::new(64, 1.15);
        let mut penalised_picks = 0;
        for step in 0..400u64 {
            // Every few steps the last choice gets the top logit again, so the penalty decides.
            let mut l = logits(step, n_vocab as usize);
            if let Some(&prev) = ours.recent.back()
                && step % 3 == 0
            {
                l[prev as usize] = 20.0;
                penalised_picks += 1;
            }
            let data = l.iter().enumerate().map(|(i, &x)| LlamaTokenData::new(LlamaToken(i as i32), x, 0.0));
            let mut array = LlamaTokenDataArray::from_iter(data, false);
            array.apply_sampler(&mut chain);
            let theirs = array.selected_token().expect("greedy selects a token");
            chain.accept(theirs);
            assert_eq!(ours.pick(&l), theirs.0, "step {step}");
        }
        assert!(penalised_picks > 100);
    }

    #[test]
    fn ties_go_to_the_first_index_and_a_recent_token_is_penalised_once() {
        let mut g = PenalizedGreedy::new(4, 2.0);
        assert_eq!(g.pick(&[1.0, 3.0, 3.0, -1.0]), 1);
        // 1 was chosen: 3.0 / 2 = 1.5 loses to index 2's 3.0.
        assert_eq!(g.pick(&[1.0, 3.0, 3.0, -1.0]), 2);
        // Both penalised once each (not once per occurrence): 1.5 each, index 0's 1.0 loses.
        assert_eq!(g.pick(&[1.0, 3.0, 3.0, -1.0]), 1);
        // A negative logit is multiplied: -1 * 2 = -2 never beats 0.
        let mut g = PenalizedGreedy::new(4, 2.0);
        assert_eq!(g.pick(&[-1.0, -3.0]), 0);
        assert_eq!(g.pick(&[-1.0, -1.5]), 1);
        assert_eq!(first_argmax(&[]), 0);
        assert_eq!(first_argmax(&[f32::NAN, 1.0, 2.0, 2.0]), 2);
    }

    #[test]
    fn only_the_last_n_choices_are_penalised() {
        let mut g = PenalizedGreedy::new(2, 10.0);
        let l = [5.0, 4.0, 3.0];
        assert_eq!(g.pick(&l), 0);
        assert_eq!(g.pick(&l), 1);
        assert_eq!(g.pick(&l), 2);
        // 0 has left the window of two.
        assert_eq!(g.pick(&l), 0);
    }
}
