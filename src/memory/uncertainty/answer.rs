//! The user's answer, in chat, to a question a reply wove in about two memories that disagree
//! (docs/cognition.md §10.6): "the new one", "both are true", "I moved, yes", "forget both", or
//! the value restated. Pure: the message and the two memories as they read, in; the choice the
//! TUI's 1/2/3 would make, out. A message that answers nothing leaves the record open.

use super::resolve::UserChoice;
use crate::text::normalize;

/// A question asked this recently (seconds) can still be answered.
pub const ANSWER_WINDOW_S: i64 = 900;

/// Longer messages are a new subject, not an answer.
const MAX_ANSWER_WORDS: usize = 14;
/// A confirmed change or a restated value counts only in a reply this short.
const MAX_SHORT_WORDS: usize = 6;

const FORGET: [&str; 6] = ["forget both", "forget them", "forget it", "neither", "none of them", "delete both"];
const BOTH: [&str; 5] = ["both are true", "both true", "both of them", "both are right", "both"];
const NEW: [&str; 8] = [
    "the new one",
    "the newer one",
    "the newer",
    "the latest",
    "the second one",
    "the recent one",
    "the most recent",
    "the new value",
];
/// A confirmed change: the newer statement stands (in a short reply only: "I left my keys at
/// home" is not an answer).
const CHANGED: [&str; 10] = [
    "i moved",
    "i switched",
    "i changed",
    "it changed",
    "i left",
    "it moved",
    "i've moved",
    "we moved",
    "i quit",
    "it's new",
];
fn has(words: &[&str], phrase: &str) -> bool {
    let p: Vec<&str> = phrase.split(' ').collect();
    words.windows(p.len()).any(|w| w == p.as_slice())
}

/// The value part of a memory as it reads ("location: Bergen" → "bergen").
fn value_of(memory: &str) -> String {
    let v = memory.split_once(": ").map_or(memory, |(_, v)| v);
    normalize(v).trim().to_string()
}

/// What `message` chooses about the pair `older` / `newer` (each as [`crate::store::memory_text`]
/// reads it), if it answers at all. Restating the older value alone is not a choice the
/// resolution offers, so it answers nothing.
pub fn classify(message: &str, older: &str, newer: &str) -> Option<UserChoice> {
    let lower = normalize(message);
    let words: Vec<&str> =
        lower.split(|c: char| !(c.is_alphanumeric() || c == '\'')).filter(|w| !w.is_empty()).collect();
    if words.is_empty() || words.len() > MAX_ANSWER_WORDS || message.trim_end().ends_with('?') {
        return None;
    }
    if FORGET.iter().any(|p| has(&words, p)) {
        return Some(UserChoice::ForgetBoth);
    }
    if BOTH.iter().any(|p| has(&words, p)) {
        return Some(UserChoice::BothTrue);
    }
    let short = words.len() <= MAX_SHORT_WORDS;
    if NEW.iter().any(|p| has(&words, p)) || (short && CHANGED.iter().any(|p| has(&words, p))) {
        return Some(UserChoice::NewIsRight);
    }
    let (old, new) = (value_of(older), value_of(newer));
    let vw = |v: &str| -> Vec<String> { v.split_whitespace().map(str::to_string).collect() };
    let mentions = |v: &str| {
        let p = vw(v);
        !p.is_empty() && words.windows(p.len()).any(|w| w.iter().zip(&p).all(|(a, b)| *a == b.as_str()))
    };
    // "Oslo, not Bergen" names both (and the older one alone is not a choice offered).
    (short && mentions(&new) && !mentions(&old)).then_some(UserChoice::NewIsRight)
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &str = "location: Oslo";
    const NEW: &str = "location: Bergen";

    #[test]
    fn answers_are_read_as_the_choices_the_pane_offers() {
        let c = |m: &str| classify(m, OLD, NEW);
        for m in [
            "The new one",
            "the newer one is right",
            "I moved, yes",
            "yes I moved last month",
            "Bergen",
            "It's Bergen now",
        ] {
            assert_eq!(c(m), Some(UserChoice::NewIsRight), "{m}");
        }
        for m in ["Both are true", "both, I split my time"] {
            assert_eq!(c(m), Some(UserChoice::BothTrue), "{m}");
        }
        for m in ["forget both", "Neither, actually", "just forget them"] {
            assert_eq!(c(m), Some(UserChoice::ForgetBoth), "{m}");
        }
    }

    #[test]
    fn a_message_that_answers_nothing_leaves_the_record_open() {
        let c = |m: &str| classify(m, OLD, NEW);
        for m in [
            "Tell me a joke about penguins",
            "Oslo",
            "Oslo, not Bergen",
            "yes",
            "which one is newer?",
            "I went to the cinema yesterday and the film about the new one in town was long and boring honestly",
            "I left my keys at home again this morning",
            "I bought a new one",
        ] {
            assert_eq!(c(m), None, "{m}");
        }
    }
}
