//! What "forget that" means: the pure core of forgetting. A request is read into a
//! [`Target`]; the user's chat lines are the candidates; [`resolve`] turns them into a
//! clear-cut [`Plan`] (which exchanges go, and which strings must disappear everywhere) or a
//! CLARIFY question when the match is not clear-cut. The store carries the plan out
//! (`store::purge`), the session log and diagnostics log follow (`session::scrub`,
//! `logging::scrub`).
//!
//! Where a user's words live, and what a forget does there (the store's `TEXT_MAP` is the
//! enforced list; a test fails on a text column it does not name):
//! - `chat_history` (and its trigram index `chat_user_trgm`): the line stays, its text becomes
//!   "[forgotten at the user's request]", so the conversation still reads.
//! - `working_memory`, `gists` (+`gists_trgm`), `facts` (+`facts_trgm`), `user_traits`
//!   (+`user_traits_trgm`, `trait_vec`, `vector_codes`), `episodes`
//!   (+`episodes_fts`, `episode_vec`, `vector_codes`), `semantic_concepts`
//!   (+`concepts_trgm`, `concept_vec`…; a concept derived only from forgotten episodes goes,
//!   with its `semantic_relationships` edges): the row is deleted, vectors zeroed first.
//! - `jobs` (queued extraction payloads carry the exchange's text): deleted; a worker already
//!   holding one finds the exchange on the block list (`memory_deletions`, a salted hash of
//!   the exchange id) and stores nothing.
//! - audit and state rows (`routing_decisions`, `triage_calibration`, `cortex_iterations`,
//!   `interaction_log`, `topics`, `boundary_state` (its window's rows, `boundary_recent`, hold
//!   numbers only), `kv_state`, `uncertainties`,
//!   `memory_deletions` snapshots of decay, lists, reminders, focus sessions, drift thoughts):
//!   the words are replaced by "[forgotten]", the row keeps its place in the trail.
//! - files: session logs under `sessions/` (rewritten through a temporary file and a rename)
//!   and the diagnostics log `logs/chalie-tui.log` (rewritten in place; it is also masked for
//!   secrets as written).
//! - SQLite itself: `secure_delete` zeroes freed cells, the FTS indexes delete with FTS5's
//!   `secure-delete` option (terms leave the index at once, not at the next merge), and a
//!   TRUNCATE checkpoint empties the WAL.
//! - the process: the TUI's chat pane redacts the lines the `forgotten` event names.

use crate::text::needles::{names, needles_of};
use regex::Regex;
use std::sync::LazyLock;

/// What a request asks to forget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// "forget the last thing I said": the user's previous line in this thread.
    Last,
    /// Everything (`all`) or the one thing the user said about `subject`.
    About { subject: String, all: bool },
}

fn re(s: &str) -> Regex {
    Regex::new(s).unwrap_or_else(|e| panic!("a literal regex must compile: {e}"))
}

static NOT_A_REQUEST: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b(?:don'?t|do not|never|not|i|we|they|he|she)\s+(?:ever\s+)?forget\b"));
static LAST: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\bforget\s+(?:the\s+last\s+thing\s+i\s+(?:said|told\s+you|wrote)|what\s+i\s+just\s+(?:said|told\s+you|wrote)|my\s+last\s+message|that\s+last\s+(?:message|thing)|that)\s*[.!]*\s*$",
    )
});
static REMOVE_FROM_MEMORY: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b(?:remove|delete|erase|wipe|drop)\s+(?P<s>.+?)\s+from\s+(?:your|the)\s+memory\b"));
static ABOUT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:forget|delete|erase|remove|wipe)\s+(?P<all>all\s+|everything\s+)?(?P<told>(?:of\s+)?what\s+i\s+(?:told\s+you|said|shared|mentioned)\s+|(?:that\s+)?i\s+(?:told\s+you|said)\s+)?about\s+(?P<s>.+)",
    )
});
static FORGET_THING: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)\bforget\s+(?:about\s+)?(?P<s>.+)"));
static TALKING_ABOUT: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b(?:talking|talk|hearing|thinking)\s+about\s+(?P<s>[^,.;!?]+)"));
static PRONOUN: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^(?:it|all\s+of\s+it|all\s+that|everything|all\s+of\s+that|that\s+stuff|them)\s*[.!]*$"));
// Where a subject phrase ends: a clause after it that is not part of the thing named.
static SUBJECT_END: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\s*(?:[,;.!?]|\s-\s|\s+(?:i\s+don'?t|please|thanks|thank\s+you|from\s+(?:your|the)\s+memory|for\s+good|entirely|completely|now)\b).*$",
    )
});

