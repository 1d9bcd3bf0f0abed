//! What semantic consolidation extracts from an episode (docs/cognition.md §9.3), and the
//! deterministic extractor that runs when no model is asked or the model's answer is unusable.
//!
//! The deterministic path reads the episode's gist sentence by sentence:
//! - concepts: named things (capitalised words that do not start a sentence, acronyms,
//!   mixed-case or versioned names), content words and two-word phrases repeated in the
//!   episode or recurring across the batch, and every participant of a relation pattern;
//!   each gets its first sentence as the definition;
//! - relationships: "X is a Y" → is-a; "X is part of Y" → part-of; "X uses Y" → Y used-for X
//!   (and "X is used for Y" → X used-for Y); "X instead of Y" → X alternative-to Y;
//!   "X requires/needs Y" → Y prerequisite-for X; "X enables Y"; "X contradicts Y";
//!   concepts of one episode with no typed relation between them → related-to at 0.5.
//!
//! A concept's type depends on its name alone, so the same name always lands on the same
//! `(name, concept_type)` row however it was mentioned.

use crate::text::clip::clip;
use crate::text::{is_content_word, normalize, words};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

pub const CONCEPT_TYPES: [&str; 5] = ["technology", "process", "domain", "fact", "principle"];
pub const REL_TYPES: [&str; 8] =
    ["is-a", "part-of", "related-to", "prerequisite-for", "enables", "used-for", "contradicts", "alternative-to"];
