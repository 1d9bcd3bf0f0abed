//! Tokenizing and phrase matching: the one lowercase copy of a message, its word list, and
//! whole-word phrase lookups over it. Every scanner in the crate (signals, social filter,
//! intent, memory extraction) reads text through these so they agree on what a word is.

/// Lowercase `text`, folding curly apostrophes to `'`. The one allocation of a scan.
pub fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\u{2019}' | '\u{2018}' | '\u{02BC}' => out.push('\''),
            c if c.is_ascii() => out.push(c.to_ascii_lowercase()),
            c => out.extend(c.to_lowercase()),
        }
    }
    out
}

/// The words of normalized text: runs of letters, digits and apostrophes, with apostrophes
/// trimmed from both ends ("'hello'" → "hello"). "to-do" is two words.
pub fn words(normalized: &str) -> Vec<&str> {
    normalized
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .map(|w| w.trim_matches('\''))
        .filter(|w| !w.is_empty())
        .collect()
}

/// Whether `phrase` (space-separated words) occurs in `words` starting at index `at`.
pub fn phrase_at(words: &[&str], at: usize, phrase: &str) -> bool {
    // Most calls fail on the first word; only a match there walks the rest of the phrase.
    words.get(at).is_some_and(|w| same_word(w, first_word(phrase)))
        && phrase.split(' ').enumerate().all(|(k, p)| words.get(at + k) == Some(&p))
}

/// Index of the first whole-word occurrence of `phrase` in `words`.
pub fn find_phrase(words: &[&str], phrase: &str) -> Option<usize> {
    let first = first_word(phrase);
    (0..words.len()).find(|&i| same_word(words[i], first) && phrase_at(words, i, phrase))
}

/// `phrase` up to its first space (all of it when it has none).
fn first_word(phrase: &str) -> &str {
    phrase.as_bytes().iter().position(|&b| b == b' ').map_or(phrase, |n| &phrase[..n])
}

/// String equality that rejects on length and first byte before comparing the rest: the
/// phrase tables are scanned against every word of every message, and nearly every pair
/// differs there (docs/architecture.md §9, the router figure).
#[inline]
fn same_word(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.as_bytes().first() == b.as_bytes().first() && a == b
}

/// Whether any of `phrases` occurs as whole words.
pub fn has_any(words: &[&str], phrases: &[&str]) -> bool {
    phrases.iter().any(|p| find_phrase(words, p).is_some())
}

/// Whether the words start with any of `phrases`; returns the matched phrase's word count.
pub fn starts_with_any(words: &[&str], phrases: &[&str]) -> Option<usize> {
    phrases.iter().find(|p| phrase_at(words, 0, p)).map(|p| p.split(' ').count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenization_and_phrases() {
        let lower = normalize("Don’t STOP — to-do list!");
        assert_eq!(lower, "don't stop — to-do list!");
        assert_eq!(words(&lower), vec!["don't", "stop", "to", "do", "list"]);
        let ws = words("'quoted' word");
        assert_eq!(ws, vec!["quoted", "word"]);
        let ws = ["add", "it", "to", "my", "shopping", "list"];
        assert_eq!(find_phrase(&ws, "shopping list"), Some(4));
        assert_eq!(find_phrase(&ws, "my list"), None);
        assert_eq!(starts_with_any(&ws, &["add it", "add"]), Some(2));
        assert!(phrase_at(&ws, 1, "it to"));
        assert!(!phrase_at(&ws, 5, "list please"));
    }
}
