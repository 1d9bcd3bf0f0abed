//! The open object test of [`super::request_object`]: a verb that works on the user's own text,
//! then a possessive or demonstrative and a noun, and nothing that could be the text itself.
//! Unlike the generic nouns of the parent module this takes any noun ("translate this recipe",
//! "grade my answer", "look over the report"): what matters is that the thing is the user's and
//! is not in the message.

use crate::text::{PhraseSet, is_content_word};

/// Verbs whose object is text the user has, whatever it is called. Not "check", "fix" or
/// "explain": "check my calendar", "fix my bike" and "explain the rules" name things the
/// assistant can work with without being handed them.
pub const MATERIAL_VERBS: &PhraseSet = &PhraseSet::new(&[
    "translate",
    "proofread",
    "summarize",
    "summarise",
    "rewrite",
    "reword",
    "rephrase",
    "paraphrase",
    "edit",
    "shorten",
    "tighten",
    "polish",
    "grade",
    "mark",
    "critique",
    "review",
    "correct",
]);

/// Verb + particle pairs that read through the user's text ("look over the report").
const READ_THROUGH: &[(&str, &str)] =
    &[("look", "over"), ("look", "through"), ("go", "over"), ("go", "through"), ("read", "over"), ("read", "through")];

/// What "check X for …" looks for when X is text ("check my recipe for mistakes").
const PROOF_TARGETS: &PhraseSet = &PhraseSet::new(&["mistakes", "errors", "typos", "grammar", "spelling", "accuracy"]);

/// Owner words before the noun. "the" only after a read-through verb: "summarize the French
/// Revolution" asks for knowledge, "look over the report" for the user's report.
const OWNERS: &PhraseSet = &PhraseSet::new(&["my", "our", "this", "these", "that", "those", "his", "her", "their"]);

/// Words that end the object: an instruction about the material, not more of it.
const OBJECT_END: &PhraseSet = &PhraseSet::new(&[
    "for", "into", "to", "in", "and", "so", "please", "then", "before", "because", "but", "with", "a", "bit",
]);

/// Whether the verb at `v` takes an owned noun with nothing attached that could be the text.
pub fn owned_noun(ws: &[&str], v: usize) -> bool {
    let verb = ws[v];
    let read_through = ws.get(v + 1).is_some_and(|p| READ_THROUGH.contains(&(verb, *p)));
    let check = verb == "check";
    if !(MATERIAL_VERBS.contains(&verb) || read_through || check) {
        return false;
    }
    let at = if read_through { v + 2 } else { v + 1 };
    let Some(owner) = ws.get(at) else { return false };
    if !(OWNERS.contains(owner) || (read_through && *owner == "the")) {
        return false;
    }
    // One or two content words ("my answer", "this German recipe"), then the end of the object.
    let mut i = at + 1;
    while i < ws.len() && i < at + 3 && is_content_word(ws[i]) && !OBJECT_END.contains(&ws[i]) {
        i += 1;
    }
    if i == at + 1 {
        return false;
    }
    let end = ws.get(i).copied();
    if check {
        // "check my recipe for mistakes", but not "check my calendar for tomorrow".
        return end == Some("for") && ws.get(i + 1).is_some_and(|w| PROOF_TARGETS.contains(w));
    }
    end.is_none_or(|w| OBJECT_END.contains(&w))
}
