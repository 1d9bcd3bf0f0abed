//! The deterministic first pass of contradiction detection (docs/cognition.md §10.4): pure
//! functions over text, no model, no database.
//!
//! A statement is read into [`Claim`]s: a *slot* of the user's life (where they live, work,
//! who their manager is, a number, a date that moved, what they read or eat) and its value.
//! Two claims on the same slot with different values disagree; a temporal marker in the new
//! statement ("moved", "now", "switched", "no longer", "used to", "update:", "was pushed back
//! to", "changed to") makes that a change over time rather than a contradiction. Outside slots,
//! one rule: the new statement negates the stored one almost word for word. The rules aim at
//! precision: a record they open wrongly costs the user's attention, a change they miss is
//! left to the model classifier and to drift.

use super::words::{ALIASES, CHANGED_TO, MARKERS, NEGATIONS, SCHEDULED, VALUE_STOPS, VERB_SLOTS};
use super::{Class, Verdict};

/// Content-word overlap (of the new statement's words found in the stored one) from which a
/// negated restatement counts as a contradiction; calibrated on the even lines of the SNLI
/// sample (`examples/uncertainty_eval.rs`).
pub const NEGATION_OVERLAP: f64 = 0.75;

/// One thing a statement says about a slot of the user's life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub slot: String,
    /// As written (case kept), trimmed of stop words.
    pub value: String,
    /// The statement places this value in the past ("I used to live in Porto").
    pub past: bool,
}

#[derive(Debug, Clone)]
struct Tok {
    orig: String,
    lower: String,
}

/// Clause breaks: punctuation, except a '.' or ':' inside a token ("ana@mail.com", "7:40").
fn breaks(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    for (i, &ch) in chars.iter().enumerate() {
        let inside = matches!(ch, '.' | ':')
            && i > 0
            && chars[i - 1].is_alphanumeric()
            && chars.get(i + 1).is_some_and(|n| n.is_alphanumeric());
        out.push(if !inside && matches!(ch, '.' | ';' | '!' | '?' | ',' | ':' | '(' | ')') { '\n' } else { ch });
    }
    out
}

fn clauses(text: &str) -> Vec<Vec<Tok>> {
    breaks(text)
        .split('\n')
        .map(|c| {
            c.split_whitespace()
                .map(|w| {
                    let orig = w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '+'));
                    let orig = orig.replace('\u{2019}', "'");
                    Tok { lower: orig.to_lowercase(), orig }
                })
                .filter(|t| !t.orig.is_empty())
                .collect::<Vec<_>>()
        })
        .filter(|c| !c.is_empty())
        .collect()
}

fn at(t: &[Tok], i: usize, phrase: &str) -> bool {
    phrase.split(' ').enumerate().all(|(k, p)| t.get(i + k).is_some_and(|x| x.lower == p))
}

fn find(t: &[Tok], phrase: &str) -> Option<usize> {
    (0..t.len()).find(|&i| at(t, i, phrase))
}

/// The canonical slot name of a noun phrase ("new manager" → manager).
pub fn slot_name(words: &[&str]) -> String {
    let kept: Vec<&str> =
        words.iter().copied().filter(|w| !matches!(*w, "new" | "current" | "old" | "latest" | "present")).collect();
    let raw = kept.join("_").replace('\'', "");
    ALIASES.iter().find(|(a, _)| *a == raw).map_or(raw.clone(), |(_, s)| (*s).to_string())
}

fn value_of(t: &[Tok], from: usize) -> Option<String> {
    let mut end = from;
    while end < t.len() && end - from < 6 && !VALUE_STOPS.contains(&t[end].lower.as_str()) {
        end += 1;
    }
    let v: Vec<&str> = t[from..end].iter().map(|x| x.orig.as_str()).collect();
    let v = v.join(" ");
    let bad = v.is_empty()
        || t.get(from)
            .is_some_and(|x| matches!(x.lower.as_str(), "not" | "no" | "never" | "a" | "the") && end - from == 1);
    (!bad).then_some(v)
}

