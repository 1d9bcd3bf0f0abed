//! The identity promotion hook (docs/cognition.md §4.5): "my name is X" / "call me X" becomes an
//! explicit `name` trait before anything else runs, so the very reply can use it.
//!
//! Deterministic and conservative: a false positive renames the user, so only a short run of
//! name-like words right after the declaration counts, and the usual non-names ("call me
//! later", "I'm tired") are refused.

use crate::text::normalize;

/// Declarations, as normalised word sequences; the name follows directly.
const DECLARATIONS: &[&[&str]] = &[
    &["my", "name", "is"],
    &["my", "name's"],
    &["call", "me"],
    &["you", "can", "call", "me"],
    &["i", "go", "by"],
    &["i'm", "called"],
    &["i", "am", "called"],
    &["people", "call", "me"],
    &["everyone", "calls", "me"],
];

/// Words that follow "call me" / "my name is" without being a name.
const NOT_NAMES: &[&str] = &[
    "a",
    "an",
    "the",
    "back",
    "later",
    "tomorrow",
    "tonight",
    "now",
    "soon",
    "when",
    "if",
    "at",
    "in",
    "on",
    "after",
    "before",
    "maybe",
    "not",
    "never",
    "please",
    "crazy",
    "old",
    "whatever",
    "anything",
    "something",
    "nothing",
    "what",
    "that",
    "this",
    "it",
    "you",
    "me",
    "him",
    "her",
    "them",
    "us",
    "up",
    "out",
    "again",
    "sometime",
    "asap",
    "and",
    "but",
    "or",
    "so",
    "because",
    "to",
    "for",
    "by",
    "with",
    "too",
    "also",
    "just",
    "really",
    "very",
];

/// Most words a name may have ("Mary Jane Watson").
const MAX_NAME_WORDS: usize = 3;

/// The name the message declares, in the user's own capitalisation, if it declares one.
pub fn declared_name(text: &str) -> Option<String> {
    let lower = normalize(text);
    let lower_words: Vec<&str> = lower.split_whitespace().collect();
    // The original words, aligned with the normalised ones where the counts agree.
    let raw_words: Vec<&str> = text.split_whitespace().collect();
    for (i, _) in lower_words.iter().enumerate() {
        for decl in DECLARATIONS {
            let end = i + decl.len();
            if end > lower_words.len() || lower_words[i..end] != **decl {
                continue;
            }
            // "don't call me X", "my name is not X": a negation right before is no declaration.
            if i > 0 && matches!(lower_words[i - 1], "don't" | "dont" | "never" | "not" | "stop") {
                continue;
            }
            if let Some(name) = name_after(&lower_words[end..], raw_words.get(end..).unwrap_or(&[])) {
                return Some(name);
            }
        }
    }
    None
}

fn name_after(lower: &[&str], raw: &[&str]) -> Option<String> {
    let mut parts = Vec::new();
    for (k, w) in lower.iter().enumerate().take(MAX_NAME_WORDS) {
        let bare = w.trim_matches(|c: char| !c.is_alphanumeric() && c != '-' && c != '\'');
        let raw_bare = raw
            .get(k)
            .map(|r| r.trim_matches(|c: char| !c.is_alphanumeric() && c != '-' && c != '\''))
            .filter(|r| r.to_lowercase() == bare);
        if bare.is_empty()
            || NOT_NAMES.contains(&bare)
            || !bare.chars().all(|c| c.is_alphabetic() || c == '-' || c == '\'')
        {
            break;
        }
        // Later words must look like names (capitalised by the user) to join the first.
        if k > 0 && !raw_bare.is_some_and(|r| r.chars().next().is_some_and(char::is_uppercase)) {
            break;
        }
        parts.push(capitalise(raw_bare.unwrap_or(bare)));
        // A word ending in punctuation ends the name ("call me Sam, please").
        let ends = raw.get(k).is_some_and(|r| r.ends_with([',', '.', '!', '?', ';', ':']));
        if ends {
            break;
        }
    }
    let first = parts.first()?;
    if first.chars().count() < 2 {
        return None;
    }
    Some(parts.join(" "))
}

fn capitalise(word: &str) -> String {
    let mut c = word.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::declared_name;

    #[test]
    fn declarations_yield_the_name() {
        assert_eq!(declared_name("My name is Ada").as_deref(), Some("Ada"));
        assert_eq!(declared_name("hi! my name is ada lovelace").as_deref(), Some("Ada"));
        assert_eq!(declared_name("Hi, I'm new here. Call me Sam, please.").as_deref(), Some("Sam"));
        assert_eq!(declared_name("you can call me Mary Jane").as_deref(), Some("Mary Jane"));
        assert_eq!(declared_name("I go by Alex.").as_deref(), Some("Alex"));
        assert_eq!(declared_name("my name's Jean-Luc").as_deref(), Some("Jean-Luc"));
    }

    #[test]
    fn non_names_are_refused() {
        assert_eq!(declared_name("call me later"), None);
        assert_eq!(declared_name("can you call me back tomorrow"), None);
        assert_eq!(declared_name("don't call me Bob"), None);
        assert_eq!(declared_name("my name is not important"), None);
        assert_eq!(declared_name("what is my name?"), None);
        assert_eq!(declared_name("call me 555-1234"), None);
        assert_eq!(declared_name("I'm tired"), None);
        assert_eq!(declared_name(""), None);
    }
}
