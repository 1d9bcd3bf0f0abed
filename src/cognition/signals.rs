//! NLP signals over the raw user text (docs/cognition.md §1.1): the seven signals of the published
//! router plus the ones the calibrated router needs (`content_word_count`, `vague_reference`,
//! and the [`reference`] signals `missing_object`, `correction` and `underspecified_request`).
//!
//! Everything is a plain token scan: the text is lowercased once, split into words (letters,
//! digits and apostrophes; curly apostrophes are folded to `'`), and phrases are matched as
//! whole-word sequences. No regex, no allocation beyond the lowercase copy and the word list.
//!
//! Deviations from the published table, each on purpose:
//! - Negative feedback is tested **before** positive: "not helpful" and "still not good" contain
//!   a positive word, and the published order read them as praise.
//! - A praise word right after a negator ("not good", "never nice") is negative feedback.
//! - Apostrophe-less spellings ("thats not", "doesnt work") match like the apostrophe ones.

use crate::text::{PhraseSet, is_content_word, normalize, words};
use serde::{Deserialize, Serialize};

pub mod reference;
pub use reference::Correction;

/// Explicit feedback on the previous answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Feedback {
    Positive,
    Negative,
    #[default]
    None,
}

/// The docs/cognition.md §1.1 signals of one message, plus two additions used by the calibrated router.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TextSignals {
    /// Number of whitespace-separated tokens.
    pub prompt_token_count: usize,
    /// A `?` anywhere in the text.
    pub has_question_mark: bool,
    /// One of [`INTERROGATIVES`] as a whole word, anywhere.
    pub interrogative_words: bool,
    /// The text starts with a greeting ([`GREETINGS`]).
    pub greeting_pattern: bool,
    /// A phrase that points at earlier conversation ([`IMPLICIT_REFERENCES`]).
    pub implicit_reference: bool,
    pub explicit_feedback: Feedback,
    /// Unique lowercase whitespace tokens / total tokens (0 for empty text).
    pub information_density: f64,
    /// Addition: words that carry content (not function words, pronouns or generic request verbs
    /// such as "tell", "do", "explain"). "what about that one?" has none; "why is the sky blue?"
    /// has two.
    pub content_word_count: usize,
    /// Addition: the message leans on a referent it does not name: no content word, and either
    /// an anaphor ("it", "that", "this one", "again", "more") or a bare interrogative ("why?",
    /// "how so?"). Without an antecedent in working memory such a message needs a clarifying
    /// question; with one it is an ordinary follow-up.
    pub vague_reference: bool,
    /// Addition: a request whose object is only a pointer ("fix my code", "translate this") with
    /// no quoted or pasted material ([`reference::missing_object`]).
    #[serde(default)]
    pub missing_object: bool,
    /// Addition: the user says the last answer missed what they meant ([`reference::correction`]).
    #[serde(default)]
    pub correction: Correction,
    /// Addition: a request to make something (an email, a plan) without the details only the
    /// user has ([`reference::underspecified_request`]).
    #[serde(default)]
    pub underspecified_request: bool,
    /// Addition: what kind of referent the message needs the conversation to hold
    /// ([`reference::referent_need`]): the router reads how far working memory holds one of
    /// that kind ([`reference::referent_support`]).
    #[serde(default)]
    pub referent_need: reference::ReferentNeed,
    /// Addition: a short question or request leaning on a pronoun it does not name ("is it
    /// worth it?", "will they mind?": [`reference::dangling_reference`]) that no other pointer
    /// signal here already counts. The router reads it on a cold topic only.
    #[serde(default)]
    pub dangling_reference: bool,
}

impl TextSignals {
    /// `has_question_mark || interrogative_words` (the docs/cognition.md §6.1 derived `question`).
    pub fn is_question(&self) -> bool {
        self.has_question_mark || self.interrogative_words
    }
}

/// docs/cognition.md §1.1 interrogative words (whole-word, anywhere).
pub const INTERROGATIVES: &PhraseSet = &PhraseSet::new(&[
    "what", "where", "when", "who", "why", "how", "which", "whose", "whom", "can", "could", "would", "should", "is",
    "are", "do", "does", "did", "will", "shall",
]);

/// docs/cognition.md §1.1 greetings, matched at the start of the text.
pub const GREETINGS: &PhraseSet = &PhraseSet::new(&[
    "hey",
    "hi",
    "hello",
    "yo",
    "sup",
    "what's up",
    "whats up",
    "howdy",
    "hiya",
    "heya",
    "greetings",
    "good morning",
    "good afternoon",
    "good evening",
]);

