//! What kind of referent a message leans on, and whether working memory holds one of that kind
//! (see the parent module). How full working memory is says little on its own: after two
//! exchanges about flight times, "which is better?" still has no options to choose from, and
//! "grade my answer" no answer to grade.

use serde::{Deserialize, Serialize};

use super::{looks_like_code, names_code, quoted_span, request_object};
use crate::text::{PhraseSet, is_content_word};

/// The kind of thing a message needs the conversation to already hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReferentNeed {
    /// Nothing beyond the ordinary flow of the conversation.
    #[default]
    None,
    /// A bare pointer ("fix it", "explain that"): anything recent can be it.
    Pointer,
    /// Material the user owns, named by a noun ("proofread my essay", "translate this recipe"):
    /// pasted text, code or a passage long enough to work on.
    Material,
    /// Code ("fix my code", "debug this function").
    Code,
    /// An action proposed earlier ("do it", "set it up", "go ahead"): an offer of the assistant
    /// or a request of the user.
    Proposal,
    /// Options to choose from ("which is better?", "the second option").
    Options,
}

/// Verbs that carry out something proposed, when their object is only a pointer ("do it").
const PROPOSAL_VERBS: &PhraseSet = &PhraseSet::new(&[
    "do", "set", "make", "start", "run", "book", "handle", "arrange", "schedule", "order", "sort", "organize",
    "organise", "try", "launch", "submit", "buy", "finish",
]);

/// Words that may open such a message without adding content ("ok, do it", "then just set it up").
const PROPOSAL_LEAD: &PhraseSet = &PhraseSet::new(&[
    "ok", "okay", "yes", "yeah", "yep", "sure", "great", "alright", "fine", "then", "so", "please", "just", "and",
]);

/// Words that may follow the pointer without saying what it is ("set it up for me now").
const PROPOSAL_TAIL: &PhraseSet = &PhraseSet::new(&[
    "up", "out", "for", "me", "us", "now", "then", "please", "today", "tonight", "already", "happen", "again",
]);

/// Content words that judge options without naming any ("which is better?", "which would you pick?").
const CHOICE_WORDS: &PhraseSet = &PhraseSet::new(&[
    "better",
    "best",
    "worse",
    "cheaper",
    "faster",
    "easier",
    "nicer",
    "good",
    "pick",
    "choose",
    "recommend",
    "prefer",
    "buy",
    "take",
    "get",
    "go",
    "option",
    "options",
    "choice",
]);

/// Ordinals that pick from a list ("the second one").
const ORDINALS: &PhraseSet =
    &PhraseSet::new(&["first", "second", "third", "fourth", "fifth", "last", "latter", "former"]);

/// Words that may surround an ordinal pick ("I'll take the second option, please").
const PICK_FILLER: &PhraseSet = &PhraseSet::new(&[
    "the", "one", "option", "choice", "please", "i'll", "ill", "take", "go", "with", "i", "think", "pick", "choose",
    "then",
]);

/// "do it", "ok, set it up", "go ahead", "make it happen": carry out something earlier.
pub fn proposal_pointer(ws: &[&str]) -> bool {
    let start = ws.iter().position(|w| !PROPOSAL_LEAD.contains(w)).unwrap_or(ws.len());
    let ws = &ws[start..];
    if matches!(ws, ["go", "ahead", ..] | ["go", "for", "it", ..]) {
        return ws.iter().skip(2).all(|w| PROPOSAL_TAIL.contains(w) || matches!(*w, "it" | "and" | "do"));
    }
    match ws {
        [verb, pointer, tail @ ..] => {
            PROPOSAL_VERBS.contains(verb)
                && matches!(*pointer, "it" | "that" | "this" | "them")
                && tail.iter().all(|w| PROPOSAL_TAIL.contains(w))
        }
        _ => false,
    }
}

