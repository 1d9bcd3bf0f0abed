//! First-person statement patterns for the deterministic extraction ([`super::extract`]).
//!
//! A message is cut into sentences and each sentence into tokens that keep the user's own
//! spelling (values are stored as written: "Ada Lovelace", not "ada lovelace") beside a
//! normalised form the patterns match on. A value runs from the end of its pattern to the first
//! clause break: punctuation, a conjunction ("and", "but", "because", …) or a few words.
//!
//! What states nothing: a question (a `?`, or a sentence opening with an auxiliary or an
//! interrogative: "do I like jazz"), a hypothetical (an "if", "imagine", … before the pattern),
//! a negated value ("my sister is not here") and a pronoun object ("I love you").

use super::shortterm::FactDraft;
use super::traits::{Source, TraitObservation};
use crate::memory::identity::declared_name;
use crate::text::{is_content_word, normalize};

/// One word of a sentence.
#[derive(Debug, Clone, PartialEq)]
pub struct Tok {
    /// As the user wrote it, surrounding punctuation trimmed.
    pub raw: String,
    /// Lower-cased, curly apostrophes folded.
    pub lower: String,
    /// Followed by a clause break (`,` `;` `:` `)`): a value ends here.
    pub stop: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Sentence {
    pub text: String,
    pub tokens: Vec<Tok>,
    pub question: bool,
}

/// A trait, a topic fact, or both, stated by one pattern.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Statement {
    pub trait_: Option<TraitObservation>,
    pub fact: Option<FactDraft>,
}

const QUESTION_HEADS: &str =
    "do|does|did|am|is|are|was|were|can|could|would|should|will|what|where|when|who|why|how|which|whose|have|has";
const HYPOTHETICAL: &str = "if|imagine|suppose|pretend|whether|wish|unless";
const VALUE_ENDS: &str = "and|but|because|so|when|while|since|although|though|which|who|if|or|until|unless|whereas";
const NEGATED_VALUES: &str = "not|never|no|none|nothing|unknown|secret|private|it|this|that|something|anything|what";
const PRONOUN_OBJECTS: &str = "you|it|that|this|them|him|her|those|these|how|what|when|the way";
const RELATIONS: &str = "wife|husband|partner|sister|brother|mother|mom|mum|father|dad|son|daughter|kids|children|child|boyfriend|girlfriend|friend|boss|cousin|aunt|uncle|grandma|grandmother|grandfather|grandpa|fiance|fiancee|roommate|colleague|dog|cat|pet";
const PETS: &str = "dog|cat|puppy|kitten|parrot|rabbit|hamster|horse|bird|fish|turtle";
const PHYSICAL: &str = "height|weight|eyes|eye|hair|blood|allergy|diet|shoe";
const CORE: &str = "birthday|age|job|occupation|hometown|nationality|religion|name";

/// Whether `w` is one of the `|`-separated words of `list`.
fn among(list: &str, w: &str) -> bool {
    list.split('|').any(|x| x == w)
}

/// Sentences, split after `.` `!` `?` `;` or a newline (a `.` inside "3.5" does not split).
pub fn sentences(text: &str) -> Vec<Sentence> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, ch)) = chars.next() {
        let next_blank = chars.peek().is_none_or(|(_, n)| n.is_whitespace());
        if matches!(ch, '!' | '?' | ';' | '\n') || (ch == '.' && next_blank) {
            push_sentence(&mut out, &text[start..i + ch.len_utf8()]);
            start = i + ch.len_utf8();
        }
    }
    push_sentence(&mut out, &text[start..]);
    out
}

fn push_sentence(out: &mut Vec<Sentence>, text: &str) {
    let tokens: Vec<Tok> = text
        .split_whitespace()
        .filter_map(|w| {
            let raw = w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '\u{2019}' || c == '-'));
            let raw = raw.trim_matches(|c: char| c == '\'' || c == '\u{2019}' || c == '-');
            let stop = w.ends_with([',', ';', ':', ')']);
            (!raw.is_empty()).then(|| Tok { raw: raw.to_string(), lower: normalize(raw), stop })
        })
        .collect();
    if tokens.is_empty() {
        return;
    }
    let question = text.trim_end().ends_with('?') || among(QUESTION_HEADS, tokens[0].lower.as_str());
    out.push(Sentence { text: text.trim().to_string(), tokens, question });
}