/// docs/cognition.md §1.1 implicit references.
pub const IMPLICIT_REFERENCES: &PhraseSet = &PhraseSet::new(&[
    "you remember",
    "we discussed",
    "last time",
    "what about",
    "we talked about",
    "remember when",
    "earlier you",
    "you said",
    "you mentioned",
    "what was",
    "what were",
]);

/// docs/cognition.md §1.1 positive feedback.
pub const POSITIVE_FEEDBACK: &PhraseSet = &PhraseSet::new(&[
    "thanks",
    "thank you",
    "great",
    "perfect",
    "awesome",
    "exactly",
    "that works",
    "correct",
    "good",
    "nice",
    "helpful",
    "got it",
    "understood",
]);

/// docs/cognition.md §1.1 negative feedback (tested first, see the module note).
pub const NEGATIVE_FEEDBACK: &PhraseSet = &PhraseSet::new(&[
    "wrong",
    "incorrect",
    "no that",
    "that's not",
    "thats not",
    "doesn't work",
    "doesnt work",
    "confused",
    "not what i",
    "try again",
    "still not",
    "misunderstood",
    "not helpful",
]);

/// Words that point back at something the message does not name.
const ANAPHORS: &PhraseSet = &PhraseSet::new(&[
    "it",
    "that",
    "this",
    "those",
    "these",
    "them",
    "they",
    "he",
    "she",
    "him",
    "her",
    "his",
    "hers",
    "their",
    "its",
    "one",
    "ones",
    "again",
    "same",
    "there",
    "more",
    "else",
    "other",
    "another",
    "former",
    "latter",
    "such",
    "that's",
    "it's",
    "something",
    "anything",
    "stuff",
]);

/// Bare follow-up questions ("why?", "how so?", "what then?"): the first word.
const BARE_QUESTION_HEADS: &PhraseSet =
    &PhraseSet::new(&["why", "how", "what", "which", "where", "when", "who", "huh", "really"]);
/// ... and what may follow it in a two-word message.
const BARE_QUESTION_TAILS: &PhraseSet =
    &PhraseSet::new(&["so", "then", "not", "exactly", "else", "now", "come", "much", "many"]);

/// Words that negate the praise word right after them ("not good", "never nice").
const NEGATORS: &PhraseSet =
    &PhraseSet::new(&["not", "never", "isn't", "wasn't", "aren't", "don't", "doesn't", "hardly"]);

/// A positive-feedback word right after a negator.
fn negated_praise(ws: &[&str]) -> bool {
    ws.windows(2).any(|p| NEGATORS.contains(&p[0]) && POSITIVE_FEEDBACK.contains(&p[1]))
}

/// Compute the signals of `text`.
pub fn extract(text: &str) -> TextSignals {
    let lower = normalize(text);
    let ws = words(&lower);
    extract_from(text, &lower, &ws)
}

