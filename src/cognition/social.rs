//! The social filter (docs/cognition.md §2.1): a deterministic fast exit for messages that need no
//! triage — a greeting or thanks (ACKNOWLEDGE), a cancel (CANCEL), a self-resolved or empty
//! message (IGNORE).
//!
//! ⚠ The original anchored greeting patterns at the start and swallowed real requests ("hey
//! check your email"). Here a message exits only when the **whole** message is social: every
//! word belongs to the social vocabulary (greetings, thanks, praise, pleasantries such as "how
//! are you", and filler like "so much", "for the help"), it is short, and it has at least one
//! greeting or thanks/praise anchor. "hey, check my shopping list" and "thanks, now remind me at
//! 5" are not social. The same rule guards cancels: "never mind" and "cancel that" exit, "cancel
//! my 5pm reminder" is a request. A bare "ok" / "yes" / "sure" has no anchor and does not exit
//! (it may answer a clarifying question); praise words such as "correct" or "exactly" do, so a
//! pipeline may skip this filter right after it asked a CLARIFY question.

use serde::{Deserialize, Serialize};

use crate::cognition::router::Mode;
use crate::text::{PhraseSet, normalize, words};

/// Which fast exit a social message takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum SocialExit {
    /// A greeting, thanks or praise: a brief acknowledgement, no triage.
    Acknowledge,
    /// The user withdrew the request ("never mind", "stop", "forget it").
    Cancel,
    /// Nothing to answer: empty, or the user resolved it themselves ("never mind, found it").
    Ignore,
}

/// A match with the rule that made it, for the turn log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SocialMatch {
    pub exit: SocialExit,
    /// "empty" | "cancel" | "self_resolved" | "greeting" | "thanks" | "acknowledgement".
    pub reason: &'static str,
}

impl SocialExit {
    /// The mode a social exit delivers: a cancel is acknowledged ("Okay, dropped it."), the
    /// rest keep their name.
    pub fn mode(self) -> Mode {
        match self {
            SocialExit::Acknowledge | SocialExit::Cancel => Mode::Acknowledge,
            SocialExit::Ignore => Mode::Ignore,
        }
    }
}

/// Most words a social message may have (greeting or thanks with its filler).
pub const MAX_SOCIAL_WORDS: usize = 8;

/// Cancel phrases (docs/cognition.md §2.1), matched at the start as whole words.
pub const CANCEL_PHRASES: &PhraseSet = &PhraseSet::new(&[
    "never mind",
    "nevermind",
    "forget it",
    "forget that",
    "forget about it",
    "cancel",
    "stop",
    "abort",
    "nvm",
]);

/// Pleasantries that make a message a greeting even without a greeting word ("how are you?").
pub const PLEASANTRIES: &PhraseSet = &PhraseSet::new(&[
    "how are you",
    "how are u",
    "how's it going",
    "hows it going",
    "how is it going",
    "how are things",
    "how have you been",
    "how do you do",
    "how you doing",
    "what's up",
    "whats up",
    "what's new",
    "nice to meet you",
    "pleasure to meet you",
]);

/// Self-resolved / topic dropped.
const SELF_RESOLVED: &PhraseSet = &PhraseSet::new(&[
    "figured it out",
    "figured it",
    "found it",
    "solved it",
    "sorted it",
    "got it working",
    "it works now",
    "it's working now",
    "no need",
    "all good",
    "no worries",
]);

/// Interjections allowed before a cancel phrase ("oh never mind", "actually, stop").
const CANCEL_LEAD: &PhraseSet =
    &PhraseSet::new(&["oh", "ok", "okay", "actually", "um", "uh", "hmm", "no", "wait", "ah", "ugh", "eh", "sorry"]);
/// Words allowed after a cancel phrase.
const CANCEL_TAIL: &PhraseSet = &PhraseSet::new(&[
    "it", "that", "this", "please", "then", "now", "ok", "okay", "all", "actually", "sorry", "anyway", "anyways",
    "just", "the", "whole", "thing", "last", "one", "request", "question", "i", "mean", "it's", "its", "that's",
    "fine", "no", "worries", "about", "haha", "lol", "thanks", "forget", "mind", "never", "nvm",
]);

/// An acknowledgement opens with one of these ("ok that makes sense")…
const ACK_LEADS: &PhraseSet = &PhraseSet::new(&["ok", "okay", "alright", "sure", "right", "kk"]);
/// …and says nothing else than these: no request, no new content.
const ACK_BODY: &PhraseSet = &PhraseSet::new(&[
    "that",
    "makes",
    "sense",
    "sounds",
    "good",
    "fine",
    "i'll",
    "ill",
    "try",
    "wait",
    "then",
    "it",
    "will",
    "see",
    "get",
    "i",
    "now",
    "got",
    "understood",
    "noted",
    "thanks",
    "great",
    "cool",
    "perfect",
    "that's",
    "clear",
]);

