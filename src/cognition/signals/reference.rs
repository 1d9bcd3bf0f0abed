//! Two text signals for CLARIFY, and how much working memory can stand in for a missing
//! referent.
//!
//! - [`missing_object`]: a request whose object is only a pointer ("fix my code", "translate
//!   this into French", "can you summarize it") with nothing in the message that could be it.
//!   Such a request cannot be carried out unless the conversation already holds the thing.
//! - [`correction`]: the user says the last answer missed what they meant. A correction that
//!   says what was meant ("no, I meant the building, not the contract") can be answered; a bare
//!   one ("that's not what I meant") is best met with a question.
//! - [`referent_support`]: how far working memory can resolve such a pointer, 0–1. The router
//!   scales the CLARIFY boost of a vague or missing referent by `1 − support`, so the boost fades
//!   as the thread fills instead of switching off at the first remembered turn; and it is 0
//!   when working memory holds nothing of the kind the message needs ([`referent`]: code,
//!   material, options, a proposal), however full it is.
//!
//! - [`underspecified_request`]: a request to make something (an email, a plan) that gives none
//!   of the details only the user has ("help me plan my week", "I need to write an email to my
//!   landlord"): asking for them first beats inventing them.
//!
//! All of them are pure token scans over [`crate::text::words`] of the normalized text.

use serde::{Deserialize, Serialize};

use crate::text::{PhraseSet, find_phrase, is_content_word};

/// Verbs that act on something the user already has (text, code, a file), as opposed to verbs
/// that create ("write", "draft") or skill verbs ("add", "remind").
const OBJECT_VERBS: &PhraseSet = &PhraseSet::new(&[
    "fix",
    "debug",
    "translate",
    "summarize",
    "summarise",
    "explain",
    "rewrite",
    "reword",
    "rephrase",
    "paraphrase",
    "proofread",
    "edit",
    "correct",
    "shorten",
    "improve",
    "polish",
    "check",
    "review",
    "send",
    "forward",
    "refactor",
    "optimize",
    "optimise",
    "analyze",
    "analyse",
    "format",
    "grade",
]);

/// Bare pointers that stand for the object.
const POINTERS: &PhraseSet = &PhraseSet::new(&["it", "this", "that", "these", "those", "them"]);

/// Determiners before a generic noun ("my code", "the file", "this paragraph").
const DETERMINERS: &PhraseSet =
    &PhraseSet::new(&["my", "the", "this", "that", "our", "these", "those", "his", "her", "their"]);

/// Nouns that name a kind of material without giving it.
const GENERIC_OBJECTS: &PhraseSet = &PhraseSet::new(&[
    "code",
    "script",
    "program",
    "function",
    "query",
    "bug",
    "error",
    "text",
    "message",
    "email",
    "mail",
    "letter",
    "essay",
    "paragraph",
    "sentence",
    "document",
    "doc",
    "file",
    "article",
    "draft",
    "paper",
    "post",
    "thing",
    "stuff",
    "one",
    "part",
    "bit",
    "section",
    "homework",
    "answer",
    "sql",
]);

/// Objects that are code: working memory resolves them only if it holds code.
const CODE_OBJECTS: &PhraseSet =
    &PhraseSet::new(&["code", "script", "program", "function", "query", "bug", "error", "sql"]);

/// The words from `at` name the object only by a pointer or a determiner plus a generic noun.
fn pointer_object(ws: &[&str], at: usize) -> bool {
    let Some(&first) = ws.get(at) else { return false };
    let second = ws.get(at + 1).copied();
    // "the file", but not "the file permissions" (a compound whose head is the next noun).
    if DETERMINERS.contains(&first)
        && second.is_some_and(|w| GENERIC_OBJECTS.contains(&w))
        && !ws.get(at + 2).is_some_and(|w| is_content_word(w))
    {
        return true;
    }
    // "this" alone or before a preposition ("this into French"), but not "this morning's report"
    // (a pointer followed by a content noun).
    POINTERS.contains(&first) && !second.is_some_and(is_content_word)
}

