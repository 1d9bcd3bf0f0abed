//! Scope drift: how much of a reply is about something the user did not ask for
//! (docs/cognition.md §13.2).

use super::keywords::{TaskBag, anchored, response_keywords};

/// Keyword drift at or above this is a candidate warning (the seed's 0.5). Settable in [0, 1].
pub const DEFAULT_THRESHOLD: f64 = 0.5;

/// A candidate warns only when the reply's embedding is less similar than this to the
/// request's (cosine, all-MiniLM-L6-v2). Keyword overlap alone flags short on-topic answers
/// that use other words ("a short fact about the moon" for "tell me something about space");
/// the embedding sees they are about the same thing. Calibrated by `examples/drift_eval.rs`
/// (docs/cognition.md §13.2). Settable in [-1, 1]; 1 or more disables the check.
pub const DEFAULT_SIMILARITY: f64 = 0.125;

/// A reply's drift from its task.
#[derive(Debug, Clone, PartialEq)]
pub struct Drift {
    /// Unanchored response keywords over all response keywords, in [0, 1].
    pub score: f64,
    /// The unanchored response keywords, in rank order; a word the user ruled out first.
    pub terms: Vec<String>,
    /// The task's keywords, for the notice.
    pub task: Vec<String>,
    /// A drifting term is one the user ruled out ("don't add logging" and the reply logs).
    pub ruled_out: bool,
}

/// The drift of `reply` from `task`; `None` when either bag is empty (nothing to compare).
/// A response keyword anchored only in a word the user ruled out ("don't add logging") is
/// drift: the ruled-out words are not in the task bag.
pub fn drift(task: &TaskBag, reply: &str) -> Option<Drift> {
    let response = response_keywords(reply);
    if task.wanted.is_empty() || response.is_empty() {
        return None;
    }
    let mut terms: Vec<String> =
        response.iter().filter(|r| !task.wanted.iter().any(|t| anchored(r, t))).cloned().collect();
    let score = terms.len() as f64 / response.len() as f64;
    let unwanted = |t: &String| task.unwanted.iter().any(|u| anchored(t, u));
    terms.sort_by_key(|t| !unwanted(t));
    let ruled_out = terms.first().is_some_and(unwanted);
    Some(Drift { score, terms, task: task.wanted.clone(), ruled_out })
}

/// Whether a reply's drift warns the user, given the request/reply cosine `similarity`.
/// Without a similarity (no embedding model, or it failed) the keyword score decides alone, as
/// the seed has it; so it does when the reply does what the user ruled out, which is on the
/// request's subject by nature and so close to it in embedding space.
pub fn warns(drift: &Drift, similarity: Option<f64>, keyword_threshold: f64, similarity_threshold: f64) -> bool {
    drift.score >= keyword_threshold && (drift.ruled_out || similarity.is_none_or(|s| s < similarity_threshold))
}

/// Cosine of two vectors; `None` when either is empty, of another length, or zero.
pub fn cosine(a: &[f32], b: &[f32]) -> Option<f64> {
    if a.is_empty() || a.len() != b.len() {
        return None;
    }
    let dot: f64 = a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum();
    let na: f64 = a.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    (na > 0.0 && nb > 0.0).then(|| dot / (na * nb))
}