/// "ok that makes sense", "ok I'll try that": a short acknowledgement with no question.
fn acknowledgement(ws: &[&str], text: &str) -> Option<SocialMatch> {
    let body_only = ws.len() >= 2 && ws.len() <= 6 && ws[1..].iter().all(|w| ACK_BODY.contains(w));
    (ACK_LEADS.contains(&ws[0]) && body_only && !text.contains('?'))
        .then_some(SocialMatch { exit: SocialExit::Acknowledge, reason: "acknowledgement" })
}

/// Greeting anchors (docs/cognition.md §1.1 list plus common variants).
const GREETING_ANCHORS: &PhraseSet = &PhraseSet::new(&[
    "hey",
    "hi",
    "hello",
    "yo",
    "sup",
    "howdy",
    "hiya",
    "heya",
    "greetings",
    "morning",
    "evening",
    "afternoon",
    "hallo",
    "hola",
    "heyy",
    "hii",
]);
/// Thanks / praise anchors (docs/cognition.md §1.1 positive feedback plus common variants).
const THANKS_ANCHORS: &PhraseSet = &PhraseSet::new(&[
    "thanks",
    "gracias",
    "merci",
    "danke",
    "cool",
    "fair",
    "sweet",
    "lovely",
    "thank",
    "thx",
    "ty",
    "cheers",
    "great",
    "perfect",
    "awesome",
    "exactly",
    "works",
    "correct",
    "good",
    "nice",
    "helpful",
    "understood",
    "appreciated",
    "appreciate",
    "brilliant",
    "excellent",
    "amazing",
    "wonderful",
    "fantastic",
    "lovely",
]);
/// Everything else a wholly social message may contain.
const SOCIAL_FILLER: &PhraseSet = &PhraseSet::new(&[
    "there",
    "now",
    "you",
    "again",
    "so",
    "much",
    "very",
    "a",
    "lot",
    "all",
    "everyone",
    "man",
    "mate",
    "buddy",
    "friend",
    "dude",
    "chalie",
    "that",
    "that's",
    "thats",
    "it",
    "it's",
    "is",
    "was",
    "really",
    "super",
    "oh",
    "ah",
    "wow",
    "yes",
    "yeah",
    "yep",
    "ok",
    "okay",
    "cool",
    "for",
    "the",
    "your",
    "help",
    "info",
    "answer",
    "everything",
    "got",
    "day",
    "to",
    "me",
    "just",
    "what",
    "i",
    "needed",
    "and",
    "up",
    "what's",
    "whats",
    "how",
    "are",
    "how's",
    "hows",
    "going",
    "doing",
    "things",
    "have",
    "been",
    "do",
    "lol",
    "haha",
    "too",
    "kind",
    "of",
    "indeed",
    "u",
    "new",
    "meet",
    "today",
    "pleasure",
    "well",
    "done",
    "job",
    "one",
    "guys",
    "folks",
    "dear",
    "sir",
    "night",
    "top",
]);

/// Classify `text`; `None` means "not social, go on to triage".
pub fn social_filter(text: &str) -> Option<SocialExit> {
    social_match(text).map(|m| m.exit)
}

/// [`social_filter`] with the rule that matched.
pub fn social_match(text: &str) -> Option<SocialMatch> {
    let lower = normalize(text);
    social_match_in(text, &words(&lower))
}

/// [`social_match`] over the message's words (from [`crate::text::words`] of its normalized
/// text), for callers that already split it.
pub fn social_match_in(text: &str, ws: &[&str]) -> Option<SocialMatch> {
    if text.trim().is_empty() {
        return Some(SocialMatch { exit: SocialExit::Ignore, reason: "empty" });
    }
    if ws.is_empty() {
        // Punctuation or emoji only: not empty, not clearly social; triage decides.
        return None;
    }
    if let Some(m) = cancel_or_resolved(ws) {
        return Some(m);
    }
    if ws.len() > MAX_SOCIAL_WORDS {
        return None;
    }
    if let Some(m) = acknowledgement(ws, text) {
        return Some(m);
    }
    let mut greeting = PLEASANTRIES.any_in(ws);
    let mut thanks = false;
    for w in ws {
        if GREETING_ANCHORS.contains(w) {
            greeting = true;
        } else if THANKS_ANCHORS.contains(w) {
            thanks = true;
        } else if !SOCIAL_FILLER.contains(w) {
            return None;
        }
    }
    // "good" alone is praise; "good morning" / "good night" are greetings.
    match (greeting, thanks) {
        (_, true) if !greeting => Some(SocialMatch { exit: SocialExit::Acknowledge, reason: "thanks" }),
        (true, _) => Some(SocialMatch { exit: SocialExit::Acknowledge, reason: "greeting" }),
        _ => None,
    }
}

fn cancel_or_resolved(ws: &[&str]) -> Option<SocialMatch> {
    let lead = ws.iter().take_while(|w| CANCEL_LEAD.contains(w)).count();
    let rest = &ws[lead..];
    if let Some(n) = CANCEL_PHRASES.leading(rest) {
        let tail = &rest[n..];
        if let Some(at) = SELF_RESOLVED.first_in(tail) {
            // "never mind, I figured it out": the words before the resolution may be anything short.
            if at <= 3 {
                return Some(SocialMatch { exit: SocialExit::Ignore, reason: "self_resolved" });
            }
        }
        if tail.iter().all(|w| CANCEL_TAIL.contains(w)) {
            return Some(SocialMatch { exit: SocialExit::Cancel, reason: "cancel" });
        }
        return None;
    }
    // A self-resolution on its own ("found it!", "all good now, figured it out").
    if ws.len() <= 6 {
        let resolved = SELF_RESOLVED.any_in(ws);
        let substantive = ws.iter().any(|w| !(CANCEL_TAIL.contains(w) || RESOLVED_FILLER.contains(w)));
        if resolved && !substantive {
            return Some(SocialMatch { exit: SocialExit::Ignore, reason: "self_resolved" });
        }
    }
    None
}