/// Characters that carry material inline: quotes, code punctuation, a colon before a paste.
fn has_inline_material(text: &str) -> bool {
    text.chars().any(|c| matches!(c, '"' | '`' | '{' | '}' | ';' | '=' | ':' | '(' | ')' | '<' | '>' | '\n'))
        || quoted_span(text)
}

/// A single-quoted span ('bonjour'), told apart from apostrophes inside words ("don't").
fn quoted_span(text: &str) -> bool {
    let b = text.as_bytes();
    let opening = (0..b.len()).find(|&i| b[i] == b'\'' && (i == 0 || !b[i - 1].is_ascii_alphanumeric()));
    opening.is_some_and(|o| b[o + 1..].contains(&b'\''))
}

/// How a [`request_object`] names the object it lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Object {
    /// "it", "this", "that one".
    Pointer,
    /// A determiner and a noun: "my code", "this recipe", "the report".
    Noun,
}

impl Object {
    pub fn is_noun(self) -> bool {
        self == Object::Noun
    }
}

/// The object of a request is only a pointer: an [`OBJECT_VERBS`] verb followed by a bare pointer
/// ("it", "this") or a determiner and a generic noun ("my code", "the email"), with no quote,
/// code or pasted text in the message. What follows the object ("into French", "so it sounds
/// friendlier") is an instruction about the material, not the material.
pub fn missing_object(text: &str, ws: &[&str]) -> bool {
    request_object(text, ws).is_some()
}

/// [`missing_object`], saying how the object is named. Besides the generic nouns, a verb that
/// works on the user's own text ([`object::MATERIAL_VERBS`]) takes any noun after a possessive
/// or demonstrative ("translate this recipe", "grade my answer"): see [`object::owned_noun`].
pub fn request_object(text: &str, ws: &[&str]) -> Option<Object> {
    if has_inline_material(text) {
        return None;
    }
    let mut found = None;
    for v in 0..ws.len() {
        // "fix up this", "look over my essay": one particle may sit between the verb and the object.
        let particle = ws.get(v + 1).is_some_and(|w| matches!(*w, "up" | "over" | "through"));
        let at = if particle { v + 2 } else { v + 1 };
        if OBJECT_VERBS.contains(&ws[v]) && pointer_object(ws, at) {
            let noun = DETERMINERS.contains(&ws[at]) && ws.get(at + 1).is_some_and(|w| GENERIC_OBJECTS.contains(w));
            return Some(if noun { Object::Noun } else { Object::Pointer });
        }
        if found.is_none() && object::owned_noun(ws, v) {
            found = Some(Object::Noun);
        }
    }
    found
}

/// The object named by a [`missing_object`] request is code ("fix my code", "debug this
/// function"): working memory resolves it only when it holds code.
pub fn names_code(ws: &[&str]) -> bool {
    ws.iter().any(|w| CODE_OBJECTS.contains(w))
}

/// Whether a text looks like code: punctuation that prose rarely has, or a keyword of a common
/// language at the start of a line. Brackets alone are not enough: "Reminder set: Saturday
/// 10:00 (in 2 days) [#12]" is prose with a label.
pub fn looks_like_code(text: &str) -> bool {
    let strong = text.chars().filter(|c| matches!(c, '{' | '}' | ';' | '=' | '`')).count();
    let brackets = text.chars().filter(|c| matches!(c, '(' | ')' | '[' | ']')).count();
    let keyword = text.lines().any(|l| {
        let l = l.trim_start();
        ["def ", "fn ", "for ", "if ", "class ", "import ", "let ", "const ", "function ", "return ", "print"]
            .iter()
            .any(|k| l.starts_with(k))
    });
    strong >= 2 || (strong >= 1 && brackets >= 2) || (keyword && strong + brackets >= 1)
}

/// Whether and how the message says the last answer missed the point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Correction {
    #[default]
    None,
    /// "that's not what I meant", "you misunderstood me": nothing says what was meant.
    Bare,
    /// "no, I meant the Python version": the correction carries its own content.
    WithDetail,
}