/// Concepts kept per episode; relations only among them.
pub const MAX_CONCEPTS: usize = 8;
/// Co-occurrence edges are drawn among this many of an episode's concepts (≤ 15 edges).
const MAX_COOCCUR: usize = 6;
/// Co-occurrence is weak evidence: the bottom of the 0.5–1.0 strength range.
pub const COOCCUR_STRENGTH: f64 = 0.5;
pub(crate) const MAX_NAME_CHARS: usize = 80;
pub(crate) const MAX_DEFINITION_CHARS: usize = 240;
const MAX_PHRASE: usize = 3;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Concept {
    pub name: String,
    pub concept_type: String,
    pub definition: String,
    pub abstraction_level: u8,
    pub domain: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Relationship {
    pub source: String,
    pub target: String,
    pub rel_type: String,
    pub strength: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Extraction {
    pub concepts: Vec<Concept>,
    pub relationships: Vec<Relationship>,
}

/// The part of an episode consolidation reads.
#[derive(Debug, Clone, PartialEq)]
pub struct EpisodeText {
    pub id: i64,
    pub gist: String,
    pub topic: Option<String>,
}

/// Chatty words that pass the content-word test but name nothing worth a concept.
const EXTRA_STOP: &str = "want wants like likes love hate going gonna today tomorrow yesterday tonight time times week day \
     days year years month lovely sounds thanks thank hello hi hey reply noted great cool awesome feel \
     feels felt still even always never often pretty quite much would could should using uses used \
     requires require needs enables enable contradicts part kind type sort form called named getting \
     trying doing having lot little big small new old today's ago soon later already yet since until \
     because while though although without within during after around through between against every some \
     where there their wait happy sad nice glad prefer choose chose pick \
     switch try buy bought took take went";
const MONTHS_DAYS: &str = "january february march april may june july august september october november december monday tuesday \
     wednesday thursday friday saturday sunday";
const LEAD_SKIP: &str = "a an the my our your his her their its some";
const KIND_OF: &str = "kind type sort form";
const TECH: &str = "rust python java javascript typescript go golang haskell ruby kotlin swift sqlite postgres \
     postgresql mysql redis linux windows macos docker kubernetes git github api http https html css llvm \
     cargo tokio react cmake npm json yaml toml wasm webassembly ssh tcp udp cpu gpu vim emacs terraform \
     aws";
const TECH_HEADS: &str = "language framework library database compiler tool server software protocol editor model runtime \
     engine crate package api app format";
const PRINCIPLE_HEADS: &str = "principle rule law theorem pattern policy";

/// Whether `word` is one of the whitespace-separated words of `list`.
fn listed(list: &str, word: &str) -> bool {
    list.split_whitespace().any(|w| w == word)
}

/// The type a concept name gets (see the module docs: a function of the name only).
pub fn concept_type_of(name: &str) -> &'static str {
    let lower = normalize(name);
    let ws = words(&lower);
    let Some(head) = ws.last() else { return "domain" };
    let techy = |w: &str| {
        listed(TECH, w)
            || w.ends_with("sql")
            || w.ends_with(".js")
            || w.contains("++")
            || w.contains('#')
            || (w.chars().any(|c| c.is_ascii_digit()) && w.chars().any(char::is_alphabetic))
    };
    if ws.iter().any(|w| techy(w)) || listed(TECH_HEADS, head) || lower.contains("++") || lower.contains('#') {
        "technology"
    } else if listed(PRINCIPLE_HEADS, head) {
        "principle"
    } else if head.len() > 5 && ["ing", "tion", "sion", "ment", "ance", "ence"].iter().any(|s| head.ends_with(s)) {
        "process"
    } else {
        "domain"
    }
}

/// [`EXTRA_STOP`] as a set: it is consulted for every word of every gist.
static STOP: LazyLock<HashSet<&'static str>> = LazyLock::new(|| EXTRA_STOP.split_whitespace().collect());

fn phrase_word(lower: &str) -> bool {
    !STOP.contains(lower)
        && is_content_word(lower)
        && lower.chars().any(char::is_alphabetic)
        && !lower.starts_with("i'")
        && lower != "i"
}

#[derive(Debug, Clone)]
struct Tok {
    raw: String,
    lower: String,
    /// [`phrase_word`] of `lower`, computed once.
    word: bool,
    /// A comma, semicolon, colon or dash follows: noun phrases stop here.
    stop_after: bool,
}

fn sentences(gist: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in gist.split(" — reply: ") {
        let mut cur = String::new();
        let chars: Vec<char> = part.chars().collect();
        for (i, &ch) in chars.iter().enumerate() {
            let end =
                ch == '\n' || (matches!(ch, '.' | '!' | '?') && chars.get(i + 1).is_none_or(|n| n.is_whitespace()));
            if ch != '\n' {
                cur.push(ch);
            }
            if end {
                out.push(std::mem::take(&mut cur));
            }
        }
        out.push(cur);
    }
    out.into_iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
}

fn tokens(sentence: &str) -> Vec<Tok> {
    sentence
        .split_whitespace()
        .filter_map(|t| {
            let stop_after = t.ends_with([',', ';', ':']) || t == "—" || t == "-";
            let raw = t.trim_matches(|c: char| !(c.is_alphanumeric() || c == '+' || c == '#'));
            let raw = raw.trim_start_matches(['+', '#']);
            (!raw.is_empty()).then(|| {
                let lower = normalize(raw);
                Tok { raw: raw.to_string(), word: phrase_word(&lower), lower, stop_after }
            })
        })
        .collect()
}

fn is_named(t: &Tok, sentence_start: bool) -> bool {
    let first_upper = t.raw.chars().next().is_some_and(char::is_uppercase);
    let rest_upper = t.raw.chars().skip(1).any(char::is_uppercase);
    let acronym = t.raw.chars().count() >= 2 && t.raw.chars().all(|c| c.is_uppercase() || c.is_ascii_digit());
    let pronoun = t.raw == "I" || t.lower.starts_with("i'");
    !pronoun && t.word && !listed(MONTHS_DAYS, &t.lower) && ((first_upper && !sentence_start) || rest_upper || acronym)
}

/// Words `[start, end)` of a phrase to the left of `at` (exclusive), up to three words.
/// A past-tense verb ("picked", "switched") ends a phrase to its left.
fn past_tense(lower: &str) -> bool {
    lower.len() >= 6 && lower.ends_with("ed")
}

fn left_phrase(toks: &[Tok], at: usize) -> Option<(usize, usize)> {
    let mut start = at;
    while start > 0 && at - start < MAX_PHRASE {
        let t = &toks[start - 1];
        if !t.word || past_tense(&t.lower) || (t.stop_after && start < at) {
            break;
        }
        start -= 1;
    }
    // Next to a name, the phrase is the name ("chose Postgres" → "Postgres").
    if start < at && is_named(&toks[at - 1], at - 1 == 0) {
        while !is_named(&toks[start], start == 0) {
            start += 1;
        }
    }
    (start < at).then_some((start, at))
}

/// A phrase starting at `from`, after articles and "kind of": up to three words.
fn right_phrase(toks: &[Tok], mut from: usize) -> Option<(usize, usize)> {
    while toks.get(from).is_some_and(|t| listed(LEAD_SKIP, &t.lower)) {
        from += 1;
    }
    if toks.get(from).is_some_and(|t| listed(KIND_OF, &t.lower)) && toks.get(from + 1).is_some_and(|t| t.lower == "of")
    {
        from += 2;
        while toks.get(from).is_some_and(|t| listed(LEAD_SKIP, &t.lower)) {
            from += 1;
        }
    }
    let named = toks.get(from).is_some_and(|t| is_named(t, from == 0));
    let mut end = from;
    while end < toks.len() && end - from < MAX_PHRASE && toks[end].word && (!named || is_named(&toks[end], end == 0)) {
        end += 1;
        if toks[end - 1].stop_after {
            break;
        }
    }
    (end > from).then_some((from, end))
}

fn span_name(toks: &[Tok], (a, b): (usize, usize)) -> String {
    let named = toks[a..b].iter().enumerate().any(|(i, t)| is_named(t, a + i == 0));
    let parts: Vec<&str> = toks[a..b].iter().map(|t| if named { t.raw.as_str() } else { t.lower.as_str() }).collect();
    parts.join(" ")
}

/// Relation patterns in one sentence as `(source, target, type)`; for "uses" and "requires"
/// the right-hand phrase is the source ("X uses Y" → Y used-for X).
fn patterns(toks: &[Tok]) -> Vec<(String, String, &'static str)> {
    let mut out = Vec::new();
    let w = |i: usize| toks.get(i).map_or("", |t| t.lower.as_str());
    for i in 0..toks.len() {
        let mut add = |right_from: usize, ty: &'static str, reversed: bool| {
            if let (Some(l), Some(r)) = (left_phrase(toks, i), right_phrase(toks, right_from)) {
                let (l, r) = (span_name(toks, l), span_name(toks, r));
                if !l.eq_ignore_ascii_case(&r) {
                    out.push(if reversed { (r, l, ty) } else { (l, r, ty) });
                }
            }
        };
        let be = matches!(w(i), "is" | "are" | "was");
        if be && w(i + 1) == "part" && w(i + 2) == "of" {
            add(i + 3, "part-of", false);
        } else if be && matches!(w(i + 1), "a" | "an") && w(i + 2) == "part" && w(i + 3) == "of" {
            add(i + 4, "part-of", false);
        } else if be && matches!(w(i + 1), "a" | "an") {
            add(i + 2, "is-a", false);
        } else if be && w(i + 1) == "used" && w(i + 2) == "for" {
            add(i + 3, "used-for", false);
        } else if matches!(w(i), "uses" | "use") {
            add(i + 1, "used-for", true);
        } else if w(i) == "instead" && w(i + 1) == "of" {
            add(i + 2, "alternative-to", false);
        } else if matches!(w(i), "requires" | "require" | "needs") {
            add(i + 1, "prerequisite-for", true);
        } else if matches!(w(i), "enables" | "enable") {
            add(i + 1, "enables", false);
        } else if matches!(w(i), "contradicts" | "contradict") {
            add(i + 1, "contradicts", false);
        }
    }
    out
}

