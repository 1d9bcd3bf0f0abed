//! Which strings of a forgotten line must disappear wherever they were copied. Pure text:
//! the store (forgetting by id) and the memory layer (forgetting by request) derive the same.

use super::privacy::find_secrets;
use regex::Regex;
use std::sync::LazyLock;

fn re(s: &str) -> Regex {
    Regex::new(s).unwrap_or_else(|e| panic!("a literal regex must compile: {e}"))
}

/// The strings of one forgotten line that must go everywhere: the line itself, its secrets,
/// what it says something "is", and its distinctive tokens (with digits, e-mail addresses,
/// names). Common words stay: forgetting a line must not erase every memory that shares a word.
pub fn needles_of(text: &str) -> Vec<String> {
    let mut out = vec![text.trim().to_string()];
    out.extend(find_secrets(text).into_iter().filter_map(|(r, _)| text.get(r)).map(str::to_string));
    static PREDICATE: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?i)\b(?:is|are|was|:)\s+(?P<v>[^,;!?]{3,80}?)\s*(?:[,;!?]|\.(?:\s|$)|$)"));
    for c in PREDICATE.captures_iter(text) {
        let v = c["v"].trim();
        // Only what names something specific: "is great" would erase every memory that is great.
        let specific = v.chars().any(|ch| ch.is_ascii_digit() || ch == '@' || ch.is_uppercase());
        if specific && v.split_whitespace().count() <= 4 {
            out.push(v.to_string());
        }
    }
    for w in text.split_whitespace() {
        let w = w.trim_matches(|c: char| !c.is_alphanumeric() && c != '@');
        let has_digit = w.chars().any(|c| c.is_ascii_digit());
        if w.chars().count() >= 3 && (has_digit || w.contains('@')) {
            out.push(w.to_string());
            // Its parts too: topic names and slugs split an address or code at its dots.
            let parts = w.split(|c: char| !c.is_alphanumeric()).filter(|p| p.chars().count() >= 5);
            out.extend(parts.filter(|p| !matches!(*p, "gmail" | "yahoo" | "hotmail" | "outlook")).map(str::to_string));
        }
    }
    out.extend(names(text, true));
    out.retain(|n| n.chars().count() >= 3);
    out
}

/// Capitalised words that are not sentence starts: names ("Jordan", "Okafor").
pub fn names(text: &str, skip_first: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut start = skip_first;
    for raw in text.split_whitespace() {
        let w = raw.trim_matches(|c: char| !c.is_alphanumeric());
        let capital = w.chars().next().is_some_and(char::is_uppercase) && w.chars().skip(1).all(|c| c.is_lowercase());
        if capital && !start && w.chars().count() >= 3 && !matches!(w, "The" | "This" | "That" | "And" | "But") {
            out.push(w.to_string());
        }
        // "Dr." and "Mr." end no sentence.
        let abbreviation = raw.ends_with('.') && raw.chars().count() <= 4;
        start = raw.ends_with(['.', '!', '?']) && !abbreviation;
    }
    out
}
