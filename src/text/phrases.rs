//! Phrase tables that know their own first words. The deterministic router reads every word of a
//! message against a few dozen tables; scanning each table for each word was most of its time
//! (docs/architecture.md §9, the router figure). A [`PhraseSet`] carries, next to its phrases, a
//! small filter of their first words built at compile time, so a word that starts none of them is
//! turned away with two bit tests and only the rare candidate walks the table.
//!
//! The filter only rejects: every answer is the one the plain table scan gives
//! ([`super::has_any`], [`super::starts_with_any`], `<[&str]>::contains`); the tests hold them
//! side by side.

use std::ops::Deref;

use super::scan::phrase_at;

/// Bits in the first-word filter: with the largest tables (~60 distinct first words, two bits
/// each) about one word in fifty that starts nothing still walks the table.
const BITS: usize = 512;

/// A table of whole-word phrases (space-separated words) and the filter of their first words.
/// Reads as the plain slice through `Deref`; its own methods are the fast paths.
#[derive(Debug)]
pub struct PhraseSet {
    phrases: &'static [&'static str],
    filter: [u64; BITS / 64],
}

/// The two filter bits of the word `bytes[..len]`: from its length and three of its bytes, which
/// tell most short English words apart.
const fn bits_of(bytes: &[u8], len: usize) -> (usize, usize) {
    if len == 0 {
        return (0, 1);
    }
    let key = (len as u64) | (bytes[0] as u64) << 8 | (bytes[len / 2] as u64) << 16 | (bytes[len - 1] as u64) << 24;
    let h = key.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    ((h >> 55) as usize, ((h >> 46) as usize) % BITS)
}

impl PhraseSet {
    /// The table and its filter; meant for `const` items, so the filter costs nothing at run time.
    pub const fn new(phrases: &'static [&'static str]) -> PhraseSet {
        let mut filter = [0u64; BITS / 64];
        let mut i = 0;
        while i < phrases.len() {
            let bytes = phrases[i].as_bytes();
            let mut len = 0;
            while len < bytes.len() && bytes[len] != b' ' {
                len += 1;
            }
            let (a, b) = bits_of(bytes, len);
            filter[a / 64] |= 1 << (a % 64);
            filter[b / 64] |= 1 << (b % 64);
            i += 1;
        }
        PhraseSet { phrases, filter }
    }

    /// Whether some phrase may start with `word` (no false "no").
    #[inline]
    fn may_start(&self, word: &str) -> bool {
        let (a, b) = bits_of(word.as_bytes(), word.len());
        self.filter[a / 64] & (1 << (a % 64)) != 0 && self.filter[b / 64] & (1 << (b % 64)) != 0
    }

    /// Whether `word` is one of the phrases (the tables of single words).
    #[inline]
    pub fn contains(&self, word: &&str) -> bool {
        self.may_start(word) && self.phrases.contains(word)
    }

    /// Index of the first word where one of the phrases starts.
    pub fn first_in(&self, words: &[&str]) -> Option<usize> {
        (0..words.len()).find(|&i| self.may_start(words[i]) && self.phrases.iter().any(|p| phrase_at(words, i, p)))
    }

    /// Whether any of the phrases occurs in `words` ([`super::has_any`]).
    #[inline]
    pub fn any_in(&self, words: &[&str]) -> bool {
        self.first_in(words).is_some()
    }

    /// The word count of the first phrase, in table order, that `words` starts with
    /// ([`super::starts_with_any`]).
    pub fn leading(&self, words: &[&str]) -> Option<usize> {
        let first = words.first()?;
        if !self.may_start(first) {
            return None;
        }
        self.phrases.iter().find(|p| phrase_at(words, 0, p)).map(|p| p.split(' ').count())
    }
}

impl Deref for PhraseSet {
    type Target = [&'static str];

    fn deref(&self) -> &Self::Target {
        self.phrases
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::{has_any, normalize, starts_with_any, words};

    const TABLE: &PhraseSet =
        &PhraseSet::new(&["what about", "what", "good morning", "to do list", "it", "i", "don't", "x y z", ""]);

    #[test]
    fn the_filter_never_changes_an_answer() {
        let texts = [
            "what about that one",
            "good morning to you",
            "is it on my to do list",
            "I don't know",
            "whatever goodness it's",
            "x y",
            "x y z",
            "",
            "a b c d e f g h i j k l m n o p q r s t u v w x y z",
        ];
        for t in texts {
            let lower = normalize(t);
            let ws = words(&lower);
            assert_eq!(TABLE.any_in(&ws), has_any(&ws, TABLE), "{t}");
            assert_eq!(TABLE.leading(&ws), starts_with_any(&ws, TABLE), "{t}");
            assert_eq!(TABLE.first_in(&ws), (0..ws.len()).find(|&i| TABLE.iter().any(|p| phrase_at(&ws, i, p))), "{t}");
            for w in &ws {
                assert_eq!(TABLE.contains(w), TABLE.deref().contains(w), "{w}");
            }
        }
    }

    #[test]
    fn every_first_word_passes_its_own_filter() {
        for p in TABLE.iter() {
            let first = p.split(' ').next().unwrap_or_default();
            assert!(TABLE.may_start(first), "{p}");
        }
        // A filter that answered yes to everything would pass the test above; this one does not.
        let rejected = ["zebra", "quantum", "lighthouse", "morning", "about"].iter().filter(|w| !TABLE.may_start(w));
        assert!(rejected.count() >= 3);
    }
}