/// A choice asked or made without the options named: "which is better?", "which one would you
/// pick?", "which", "the second option".
pub fn unnamed_choice(ws: &[&str]) -> bool {
    let start = ws
        .iter()
        .position(|w| !matches!(*w, "so" | "ok" | "okay" | "and" | "but" | "well" | "hmm"))
        .unwrap_or(ws.len());
    let ws = &ws[start..];
    if ws.first() == Some(&"which") {
        return ws.iter().filter(|w| is_content_word(w)).all(|w| CHOICE_WORDS.contains(w));
    }
    let ordinals = ws.iter().filter(|w| ORDINALS.contains(w)).count();
    ordinals == 1 && ws.iter().all(|w| ORDINALS.contains(w) || PICK_FILLER.contains(w))
}

/// The referent `ws` (the words of a normalized message) needs; `vague_reference` is the
/// message's [`crate::cognition::signals::TextSignals::vague_reference`].
pub fn referent_need(text: &str, ws: &[&str], vague_reference: bool) -> ReferentNeed {
    if let Some(object) = request_object(text, ws) {
        return if names_code(ws) {
            ReferentNeed::Code
        } else if object.is_noun() {
            ReferentNeed::Material
        } else {
            ReferentNeed::Pointer
        };
    }
    if proposal_pointer(ws) {
        ReferentNeed::Proposal
    } else if unnamed_choice(ws) {
        ReferentNeed::Options
    } else if vague_reference {
        ReferentNeed::Pointer
    } else {
        ReferentNeed::None
    }
}

/// Words from which a passage counts as material to work on even without quotes or code
/// (an earlier answer to summarize, a pasted paragraph).
const MATERIAL_WORDS: usize = 40;

/// Words after a colon from which it introduces a paste ("here it is: …"), not a label
/// ("Reminder set: Saturday 10:00").
const PASTE_WORDS: usize = 12;

/// An entry of working memory that a material request could work on: quoted text, code, a
/// paste after a colon, or a passage of [`MATERIAL_WORDS`].
pub fn holds_material(entry: &str) -> bool {
    let quoted = entry.contains('"') || entry.contains('`') || quoted_span(entry);
    let pasted = entry.split_once(':').is_some_and(|(_, rest)| rest.split_whitespace().count() >= PASTE_WORDS);
    quoted || pasted || looks_like_code(entry) || entry.split_whitespace().count() >= MATERIAL_WORDS
}

