//! Neurogenesis (parameters §12.3, docs/cognition.md §9.4.5): a message the graph does not know
//! yet, but that is near enough to be about something, becomes a probationary node with a
//! deterministic id; later firings confirm it, and one never confirmed expires.

use sha2::{Digest, Sha256};

/// Top-1 similarity at or above this: the graph knows it.
pub const KNOWN: f64 = 0.60;
/// Below this: noise.
pub const NOISE: f64 = 0.28;
/// Up to this: novel (grow a node). Between this and [`KNOWN`]: a near miss, no node.
pub const NOVEL_MAX: f64 = 0.58;
/// Fewer tokens than this never make a node.
pub const MIN_TOKENS: usize = 3;
/// Short fillers that never make a node, whatever their length.
pub const BLOCKED: [&str; 10] = ["hello", "thanks", "yes", "no", "ok", "hi", "bye", "got it", "sure", "yeah"];
/// A grown node's threshold, and the weight of the edge from each of the message's seeds.
pub const GROWN_THRESHOLD: f64 = 0.8;
pub const SEED_EDGE: f64 = 0.15;
/// A grown node's name is cut to this many characters.
pub const MAX_NAME_CHARS: usize = 120;
/// Firings that confirm a probationary node (v2 design: 2 firings or 1 explicit positive outcome).
pub const CONFIRM_FIRINGS: i64 = 2;
/// A probationary node still unconfirmed after this long is dropped. Seconds, named in
/// seconds (the reference compared seconds with a limit named in turns).
pub const PROBATION_TTL_S: i64 = 14 * 86_400;
/// New nodes per day.
pub const MAX_GROWN_PER_DAY: i64 = 60;

/// What the gate made of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Novelty {
    Blocked,
    Known,
    Noise,
    Novel,
    NearMiss,
}

/// Lowercase `[a-z0-9']+` tokens joined by single spaces.
pub fn normalise(text: &str) -> String {
    let lower = text.to_lowercase();
    let tokens: Vec<&str> = lower
        .split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '\''))
        .filter(|t| !t.is_empty())
        .collect();
    tokens.join(" ")
}

/// The gates, in the reference's order, over the normalised text and the top-1 similarity to
/// an existing concept (`None`: the graph is empty, which counts as noise-free novel).
pub fn novelty(normalised: &str, top1: Option<f64>) -> Novelty {
    if normalised.split(' ').filter(|t| !t.is_empty()).count() < MIN_TOKENS || BLOCKED.contains(&normalised) {
        return Novelty::Blocked;
    }
    match top1 {
        Some(s) if s >= KNOWN => Novelty::Known,
        Some(s) if s < NOISE => Novelty::Noise,
        Some(s) if s <= NOVEL_MAX => Novelty::Novel,
        Some(_) => Novelty::NearMiss,
        None => Novelty::Novel,
    }
}

/// The deterministic id: `auto:` and the first 12 hex characters of SHA-256 of the normalised
/// text (the reference used SHA-1; the crate already has SHA-256).
pub fn graph_key(normalised: &str) -> String {
    let d = Sha256::digest(normalised.as_bytes());
    let hex: String = d.iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("auto:{hex}")
}

/// A grown node's name: the normalised text, cut at a word boundary.
pub fn grown_name(normalised: &str) -> String {
    if normalised.chars().count() <= MAX_NAME_CHARS {
        return normalised.to_string();
    }
    let cut: String = normalised.chars().take(MAX_NAME_CHARS).collect();
    cut.rsplit_once(' ').map_or(cut.clone(), |(head, _)| head.to_string())
}

/// Whether a probationary node is confirmed (`positive`: an explicit positive outcome while it fired).
pub fn confirmed(fired_count: i64, positive: bool) -> bool {
    fired_count >= CONFIRM_FIRINGS || positive
}

/// Whether an unconfirmed node is past its probation.
pub fn expired(created_at: i64, now: i64) -> bool {
    now - created_at > PROBATION_TTL_S
}

#[cfg(test)]
mod tests {
    use super::*;

    /// parameters §12.6 neurogenesis vectors.
    #[test]
    fn recorded_gates_and_ids() {
        let text = normalise("Tell me about giraffe codewords");
        assert_eq!(novelty(&text, Some(0.76)), Novelty::Known);
        assert_eq!(novelty(&text, Some(0.32)), Novelty::Novel);
        assert_eq!(novelty(&text, Some(0.24)), Novelty::Noise);
        assert_eq!(novelty(&text, Some(0.59)), Novelty::NearMiss);
        for filler in ["hello", "thanks", "Hi!", "got it", "ok sure"] {
            assert_eq!(novelty(&normalise(filler), Some(0.32)), Novelty::Blocked, "{filler}");
        }
        assert_eq!(
            graph_key(&normalise("  Giraffe concept for codeword  ")),
            graph_key("giraffe concept for codeword")
        );
        assert_ne!(graph_key("giraffe concept for codeword"), graph_key("giraffe concept for codewords"));
        assert_eq!(graph_key("x").len(), "auto:".len() + 12);
    }

    #[test]
    fn probation_confirms_and_expires() {
        assert!(!confirmed(1, false));
        assert!(confirmed(2, false) && confirmed(0, true));
        assert!(!expired(0, PROBATION_TTL_S) && expired(0, PROBATION_TTL_S + 1));
        let long = "word ".repeat(60);
        assert!(grown_name(&normalise(&long)).chars().count() <= MAX_NAME_CHARS);
    }
}