/// [`extract`] over an already normalized text and its words (callers that scan the same text
/// for other purposes share the one tokenization).
pub fn extract_from(text: &str, lower: &str, ws: &[&str]) -> TextSignals {
    let mut total = 0usize;
    let mut unique: Vec<&str> = Vec::new();
    for tok in lower.split_whitespace() {
        total += 1;
        if !unique.contains(&tok) {
            unique.push(tok);
        }
    }
    let information_density = if total == 0 { 0.0 } else { unique.len() as f64 / total as f64 };

    let interrogative_words = ws.iter().any(|w| INTERROGATIVES.contains(w));
    let explicit_feedback = if NEGATIVE_FEEDBACK.any_in(ws) || negated_praise(ws) {
        Feedback::Negative
    } else if POSITIVE_FEEDBACK.any_in(ws) {
        Feedback::Positive
    } else {
        Feedback::None
    };
    let content_word_count = ws.iter().filter(|w| is_content_word(w)).count();
    let anaphor = ws.iter().any(|w| ANAPHORS.contains(w));
    let bare_question = match ws {
        [head] => BARE_QUESTION_HEADS.contains(head),
        [head, tail] => BARE_QUESTION_HEADS.contains(head) && BARE_QUESTION_TAILS.contains(tail),
        _ => false,
    };
    let vague_reference = !ws.is_empty() && content_word_count == 0 && (anaphor || bare_question);
    let missing_object = reference::missing_object(lower, ws);
    let referent_need = reference::referent_need(lower, ws, vague_reference);
    let pointed = vague_reference
        || missing_object
        || matches!(referent_need, reference::ReferentNeed::Proposal | reference::ReferentNeed::Options);
    TextSignals {
        prompt_token_count: total,
        has_question_mark: text.contains('?'),
        interrogative_words,
        greeting_pattern: GREETINGS.leading(ws).is_some(),
        implicit_reference: IMPLICIT_REFERENCES.any_in(ws),
        explicit_feedback,
        information_density,
        content_word_count,
        vague_reference,
        missing_object,
        referent_need,
        correction: reference::correction(ws),
        underspecified_request: reference::underspecified_request(lower, ws),
        dangling_reference: !pointed && reference::dangling_reference(ws, text.contains('?')),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_empty_text() {
        let s = extract("   ");
        assert_eq!(s.prompt_token_count, 0);
        assert_eq!(s.information_density, 0.0);
        assert!(!s.has_question_mark && !s.interrogative_words && !s.greeting_pattern && !s.vague_reference);
        assert_eq!(s.explicit_feedback, Feedback::None);
    }

    #[test]
    fn signals_token_count_and_density() {
        let s = extract("the cat and the dog");
        assert_eq!(s.prompt_token_count, 5);
        assert!((s.information_density - 0.8).abs() < 1e-12);
        // Case-insensitive uniqueness.
        let s = extract("Go go GO");
        assert!((s.information_density - 1.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn signals_question_mark_and_interrogatives_are_whole_words() {
        assert!(extract("is it?").has_question_mark);
        assert!(extract("What time").interrogative_words);
        assert!(extract("My printer is not printing.").interrogative_words, "the published list includes `is`");
        // Substrings do not count.
        assert!(!extract("This island whatnot").interrogative_words);
        assert!(!extract("I can't hear any sound").interrogative_words, "can't is not can");
        assert!(extract("ok, HOW").interrogative_words);
    }

    #[test]
    fn signals_greeting_only_at_the_start() {
        for g in ["hey there", "Hi!", "HELLO", "yo", "sup", "What's up?", "what’s up", "howdy", "hiya", "heya"] {
            assert!(extract(g).greeting_pattern, "{g}");
        }
        for g in ["Greetings, friend", "good morning", "Good Afternoon", "good evening all"] {
            assert!(extract(g).greeting_pattern, "{g}");
        }
        assert!(!extract("well hi there").greeting_pattern);
        assert!(!extract("history of Rome").greeting_pattern, "hi must be a whole word");
        assert!(!extract("good night").greeting_pattern);
    }

    #[test]
    fn signals_implicit_reference_phrases() {
        for t in [
            "do you remember my dog",
            "we discussed this",
            "like last time",
            "what about tomorrow",
            "we talked about it",
            "remember when we met",
            "earlier you told me",
            "you said so",
            "you mentioned a book",
            "what was it",
            "what were they",
        ] {
            assert!(extract(t).implicit_reference, "{t}");
        }
        assert!(!extract("what is the time").implicit_reference);
        assert!(!extract("last of the mohicans").implicit_reference);
    }

    #[test]
    fn signals_feedback_positive_negative_none() {
        for t in ["thanks", "Thank you!", "great", "perfect", "awesome", "exactly", "that works", "correct"] {
            assert_eq!(extract(t).explicit_feedback, Feedback::Positive, "{t}");
        }
        for t in ["good", "nice", "helpful", "got it", "Understood."] {
            assert_eq!(extract(t).explicit_feedback, Feedback::Positive, "{t}");
        }
        for t in ["wrong", "incorrect", "no that is off", "That's not it", "thats not it", "it doesn't work"] {
            assert_eq!(extract(t).explicit_feedback, Feedback::Negative, "{t}");
        }
        for t in ["I'm confused", "not what I asked", "try again", "still not", "you misunderstood"] {
            assert_eq!(extract(t).explicit_feedback, Feedback::Negative, "{t}");
        }
        // Negative first: these contain a positive word.
        assert_eq!(extract("not helpful").explicit_feedback, Feedback::Negative);
        assert_eq!(extract("still not good").explicit_feedback, Feedback::Negative);
        assert_eq!(extract("You are never nice").explicit_feedback, Feedback::Negative);
        assert_eq!(extract("this isn't great").explicit_feedback, Feedback::Negative);
        assert_eq!(extract("no problem, thanks").explicit_feedback, Feedback::Positive);
        assert_eq!(extract("the weather today").explicit_feedback, Feedback::None);
        assert_eq!(extract("goodness me").explicit_feedback, Feedback::None, "whole words only");
    }

    #[test]
    fn signals_content_words_and_vague_reference() {
        for t in ["what about that one?", "do it again", "Why?", "how so?", "Can you fix it?", "Tell me more"] {
            let s = extract(t);
            assert_eq!(s.content_word_count, 0, "{t}");
            assert!(s.vague_reference, "{t}");
        }
        for t in ["What is the capital of France?", "who are you?", "How are you?", "what time is it?"] {
            assert!(!extract(t).vague_reference, "{t}");
        }
        assert_eq!(extract("why is the sky blue").content_word_count, 2);
        assert_eq!(extract("remind me at 5pm").content_word_count, 2, "digits are content");
        assert!(!extract("").vague_reference);
    }
}