/// Read a forget request; `None` when the message does not ask to forget anything.
pub fn parse_request(text: &str) -> Option<Target> {
    let t = text.trim();
    if NOT_A_REQUEST.is_match(t) && !t.to_ascii_lowercase().contains("please forget") {
        return None;
    }
    if LAST.is_match(t) {
        return Some(Target::Last);
    }
    if let Some(c) = REMOVE_FROM_MEMORY.captures(t) {
        return about(&c["s"], false, t);
    }
    if let Some(c) = ABOUT.captures(t) {
        // "what I told you about X" is all of it; "forget about X" is one thing.
        return about(&c["s"], c.name("all").is_some() || c.name("told").is_some(), t);
    }
    let c = FORGET_THING.captures(t)?;
    let s = c["s"].trim();
    let bare = SUBJECT_END.replace(s, "");
    if PRONOUN.is_match(bare.trim()) || clean_subject(s).is_empty() {
        // "I'm done talking about Jordan, forget all of it": the subject is named earlier.
        let named = TALKING_ABOUT.captures(t)?;
        return about(&named["s"], true, t);
    }
    about(s, false, t)
}

fn about(raw: &str, all: bool, text: &str) -> Option<Target> {
    let subject = clean_subject(raw);
    if subject.is_empty() || PRONOUN.is_match(&subject) {
        return None;
    }
    let all =
        all || text.to_ascii_lowercase().contains("all of it") || text.to_ascii_lowercase().contains("everything");
    Some(Target::About { subject, all })
}

fn clean_subject(raw: &str) -> String {
    let s = SUBJECT_END.replace(raw.trim(), "");
    let mut words: Vec<&str> = s.split_whitespace().collect();
    while let Some(first) = words.first() {
        if matches!(
            first.to_ascii_lowercase().as_str(),
            "my" | "the" | "that" | "this" | "about" | "all" | "our" | "your" | "those" | "these"
        ) {
            words.remove(0);
        } else {
            break;
        }
    }
    words.join(" ").trim_matches(|c: char| !c.is_alphanumeric()).to_string()
}

/// Whether `text` asks to forget something (routing and the deterministic planner use it).
pub fn is_forget_request(text: &str) -> bool {
    parse_request(text).is_some()
}

/// One of the user's chat lines, a candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub exchange_id: String,
    pub thread_id: String,
    pub text: String,
}

/// A clear-cut forget.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// The exchanges whose lines and derived memories go.
    pub exchanges: Vec<String>,
    /// The strings that must disappear wherever they were copied.
    pub needles: Vec<String>,
    /// The slots the chosen lines stated, as `(key, value)`: the turn learns them as traits
    /// with no link back to the exchange ("I'm vegetarian" → diet = vegetarian), so they go by
    /// slot and value, exactly — a bare value like "home" is too common to hunt as a needle.
    pub slots: Vec<(String, String)>,
}

/// The shortest stated slot value hunted as a string everywhere; shorter ones go only from
/// the trait rows that hold them as `(key, value)`.
const SLOT_NEEDLE_MIN_CHARS: usize = 5;

/// What a request resolves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    Forget(Plan),
    /// Not clear-cut: nothing is forgotten; these (masked) lines are offered.
    Clarify(Vec<String>),
    /// Nothing the user said matches.
    Nothing,
}

