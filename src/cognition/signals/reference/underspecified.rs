//! [`underspecified_request`]: a request to make something that gives none of the details only
//! the user has (see the parent module).

use super::has_inline_material;
use crate::text::{PhraseSet, is_content_word};

/// Verbs that produce something for the user (a plan, a message) rather than act on material
/// they already have ([`super::OBJECT_VERBS`]).
const MAKE_VERBS: &PhraseSet =
    &PhraseSet::new(&["write", "draft", "plan", "organize", "organise", "prepare", "compose"]);

/// Things such a verb makes that cannot be made well without details only the user has: who, what
/// about, when, for how long. A poem or a haiku can be written from its name alone.
const DETAIL_OBJECTS: &PhraseSet = &PhraseSet::new(&[
    "email",
    "letter",
    "message",
    "note",
    "reply",
    "response",
    "speech",
    "toast",
    "talk",
    "presentation",
    "post",
    "plan",
    "day",
    "week",
    "weekend",
    "month",
    "trip",
    "holiday",
    "vacation",
    "party",
    "event",
    "schedule",
    "budget",
    "menu",
    "meeting",
    "wedding",
    "birthday",
    "move",
    "it",
    "this",
    "that",
    "something",
]);

/// Words that open a request for one of [`MAKE_VERBS`] ("help me plan", "I need to write").
const ASKING: &PhraseSet =
    &PhraseSet::new(&["help", "need", "want", "can", "could", "would", "will", "please", "let's", "lets"]);

/// Words that may follow the object without saying anything about it: a recipient
/// ("to my landlord"), politeness, and the verb's particles.
const DETAIL_FILLER: &PhraseSet = &PhraseSet::new(&[
    "to", "for", "me", "us", "my", "our", "the", "a", "an", "please", "out", "up", "quick", "short", "new", "next",
    "this", "it",
]);

/// A request to make something that needs details the message does not give: a [`MAKE_VERBS`]
/// verb, asked for ("help me plan it", "I need to write an email to my landlord", "can you help
/// me plan my week?") or opening the message, whose object is one of [`DETAIL_OBJECTS`] and is
/// followed by at most a recipient (one content word after "to"/"for"). A date, a number,
/// "about …", quoted material or any further content word is a detail, and the request is
/// specified ("help me plan a 3-day trip to Rome in May on a $500 budget"). A decision whose
/// options are counted but not named ("I'm choosing between two apartments") lacks its details
/// the same way.
pub fn underspecified_request(text: &str, ws: &[&str]) -> bool {
    if has_inline_material(text) || ws.iter().any(|w| w.bytes().any(|b| b.is_ascii_digit())) {
        return false;
    }
    if let Some(b) = ws.iter().position(|w| *w == "between") {
        return b > 0 && CHOOSING.contains(&ws[b - 1]) && unnamed_options(&ws[b + 1..]);
    }
    let Some(v) = ws.iter().position(|w| MAKE_VERBS.contains(w)) else { return false };
    if v > 0 && !ws[..v].iter().any(|w| ASKING.contains(w)) {
        return false;
    }
    let mut rest = ws[v + 1..].iter().copied().skip_while(|w| matches!(*w, "out" | "up" | "for" | "me"));
    // The object: a bare pointer, or up to one determiner and one adjective before the noun.
    let mut object = None;
    for w in rest.by_ref().take(3) {
        if DETAIL_OBJECTS.contains(&w) {
            object = Some(w);
            break;
        }
        if !DETAIL_FILLER.contains(&w) && !matches!(w, "some" | "quick" | "short" | "whole") {
            return false;
        }
    }
    if object.is_none() {
        return false;
    }
    // What follows may name a recipient ("to my landlord", "for my boss") and nothing more.
    let mut recipient = 0usize;
    for w in rest {
        if DETAIL_FILLER.contains(&w) {
            continue;
        }
        if !is_content_word(w) {
            continue;
        }
        recipient += 1;
        if recipient > 1 {
            return false;
        }
    }
    true
}

/// Words before "between" that make it a decision ("I'm choosing between two apartments").
const CHOOSING: &PhraseSet = &PhraseSet::new(&["choosing", "choose", "deciding", "decide", "torn", "picking", "pick"]);

/// The options of a decision are only counted, not named: no "and"/"or" joins two of them, and
/// at most one content word besides a count ("two apartments", "a few options").
fn unnamed_options(after: &[&str]) -> bool {
    const COUNTS: &PhraseSet =
        &PhraseSet::new(&["two", "three", "four", "several", "few", "couple", "different", "options", "choices"]);
    !after.iter().any(|w| matches!(*w, "and" | "or"))
        && after.iter().filter(|w| !COUNTS.contains(w) && is_content_word(w)).count() <= 1
}
