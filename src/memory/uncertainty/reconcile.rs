//! RECONCILE (docs/cognition.md §10.5), the drift engine's uncertainty pass: sampled memories of
//! one domain against similar memories across stores. Pure: the drift engine (its own issue)
//! samples, calls [`plan`], then writes what it returns through [`super::ingest`]'s repositories.
//!
//! Gates and budget: pairs need cosine ≥ [`MIN_COSINE`]; a pair with an open or surfaced
//! record from the last 7 days is skipped; at most [`MAX_NEW_RECORDS`] records per pass (the
//! tolerance moves it, [`super::tolerance::reconcile_budget`]); domains rotate pass by pass.

use super::rules::{self, NEGATION_OVERLAP};
use super::{Class, Verdict};

pub const MIN_COSINE: f32 = 0.75;
pub const MAX_NEW_RECORDS: usize = 5;
/// Pairs with a record younger than this are skipped (seconds).
pub const SKIP_RECENT_S: i64 = 7 * 86_400;
/// Memories sampled per pass (the design's 10–20).
pub const SAMPLE: usize = 15;
/// The rotation: one domain per pass.
pub const DOMAINS: [&str; 4] = ["work", "personal", "relationships", "hobbies"];

/// The domain of pass number `pass`.
pub fn domain_for_pass(pass: u64) -> &'static str {
    DOMAINS[(pass % DOMAINS.len() as u64) as usize]
}

/// Which domain a trait category or slot belongs to.
pub fn domain_of(category_or_slot: &str) -> &'static str {
    match category_or_slot {
        "employer" | "occupation" | "manager" | "work" | "deadline" | "meeting" => "work",
        "relationship" | "partner" | "sister" | "brother" | "mother" | "father" | "friend" => "relationships",
        "preference" | "micro_preference" | "reading" | "gym" | "learning" | "hobby" | "diet" => "hobbies",
        _ => "personal",
    }
}

/// One memory as RECONCILE reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Memory {
    /// trait | fact | concept | episode
    pub kind: &'static str,
    pub id: i64,
    /// As a sentence the rules read ([`super::ingest::trait_sentence`] for traits).
    pub text: String,
    pub confidence: f64,
    pub reinforcement_count: u32,
    pub domain: &'static str,
    pub created_at: i64,
    pub embedding: Vec<f32>,
}

/// A pair RECONCILE decided on.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    /// The older memory, then the newer.
    pub a: (&'static str, i64),
    pub b: (&'static str, i64),
    pub verdict: Verdict,
    /// For a temporal change: the memory that wins (higher confidence × (1 + 0.1·reinforcements)).
    pub winner: Option<(&'static str, i64)>,
}

pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() || a.is_empty() {
        return 0.0;
    }
    let (mut d, mut na, mut nb) = (0.0f32, 0.0f32, 0.0f32);
    for (x, y) in a.iter().zip(b) {
        d += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 { 0.0 } else { d / (na.sqrt() * nb.sqrt()) }
}

fn weight(m: &Memory) -> f64 {
    m.confidence * (1.0 + 0.1 * f64::from(m.reinforcement_count))
}

/// One pass: the sampled memories of `domain` (at most [`SAMPLE`]) against `pool`; `recent`
/// says whether a pair already has a record of the last 7 days; at most `budget` results.
pub fn plan(
    sampled: &[Memory],
    pool: &[Memory],
    domain: &str,
    recent: impl Fn((&str, i64), (&str, i64)) -> bool,
    budget: usize,
) -> Vec<Planned> {
    let mut out: Vec<Planned> = Vec::new();
    for s in sampled.iter().filter(|m| m.domain == domain).take(SAMPLE) {
        for p in pool {
            if out.len() >= budget {
                return out;
            }
            if (p.kind, p.id) == (s.kind, s.id) || cosine(&s.embedding, &p.embedding) < MIN_COSINE {
                continue;
            }
            let (old, new) = if p.created_at <= s.created_at { (p, s) } else { (s, p) };
            let (a, b) = ((old.kind, old.id), (new.kind, new.id));
            if recent(a, b) || out.iter().any(|x| (x.a, x.b) == (a, b)) {
                continue;
            }
            let Some(verdict) = rules::compare_texts(&old.text, &new.text, NEGATION_OVERLAP) else { continue };
            let winner = (verdict.classification == Class::TemporalChange)
                .then(|| if weight(old) > weight(new) { a } else { b });
            out.push(Planned { a, b, verdict, winner });
        }
    }
    out
}

/// Write one pass's plan: a temporal change with a winner is created and resolved at once
/// (`temporal_supersede`: winner reliable, loser superseded); any other hit marks both
/// memories contradicted and opens a record for surfacing. Returns the records' ids.
pub fn apply(c: &rusqlite::Connection, planned: &[Planned], now: i64) -> Result<Vec<String>, crate::store::StoreError> {
    use crate::store::{ConceptsRepo, FactsRepo, NewUncertainty, TraitsRepo, UncertaintiesRepo};
    let set = |(kind, id): (&str, i64), state: &str, force: bool| -> Result<(), crate::store::StoreError> {
        match kind {
            "trait" => {
                TraitsRepo(c).set_reliability(id, state, force, now)?;
            }
            "fact" => {
                FactsRepo(c).set_reliability(id, state, force)?;
            }
            "concept" => {
                ConceptsRepo(c).set_reliability(id, state, force)?;
            }
            _ => {}
        }
        Ok(())
    };
    let mut ids = Vec::with_capacity(planned.len());
    for p in planned {
        let temporal = p.winner.filter(|_| p.verdict.classification == Class::TemporalChange);
        match temporal {
            Some(w) => {
                let loser = if w == p.a { p.b } else { p.a };
                set(w, "reliable", true)?;
                set(loser, "superseded", true)?;
                if loser.0 == "trait" && w.0 == "trait" {
                    crate::store::TraitsRepo(c).link_successor(loser.1, w.1)?;
                }
                // Two concepts: the graph keeps the change as an edge, old → new.
                if loser.0 == "concept" && w.0 == "concept" {
                    let edge = crate::store::NewEdge {
                        source: loser.1,
                        target: w.1,
                        rel_type: "temporal_evolution",
                        weight: 0.5,
                        bidirectional: false,
                    };
                    crate::store::RelationshipsRepo(c).upsert(&edge, now)?;
                }
            }
            None => {
                set(p.a, "contradicted", false)?;
                set(p.b, "contradicted", false)?;
            }
        }
        let rec = NewUncertainty {
            a: (p.a.0, p.a.1.to_string()),
            b: Some((p.b.0, p.b.1.to_string())),
            kind: p.verdict.record_kind(),
            severity: super::severity(p.a.0, Some(p.b.0)),
            context: "drift",
            reasoning: Some(&p.verdict.reasoning),
            temporal_signal: p.verdict.temporal_signal,
            surface_context: p.verdict.surface_context.as_deref(),
            resolved: temporal.map(|_| ("temporal_supersede", "the newer memory replaced the older one")),
        };
        ids.push(UncertaintiesRepo(c).insert(&rec, now)?);
    }
    Ok(ids)
}
