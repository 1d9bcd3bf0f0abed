//! Persistent tasks (docs/cognition.md §17): goals the assistant keeps working on in the
//! background. The pure parts: the plan's gates and order ([`plan`]), whether a goal repeats
//! an open task, when to tell the user; the I/O: decomposition by the model
//! ([`decompose`]), the cycle ([`cycle`]) and the background task ([`worker`]).

pub mod create;
pub mod cycle;
pub mod decompose;
pub mod plan;
pub mod view;
pub mod worker;

#[cfg(test)]
mod tests;

use std::collections::BTreeSet;

/// At most this many tasks are open (not completed, expired or cancelled) at once.
pub const MAX_OPEN: usize = 5;
/// A task not finished this long after it was asked for expires.
pub const EXPIRY_S: i64 = 14 * 86_400;
pub const DEFAULT_PRIORITY: i64 = 5;
/// A goal this alike (Jaccard of content words, at or above) to an open task's is that task.
pub const DUPLICATE_GOAL_JACCARD: f64 = 0.6;
/// Steps per cycle, and ACT iterations per step (the implementation's bounded loop).
pub const STEPS_PER_CYCLE: usize = 3;
pub const ITERATIONS_PER_STEP: u32 = 3;
/// Tell the user after this cycle, and whenever one cycle raises coverage by more than this.
pub const SURFACE_AFTER_CYCLE: i64 = 2;
pub const SURFACE_JUMP: f64 = 0.15;

/// The content words of a text, lowercased.
pub fn word_set(text: &str) -> BTreeSet<String> {
    let norm = crate::text::normalize(text);
    crate::text::words(&norm).into_iter().filter(|w| crate::text::is_content_word(w)).map(str::to_string).collect()
}

/// |A ∩ B| / |A ∪ B|; two empty sets are not alike (0).
pub fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        return 0.0;
    }
    a.intersection(b).count() as f64 / union as f64
}

/// The open task a new goal repeats, if one does: `(id, goal)` pairs of the open tasks.
pub fn duplicate_of<'a>(goal: &str, open: impl IntoIterator<Item = (i64, &'a str)>) -> Option<i64> {
    let g = word_set(goal);
    open.into_iter()
        .map(|(id, other)| (id, jaccard(&g, &word_set(other))))
        .filter(|(_, j)| *j >= DUPLICATE_GOAL_JACCARD)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(id, _)| id)
}

/// Whether a cycle's outcome is worth a message: the task finished, it is the end of cycle 2
/// (`cycle` counts from 1), or the cycle raised coverage by more than [`SURFACE_JUMP`].
pub fn should_surface(cycle: i64, before: f64, after: f64, completed: bool) -> bool {
    completed || cycle == SURFACE_AFTER_CYCLE || after - before > SURFACE_JUMP
}