/// Positions where `phrase` (normalised words) starts.
fn matches_at<'a>(t: &'a [Tok], phrase: &'a str) -> impl Iterator<Item = usize> + 'a {
    let p: Vec<&str> = phrase.split(' ').collect();
    (0..t.len()).filter(move |&i| i + p.len() <= t.len() && p.iter().enumerate().all(|(k, w)| t[i + k].lower == *w))
}

/// The end of the first of `phrases` that matches, not after a hypothetical.
fn after_any(t: &[Tok], phrases: &[&str]) -> Option<usize> {
    phrases.iter().find_map(|p| {
        matches_at(t, p)
            .find(|&i| !t[..i].iter().any(|x| among(HYPOTHETICAL, x.lower.as_str())))
            .map(|i| i + p.split(' ').count())
    })
}

/// The value's tokens from `at`: up to `max` words, ending at a clause break or a conjunction.
fn value_span(t: &[Tok], at: usize, max: usize, strip_article: bool) -> &[Tok] {
    let mut start = at;
    if strip_article && t.get(start).is_some_and(|x| matches!(x.lower.as_str(), "a" | "an")) {
        start += 1;
    }
    let mut end = start;
    while end < t.len() && end - start < max && !among(VALUE_ENDS, t[end].lower.as_str()) {
        end += 1;
        if t[end - 1].stop {
            break;
        }
    }
    &t[start..end]
}

fn join(t: &[Tok]) -> String {
    t.iter().map(|x| x.raw.as_str()).collect::<Vec<_>>().join(" ")
}

fn negated(v: &[Tok]) -> bool {
    v.first().is_none_or(|x| among(NEGATED_VALUES, x.lower.as_str()))
}

