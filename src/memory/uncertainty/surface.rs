//! Surfacing (docs/cognition.md §10.6): an open record is raised in a RESPOND reply only when the
//! conversation is on its `surface_context`, as one natural question the model words fresh
//! each time; after [`NAG_AFTER`] raisings it is not raised again and its severity steps
//! down, so decay and drift handle it.

use super::{severity_rank, tolerance};
use crate::store::{StoreError, UncertaintiesRepo, UncertaintyItem, memory_text};
use rusqlite::Connection;

/// Raisings after which a record's severity steps down one level.
pub const NAG_AFTER: i64 = 3;
/// Records considered per turn.
const CONSIDERED: usize = 50;

/// Ways of asking, rotated so the same record is never raised the same way twice in a row.
const WORDINGS: [&str; 4] = [
    "Work one short, natural question into your reply about which is right now",
    "If it fits the flow, ask casually whether this has changed",
    "Mention in passing that you remember it differently and ask which one holds",
    "Briefly check with the user which of the two is current, as part of your answer",
];

fn stem(w: &str) -> &str {
    w.trim_end_matches('s')
}

/// Whether the conversation (topic name and message) is on `surface_context`: a content word
/// of it appears in either.
pub fn on_topic(surface_context: &str, topic: &str, message: &str) -> bool {
    let here = crate::text::normalize(&format!("{topic} {message}")).replace('_', " ");
    let here: Vec<&str> = crate::text::words(&here).into_iter().map(stem).collect();
    let want = crate::text::normalize(surface_context).replace('_', " ");
    crate::text::words(&want)
        .into_iter()
        .filter(|w| w.len() > 2 && crate::text::is_content_word(w))
        .any(|w| here.contains(&stem(w)))
}

/// The instruction for the reply: both memories as they read now, and the way to ask.
pub fn note(item: &UncertaintyItem, a: &str, b: Option<&str>) -> String {
    let how = WORDINGS[(item.surfaced_count as usize + item.id.len()) % WORDINGS.len()];
    match b {
        Some(b) => format!("You hold two memories that disagree: \"{a}\" and \"{b}\". {how}; do not assert either."),
        None => format!("You are not sure about this memory: \"{a}\". {how}."),
    }
}

/// The record to raise in this reply, if any: open, severe enough for the tolerance, on topic.
/// It is marked surfaced; returns it as stored afterwards, with the note for the reply.
pub fn pick(
    c: &Connection,
    topic: &str,
    message: &str,
    tolerance_now: f64,
    now: i64,
) -> Result<Option<(UncertaintyItem, String)>, StoreError> {
    let min = severity_rank(tolerance::surfacing_min_severity(tolerance_now));
    let repo = UncertaintiesRepo(c);
    for item in repo.open(CONSIDERED)? {
        if severity_rank(&item.severity) < min || item.surfaced_count >= NAG_AFTER {
            continue;
        }
        let Some(ctx) = item.surface_context.as_deref() else { continue };
        if !on_topic(ctx, topic, message) {
            continue;
        }
        let Some((a, _)) = memory_text(c, &item.memory_a)? else { continue };
        let b = match &item.memory_b {
            Some(m) => memory_text(c, m)?.map(|x| x.0),
            None => None,
        };
        let note = note(&item, &a, b.as_deref());
        repo.mark_surfaced(&item.id, NAG_AFTER, now)?;
        let item = repo.get(&item.id)?.map_or(item, |r| r.item);
        return Ok(Some((item, note)));
    }
    Ok(None)
}
