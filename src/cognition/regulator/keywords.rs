//! Task and response keywords, and the correction cluster they name (docs/cognition.md §13.2).
//!
//! The scope check compares bags of content words, so what counts as a word, which words are
//! filler and how a bag is cut to size decide every drift score. A negated instruction ("don't
//! add logging") names what the user does *not* want: its words are kept out of the task bag and
//! reported separately, so a reply that adds them drifts instead of looking on-topic.

use std::collections::{BTreeMap, BTreeSet};

/// Words too common to say what a message is about. Includes verbs of instruction ("add",
/// "use", "make") that carry no topic of their own. Sorted (binary search; a test checks).
const STOP_WORDS: &[&str] = &[
    "about", "above", "add", "after", "again", "all", "also", "and", "any", "are", "because", "been", "before",
    "being", "below", "between", "both", "but", "can", "could", "did", "does", "doing", "down", "during", "each",
    "even", "few", "for", "from", "further", "get", "got", "had", "has", "have", "having", "her", "here", "hers",
    "him", "his", "how", "into", "it's", "its", "just", "let", "like", "make", "more", "most", "much", "must", "need",
    "new", "nor", "not", "now", "off", "once", "only", "other", "our", "ours", "out", "over", "own", "please", "put",
    "run", "same", "set", "she", "should", "some", "such", "than", "that", "the", "their", "them", "then", "there",
    "these", "they", "this", "those", "through", "too", "under", "until", "use", "very", "want", "was", "way", "were",
    "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours",
];

/// Short words that are topics in their own right (kept although under three characters).
const SHORT_TERMS: &[&str] =
    &["ai", "ml", "go", "ci", "cd", "ui", "ux", "db", "os", "ip", "vm", "io", "rx", "dl", "lr", "qa", "s3"];

/// Words that open a negated instruction when they start a clause ("…, don't add logging"):
/// what follows, to the end of the clause, is unwanted. Mid-clause they usually are not an
/// instruction ("I don't understand closures" wants closures explained).
const NEGATION_CUES: &[&[&str]] = &[&["don't"], &["dont"], &["do", "not"], &["never"], &["avoid"], &["no"], &["skip"]];

/// Words after which a negation cue still starts an instruction ("please don't…").
const CLAUSE_OPENERS: &[&str] = &["and", "but", "please", "just", "so", "also", "then"];

/// Words that end a negated clause early ("don't add logging, just refactor").
const CLAUSE_BREAKS: &[&str] = &["but", "just", "only", "instead", "rather", "then"];

/// The most keywords a bag keeps (the newer ranking of §13.2).
pub const BAG_SIZE: usize = 20;

/// The message lowercased once, curly apostrophes folded.
fn lowercase(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\u{2019}' | '\u{2018}' => out.push('\''),
            c if c.is_ascii() => out.push(c.to_ascii_lowercase()),
            c => out.extend(c.to_lowercase()),
        }
    }
    out
}

/// A lowercased message's words in order, with whether each ends a clause (a following
/// `, ; : . ! ?`). Split on whitespace and the separators of §13.2; ends trimmed of anything
/// that is not a letter or digit.
fn raw_words<'a>(lower: &'a str) -> Vec<(&'a str, bool)> {
    let mut out: Vec<(&'a str, bool)> = Vec::new();
    let flush = |from: usize, to: usize, ends: bool, out: &mut Vec<(&'a str, bool)>| {
        let w = lower[from..to].trim_matches(|c: char| !c.is_alphanumeric());
        if !w.is_empty() {
            out.push((w, ends));
        } else if ends && let Some(last) = out.last_mut() {
            last.1 = true;
        }
    };
    let mut from = 0;
    for (at, c) in lower.char_indices() {
        let ends = matches!(c, ',' | ';' | ':' | '!' | '?' | '.');
        if ends || c.is_whitespace() || matches!(c, '(' | ')' | '[' | ']' | '{' | '}' | '/' | '\\') {
            flush(from, at, ends, &mut out);
            from = at + c.len_utf8();
        }
    }
    flush(from, lower.len(), true, &mut out);
    out
}

/// Whether a lowercased word is a keyword: not filler, and long enough to name something.
pub fn is_keyword(w: &str) -> bool {
    STOP_WORDS.binary_search(&w).is_err() && (w.chars().count() >= 3 || SHORT_TERMS.contains(&w))
}

/// Rank keyword occurrences: frequency ↓, then length ↓, then alphabetical ↑; at most `cap`.
fn rank<'a>(words: impl Iterator<Item = &'a str>, cap: Option<usize>) -> Vec<String> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for w in words.filter(|w| is_keyword(w)) {
        *counts.entry(w).or_default() += 1;
    }
    let mut ranked: Vec<(&str, usize)> = counts.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(b.0.chars().count().cmp(&a.0.chars().count())).then(a.0.cmp(b.0)));
    ranked.into_iter().take(cap.unwrap_or(usize::MAX)).map(|(w, _)| w.to_string()).collect()
}