/// snake_case of words ("dog's name" → "dog_name").
pub fn snake(words: &[&str]) -> String {
    let mut out = String::new();
    for w in words {
        let w = w.strip_suffix("'s").unwrap_or(w);
        for c in w.chars() {
            if c.is_alphanumeric() {
                out.extend(c.to_lowercase());
            } else if !out.ends_with('_') && !out.is_empty() {
                out.push('_');
            }
        }
        if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_end_matches('_').chars().take(48).collect()
}

fn observation(key: &str, value: String, category: &str, source: Source, confidence: f64) -> Statement {
    let t =
        TraitObservation { key: key.into(), value, category: category.into(), source, is_literal: true, confidence };
    Statement { trait_: Some(t), fact: None }
}

/// `PATTERN value` statements of one trait key each.
const SIMPLE: &[(&[&str], &str, &str, f64)] = &[
    (
        &["i live in", "i'm living in", "i am living in", "i moved to", "i'm based in", "i am based in"],
        "location",
        "core",
        0.9,
    ),
    (&["i'm from", "i am from", "i come from"], "hometown", "core", 0.85),
    (&["i work as", "i'm working as", "i am working as"], "occupation", "core", 0.9),
    (&["i work at", "i work for", "i'm working at", "i am working at"], "employer", "core", 0.9),
];
const LIKES: &[&str] = &["i like", "i love", "i enjoy", "i really like", "i really love", "i adore"];
const DISLIKES: &[&str] =
    &["i hate", "i dislike", "i can't stand", "i don't like", "i do not like", "i really don't like", "i detest"];
const MICRO: &[(&str, &str, &str)] = &[
    ("keep it short", "response_length", "short"),
    ("keep it brief", "response_length", "short"),
    ("be brief", "response_length", "short"),
    ("be concise", "response_length", "short"),
    ("shorter answers", "response_length", "short"),
    ("use bullet points", "format", "bullet points"),
    ("in bullet points", "format", "bullet points"),
    ("no emojis", "emoji", "none"),
    ("don't use emojis", "emoji", "none"),
    ("without emojis", "emoji", "none"),
];
const INFERRED: &[(&str, &str, &str)] = &[
    ("my wife", "relationship_status", "married"),
    ("my husband", "relationship_status", "married"),
    ("my boyfriend", "relationship_status", "in a relationship"),
    ("my girlfriend", "relationship_status", "in a relationship"),
    ("my son", "has_children", "yes"),
    ("my daughter", "has_children", "yes"),
    ("my kids", "has_children", "yes"),
    ("my children", "has_children", "yes"),
];

/// Every statement of one sentence, in pattern order.
pub fn statements(s: &Sentence) -> Vec<Statement> {
    let t = &s.tokens;
    let mut out = Vec::new();
    for (phrase, key, value) in MICRO {
        if matches_at(t, phrase).next().is_some() && !out_has(&out, key) {
            out.push(observation(key, (*value).into(), "micro_preference", Source::Explicit, 0.85));
        }
    }
    if s.question {
        return out;
    }
    if let Some(name) = declared_name(&s.text) {
        out.push(observation("name", name, "core", Source::Explicit, 0.95));
    }
    for (phrases, key, category, conf) in SIMPLE {
        if let Some(at) = after_any(t, phrases) {
            let v = value_span(t, at, 5, true);
            if !negated(v) {
                out.push(observation(key, join(v), category, Source::Explicit, *conf));
            }
        }
    }
    if let Some(at) = after_any(t, &["i'm", "i am"]) {
        let v = value_span(t, at, 3, true);
        let lower: Vec<&str> = v.iter().map(|x| x.lower.as_str()).collect();
        if let [n, "years", "old", ..] = lower.as_slice()
            && n.bytes().all(|b| b.is_ascii_digit())
        {
            out.push(observation("age", (*n).into(), "core", Source::Explicit, 0.9));
        } else if let Some(n) = bare_age(&t[at..]) {
            out.push(observation("age", n, "core", Source::Explicit, 0.85));
        }
        if let Some(d) = lower.first().filter(|d| matches!(**d, "vegetarian" | "vegan" | "pescatarian")) {
            out.push(observation("diet", (*d).into(), "physical", Source::Explicit, 0.9));
        }
    }
    if let Some(at) = after_any(t, &["i'm allergic to", "i am allergic to", "i'm also allergic to"]) {
        for item in list_after(t, at) {
            let key = format!("allergy_{}", snake(&item.iter().map(|x| x.lower.as_str()).collect::<Vec<_>>()));
            out.push(observation(&key, join(item), "physical", Source::Explicit, 0.95));
        }
    }
    preferences(t, &mut out);
    pets(t, &mut out);
    my_x_is_y(t, &mut out);
    for (phrase, key, value) in INFERRED {
        if matches_at(t, phrase).next().is_some() && !out_has(&out, key) {
            out.push(observation(key, (*value).into(), "relationship", Source::Inferred, 0.7));
        }
    }
    for (i, w) in t.iter().enumerate() {
        if w.lower == "my" && t.get(i + 1).is_some_and(|p| among(PETS, p.lower.trim_end_matches("'s"))) {
            let pet = t[i + 1].lower.trim_end_matches("'s").to_string();
            if !out_has(&out, &format!("pet_{pet}")) {
                out.push(observation(
                    &format!("pet_{pet}"),
                    format!("has a {pet}"),
                    "relationship",
                    Source::Inferred,
                    0.7,
                ));
            }
        }
    }
    if let Some(f) = copula_fact(t) {
        out.push(Statement { trait_: None, fact: Some(f) });
    }
    out
}

/// "I'm 29", "I am 29 now", "I'm 29, and …": a number that ends its clause after "I'm" is an
/// age; "I'm 5 minutes away" is not.
fn bare_age(rest: &[Tok]) -> Option<String> {
    let n = rest.first()?;
    let age = n.lower.parse::<u32>().ok().filter(|a| (1..=120).contains(a) && n.lower.len() <= 3)?;
    let clause_ends = |i: usize| rest.get(i).is_none_or(|x| among(VALUE_ENDS, x.lower.as_str())) || rest[i - 1].stop;
    let now = rest.get(1).is_some_and(|x| matches!(x.lower.as_str(), "now" | "today" | "already"));
    (clause_ends(1) || (now && clause_ends(2))).then(|| age.to_string())
}

fn out_has(out: &[Statement], key: &str) -> bool {
    out.iter().any(|s| s.trait_.as_ref().is_some_and(|t| t.key == key))
}

/// Items after a pattern, split on "and", "or" and commas: "peanuts and shellfish".
/// Words that open a new clause after "and"/"or" rather than continue a list.
const CLAUSE_STARTS: &str = "i|i'm|im|i've|i'd|i'll|my|we|we're|our|you|your|he|he's|his|she|she's|her|they|they're|their|it|it's|its|that|this|there";

fn list_after(t: &[Tok], mut at: usize) -> Vec<&[Tok]> {
    let mut items = Vec::new();
    while items.len() < 3 {
        let v = value_span(t, at, 4, true);
        if negated(v) {
            break;
        }
        items.push(v);
        at += v.len() + usize::from(v.is_empty());
        let joined = t.get(at).is_some_and(|x| matches!(x.lower.as_str(), "and" | "or"));
        // "peanuts and my sister lives in Porto": after the conjunction a new clause starts,
        // not another item.
        if joined && t.get(at + 1).is_some_and(|x| among(CLAUSE_STARTS, x.lower.as_str())) {
            break;
        }
        if joined {
            at += 1;
        } else if !v.last().is_some_and(|x| x.stop) {
            break;
        }
    }
    items
}

fn preferences(t: &[Tok], out: &mut Vec<Statement>) {
    for (phrases, verb) in [(DISLIKES, "dislikes"), (LIKES, "likes"), (&["i prefer"][..], "prefers")] {
        let Some(at) = after_any(t, phrases) else { continue };
        if PRONOUN_OBJECTS.split('|').any(|p| matches_at(&t[at..], p).next() == Some(0))
            || t.get(at..at + 3).is_some_and(|x| x[0].lower == "to" && x[1].lower == "think")
        {
            continue;
        }
        let items = if verb == "prefers" { vec![value_span(t, at, 6, false)] } else { list_after(t, at) };
        for item in items {
            let head: Vec<&str> = item
                .iter()
                .map(|x| x.lower.as_str())
                .take_while(|w| !matches!(*w, "over" | "than" | "instead" | "rather"))
                .filter(|w| is_content_word(w))
                .take(3)
                .collect();
            if head.is_empty() {
                continue;
            }
            let key = format!("preference_{}", snake(&head));
            out.push(observation(&key, format!("{verb} {}", join(item)), "preference", Source::Explicit, 0.8));
        }
        return;
    }
}

/// "I have a dog named Biscuit": the pet, and its name.
fn pets(t: &[Tok], out: &mut Vec<Statement>) {
    let Some(at) = after_any(t, &["i have a", "i have an", "i've got a", "i have two", "we have a"]) else { return };
    let Some(pet) = t.get(at).map(|x| x.lower.as_str()).filter(|p| among(PETS, p)) else { return };
    out.push(observation(&format!("pet_{pet}"), format!("has a {pet}"), "relationship", Source::Explicit, 0.85));
    if t.get(at + 1).is_some_and(|x| matches!(x.lower.as_str(), "named" | "called")) {
        let v = value_span(t, at + 2, 3, false);
        if !negated(v) {
            out.push(observation(&format!("{pet}_name"), join(v), "relationship", Source::Explicit, 0.9));
        }
    }
}

/// "my X is Y": a trait for relations, favourites and personal data; a topic fact otherwise
/// ("my phone is broken" is a state of today, not of the person).
fn my_x_is_y(t: &[Tok], out: &mut Vec<Statement>) {
    for i in matches_at(t, "my").collect::<Vec<_>>() {
        if t[..i].iter().any(|x| among(HYPOTHETICAL, x.lower.as_str())) {
            continue;
        }
        let Some(cop) = (i + 2..(i + 5).min(t.len())).find(|&j| matches!(t[j].lower.as_str(), "is" | "are" | "was"))
        else {
            continue;
        };
        let subject: Vec<&str> = t[i + 1..cop].iter().map(|x| x.lower.as_str()).collect();
        if subject.iter().any(|w| among(VALUE_ENDS, w) || *w == "my") || subject == ["name"] {
            continue;
        }
        let skip_on = usize::from(t.get(cop + 1).is_some_and(|x| x.lower == "on") && subject == ["birthday"]);
        let v = value_span(t, cop + 1 + skip_on, 6, false);
        if negated(v) {
            continue;
        }
        let key = snake(&subject);
        let head = subject[0].trim_end_matches("'s");
        let category = if subject.iter().any(|w| w.starts_with("favorite") || w.starts_with("favourite")) {
            Some("preference")
        } else if among(RELATIONS, head) {
            Some("relationship")
        } else if among(CORE, head) {
            Some("core")
        } else if among(PHYSICAL, head) {
            Some("physical")
        } else {
            None
        };
        let value = join(v);
        match category {
            Some(c) if !out_has(out, &key) => out.push(observation(&key, value, c, Source::Explicit, 0.85)),
            Some(_) => {}
            None => out.push(Statement { trait_: None, fact: Some(FactDraft { key, value, confidence: 0.7 }) }),
        }
    }
}

/// "The deadline is Friday" at the start of a sentence: a topic fact.
fn copula_fact(t: &[Tok]) -> Option<FactDraft> {
    if !matches!(t.first()?.lower.as_str(), "the" | "our") {
        return None;
    }
    let cop = (2..t.len().min(5)).find(|&j| matches!(t[j].lower.as_str(), "is" | "are"))?;
    let subject: Vec<&str> = t[1..cop].iter().map(|x| x.lower.as_str()).collect();
    if !subject.iter().all(|w| is_content_word(w) && !among(VALUE_ENDS, w)) {
        return None;
    }
    let v = value_span(t, cop + 1, 6, false);
    (!negated(v)).then(|| FactDraft { key: snake(&subject), value: join(v), confidence: 0.6 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_split_and_flag_questions() {
        let s = sentences("Version 3.5 is out. Do I like it? yes!\nok");
        let texts: Vec<&str> = s.iter().map(|x| x.text.as_str()).collect();
        assert_eq!(texts, ["Version 3.5 is out.", "Do I like it?", "yes!", "ok"]);
        assert_eq!(s.iter().map(|x| x.question).collect::<Vec<_>>(), [false, true, false, false]);
        assert!(sentences("is it raining").first().unwrap().question, "an auxiliary opens a question");
        assert!(sentences("  ... ").is_empty());
        let t = &sentences("I live in Porto, Portugal").remove(0).tokens;
        assert!(t[3].stop && t[3].raw == "Porto");
    }

    #[test]
    fn a_bare_number_after_i_am_is_an_age_only_when_it_ends_the_clause() {
        let age = |text: &str| {
            sentences(text)
                .iter()
                .flat_map(statements)
                .filter_map(|s| s.trait_)
                .find(|t| t.key == "age")
                .map(|t| t.value)
        };
        assert_eq!(age("I'm 29").as_deref(), Some("29"));
        assert_eq!(age("I am 29 now.").as_deref(), Some("29"));
        assert_eq!(age("I'm 41, and I live in Leeds").as_deref(), Some("41"));
        assert_eq!(age("I'm 34 years old").as_deref(), Some("34"));
        assert_eq!(age("I'm 5 minutes away"), None);
        assert_eq!(age("I'm 2000 steps short"), None);
        assert_eq!(age("am I 29?"), None);
    }

    #[test]
    fn snake_keys() {
        assert_eq!(snake(&["dog's", "name"]), "dog_name");
        assert_eq!(snake(&["favourite", "colour"]), "favourite_colour");
        assert_eq!(snake(&["e-mail", "address!"]), "e_mail_address");
    }
}