/// Phrases that say the answer missed what the user meant (whole words, after
/// [`crate::text::normalize`]).
const CORRECTIONS: &PhraseSet = &PhraseSet::new(&[
    "not what i meant",
    "not what i mean",
    "not what i asked",
    "not what i was asking",
    "not what i wanted",
    "not what i said",
    "not my question",
    "i didn't mean",
    "i did not mean",
    "i didn't ask",
    "i meant",
    "i mean",
    "misunderstood",
    "misunderstand",
    "misunderstanding",
    "misread",
    "got me wrong",
    "missed the point",
    "missing the point",
    "that's not it",
    "thats not it",
    "not the point",
]);

/// Words that may surround a correction phrase without saying what was meant.
const CORRECTION_FILLER: &PhraseSet = &PhraseSet::new(&[
    "no",
    "nope",
    "nah",
    "that's",
    "thats",
    "that",
    "this",
    "is",
    "was",
    "it's",
    "its",
    "you",
    "you've",
    "me",
    "my",
    "at",
    "all",
    "quite",
    "really",
    "exactly",
    "sorry",
    "but",
    "actually",
    "hmm",
    "um",
    "well",
    "again",
    "totally",
    "completely",
    "i",
    "think",
    "have",
    "what",
    "point",
    "entirely",
    "the",
    "not",
]);

/// Classify a correction ([`Correction`]). A phrase is only "I meant" when it opens the message
/// (after "no"/"sorry"): "I meant to ask you about X" in the middle of a sentence is a request.
pub fn correction(ws: &[&str]) -> Correction {
    let mut hit: Option<(usize, usize)> = None;
    // Most messages hold no correction: one pass over the words says so before the table walk.
    let candidates: &[&str] = if CORRECTIONS.any_in(ws) { CORRECTIONS } else { &[] };
    for p in candidates {
        if let Some(i) = find_phrase(ws, p) {
            // "i mean" also covers "i meant".
            if p.starts_with("i mean") {
                let lead =
                    ws[..i].iter().all(|w| matches!(*w, "no" | "nope" | "nah" | "sorry" | "well" | "um" | "actually"));
                // "I meant it" says the user was serious, not misread.
                let serious = ws.get(i + 2) == Some(&"it") && ws.len() == i + 3;
                if !lead || serious {
                    continue;
                }
            }
            let n = p.split(' ').count();
            if hit.is_none_or(|(_, m)| n > m) {
                hit = Some((i, n));
            }
        }
    }
    let Some((i, n)) = hit else { return Correction::None };
    let rest = ws[..i].iter().chain(&ws[i + n..]);
    let detail = rest.filter(|w| !CORRECTION_FILLER.contains(w) && is_content_word(w)).count();
    if detail == 0 { Correction::Bare } else { Correction::WithDetail }
}

/// Working-memory fullness at which a pointer counts as fully resolvable (the warmth term's
/// saturation, [`crate::cognition::context::WARMTH_WM_FULL`]).
const SUPPORT_FULL: f64 = 4.0;
/// On a new topic, working memory belongs to the topic the user just left.
const NEW_TOPIC_SUPPORT: f64 = 0.5;

/// How far working memory can supply the referent the message points at, 0–1: its
/// [`fullness_support`] when it holds something of the kind the message needs
/// ([`referent::referent_need`], [`referent::kind_support`]: code for "fix my code", options for
/// "which is better?", an earlier offer or request for "do it"), else 0.
pub fn referent_support(ws: &[&str], working_memory: &[&str], is_new_topic: bool) -> f64 {
    // The words alone carry no quotes or code: a message that had them has no missing object,
    // and its support is never read.
    let need = referent::referent_need(&ws.join(" "), ws, false);
    referent::kind_support(need, working_memory, fullness_support(working_memory.len(), is_new_topic))
}

/// Working memory's fullness (saturating at 4 entries), halved on a new topic: what is known of
/// the support when only the number of entries is.
pub fn fullness_support(working_memory_turns: usize, is_new_topic: bool) -> f64 {
    let full = (working_memory_turns as f64 / SUPPORT_FULL).min(1.0);
    if is_new_topic { full * NEW_TOPIC_SUPPORT } else { full }
}

mod dangling;
mod object;
pub mod referent;
mod underspecified;
pub use dangling::dangling_reference;
pub use referent::{ReferentNeed, referent_need};
pub use underspecified::underspecified_request;

#[cfg(test)]
mod tests;
