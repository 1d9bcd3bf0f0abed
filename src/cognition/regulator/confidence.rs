//! Confidence from token log-probabilities, and the stretches of a reply the model was unsure
//! of (docs/cognition.md §13.3).
//!
//! A provider that returns no log-probabilities still gets a confidence, from the shape of the
//! reply, so the number is always present; spans need real log-probabilities and are empty
//! without them.

use std::collections::VecDeque;

/// How many of the most recent log-probabilities the confidence reads.
pub const WINDOW: usize = 128;
/// A token at or below this log-probability (p ≈ 0.135) is a low one.
pub const LOW_TOKEN_LOGPROB: f64 = -2.0;
/// A single low token makes a span on its own only below this (p ≈ 0.018): one rare name in
/// a confident sentence is not worth marking, a guess is.
pub const LONE_TOKEN_LOGPROB: f64 = -4.0;

/// Whether a provider's value is a usable log-probability: finite and negative. Zero is the
/// events' "unavailable"; positive values are provider noise.
pub fn usable(logprob: f64) -> bool {
    logprob.is_finite() && logprob < 0.0
}

/// `clamp(0.5 + 0.5·(4 − meanNLL)/3, 0, 1)`: mean NLL 1 → 1.0, 4 → 0.5, 7 → 0.0.
pub fn from_mean_nll(mean_nll: f64) -> f64 {
    (0.5 + 0.5 * (4.0 - mean_nll) / 3.0).clamp(0.0, 1.0)
}

/// The shape heuristic for a reply without log-probabilities: short and full of questions is
/// unsure, long and declarative is sure. Language-neutral (length and `?` only).
pub fn structural(text: &str) -> f64 {
    let chars = text.chars().count();
    if chars == 0 {
        return 0.5;
    }
    let short = chars < 40;
    let questions = text.chars().filter(|&c| c == '?').count() as f64 / chars as f64 >= 0.02;
    match (short, questions) {
        (true, true) => 0.2,
        (true, false) | (false, true) => 0.4,
        (false, false) => 0.7,
    }
}

/// The rolling window of a turn's usable log-probabilities.
#[derive(Debug, Clone, Default)]
pub struct Window {
    values: VecDeque<f64>,
    sum_nll: f64,
}

impl Window {
    pub fn clear(&mut self) {
        self.values.clear();
        self.sum_nll = 0.0;
    }

    pub fn push(&mut self, logprob: f64) {
        if !usable(logprob) {
            return;
        }
        if self.values.len() == WINDOW
            && let Some(old) = self.values.pop_front()
        {
            self.sum_nll += old;
        }
        self.values.push_back(logprob);
        self.sum_nll -= logprob;
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The mean negative log-likelihood over the window, if it holds any value.
    pub fn mean_nll(&self) -> Option<f64> {
        (!self.values.is_empty()).then(|| self.sum_nll / self.values.len() as f64)
    }

    /// From the window when it has values, else from the reply's shape.
    pub fn confidence(&self, reply: &str) -> f64 {
        self.mean_nll().map_or_else(|| structural(reply), from_mean_nll)
    }
}

/// One streamed token of the reply and its log-probability (`None` when the provider gave none).
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub text: String,
    pub logprob: Option<f64>,
}

/// A stretch of the reply the model was unsure of, in characters (not bytes) of the reply.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
    pub text: String,
    pub mean_logprob: f64,
    pub confidence: f64,
}

/// The low-confidence spans of a reply. Runs of low tokens are joined across one confident
/// token between them (a space or a comma inside an unsure phrase); a run is kept when its mean
/// is low and it has two tokens or one very low one. Offsets are in the reply's characters: the
/// tokens' text is located in `reply` (which may be the tokens trimmed), and a reply that is
/// not the tokens' text gets no spans rather than wrong ones.
pub fn spans(tokens: &[Token], reply: &str) -> Vec<Span> {
    let joined: String = tokens.iter().map(|t| t.text.as_str()).collect();
    let Some(lead) = leading_cut(&joined, reply) else {
        return Vec::new();
    };
    let reply_chars = reply.chars().count();
    // Each token's start in characters and in bytes of the joined text.
    let mut starts = Vec::with_capacity(tokens.len() + 1);
    let (mut at, mut byte) = (0usize, 0usize);
    for t in tokens {
        starts.push((at, byte));
        at += t.text.chars().count();
        byte += t.text.len();
    }
    starts.push((at, byte));
    let low = |t: &Token| t.logprob.is_some_and(|lp| usable(lp) && lp <= LOW_TOKEN_LOGPROB);
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if !low(&tokens[i]) {
            i += 1;
            continue;
        }
        let mut end = i + 1;
        while end < tokens.len() {
            if low(&tokens[end]) {
                end += 1;
            } else if end + 1 < tokens.len() && low(&tokens[end + 1]) {
                end += 2;
            } else {
                break;
            }
        }
        let lps: Vec<f64> = tokens[i..end].iter().filter_map(|t| t.logprob.filter(|&lp| usable(lp))).collect();
        let mean = lps.iter().sum::<f64>() / lps.len().max(1) as f64;
        let lows = tokens[i..end].iter().filter(|t| low(t)).count();
        if mean <= LOW_TOKEN_LOGPROB && (lows >= 2 || mean <= LONE_TOKEN_LOGPROB) {
            push_trimmed(&mut out, &joined, (starts[i], starts[end]), lead, mean, reply_chars);
        }
        i = end;
    }
    out
}

/// How many leading characters of the tokens' text the reply lost (it may be the tokens
/// trimmed); `None` when the reply is some other text.
fn leading_cut(joined: &str, reply: &str) -> Option<usize> {
    if joined == reply {
        return Some(0);
    }
    let lead = joined.chars().take_while(|c| c.is_whitespace()).count();
    (joined.trim() == reply.trim()).then_some(lead)
}

fn push_trimmed(
    out: &mut Vec<Span>,
    joined: &str,
    ((start, from), (_, to)): ((usize, usize), (usize, usize)),
    cut: usize,
    mean: f64,
    reply_chars: usize,
) {
    let text = &joined[from..to];
    let lead = text.chars().take_while(|c| c.is_whitespace()).count();
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return;
    }
    let Some(s) = (start + lead).checked_sub(cut) else {
        return;
    };
    let e = s + trimmed.chars().count();
    if e > reply_chars {
        return;
    }
    out.push(Span {
        start: s,
        end: e,
        text: trimmed.to_string(),
        mean_logprob: mean,
        confidence: from_mean_nll(-mean),
    });
}