/// Content words (and repeated two-word phrases) of a text, lower-cased, with counts.
fn term_counts(text: &str) -> HashMap<String, usize> {
    let lower = normalize(text);
    let ws: Vec<&str> = words(&lower).into_iter().filter(|w| w.len() >= 4 && phrase_word(w)).collect();
    let mut counts: HashMap<String, usize> = HashMap::new();
    for w in &ws {
        *counts.entry((*w).to_string()).or_default() += 1;
    }
    counts
}

/// Deterministic extraction over a batch: a content word found in two or more of the
/// batch's episodes is a concept in each of them (a recurring theme).
pub fn extract_batch(episodes: &[EpisodeText]) -> Vec<Extraction> {
    let mut df: HashMap<String, usize> = HashMap::new();
    for e in episodes {
        for w in term_counts(&e.gist).into_keys() {
            *df.entry(w).or_default() += 1;
        }
    }
    let recurring: HashSet<String> = df.into_iter().filter(|(_, n)| *n >= 2).map(|(w, _)| w).collect();
    episodes.iter().map(|e| extract(e, &recurring)).collect()
}

/// Deterministic extraction of one episode; `recurring` holds batch-level themes.
pub fn extract(ep: &EpisodeText, recurring: &HashSet<String>) -> Extraction {
    let mut found: Vec<(String, String, u8)> = Vec::new(); // (name, definition, abstraction)
    let add = |found: &mut Vec<(String, String, u8)>, name: &str, def: &str, level: u8| {
        let name = clip(name.trim(), MAX_NAME_CHARS);
        if !name.is_empty() && !found.iter().any(|(n, _, _)| n.eq_ignore_ascii_case(&name)) {
            found.push((name, clip(def, MAX_DEFINITION_CHARS), level));
        }
    };
    let mut rels: Vec<Relationship> = Vec::new();
    let sents = sentences(&ep.gist);
    for s in &sents {
        let toks = tokens(s);
        for (src, dst, ty) in patterns(&toks) {
            let target_level = if ty == "is-a" { 4 } else { 3 };
            add(&mut found, &src, s, 3);
            add(&mut found, &dst, s, target_level);
            let strength = if matches!(ty, "is-a" | "part-of") { 0.8 } else { 0.7 };
            rels.push(Relationship { source: src, target: dst, rel_type: ty.into(), strength });
        }
        let mut i = 0;
        while i < toks.len() {
            if is_named(&toks[i], i == 0) {
                let mut j = i + 1;
                while j < toks.len() && j - i < MAX_PHRASE && !toks[j - 1].stop_after && is_named(&toks[j], false) {
                    j += 1;
                }
                add(&mut found, &span_name(&toks, (i, j)), s, 2);
                i = j;
            } else {
                i += 1;
            }
        }
    }
    let counts = term_counts(&ep.gist);
    let mut terms: Vec<(&String, &usize)> = counts.iter().filter(|(w, n)| **n >= 2 || recurring.contains(*w)).collect();
    terms.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    for (w, _) in terms {
        let def = sents.iter().find(|s| words(&normalize(s)).contains(&w.as_str())).map_or("", String::as_str);
        add(&mut found, w, def, 3);
    }
    found.truncate(MAX_CONCEPTS);
    let kept = |n: &str| found.iter().any(|(f, _, _)| f.eq_ignore_ascii_case(n));
    rels.retain(|r| kept(&r.source) && kept(&r.target));
    let linked = |a: &str, b: &str, rels: &[Relationship]| {
        rels.iter().any(|r| {
            (r.source.eq_ignore_ascii_case(a) && r.target.eq_ignore_ascii_case(b))
                || (r.source.eq_ignore_ascii_case(b) && r.target.eq_ignore_ascii_case(a))
        })
    };
    let names: Vec<String> = found.iter().take(MAX_COOCCUR).map(|(n, _, _)| n.clone()).collect();
    for (i, a) in names.iter().enumerate() {
        for b in &names[i + 1..] {
            if !linked(a, b, &rels) {
                let r = Relationship {
                    source: a.clone(),
                    target: b.clone(),
                    rel_type: "related-to".into(),
                    strength: COOCCUR_STRENGTH,
                };
                rels.push(r);
            }
        }
    }
    let concepts = found
        .into_iter()
        .map(|(name, definition, level)| Concept {
            concept_type: concept_type_of(&name).into(),
            name,
            definition,
            abstraction_level: level,
            domain: ep.topic.clone(),
        })
        .collect();
    Extraction { concepts, relationships: rels }
}

#[cfg(test)]
mod tests;
