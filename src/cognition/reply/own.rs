//! Questions about the user's own stored traits and facts ("what am I allergic to?", "where
//! do I live?", "what's my sister's name?"), answered from memory with the source, or with
//! "I don't know that yet" — never an invented answer.
//!
//! [`parse`] recognises the question; [`answer`] looks it up in what [`OwnMemory`] holds. A
//! question about some "my X" whose X is not personal data ("what's my best option?") is an
//! open question: it is answered here only when memory has it, otherwise the model keeps it.

use super::templates::join_and;
use crate::memory::recall::Hit;
use crate::store::{FactRow, TraitRow};
use crate::text::{normalize, words};

/// What the user asked about themselves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnQuestion {
    pub subject: Subject,
    /// The thing asked, in the second person, for "I don't know …": "where you live".
    pub asked: String,
    /// Whether "nothing stored" should be said rather than handing the question to the model.
    pub personal: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// One trait key ("location").
    Key(&'static str),
    /// Every trait whose key starts so ("allergy_"), optionally only values starting with a
    /// verb ("likes").
    Prefix(&'static str, Option<&'static str>),
    /// "my X": the words of X, the head noun last ("home", "address").
    Words(Vec<String>),
}

/// The stored memory an answer may come from.
#[derive(Debug, Clone, Default)]
pub struct OwnMemory {
    /// Every trait not superseded.
    pub traits: Vec<TraitRow>,
    /// Facts of every topic, newest first.
    pub facts: Vec<FactRow>,
}

/// An answer and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct OwnAnswer {
    pub text: String,
    /// The memory rows used ("trait:allergy_peanuts", "fact:12", "episode:42"); empty when
    /// nothing was stored.
    pub sources: Vec<String>,
}

/// Fixed questions: leading words → subject, what was asked.
const FIXED: &[(&[&str], Subject, &str)] = &[
    (
        &[
            "what am i allergic to",
            "am i allergic to",
            "what are my allergies",
            "do i have any allergies",
            "what allergies do i have",
            "what am i allergic",
        ],
        Subject::Prefix("allergy_", None),
        "what you're allergic to",
    ),
    (
        &["where do i live", "where am i living", "where i live", "where do i live now", "where am i based"],
        Subject::Key("location"),
        "where you live",
    ),
    (
        &["where am i from", "where do i come from", "where did i grow up"],
        Subject::Key("hometown"),
        "where you're from",
    ),
    (
        &[
            "what's my name",
            "what is my name",
            "who am i",
            "do you know my name",
            "do you remember my name",
            "what am i called",
        ],
        Subject::Key("name"),
        "your name",
    ),
    (
        &[
            "what do i do for work",
            "what do i do for a living",
            "what's my job",
            "what is my job",
            "what's my occupation",
            "what is my occupation",
            "what do i work as",
            "what is my profession",
            "what's my profession",
        ],
        Subject::Key("occupation"),
        "what you do for work",
    ),
    (
        &[
            "where do i work",
            "who do i work for",
            "what company do i work for",
            "who is my employer",
            "who's my employer",
        ],
        Subject::Key("employer"),
        "where you work",
    ),
    (&["how old am i", "what's my age", "what is my age"], Subject::Key("age"), "how old you are"),
    (&["what's my diet", "what is my diet", "am i vegetarian", "am i vegan"], Subject::Key("diet"), "your diet"),
    (
        &["what do i like", "what do i love", "what do i enjoy", "what are my likes"],
        Subject::Prefix("preference_", Some("likes")),
        "what you like",
    ),
    (
        &["what don't i like", "what do i hate", "what do i dislike", "what do i not like"],
        Subject::Prefix("preference_", Some("dislikes")),
        "what you dislike",
    ),
    (
        &["do i have a pet", "do i have pets", "do i have any pets", "what pets do i have", "what pet do i have"],
        Subject::Prefix("pet_", None),
        "your pets",
    ),
];

/// Leading words of a "my X" question.
const MY_LEADS: &[&str] = &[
    "what's my",
    "what is my",
    "whats my",
    "what are my",
    "who is my",
    "who's my",
    "whos my",
    "what was my",
    "do you know my",
    "do you remember my",
    "remind me what my",
    "tell me my",
    "what were my",
];
/// Words in X that do not change what is asked.
const MODIFIERS: &[&str] = &["current", "new", "present", "latest", "actual", "real", "exact", "full", "own"];
/// Heads of X that are personal data: asked and not stored, "I don't know that yet".
const PERSONAL: &[&str] = &[
    "name",
    "address",
    "phone",
    "number",
    "email",
    "birthday",
    "age",
    "job",
    "wife",
    "husband",
    "partner",
    "sister",
    "brother",
    "mother",
    "mom",
    "mum",
    "father",
    "dad",
    "son",
    "daughter",
    "boyfriend",
    "girlfriend",
    "friend",
    "boss",
    "cousin",
    "aunt",
    "uncle",
    "dog",
    "cat",
    "pet",
    "car",
    "city",
    "hometown",
    "favorite",
    "favourite",
    "colour",
    "color",
    "food",
    "team",
    "employer",
    "company",
    "school",
    "university",
    "hobby",
    "hobbies",
    "allergy",
    "allergies",
    "kids",
    "children",
    "height",
    "blood",
    "nationality",
];