fn has_marker(t: &[Tok]) -> bool {
    MARKERS.iter().any(|m| find(t, m).is_some())
}

/// Whether the statement says something replaced an earlier state (docs/cognition.md §10.4 markers).
pub fn temporal_marker(text: &str) -> bool {
    let lower = text.to_lowercase();
    lower.trim_start().starts_with("update") || clauses(text).iter().any(|c| has_marker(c))
}

/// What a statement says about the user's slots. Questions and hypotheticals say nothing.
pub fn claims(text: &str) -> Vec<Claim> {
    let mut out: Vec<Claim> = Vec::new();
    let trimmed = text.trim_end();
    if trimmed.ends_with('?') {
        return out;
    }
    let all = clauses(text);
    // A noun the statement says was switched ("I switched gyms, I go to Iron Works now").
    let switched: Option<String> = all.iter().find_map(|c| {
        ["switched", "changed", "new"].iter().find_map(|v| {
            let i = find(c, v)?;
            let n = c.get(i + 1)?;
            (n.lower.len() > 2 && !matches!(n.lower.as_str(), "to" | "my" | "the" | "a" | "jobs" | "it"))
                .then(|| slot_name(&[n.lower.trim_end_matches('s')]))
                .or_else(|| (n.lower == "jobs").then(|| "employer".to_string()))
        })
    });
    for c in &all {
        if matches!(c[0].lower.as_str(), "if" | "when" | "whether" | "maybe" | "perhaps") {
            continue;
        }
        let past = find(c, "used to").is_some() || find(c, "no longer").is_some();
        let mut push = |slot: String, value: String| {
            if !slot.is_empty() && !out.iter().any(|o| o.slot == slot && o.past == past) {
                out.push(Claim { slot, value, past });
            }
        };
        for (phrase, slot) in VERB_SLOTS {
            if let Some(i) = find(c, phrase) {
                let n = phrase.split(' ').count();
                if let Some(v) = value_of(c, i + n) {
                    push((*slot).to_string(), v);
                }
            }
        }
        // "I used to live in Porto" / "I no longer work at Acme".
        for (lead, verb_at) in [("used to", 2usize), ("no longer", 2)] {
            if let Some(i) = find(c, lead) {
                let rest: Vec<Tok> = std::iter::once(Tok { orig: "i".into(), lower: "i".into() })
                    .chain(c[i + verb_at..].iter().cloned())
                    .collect();
                for (phrase, slot) in VERB_SLOTS {
                    if at(&rest, 0, phrase)
                        && let Some(v) = value_of(&rest, phrase.split(' ').count())
                    {
                        push((*slot).to_string(), v);
                    }
                }
            }
        }
        // "I go to Iron Works" after "switched gyms".
        if let (Some(slot), Some(i)) = (&switched, find(c, "i go to").or_else(|| find(c, "i use"))) {
            let n = if at(c, i, "i go to") { 3 } else { 2 };
            if let Some(v) = value_of(c, i + n) {
                push(slot.clone(), v);
            }
        }
        // "my (new) X is Y", "my X changed to Y", "the X was pushed back to Y".
        for owner in ["my", "the", "our"] {
            let Some(i) = find(c, owner) else { continue };
            if i > 0 && owner != "my" {
                continue;
            }
            let verb = (i + 2..(i + 5).min(c.len()))
                .find_map(|j| CHANGED_TO.iter().find(|p| at(c, j, p)).map(|p| (j, p.split(' ').count())));
            let Some((j, n)) = verb else { continue };
            let subject: Vec<&str> = c[i + 1..j].iter().map(|x| x.lower.as_str()).collect();
            if subject.is_empty() || subject.iter().any(|w| matches!(*w, "i" | "it" | "this" | "that" | "name")) {
                continue;
            }
            if owner != "my" && !subject.last().is_some_and(|w| SCHEDULED.contains(w)) {
                continue;
            }
            let skip = usize::from(c.get(j + n).is_some_and(|x| matches!(x.lower.as_str(), "on" | "at")));
            if let Some(v) = value_of(c, j + n + skip) {
                push(slot_name(&subject), v);
            }
        }
        // "I'm vegetarian now", "I'm vegan".
        for diet in ["vegetarian", "vegan", "pescatarian", "carnivore", "omnivore", "keto", "gluten-free"] {
            if (find(c, "i'm").is_some() || find(c, "i am").is_some() || find(c, "became").is_some())
                && find(c, diet).is_some()
            {
                push("diet".into(), diet.into());
            }
        }
        if let Some(i) = find(c, "i eat").or_else(|| find(c, "i only eat")) {
            let n = if at(c, i, "i eat") { 2 } else { 3 };
            if let Some(v) = value_of(c, i + n) {
                push("diet".into(), format!("eats {v}"));
            }
        }
    }
    out
}