/// The keywords of a reply: the top [`BAG_SIZE`] by rank.
pub fn response_keywords(text: &str) -> Vec<String> {
    let lower = lowercase(text);
    let words = raw_words(&lower);
    rank(words.iter().map(|(w, _)| *w), Some(BAG_SIZE))
}

/// What a user's message asks for: the keywords it wants, and the ones it rules out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskBag {
    /// Ranked like a response bag but not cut: a long request keeps its short terms (the
    /// published bag's cut at 20 made "auth eks env" drift from a request that named them).
    pub wanted: Vec<String>,
    /// Keywords inside a negated instruction, sorted ("don't add logging" → `logging`).
    pub unwanted: Vec<String>,
}

/// Split a user's message into wanted and unwanted keywords. A word that is both (asked for in
/// one clause and ruled out in another) stays wanted.
pub fn task_bag(text: &str) -> TaskBag {
    let lower = lowercase(text);
    let words = raw_words(&lower);
    let mut negated = vec![false; words.len()];
    let mut i = 0;
    while i < words.len() {
        let clause_start = i == 0 || words[i - 1].1 || CLAUSE_OPENERS.contains(&words[i - 1].0);
        let cue_len = if clause_start {
            NEGATION_CUES
                .iter()
                .find(|cue| cue.iter().enumerate().all(|(k, c)| words.get(i + k).is_some_and(|(w, _)| w == c)))
                .map(|cue| cue.len())
        } else {
            None
        };
        // "without adding tests": anywhere, but only before a verb in -ing.
        let cue_len = cue_len.or_else(|| {
            (words[i].0 == "without" && words.get(i + 1).is_some_and(|(w, _)| w.ends_with("ing"))).then_some(1)
        });
        let Some(cue_len) = cue_len else {
            i += 1;
            continue;
        };
        let mut j = i + cue_len - 1;
        if words[j].1 {
            i = j + 1;
            continue;
        }
        j += 1;
        while j < words.len() && !CLAUSE_BREAKS.contains(&words[j].0) {
            negated[j] = true;
            if words[j].1 {
                break;
            }
            j += 1;
        }
        i = j + 1;
    }
    let wanted = rank(words.iter().zip(&negated).filter(|(_, n)| !**n).map(|((w, _), _)| *w), None);
    let unwanted: BTreeSet<String> = words
        .iter()
        .zip(&negated)
        .filter(|((w, _), n)| **n && is_keyword(w) && !wanted.iter().any(|k| k == *w))
        .map(|((w, _), _)| w.to_string())
        .collect();
    TaskBag { wanted, unwanted: unwanted.into_iter().collect() }
}

/// The correction cluster of a task (§13.5): its keywords of three or more characters,
/// sorted, the first two joined by `+`. Empty when the task has none.
pub fn cluster(task: &TaskBag) -> String {
    let mut words: Vec<&str> = task.wanted.iter().map(String::as_str).filter(|w| w.chars().count() >= 3).collect();
    words.sort_unstable();
    words.dedup();
    words.into_iter().take(2).collect::<Vec<_>>().join("+")
}

/// Whether a response keyword is anchored in a task keyword: equal, or both of four or more
/// characters with one a prefix of the other ("refactor" anchors "refactored").
pub fn anchored(response_word: &str, task_word: &str) -> bool {
    if response_word == task_word {
        return true;
    }
    let (a, b) = (response_word.chars().count(), task_word.chars().count());
    a >= 4 && b >= 4 && (response_word.starts_with(task_word) || task_word.starts_with(response_word))
}

#[cfg(test)]
mod tests {
    #[test]
    fn stop_words_are_sorted_for_the_binary_search() {
        assert!(super::STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
    }
}
