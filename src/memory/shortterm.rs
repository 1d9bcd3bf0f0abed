//! Gists and facts, the short-lived layers of a topic (docs/cognition.md §9.1): the store rules as pure
//! planners over plain rows, and the writes that apply a plan in the caller's transaction.
//!
//! Gists (30 min): confidence 0–10, stored at ≥ [`MIN_GIST_CONFIDENCE`] unless the topic has no
//! gists yet (then anything goes, so a new topic is never empty); a gist whose words overlap an
//! existing one by Jaccard ≥ [`DEDUP_JACCARD`] replaces it only when more confident, else it is
//! dropped; at most [`GISTS_PER_TYPE`] per type, the oldest evicted. Cold-start gists take no part.
//!
//! Facts (24 h): at most [`FACTS_PER_EXCHANGE`] per exchange at confidence ≥
//! [`MIN_FACT_CONFIDENCE`]; one value per key and topic, where a conflict goes to the higher
//! confidence and a tie to the newer; at most [`FACTS_PER_TOPIC`] per topic, the least recently
//! updated evicted.

use crate::store::{FactOrigin, FactsRepo, GIST_TTL_S, GistsRepo, NewGist, StoreError, VecTable, VectorRepo};
use crate::text::{normalize, words};
use rusqlite::Connection;
use serde::Serialize;
use std::collections::HashSet;

pub const GIST_TYPES: [&str; 6] = ["decision", "intent", "preference", "uncertainty", "fact", "commitment"];
pub const MIN_GIST_CONFIDENCE: f64 = 5.0;
pub const DEDUP_JACCARD: f64 = 0.7;
pub const GISTS_PER_TYPE: usize = 2;
pub const FACT_TTL_S: i64 = 86_400;
pub const FACTS_PER_EXCHANGE: usize = 5;
pub const MIN_FACT_CONFIDENCE: f64 = 0.5;
pub const FACTS_PER_TOPIC: usize = 50;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GistDraft {
    /// One of [`GIST_TYPES`].
    pub gist_type: String,
    pub content: String,
    /// 0–10.
    pub confidence: f64,
}

/// A live, non-cold-start gist of the topic.
pub use crate::store::LiveGist;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct GistPlan {
    pub insert: Vec<GistDraft>,
    pub delete: Vec<i64>,
}

/// Word-set Jaccard similarity of two texts (0 when both have no words).
pub fn word_jaccard(a: &str, b: &str) -> f64 {
    let (la, lb) = (normalize(a), normalize(b));
    let sa: HashSet<&str> = words(&la).into_iter().collect();
    let sb: HashSet<&str> = words(&lb).into_iter().collect();
    let union = sa.union(&sb).count();
    if union == 0 { 0.0 } else { sa.intersection(&sb).count() as f64 / union as f64 }
}

struct Slot {
    id: Option<i64>,
    draft: GistDraft,
    /// Existing gists by creation time; new ones after them, in extraction order.
    age: (i64, usize),
}

