//! Which strings of a forgotten line must disappear wherever they were copied. Pure text:
//! the store (forgetting by id) and the memory layer (forgetting by request) derive the same.

use super::privacy::{find_secrets, replace_words_ci};
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

/// The strings to purge for the secrets of `text`: each secret, and its alphanumeric parts of
/// five or more characters (a topic name or slug splits "Tr0ub4dor&3" at the "&").
pub fn secret_needles(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (r, _) in find_secrets(text) {
        let Some(s) = text.get(r) else { continue };
        out.push(s.to_string());
        out.extend(s.split(|c: char| !c.is_alphanumeric()).filter(|p| p.chars().count() >= 5).map(str::to_string));
    }
    out
}

/// Replace `needles`, as whole words ([`replace_words_ci`]), inside the string values of a
/// JSON document only, so a number-shaped needle never cuts into a JSON number or key. True
/// when something changed.
pub fn redact_json(v: &mut serde_json::Value, needles: &[String], with: &str) -> bool {
    use serde_json::Value;
    match v {
        Value::String(s) => match replace_words_ci(s, needles, with) {
            Some(new) => {
                *s = new;
                true
            }
            None => false,
        },
        Value::Array(a) => a.iter_mut().fold(false, |acc, x| redact_json(x, needles, with) | acc),
        Value::Object(m) => m.values_mut().fold(false, |acc, x| redact_json(x, needles, with) | acc),
        _ => false,
    }
}

/// [`replace_words_ci`] for a stored text that may be JSON: a JSON object or array is
/// redacted in its string values and re-serialised; anything else as text.
pub fn redact_text(text: &str, needles: &[String], with: &str) -> Option<String> {
    let t = text.trim_start();
    if (t.starts_with('{') || t.starts_with('['))
        && let Ok(mut v) = serde_json::from_str::<serde_json::Value>(text)
    {
        return redact_json(&mut v, needles, with).then(|| v.to_string());
    }
    replace_words_ci(text, needles, with)
}