/// Words of the self-resolved phrases and their usual company.
const RESOLVED_FILLER: &PhraseSet = &PhraseSet::new(&[
    "figured", "found", "solved", "sorted", "got", "working", "works", "need", "good", "out", "myself", "oh", "ok",
    "okay", "i", "actually", "already", "ah", "yeah", "yes", "nope", "so", "now", "out", "it", "it's", "all", "no",
    "worries", "nice", "never", "mind", "nvm",
]);

#[cfg(test)]
mod tests {
    use super::*;

    fn exit(t: &str) -> Option<SocialExit> {
        social_filter(t)
    }

    #[test]
    fn social_empty_is_ignore() {
        assert_eq!(exit(""), Some(SocialExit::Ignore));
        assert_eq!(exit("  \n\t "), Some(SocialExit::Ignore));
        assert_eq!(social_match("").unwrap().reason, "empty");
        assert_eq!(exit("..."), None, "punctuation only goes to triage");
    }

    #[test]
    fn social_greetings_and_thanks_acknowledge() {
        for t in [
            "hi",
            "Hello!",
            "hey there",
            "Good morning!",
            "good evening everyone",
            "yo",
            "Hi, how are you?",
            "how are you?",
        ] {
            assert_eq!(exit(t), Some(SocialExit::Acknowledge), "{t}");
        }
        for t in ["thanks!", "Thank you so much", "thx", "perfect, thanks", "great", "awesome", "Thanks for the help!"]
        {
            assert_eq!(exit(t), Some(SocialExit::Acknowledge), "{t}");
        }
        assert_eq!(social_match("hello").unwrap().reason, "greeting");
        assert_eq!(social_match("thanks a lot").unwrap().reason, "thanks");
        for t in ["gracias!", "cool", "haha fair", "ok it works now, thanks a lot"] {
            assert_eq!(social_filter(t), Some(SocialExit::Acknowledge), "{t}");
        }
        for t in ["ok that makes sense", "ok I'll try that", "okay, I'll wait then"] {
            assert_eq!(social_match(t).map(|m| m.reason), Some("acknowledgement"), "{t}");
        }
        for t in ["ok", "ok do it", "ok what next?", "ok now add milk", "sure, tell me more"] {
            assert_eq!(social_match(t).map(|m| m.reason), None, "{t} is not a bare acknowledgement");
        }
    }

    #[test]
    fn social_requests_after_a_greeting_or_thanks_are_not_social() {
        for t in [
            "hey, check my shopping list",
            "thanks, now remind me at 5",
            "hi can you help me with my resume",
            "Hello, what's the capital of Peru?",
            "great, add eggs too",
            "good question, why is the sky blue",
            "Thanks! Also what's the weather tomorrow?",
        ] {
            assert_eq!(exit(t), None, "{t}");
        }
    }

    #[test]
    fn social_long_messages_never_exit_as_acknowledge() {
        assert_eq!(exit("thanks thanks thanks thanks thanks thanks thanks thanks thanks"), None);
    }

    #[test]
    fn social_bare_answers_without_anchor_are_not_social() {
        for t in ["ok", "yes", "sure", "yeah", "no", "the blue one"] {
            assert_eq!(exit(t), None, "{t}");
        }
    }

    #[test]
    fn social_cancel_at_the_start_whole_message() {
        for t in
            ["stop", "Cancel", "never mind", "nevermind", "forget it", "abort", "nvm", "Oh never mind", "cancel that"]
        {
            assert_eq!(exit(t), Some(SocialExit::Cancel), "{t}");
        }
        assert_eq!(exit("actually, forget it, it's fine"), Some(SocialExit::Cancel));
        assert_eq!(social_match("stop").unwrap().reason, "cancel");
        // Requests that start with a cancel word are not cancels.
        for t in ["cancel my 5pm reminder", "stop reminding me about the gym", "stop the timer please now x"] {
            assert_eq!(exit(t), None, "{t}");
        }
        // A cancel word that is not at the start does not count.
        assert_eq!(exit("please do not stop"), None);
        assert_eq!(exit("I want to cancel"), None);
    }

    #[test]
    fn social_self_resolved_is_ignore() {
        for t in
            ["never mind, I figured it out", "nvm found it", "found it!", "all good now", "no worries, figured it out"]
        {
            assert_eq!(exit(t), Some(SocialExit::Ignore), "{t}");
        }
        assert_eq!(social_match("found it").unwrap().reason, "self_resolved");
        assert_eq!(exit("I found it hard to understand recursion"), None);
    }
}