/// Resolve `target` against `lines` (the user's lines, newest first, the request excluded).
/// `thread` is the request's thread, where "the last thing I said" is looked for.
pub fn resolve(target: &Target, lines: &[Line], thread: &str) -> Resolution {
    let chosen: Vec<&Line> = match target {
        Target::Last => match lines.iter().find(|l| l.thread_id == thread) {
            Some(l) => vec![l],
            None => return Resolution::Nothing,
        },
        Target::About { subject, all } => {
            let words: Vec<String> = subject_words(subject);
            if words.is_empty() {
                return Resolution::Nothing;
            }
            let scored: Vec<(f64, &Line)> =
                lines.iter().map(|l| (coverage(&words, &l.text), l)).filter(|(s, _)| *s > 0.0).collect();
            let full: Vec<&Line> = scored.iter().filter(|(s, _)| *s >= 1.0).map(|(_, l)| *l).collect();
            match full.len() {
                0 => {
                    let partial: Vec<String> =
                        scored.iter().filter(|(s, _)| *s >= 0.5).take(4).map(|(_, l)| preview(&l.text)).collect();
                    return if partial.is_empty() { Resolution::Nothing } else { Resolution::Clarify(partial) };
                }
                1 => full,
                _ if *all => full,
                _ => return Resolution::Clarify(full.iter().take(4).map(|l| preview(&l.text)).collect()),
            }
        }
    };
    let subject = match target {
        Target::About { subject, .. } => names(subject, false),
        Target::Last => Vec::new(),
    };
    Resolution::Forget(plan_of(&chosen, subject))
}

/// The plan for forgetting `chosen` lines whole: their exchanges, every string they hold
/// (plus `extra`), and the slots they stated.
pub fn plan_of(chosen: &[&Line], extra: Vec<String>) -> Plan {
    let mut needles: Vec<String> = extra;
    for l in chosen {
        needles.extend(needles_of(&l.text));
    }
    let mut slots: Vec<(String, String)> = chosen
        .iter()
        .flat_map(|l| crate::memory::uncertainty::rules::claims(&l.text))
        .map(|c| (c.slot, c.value))
        .collect();
    slots.sort();
    slots.dedup();
    // What a forgotten line stated is the thing to forget: its value goes wherever it was
    // copied (topic names, working memory, the request's own line), unless it is too short
    // to be told apart from ordinary words ("home", "gym").
    needles.extend(slots.iter().map(|(_, v)| v.clone()).filter(|v| v.chars().count() >= SLOT_NEEDLE_MIN_CHARS));
    needles.sort();
    needles.dedup();
    Plan { exchanges: chosen.iter().map(|l| l.exchange_id.clone()).collect(), needles, slots }
}

fn subject_words(subject: &str) -> Vec<String> {
    crate::text::words(&crate::text::normalize(subject))
        .into_iter()
        .filter(|w| crate::text::is_content_word(w))
        .map(str::to_string)
        .collect()
}

/// The share of `words` the line mentions (a word matches a line word sharing its stem).
fn coverage(words: &[String], line: &str) -> f64 {
    let norm = crate::text::normalize(line);
    let line_words = crate::text::words(&norm);
    let hit = words
        .iter()
        .filter(|w| {
            let n = w.chars().count();
            let stem: String = w.chars().take(if n <= 4 { n } else { (n - 2).max(4) }).collect();
            line_words.iter().any(|lw| if n <= 3 { *lw == w.as_str() } else { lw.starts_with(&stem) })
        })
        .count();
    hit as f64 / words.len() as f64
}

/// A candidate as the CLARIFY question shows it: secrets masked, kept short.
pub fn preview(text: &str) -> String {
    crate::text::clip::clip(&crate::text::privacy::mask(text), 60)
}

pub mod conversation;

#[cfg(test)]
mod tests;
