//! A greeting after a settled topic: people who start talking again say hello first
//! (docs/cognition.md §5.5). The greeting itself carries no topic, so the similarity rules
//! cannot see the restart; its words can.

use super::ClassifierParams;
use crate::cognition::boundary::BoundaryState;

/// Openings that greet, as whole words at the start of the message.
const OPENINGS: &[&str] = &[
    "hey",
    "hi",
    "hello",
    "yo",
    "sup",
    "howdy",
    "hiya",
    "heya",
    "greetings",
    "what's up",
    "whats up",
    "what up",
    "good morning",
    "good afternoon",
    "good evening",
    "how are you",
    "how's it going",
    "hows it going",
    "how is it going",
    "how are things",
];

/// "heyyy" → "hey", "hiii" → "hi": a letter stretched for warmth.
fn unstretched(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    for c in word.chars() {
        if !(out.ends_with(c) && out.chars().rev().take(2).all(|p| p == c)) {
            out.push(c);
        }
    }
    // Two of a letter at the end of a stretched greeting ("heyy", "hii") are one.
    for g in ["hey", "hi", "hello", "yo"] {
        if out.len() > g.len() && out.starts_with(g) && out[g.len()..].chars().all(|c| g.ends_with(c)) {
            return g.to_string();
        }
    }
    out
}

/// Whether `text` opens with a greeting (whole words; apostrophes kept for "what's up", which
/// the content tokenizer would split).
pub fn opens_with_greeting(text: &str) -> bool {
    let lower = text.to_lowercase();
    let ws: Vec<String> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .take(4)
        .enumerate()
        .map(|(i, w)| if i == 0 { unstretched(w) } else { w.to_string() })
        .collect();
    OPENINGS.iter().any(|g| {
        let g: Vec<&str> = g.split(' ').collect();
        ws.len() >= g.len() && ws.iter().zip(&g).all(|(w, p)| w == p)
    })
}

/// [`ClassifierParams::greeting_restart_after`]: `text` greets and the current topic has held
/// long enough.
pub(super) fn restarts(text: &str, state: &BoundaryState, params: &ClassifierParams) -> bool {
    params.greeting_restart_after > 0
        && (!params.greeting_restart_long_only || state.long_lines())
        && state.since_boundary != u32::MAX
        && state.since_boundary >= params.greeting_restart_after
        && opens_with_greeting(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greetings_open_and_other_lines_do_not() {
        for t in ["Hey hey", "Heyyy", "what up", "whats up dude man", "Hey, hows it going?", "hiii there", "Hello!"] {
            assert!(opens_with_greeting(t), "{t}");
        }
        for t in ["They said hi", "history is fun", "hiking today?", "Hey"] {
            assert_eq!(opens_with_greeting(t), t == "Hey", "{t}");
        }
    }
}