/// The own-question `text` asks, if it is one.
pub fn parse(text: &str) -> Option<OwnQuestion> {
    let lower = normalize(text);
    let ws = words(&lower);
    // "hey, what's my name?" / "so where do I live": skip one or two leading fillers.
    let lead = ws
        .iter()
        .take(2)
        .take_while(|w| matches!(**w, "hey" | "hi" | "so" | "ok" | "okay" | "chalie" | "and" | "um" | "also"))
        .count();
    let ws = &ws[lead..];
    if ws.len() > 12 {
        return None;
    }
    let starts = |p: &str| crate::text::phrase_at(ws, 0, p);
    for (phrases, subject, asked) in FIXED {
        if phrases.iter().any(|p| starts(p)) {
            return Some(OwnQuestion { subject: subject.clone(), asked: (*asked).to_string(), personal: true });
        }
    }
    // "what foods do I dislike?", "which bands do I love?"
    if let ["what" | "which", _, "do", "i", verb] | ["what" | "which", _, _, "do", "i", verb] = ws
        && let Some(which) = match *verb {
            "like" | "love" | "enjoy" => Some("likes"),
            "dislike" | "hate" => Some("dislikes"),
            _ => None,
        }
    {
        let asked = if which == "likes" { "what you like" } else { "what you dislike" };
        return Some(OwnQuestion {
            subject: Subject::Prefix("preference_", Some(which)),
            asked: asked.into(),
            personal: true,
        });
    }
    // "which gym do I go to?", "what car do I drive?", "what phone do I have?": the noun asked
    // about is the slot.
    if let ["what" | "which", noun, "do" | "did", "i", _, ..] = ws
        && !MODIFIERS.contains(noun)
        && !matches!(*noun, "time" | "day" | "else" | "kind" | "sort" | "type" | "way" | "if")
        && crate::text::is_content_word(noun)
    {
        let x = vec![noun.to_string()];
        let personal = PERSONAL.contains(noun);
        return Some(OwnQuestion { subject: Subject::Words(x), asked: format!("your {noun}"), personal });
    }
    let n = MY_LEADS.iter().filter(|p| starts(p)).map(|p| p.split(' ').count()).max()?;
    // X runs to the verb or the end: "what's my sister's name again" → sister's name.
    let x: Vec<String> = ws[n..]
        .iter()
        .take_while(|w| {
            !matches!(**w, "again" | "now" | "please" | "is" | "was" | "are" | "called" | "you" | "that" | "i")
        })
        .filter(|w| !MODIFIERS.contains(w))
        .map(|w| w.trim_end_matches("'s").to_string())
        .collect();
    let head = x.last()?.clone();
    let personal = PERSONAL.contains(&head.as_str());
    let asked = format!("your {}", possessive(&x));
    Some(OwnQuestion { subject: Subject::Words(x), asked, personal })
}

/// "sister name" → "sister's name"; "home address" stays.
fn possessive(x: &[String]) -> String {
    match x {
        [owner, last] if last == "name" => format!("{owner}'s name"),
        _ => x.join(" "),
    }
}

/// Answer `q` from `mem` and the recalled `hits`; `None` hands the question to the model (an
/// open question memory cannot answer).
pub fn answer(q: &OwnQuestion, mem: &OwnMemory, hits: &[Hit]) -> Option<OwnAnswer> {
    let found = match &q.subject {
        Subject::Key(key) => by_key(mem, key),
        Subject::Prefix(prefix, verb) => by_prefix(mem, prefix, *verb),
        Subject::Words(x) => by_words(mem, x, hits),
    };
    match found {
        Some(a) => Some(a),
        None if q.personal => Some(OwnAnswer {
            text: format!("I don't know that yet — you haven't told me {}.", q.asked),
            sources: Vec::new(),
        }),
        None => None,
    }
}

/// The trait's confidence label, except that a memory marked doubtful is "uncertain" whatever
/// its confidence.
fn label(t: &TraitRow) -> &'static str {
    match t.reliability.as_str() {
        "uncertain" | "contradicted" => "uncertain",
        _ => super::trait_label(t.confidence),
    }
}

fn trait_answer(sentence: String, used: &[&TraitRow]) -> OwnAnswer {
    let doubtful = used.iter().any(|t| label(t) == "uncertain");
    let text = if doubtful {
        format!(
            "I have it that {}, but I'm not sure that's still right. (From memory: {}.)",
            lower_first(&sentence),
            describe(used)
        )
    } else {
        format!("{sentence}. (From memory: {}.)", describe(used))
    };
    OwnAnswer { text, sources: used.iter().map(|t| format!("trait:{}", t.key)).collect() }
}

