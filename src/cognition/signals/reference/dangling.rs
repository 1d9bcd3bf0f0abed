//! The dangling reference (docs/cognition.md §15.7): a short question or request whose subject
//! or object is a bare pronoun or deictic ("is it worth it?", "will they mind?", "how long will
//! it take?", "make it shorter") and that names at most a word or two of its own. Such a message
//! carries a little content, so [`crate::cognition::signals::TextSignals::vague_reference`]
//! (no content word at all) misses it; said first on a cold topic, nothing in it or before it
//! tells what "it" is, and answering means guessing.

use crate::cognition::signals::INTERROGATIVES;
use crate::text::{PhraseSet, is_content_word};

/// Pronouns and deictics that stand for a thing the message does not name.
const PRONOUNS: &PhraseSet = &PhraseSet::new(&[
    "it", "it's", "it'll", "that", "that's", "this", "they", "them", "they'll", "they're", "those", "these",
]);

/// "that one", "the other one", "which one", "the thing": a pointer made of a word and a head.
const POINTING_HEADS: &PhraseSet = &PhraseSet::new(&["that", "this", "which", "other", "the"]);
const POINTED: &PhraseSet = &PhraseSet::new(&["one", "ones", "thing", "things"]);

/// Words that make "it" impersonal ("what time is it?", "is it raining?", "how is it going?"):
/// nothing is pointed at.
const IMPERSONAL: &PhraseSet = &PhraseSet::new(&[
    "time", "day", "date", "raining", "rain", "snowing", "snow", "sunny", "weather", "cold", "hot", "windy", "late",
    "early", "going", "o'clock", "today", "tonight", "tomorrow",
]);

/// Requests that open with their verb ("make it shorter", "change that"): asks without a
/// question mark.
const REQUEST_HEADS: &PhraseSet = &PhraseSet::new(&[
    "make", "do", "change", "fix", "send", "compare", "check", "finish", "redo", "move", "turn", "put", "use",
]);

/// More content words than this, and the message names its own topic.
const MAX_CONTENT: usize = 2;
/// Longer than this, and the message carries enough to answer from.
const MAX_WORDS: usize = 8;

/// Leading fillers skipped before the first real word.
const FILLERS: &PhraseSet = &PhraseSet::new(&["so", "and", "but", "ok", "okay", "well", "hmm", "um"]);

/// Whether `ws` (the words of a normalized message; `has_question_mark` from the raw text) is a
/// short question or request pointing at something it does not name.
pub fn dangling_reference(ws: &[&str], has_question_mark: bool) -> bool {
    if ws.is_empty() || ws.len() > MAX_WORDS || ws.iter().any(|w| IMPERSONAL.contains(w)) {
        return false;
    }
    let first = ws.iter().find(|w| !FILLERS.contains(w)).copied().unwrap_or_default();
    let asks = has_question_mark || INTERROGATIVES.contains(&first) || REQUEST_HEADS.contains(&first);
    let points = ws.iter().any(|w| PRONOUNS.contains(w))
        || ws.windows(2).any(|p| POINTING_HEADS.contains(&p[0]) && POINTED.contains(&p[1]));
    asks && points && ws.iter().filter(|w| is_content_word(w)).count() <= MAX_CONTENT
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::{normalize, words};

    fn dangling(t: &str) -> bool {
        let lower = normalize(t);
        dangling_reference(&words(&lower), t.contains('?'))
    }

    #[test]
    fn short_asks_that_point_at_an_unnamed_thing_dangle() {
        for t in [
            "Is it worth it?",
            "How long will it take?",
            "Do you think it'll work?",
            "Is that normal?",
            "Will they mind?",
            "Can you compare them for me?",
            "What's the best way to do it?",
            "Which one should I pick?",
            "Make it shorter",
            "so what about the other one",
        ] {
            assert!(dangling(t), "{t}");
        }
    }

    #[test]
    fn named_topics_statements_and_the_impersonal_it_do_not() {
        for t in [
            "What time is it?",
            "Is it going to rain tomorrow?",
            "Why is the sky blue?",
            "How does compound interest work?",
            "they named her Iris",
            "It was sometime in June I think",
            "Can you compare the ThinkPad and the MacBook Air for photo editing?",
            "How much should I use?",
            "",
        ] {
            assert!(!dangling(t), "{t}");
        }
    }
}
