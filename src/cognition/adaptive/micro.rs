//! Micro-preferences (docs/cognition.md §18.2): explicit format requests ("keep it short", "no
//! bullet points"). They are stored as traits of category `micro_preference`, which decay
//! faster than the profile (0.015 per cycle, §9.10), and outrank it: the user said so.
//!
//! A request is matched by phrase, so only a stated wish counts; a later opposite request
//! supersedes the earlier one (the trait store keeps one current value per key). Keys and
//! values are the chunker's where it knows the request too (`memory/patterns.rs`:
//! `response_length`, `format`, `emoji`), so its later write of the same message reinforces
//! the row instead of contradicting it.

use super::{Directive, Origin, Side, Slot};

/// The trait category the requests are stored under.
pub const CATEGORY: &str = "micro_preference";

/// `(key, value, phrases)`: a phrase anywhere in the normalised message states the value.
const REQUESTS: &[(&str, &str, &[&str])] = &[
    (
        "response_length",
        "short",
        &[
            "keep it short",
            "keep it brief",
            "keep them short",
            "be brief",
            "be concise",
            "shorter answers",
            "shorter replies",
            "short answers",
            "short replies",
            "less detail",
            "in one sentence",
            "too long",
            "tl;dr",
            "tldr",
        ],
    ),
    (
        "response_length",
        "detailed",
        &[
            "more detail",
            "more details",
            "in more depth",
            "longer answers",
            "longer replies",
            "be more detailed",
            "explain in detail",
            "go deeper",
        ],
    ),
    (
        "format",
        "prose",
        &[
            "no bullet points",
            "no bullets",
            "no lists",
            "without bullet points",
            "stop using bullet points",
            "don't use bullet points",
            "no bullet lists",
            "in plain prose",
        ],
    ),
    ("format", "bullet points", &["use bullet points", "as bullet points", "as a bulleted list", "in bullet points"]),
    ("reply_tone", "casual", &["be more casual", "less formal", "don't be so formal", "talk casually"]),
    ("reply_tone", "formal", &["be more formal", "more professional", "less casual"]),
    ("emoji", "none", &["no emojis", "no emoji", "stop using emojis", "without emojis"]),
    ("reply_examples", "yes", &["give me examples", "with examples", "use examples", "include an example"]),
    ("reply_pushback", "more", &["push back more", "challenge me", "be more critical", "don't just agree"]),
    ("reply_pushback", "less", &["stop arguing", "don't push back", "stop pushing back", "less criticism"]),
];

/// The requests stated in one message, `(key, value)`, one per key (the last phrase in the
/// table wins a key only if the first did not match: opposite requests in one message are rare
/// and the first listed is the common one).
pub fn detect(text: &str) -> Vec<(&'static str, &'static str)> {
    let lower = format!(" {} ", crate::text::normalize(text));
    let mut out: Vec<(&'static str, &'static str)> = Vec::new();
    for (key, value, phrases) in REQUESTS {
        if out.iter().any(|(k, _)| k == key) {
            continue;
        }
        let said = phrases.iter().any(|p| {
            lower.match_indices(p).any(|(at, _)| {
                // Whole words only: "no lists" must not match "no listserv".
                let before = lower[..at].chars().next_back().is_none_or(|c| !c.is_alphanumeric());
                let after = lower[at + p.len()..].chars().next().is_none_or(|c| !c.is_alphanumeric());
                before && after
            })
        });
        if said {
            out.push((key, value));
        }
    }
    out
}

/// Where a key stands among the requests (length, format, tone, emojis, examples, pushback);
/// an unknown key last.
pub fn rank(key: &str) -> usize {
    REQUESTS.iter().position(|(k, _, _)| *k == key).unwrap_or(usize::MAX)
}

/// The directive a stored preference asks for; `None` for a key or value this build does not
/// know (an older or newer row).
pub fn directive(key: &str, value: &str) -> Option<Directive> {
    let (slot, side, text) = match (key, value) {
        ("response_length", "short") => {
            (Slot::Length, Some(Side::Low), "The user asked for short replies: keep it brief.")
        }
        ("response_length", "detailed") => (Slot::Length, Some(Side::High), "The user asked for detail: be thorough."),
        ("format", "prose") => (Slot::Format, None, "No bullet points or lists: write plain sentences."),
        ("format", "bullet points") => (Slot::Format, None, "Use bullet points where they help."),
        ("reply_tone", "casual") => (Slot::Formality, Some(Side::Low), "Use a casual tone, as the user asked."),
        ("reply_tone", "formal") => (Slot::Formality, Some(Side::High), "Use a formal tone, as the user asked."),
        ("emoji", "none") => (Slot::Emojis, None, "No emojis."),
        ("reply_examples", "yes") => (Slot::Abstraction, Some(Side::Low), "Include a concrete example."),
        ("reply_pushback", "more") => {
            (Slot::Challenge, Some(Side::High), "The user wants pushback: question weak points.")
        }
        ("reply_pushback", "less") => (Slot::Challenge, Some(Side::Low), "Go easy on counterpoints."),
        _ => return None,
    };
    Some(Directive { slot, side, origin: Origin::Micro, text: text.into() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stated_requests_are_found_and_nothing_else() {
        assert_eq!(detect("Keep it short, please. What's a good pasta?"), vec![("response_length", "short")]);
        assert_eq!(detect("no bullet points and no emojis this time"), vec![("format", "prose"), ("emoji", "none")]);
        assert_eq!(detect("Can you go deeper on the second idea?"), vec![("response_length", "detailed")]);
        assert!(detect("I keep a short list of books").is_empty(), "a statement about a list is no request");
        assert!(detect("subscribe to no listserv").is_empty(), "whole words only");
        assert!(detect("what are the shorter routes to Porto").is_empty());
    }

    #[test]
    fn every_request_has_a_directive_and_unknown_rows_have_none() {
        for (key, value, _) in REQUESTS {
            let d = directive(key, value).unwrap_or_else(|| panic!("{key}={value}"));
            assert_eq!(d.origin, Origin::Micro);
            assert!(d.text.split_whitespace().count() <= 12, "short for the built-in model: {}", d.text);
        }
        assert_eq!(directive("response_length", "medium"), None);
    }
}
