//! Scope drift: how much of a reply is about something the user did not ask for
//! (docs/cognition.md §13.2).

use super::keywords::{TaskBag, anchored, response_keywords};

/// Drift at or above this warns. Settable in [0, 1].
pub const DEFAULT_THRESHOLD: f64 = 0.5;

/// A reply's drift from its task.
#[derive(Debug, Clone, PartialEq)]
pub struct Drift {
    /// Unanchored response keywords over all response keywords, in [0, 1].
    pub score: f64,
    /// The unanchored response keywords, in rank order; a word the user ruled out first.
    pub terms: Vec<String>,
    /// The task's keywords, for the notice.
    pub task: Vec<String>,
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
    terms.sort_by_key(|t| !task.unwanted.iter().any(|u| anchored(t, u)));
    Some(Drift { score, terms, task: task.wanted.clone() })
}