/// An entry that lays out options: "X or Y", "A vs B", "between …", "either …", "one is …, the
/// other …", or a list of two or more lines.
pub fn holds_options(entry: &str) -> bool {
    let lower = format!(" {} ", crate::text::normalize(entry));
    let joined = [" or ", " vs ", " versus ", " either ", " between "].iter().any(|m| lower.contains(m));
    let contrast = (lower.contains(" one is ") || lower.contains(" one's ")) && lower.contains(" the other ");
    let items = entry
        .lines()
        .map(str::trim_start)
        .filter(|l| {
            l.starts_with(['-', '*', '•'])
                || l.split_once(['.', ')']).is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .count();
    joined || contrast || items >= 2
}

/// An entry that proposes an action: an offer ("want me to", "shall I") or a request
/// ("can you", "please", "I'd like to"). Not "should I": the user asking for advice proposes
/// nothing to carry out.
pub fn holds_proposal(entry: &str) -> bool {
    const MARKS: &PhraseSet = &PhraseSet::new(&[
        "want me to",
        "shall i",
        "would you like me to",
        "i can",
        "i could",
        "let me",
        "i'll",
        "i will",
        "can you",
        "could you",
        "would you",
        "please",
        "i want to",
        "i'd like to",
        "i would like to",
        "i need to",
        "remind me",
        "set up",
    ]);
    let lower = format!(" {} ", crate::text::normalize(entry));
    MARKS.iter().any(|m| lower.contains(&format!(" {m} ")))
}

/// How far `working_memory` can supply what `need` asks for, given its fullness support
/// (`full`, [`super::fullness_support`]): that support when an entry of the needed kind is
/// there, else 0. A bare pointer or no need takes the fullness alone.
pub fn kind_support(need: ReferentNeed, working_memory: &[&str], full: f64) -> f64 {
    let has = |f: fn(&str) -> bool| working_memory.iter().any(|e| f(e));
    let found = match need {
        ReferentNeed::None | ReferentNeed::Pointer => true,
        ReferentNeed::Code => has(looks_like_code),
        ReferentNeed::Material => has(holds_material),
        ReferentNeed::Proposal => has(holds_proposal),
        ReferentNeed::Options => has(holds_options),
    };
    if found { full } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cognition::signals::reference::{missing_object, referent_support};
    use crate::text::{normalize, words};

    fn need(t: &str) -> ReferentNeed {
        let lower = normalize(t);
        referent_need(&lower, &words(&lower), false)
    }

    fn support(t: &str, wm: &[&str]) -> f64 {
        referent_support(&words(&normalize(t)), wm, false)
    }

    /// Two exchanges about flights: a full working memory with no options, offer or material.
    const FLIGHTS: &PhraseSet = &PhraseSet::new(&[
        "how long is the flight from London?",
        "About twelve hours direct.",
        "is it cheaper to fly in spring?",
        "Usually a little, outside the holidays.",
    ]);

    #[test]
    fn referent_needs_by_kind() {
        for t in ["do it", "ok, set it up", "go ahead", "just book it for me", "make it happen"] {
            assert_eq!(need(t), ReferentNeed::Proposal, "{t}");
        }
        for t in
            ["which is better?", "which", "which one would you pick?", "the second option", "I'll take the first one"]
        {
            assert_eq!(need(t), ReferentNeed::Options, "{t}");
        }
        for t in [
            "translate this recipe into English for me",
            "can you grade my answer?",
            "could you look over the report and tighten it up?",
            "can you check my recipe for mistakes?",
            "summarize this chapter",
        ] {
            assert_eq!(need(t), ReferentNeed::Material, "{t}");
            assert!(missing_object(&normalize(t), &words(&normalize(t))), "{t}");
        }
        assert_eq!(need("fix my code"), ReferentNeed::Code);
        assert_eq!(need("can you summarize it"), ReferentNeed::Pointer);
        for t in [
            "which story should I start with?",
            "do it yourself is a great motto",
            "set the table",
            "check my calendar for tomorrow",
            "summarize the French Revolution",
            "make it sound less dry",
            "I did it",
            "the second world war",
        ] {
            assert_eq!(need(t), ReferentNeed::None, "{t}");
        }
    }

    #[test]
    fn referent_support_needs_the_kind_not_just_a_full_memory() {
        // Before: any four entries resolved "which is better?" and "do it" fully.
        assert_eq!(support("which is better?", FLIGHTS), 0.0);
        assert_eq!(support("do it", FLIGHTS), 0.0);
        assert_eq!(support("can you grade my answer?", FLIGHTS), 0.0);
        // A bare pointer still takes what is there.
        assert_eq!(support("explain that again", FLIGHTS), 1.0);
        let options = ["should I take the night train or fly?", "Depends on the budget.", "a", "b"];
        assert_eq!(support("which is cheaper?", &options), 1.0);
        let offer = ["my fan is loud", "Want me to walk you through a BIOS update?", "a", "b"];
        assert_eq!(support("do it", &offer), 1.0);
        let pasted = ["here it is: 'Mehl, Zucker und Eier verrühren'", "Mix flour, sugar and eggs.", "a", "b"];
        assert_eq!(support("translate this recipe into English", &pasted), 1.0);
    }

    #[test]
    fn referent_working_memory_kinds() {
        assert!(holds_options("one is bigger but 40 minutes from work, the other is small"));
        assert!(holds_options("Options:\n1. the direct flight\n2. a stop in Helsinki"));
        assert!(!holds_options("what about the other one?"));
        assert!(!holds_options("passport, charger, two shirts"));
        assert!(holds_proposal("Shall I set a reminder for Monday?"));
        assert!(holds_proposal("can you book a table for two?"));
        assert!(!holds_proposal("should I buy the print edition?"), "advice asked is no proposal");
        assert!(holds_material("sorry: 'Q3 revenue grew 4% while costs stayed flat'"));
        assert!(!holds_material("Reminder set: return the library book — Saturday 10:00 (in 2 days) [#12]"));
        assert!(holds_material(&"word ".repeat(MATERIAL_WORDS)));
    }
}
