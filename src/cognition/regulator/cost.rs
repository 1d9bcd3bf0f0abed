//! Cost and quality per turn, and the rules that stop spending (docs/cognition.md §13.4).

use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Cumulative output tokens after which a run of poor replies stops spending.
pub const DEFAULT_TOKEN_CAP: u64 = 10_000;
/// How many quality samples are kept.
pub const QUALITY_HISTORY: usize = 20;
/// The breaks read the last this many samples; with fewer, quality is unknown and no break fires.
pub const QUALITY_WINDOW: usize = 3;
/// A mean below this is poor.
pub const POOR_QUALITY: f64 = 0.5;
/// Oldest − newest over the window at or above this is a decline.
pub const DECLINE_MIN_DELTA: f64 = 0.15;
/// Calls to one tool in one turn that make a loop.
pub const TOOL_LOOP_CALLS: usize = 5;

/// What one role spent in a turn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spend {
    pub calls: u32,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub wall_ms: u64,
}

impl Spend {
    pub fn add(&mut self, tokens_in: u32, tokens_out: u32, wall_ms: u64) {
        self.calls += 1;
        self.tokens_in += u64::from(tokens_in);
        self.tokens_out += u64::from(tokens_out);
        self.wall_ms += wall_ms;
    }
}

/// The quality history, newest last, each in [0, 1].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Qualities(pub VecDeque<f64>);

impl Qualities {
    /// Record a sample; non-finite values are dropped, others clamped to [0, 1].
    pub fn push(&mut self, q: f64) {
        if !q.is_finite() {
            return;
        }
        if self.0.len() == QUALITY_HISTORY {
            self.0.pop_front();
        }
        self.0.push_back(q.clamp(0.0, 1.0));
    }

    /// The last [`QUALITY_WINDOW`] samples, oldest first, or `None` while there are fewer:
    /// unknown quality is not good quality and not bad either, so it fires nothing.
    pub fn window(&self) -> Option<Vec<f64>> {
        let n = self.0.len();
        (n >= QUALITY_WINDOW).then(|| self.0.iter().skip(n - QUALITY_WINDOW).copied().collect())
    }

    pub fn window_mean(&self) -> Option<f64> {
        self.window().map(|w| w.iter().sum::<f64>() / w.len() as f64)
    }

    /// Oldest − newest over the window and its mean, when they make a decline with no recovery.
    pub fn decline(&self) -> Option<(f64, f64)> {
        let w = self.window()?;
        let delta = w[0] - w[w.len() - 1];
        let mean = w.iter().sum::<f64>() / w.len() as f64;
        // A small epsilon: 0.3 − 0.15 is 0.15 in decimal but not in binary.
        (delta >= DECLINE_MIN_DELTA - 1e-9 && mean < POOR_QUALITY).then_some((delta, mean))
    }
}

/// `0.7·clamp(tokens_out/1000) + 0.3·clamp(wall_ms/10000)`: one typical turn is 1.0.
pub fn normalized_cost(tokens_out: u64, wall_ms: u64) -> f64 {
    0.7 * (tokens_out as f64 / 1000.0).clamp(0.0, 1.0) + 0.3 * (wall_ms as f64 / 10_000.0).clamp(0.0, 1.0)
}

/// The tool called [`TOOL_LOOP_CALLS`] or more times in a row at the end of a turn's calls, with
/// the length of that run. Arguments are ignored; alternating tools never loop.
pub fn tool_loop(calls: &[String]) -> Option<(String, usize)> {
    let last = calls.last()?;
    let run = calls.iter().rev().take_while(|c| *c == last).count();
    (run >= TOOL_LOOP_CALLS).then(|| (last.clone(), run))
}