/// Decide which drafts to store and which stored gists they replace or evict.
pub fn plan_gists(existing: &[LiveGist], drafts: &[GistDraft]) -> GistPlan {
    let accept_all = existing.is_empty();
    let mut slots: Vec<Slot> = existing
        .iter()
        .map(|g| Slot {
            id: Some(g.id),
            draft: GistDraft { gist_type: g.gist_type.clone(), content: g.content.clone(), confidence: g.confidence },
            age: (g.created_at, 0),
        })
        .collect();
    let mut plan = GistPlan::default();
    for (seq, d) in drafts.iter().enumerate() {
        if !GIST_TYPES.contains(&d.gist_type.as_str()) || d.content.trim().is_empty() {
            continue;
        }
        if !accept_all && d.confidence < MIN_GIST_CONFIDENCE {
            continue;
        }
        if let Some(i) = slots.iter().position(|s| word_jaccard(&s.draft.content, &d.content) >= DEDUP_JACCARD) {
            if d.confidence <= slots[i].draft.confidence {
                continue;
            }
            plan.delete.extend(slots.remove(i).id);
        }
        slots.push(Slot { id: None, draft: d.clone(), age: (i64::MAX, seq) });
        let mut same: Vec<usize> = (0..slots.len()).filter(|&i| slots[i].draft.gist_type == d.gist_type).collect();
        while same.len() > GISTS_PER_TYPE {
            let oldest = same.iter().copied().min_by_key(|&i| slots[i].age).unwrap_or(same[0]);
            plan.delete.extend(slots.remove(oldest).id);
            same = (0..slots.len()).filter(|&i| slots[i].draft.gist_type == d.gist_type).collect();
        }
    }
    plan.insert = slots.into_iter().filter(|s| s.id.is_none()).map(|s| s.draft).collect();
    plan
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FactDraft {
    /// snake_case.
    pub key: String,
    pub value: String,
    /// 0–1.
    pub confidence: f64,
}

pub use crate::store::LiveFact;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct FactPlan {
    /// Written with insert-or-replace on (topic, key).
    pub upsert: Vec<FactDraft>,
    /// Stored facts evicted by the per-topic cap.
    pub evict: Vec<i64>,
}

/// Decide which drafts to store and which stored facts the cap evicts.
pub fn plan_facts(existing: &[LiveFact], drafts: &[FactDraft]) -> FactPlan {
    let mut upsert: Vec<FactDraft> = Vec::new();
    for d in drafts.iter().filter(|d| d.confidence >= MIN_FACT_CONFIDENCE && !d.key.is_empty()).take(FACTS_PER_EXCHANGE)
    {
        // Later drafts are newer than earlier ones and than anything stored: a tie goes to them.
        let rival = upsert
            .iter()
            .position(|u| u.key == d.key)
            .map(|i| (Some(i), upsert[i].value.clone(), upsert[i].confidence))
            .or_else(|| existing.iter().find(|e| e.key == d.key).map(|e| (None, e.value.clone(), e.confidence)));
        let next = match &rival {
            None => Some(d.clone()),
            Some((_, value, old)) if *value == d.value => {
                Some(FactDraft { confidence: old.max(d.confidence), ..d.clone() })
            }
            Some((_, _, old)) if d.confidence >= *old => Some(d.clone()),
            Some(_) => None,
        };
        match (next, rival.and_then(|r| r.0)) {
            (Some(n), Some(i)) => upsert[i] = n,
            (Some(n), None) => upsert.push(n),
            (None, _) => {}
        }
    }
    let new_keys = upsert.iter().filter(|u| !existing.iter().any(|e| e.key == u.key)).count();
    let excess = (existing.len() + new_keys).saturating_sub(FACTS_PER_TOPIC);
    let mut evictable: Vec<&LiveFact> = existing.iter().filter(|e| !upsert.iter().any(|u| u.key == e.key)).collect();
    evictable.sort_by_key(|e| (e.updated_at, e.id));
    FactPlan { evict: evictable.iter().take(excess).map(|e| e.id).collect(), upsert }
}

/// Sweep the topic's expired gists and facts, then read the live ones the planners need.
pub fn load_topic(c: &Connection, topic: &str, now: i64) -> Result<(Vec<LiveGist>, Vec<LiveFact>), StoreError> {
    let (gists, facts) = (GistsRepo(c), FactsRepo(c));
    gists.sweep_topic(topic, now)?;
    facts.sweep_topic(topic, now)?;
    Ok((gists.of_topic(topic)?, facts.of_topic(topic)?))
}

/// The text a fact's vector is made of (as a trait's: "key: value").
pub fn fact_embedding_text(key: &str, value: &str) -> String {
    format!("{key}: {value}")
}

/// Apply both plans (in the caller's transaction). Returns how many gists and facts were written.
pub fn apply(
    c: &Connection,
    topic: &str,
    thread_id: Option<&str>,
    gists: &GistPlan,
    facts: &FactPlan,
    now: i64,
) -> Result<(usize, usize), StoreError> {
    apply_with_vectors(c, topic, thread_id, gists, facts, &[], now)
}

/// [`apply`], storing each written fact's vector from `fact_vectors` (by
/// [`fact_embedding_text`]). A fact whose value changed and has no new vector loses the old
/// one, which described the old value.
pub fn apply_with_vectors(
    c: &Connection,
    topic: &str,
    thread_id: Option<&str>,
    gists: &GistPlan,
    facts: &FactPlan,
    fact_vectors: &[(String, Vec<f32>)],
    now: i64,
) -> Result<(usize, usize), StoreError> {
    let (gist_rows, fact_rows) = (GistsRepo(c), FactsRepo(c));
    for id in &gists.delete {
        gist_rows.delete(*id)?;
    }
    for g in &gists.insert {
        let new = NewGist { topic, thread_id, gist_type: &g.gist_type, content: &g.content, confidence: g.confidence };
        gist_rows.insert(&new, now, now + GIST_TTL_S)?;
    }
    for id in &facts.evict {
        fact_rows.delete(*id)?;
    }
    let vectors = VectorRepo(c);
    for f in &facts.upsert {
        let (id, changed) =
            fact_rows.upsert(topic, &f.key, &f.value, f.confidence, now, now + FACT_TTL_S, FactOrigin::Conversation)?;
        let text = fact_embedding_text(&f.key, &f.value);
        match fact_vectors.iter().find(|(t, _)| *t == text) {
            Some((_, v)) => vectors.upsert(VecTable::Facts, id, v)?,
            None if changed => vectors.delete(VecTable::Facts, id)?,
            None => {}
        }
    }
    Ok((gists.insert.len(), facts.upsert.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(t: &str, content: &str, confidence: f64) -> GistDraft {
        GistDraft { gist_type: t.into(), content: content.into(), confidence }
    }

    fn live(id: i64, t: &str, content: &str, confidence: f64, created_at: i64) -> LiveGist {
        LiveGist { id, gist_type: t.into(), content: content.into(), confidence, created_at }
    }

    #[test]
    fn jaccard_of_word_sets() {
        assert_eq!(word_jaccard("The cat sat", "the CAT sat"), 1.0);
        assert!((word_jaccard("a b c d", "a b c e") - 3.0 / 5.0).abs() < 1e-12);
        assert_eq!(word_jaccard("", "..."), 0.0);
    }

    #[test]
    fn gate_applies_only_once_the_topic_has_gists() {
        let plan = plan_gists(&[], &[g("fact", "likes green tea", 3.0)]);
        assert_eq!(plan.insert.len(), 1, "an empty topic accepts anything");
        let existing = [live(1, "intent", "wants to learn rust", 6.0, 10)];
        let plan = plan_gists(&existing, &[g("fact", "likes green tea", 4.9), g("fact", "lives near the sea", 5.0)]);
        assert_eq!(plan.insert, [g("fact", "lives near the sea", 5.0)]);
        assert!(plan.insert.iter().all(|d| d.confidence >= 5.0));
        let plan = plan_gists(&existing, &[g("opinion", "unknown type", 9.0), g("fact", "  ", 9.0)]);
        assert_eq!(plan, GistPlan::default());
    }

    #[test]
    fn near_duplicates_replace_only_when_more_confident() {
        let existing = [live(1, "decision", "we will go with the blue sofa for the living room", 6.0, 10)];
        let same = "we will go with the blue sofa for the living room today";
        assert!(word_jaccard(&existing[0].content, same) >= 0.7);
        let plan = plan_gists(&existing, &[g("decision", same, 6.0)]);
        assert_eq!(plan, GistPlan::default(), "equal confidence: the new one is dropped");
        let plan = plan_gists(&existing, &[g("decision", same, 8.0)]);
        assert_eq!(plan.delete, [1]);
        assert_eq!(plan.insert, [g("decision", same, 8.0)]);
        let plan = plan_gists(&existing, &[g("decision", "the red chair goes in the study", 6.0)]);
        assert!(plan.delete.is_empty() && plan.insert.len() == 1, "different enough to keep both");
    }

    #[test]
    fn two_per_type_evicting_the_oldest() {
        let existing = [live(1, "intent", "wants to learn rust", 6.0, 10), live(2, "intent", "plans a trip", 6.0, 20)];
        let plan = plan_gists(&existing, &[g("intent", "wants a new laptop soon", 7.0), g("fact", "owns a cat", 6.0)]);
        assert_eq!(plan.delete, [1], "the oldest intent goes");
        assert_eq!(plan.insert.len(), 2);
        let three = [
            g("commitment", "call mum on sunday", 7.0),
            g("commitment", "pay rent", 7.0),
            g("commitment", "renew passport", 7.0),
        ];
        let plan = plan_gists(&[], &three);
        assert_eq!(plan.insert, three[1..].to_vec(), "within one exchange the earliest is the oldest");
    }

    fn f(key: &str, value: &str, confidence: f64) -> FactDraft {
        FactDraft { key: key.into(), value: value.into(), confidence }
    }

    fn lf(id: i64, key: &str, value: &str, confidence: f64, updated_at: i64) -> LiveFact {
        LiveFact { id, key: key.into(), value: value.into(), confidence, updated_at }
    }

    #[test]
    fn fact_conflicts_go_to_confidence_and_ties_to_the_newer() {
        let existing = [lf(1, "city", "Porto", 0.8, 10)];
        assert!(plan_facts(&existing, &[f("city", "Lisbon", 0.7)]).upsert.is_empty(), "less confident: kept");
        assert_eq!(
            plan_facts(&existing, &[f("city", "Lisbon", 0.8)]).upsert,
            [f("city", "Lisbon", 0.8)],
            "tie → newer"
        );
        assert_eq!(plan_facts(&existing, &[f("city", "Lisbon", 0.9)]).upsert, [f("city", "Lisbon", 0.9)]);
        assert_eq!(plan_facts(&existing, &[f("city", "Porto", 0.6)]).upsert, [f("city", "Porto", 0.8)], "refresh");
        let within = plan_facts(&[], &[f("pet", "cat", 0.7), f("pet", "dog", 0.7), f("pet", "fish", 0.6)]);
        assert_eq!(within.upsert, [f("pet", "dog", 0.7)]);
    }

    #[test]
    fn fact_gate_five_per_exchange_and_fifty_per_topic() {
        let drafts: Vec<FactDraft> =
            (0..8).map(|i| f(&format!("k{i}"), "v", if i == 0 { 0.49 } else { 0.5 })).collect();
        let plan = plan_facts(&[], &drafts);
        assert_eq!(plan.upsert.iter().map(|d| d.key.as_str()).collect::<Vec<_>>(), ["k1", "k2", "k3", "k4", "k5"]);
        let full: Vec<LiveFact> = (0..50).map(|i| lf(i + 1, &format!("old{i}"), "v", 0.9, 1000 - i)).collect();
        let plan = plan_facts(&full, &[f("new1", "v", 0.9), f("new2", "v", 0.9), f("old3", "w", 0.95)]);
        assert_eq!(plan.evict, [50, 49], "two new keys evict the two least recently updated");
        let plan = plan_facts(&full[..48], &[f("new1", "v", 0.9), f("new2", "v", 0.9)]);
        assert!(plan.evict.is_empty());
    }

    #[test]
    fn apply_writes_with_ttls_and_sweeps() {
        let c = crate::store::open_in_memory().unwrap();
        let plan = plan_gists(&[], &[g("intent", "wants to learn rust", 6.0)]);
        let facts = plan_facts(&[], &[f("language", "Rust", 0.9)]);
        assert_eq!(apply(&c, "code", Some("t"), &plan, &facts, 1000).unwrap(), (1, 1));
        let (gists, live_facts) = load_topic(&c, "code", 1000).unwrap();
        assert_eq!((gists.len(), live_facts.len()), (1, 1));
        let f = crate::store::fixtures::Fixture(&c);
        let exp: (i64, i64) = (f.value("gists", "expires_at", "", []), f.value("facts", "expires_at", "", []));
        assert_eq!(exp, (1000 + 1800, 1000 + 86_400));
        let (gists, live_facts) = load_topic(&c, "code", 1000 + 1800).unwrap();
        assert!(gists.is_empty() && live_facts.len() == 1, "the gist expired and was swept");
    }
}