fn norm_value(v: &str) -> String {
    let v = v.to_lowercase();
    let v = v.trim_start_matches("the ").trim_start_matches("a ").trim_start_matches("an ");
    v.chars().filter(|c| c.is_alphanumeric() || *c == ' ').collect::<String>().trim().to_string()
}

/// Whether two values name the same thing ("Iron Works" and "iron works gym").
pub fn same_value(a: &str, b: &str) -> bool {
    let (a, b) = (norm_value(a), norm_value(b));
    !a.is_empty() && !b.is_empty() && (a == b || a.starts_with(&b) || b.starts_with(&a))
}

/// When to raise a record about `slot`: the slot and the words that name it.
pub fn surface_words(slot: &str) -> String {
    let mut out = vec![slot.replace('_', " ")];
    out.extend(ALIASES.iter().filter(|(a, s)| *s == slot && a != s).map(|(a, _)| a.replace('_', " ")));
    out.join(" ")
}

/// The verdict on a stored slot value against a new claim of the same slot.
pub fn compare_claim(stored_value: &str, new: &Claim, marker: bool) -> Option<Verdict> {
    if new.past || same_value(stored_value, &new.value) {
        return None;
    }
    Some(if marker {
        Verdict::new(Class::TemporalChange, 0.9, true, format!("the {} changed over time", new.slot.replace('_', " ")))
    } else {
        Verdict::new(
            Class::TrueContradiction,
            0.85,
            false,
            format!("two different values for the same {}", new.slot.replace('_', " ")),
        )
        .with_surface(surface_words(&new.slot))
    })
}

fn content(text: &str) -> Vec<String> {
    crate::text::words(&crate::text::normalize(text))
        .into_iter()
        .filter(|w| !NEGATIONS.contains(w) && crate::text::is_content_word(w))
        .map(|w| w.trim_end_matches('s').to_string())
        .collect()
}

fn negated(text: &str) -> bool {
    let lower = crate::text::normalize(text);
    lower.contains("n't ") || crate::text::words(&lower).iter().any(|w| NEGATIONS.contains(w))
}

/// A stored statement against a new one, both free text: same slot with a new value, or the
/// new one negating the stored one with at least [`NEGATION_OVERLAP`] of its content words.
pub fn compare_texts(stored: &str, new: &str, overlap_min: f64) -> Option<Verdict> {
    let old_claims = claims(stored);
    let new_claims = claims(new);
    let marker = temporal_marker(new);
    for n in &new_claims {
        if let Some(o) = old_claims.iter().find(|o| o.slot == n.slot && !o.past)
            && let Some(v) = compare_claim(&o.value, n, marker)
        {
            return Some(v);
        }
    }
    if negated(stored) == negated(new) {
        return None;
    }
    let (a, b) = (content(stored), content(new));
    let (short, long) = if negated(new) { (&b, &a) } else { (&a, &b) };
    if short.len() < 2 {
        return None;
    }
    let found = short.iter().filter(|w| long.contains(w)).count() as f64 / short.len() as f64;
    (found >= overlap_min).then(|| {
        Verdict::new(Class::TrueContradiction, 0.8, false, "one statement negates the other".into())
            .with_surface(short.iter().take(3).cloned().collect::<Vec<_>>().join(" "))
    })
}