fn describe(used: &[&TraitRow]) -> String {
    used.iter().map(|t| format!("{}, {}", t.key.replace('_', " "), label(t))).collect::<Vec<_>>().join("; ")
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

fn by_key(mem: &OwnMemory, key: &str) -> Option<OwnAnswer> {
    if let Some(t) = mem.traits.iter().find(|t| t.key == key) {
        let v = t.value.trim();
        let sentence = match key {
            "location" => format!("You live in {v}"),
            "hometown" => format!("You're from {v}"),
            "name" => format!("Your name is {v}"),
            "occupation" => format!("You work as {}", super::templates::with_article(v)),
            "employer" => format!("You work at {v}"),
            "age" => format!("You're {v}"),
            "diet" => format!("You're {v}"),
            _ => format!("Your {} is {v}", key.replace('_', " ")),
        };
        return Some(trait_answer(sentence, &[t]));
    }
    let f = mem.facts.iter().find(|f| f.key == key)?;
    Some(fact_answer(&[key.replace('_', " ")], f))
}

fn by_prefix(mem: &OwnMemory, prefix: &str, verb: Option<&str>) -> Option<OwnAnswer> {
    let used: Vec<&TraitRow> = mem
        .traits
        .iter()
        .filter(|t| t.key.starts_with(prefix) && verb.is_none_or(|v| t.value.starts_with(&format!("{v} "))))
        .collect();
    if used.is_empty() {
        return None;
    }
    let values: Vec<&str> = used
        .iter()
        .map(|t| verb.and_then(|v| t.value.strip_prefix(v)).unwrap_or(&t.value).trim())
        .map(|v| v.strip_prefix("has ").unwrap_or(v))
        .collect();
    let list = join_and(&values);
    let sentence = match (prefix, verb) {
        ("allergy_", _) => format!("You're allergic to {list}"),
        (_, Some("likes")) => format!("You've told me you like {list}"),
        (_, Some("dislikes")) => format!("You've told me you don't like {list}"),
        ("pet_", _) => format!("You have {list}"),
        _ => format!("You've told me: {list}"),
    };
    Some(trait_answer(sentence, &used))
}

/// How many of `x`'s words a key holds; `None` unless it holds the head noun (the last word).
fn key_match(key: &str, x: &[String]) -> Option<usize> {
    let parts: Vec<&str> = key.split('_').collect();
    let head = x.last()?;
    parts.contains(&head.as_str()).then(|| x.iter().filter(|w| parts.contains(&w.as_str())).count())
}

fn by_words(mem: &OwnMemory, x: &[String], hits: &[Hit]) -> Option<OwnAnswer> {
    let best_trait = mem.traits.iter().filter_map(|t| key_match(&t.key, x).map(|n| (n, t))).max_by_key(|(n, _)| *n);
    // Facts are newest first, so among equal matches the newest (a changed address) wins.
    let best_fact = mem.facts.iter().filter_map(|f| key_match(&f.key, x).map(|n| (n, f))).fold(
        None::<(usize, &FactRow)>,
        |acc, (n, f)| match acc {
            Some((m, _)) if m >= n => acc,
            _ => Some((n, f)),
        },
    );
    match (best_trait, best_fact) {
        (Some((nt, _)), Some((nf, f))) if nf > nt => Some(fact_answer(x, f)),
        (Some((_, t)), _) => Some(trait_answer(format!("Your {} is {}", possessive(x), t.value.trim()), &[t])),
        (None, Some((_, f))) => Some(fact_answer(x, f)),
        (None, None) => recalled(x, hits),
    }
}

fn fact_answer(x: &[String], f: &FactRow) -> OwnAnswer {
    OwnAnswer {
        text: format!(
            "Your {} is {}. (From memory: fact {}, from our conversation.)",
            possessive(x),
            f.value.trim(),
            f.key
        ),
        sources: vec![format!("fact:{}", f.id)],
    }
}

/// The best recalled memory that mentions the head noun, quoted with its id.
fn recalled(x: &[String], hits: &[Hit]) -> Option<OwnAnswer> {
    let head = x.last()?;
    let hit = hits.iter().find(|h| words(&normalize(&h.text)).contains(&head.as_str()))?;
    Some(recall_answer(hit))
}

/// An answer quoting one recalled memory, for questions no trait or fact answers.
pub fn recall_answer(hit: &Hit) -> OwnAnswer {
    let doubt = if hit.reliability == "reliable" { "" } else { " It's marked as doubtful, so please check it." };
    OwnAnswer {
        text: format!(
            "Here's what I have from earlier: \"{}\" (From memory: {}:{}.){doubt}",
            hit.text.trim(),
            hit.layer,
            hit.id
        ),
        sources: vec![format!("{}:{}", hit.layer, hit.id)],
    }
}

#[cfg(test)]
mod tests;
