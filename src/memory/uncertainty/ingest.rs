//! The ingestion check (docs/cognition.md §10.4): the user's message against what memory holds,
//! run beside the reply. Candidates come from the slots the message names (traits and facts
//! by key) and from a k = 5 vector pre-screen over traits, facts and concepts; the rules judge each
//! pair ([`super::rules`]); what they find is written at once:
//!
//! - a temporal change supersedes the old value (kept, shown as past) and stores the new one
//!   as current, with a record opened and resolved as `temporal_supersede`;
//! - a true contradiction keeps both, marks both contradicted and opens a record for the reply
//!   to raise when the topic comes back;
//! - a slot with nothing stored yet is learned as an explicit trait.

use super::rules::{self, Claim};
use super::{Class, Verdict, severity};
use crate::store::{
    ConceptsRepo, FactsRepo, NewUncertainty, StoreError, TraitWrite, TraitsRepo, UncertaintiesRepo, UncertaintyItem,
    VecTable, VectorRepo,
};
use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The whole check, model included, is given this long beside the reply.
pub const TIME_BOX: Duration = Duration::from_millis(600);
/// Vector pre-screen: nearest neighbours per table.
pub const PRESCREEN_K: usize = 5;
/// Rows re-scored exactly per table, out of the nearest by binary code. Recall's 400
/// (`store::candidate_count`) aims at its 50 nearest whatever their distance; the pre-screen
/// wants only its 5 nearest at cosine >= 0.5, which sit near the top of the code ranking, and
/// each exact re-score is a row read (~4.5 µs at 100k rows), so 400 per table took the check
/// to 4.8 ms median at 100k memories; 50 keeps it under 2 ms (docs/cognition.md §10.4).
/// Concepts are the exception: the turn's recall and the graph's seeds search them with the
/// same message and recall's 400, and the table keeps that shortlist (`vector_codes::table`),
/// so the pre-screen's concepts are a prefix of it, not a second scan of the table.
pub const PRESCREEN_CANDIDATES: usize = 50;
/// A pre-screened memory is compared only from this cosine similarity.
pub const PRESCREEN_MIN_COSINE: f32 = 0.5;
/// The model classifies at most this many pairs per message.
pub const MAX_MODEL_PAIRS: usize = 3;
/// Confidence given to a slot value the user states.
pub const STATED_CONFIDENCE: f64 = 0.9;

/// What the check did this turn (`ask --json`'s `uncertainty`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UncertaintyReport {
    /// Records opened (or opened and resolved at once) by this message.
    pub detected: Vec<UncertaintyItem>,
    /// Records this reply raised.
    pub surfaced: Vec<UncertaintyItem>,
    /// Records this message closed.
    pub resolved: Vec<UncertaintyItem>,
}

/// A memory that may disagree with the message, read for one check (never stored).
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// trait | fact | concept
    pub kind: &'static str,
    pub id: i64,
    /// The slot it fills, when read by key.
    pub slot: Option<String>,
    /// The value (slot candidates) or the memory as a sentence (pre-screened ones).
    pub text: String,
    pub reliability: String,
}

/// One pair the rules (or the model) judged a hit.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub candidate: Candidate,
    /// The new value, when the message states one for the candidate's slot.
    pub claim: Option<Claim>,
    pub verdict: Verdict,
}

/// A trait as a sentence the rules can read ("my phone number is 555").
pub fn trait_sentence(key: &str, value: &str) -> String {
    format!("my {} is {}", key.replace('_', " "), value)
}

/// The candidates for a message: its slots by key, then the vector pre-screen.
pub fn candidates(
    c: &Connection,
    claims: &[Claim],
    embedding: Option<&[f32]>,
    now: i64,
) -> Result<Vec<Candidate>, StoreError> {
    let mut out: Vec<Candidate> = Vec::new();
    for cl in claims {
        for (t, _) in TraitsRepo(c).rows_for_key(&cl.slot)? {
            if t.reliability != "superseded" {
                out.push(Candidate {
                    kind: "trait",
                    id: t.id,
                    slot: Some(cl.slot.clone()),
                    text: t.value,
                    reliability: t.reliability,
                });
            }
        }
        for (id, value, reliability) in FactsRepo(c).live_by_key(&cl.slot, now)? {
            out.push(Candidate { kind: "fact", id, slot: Some(cl.slot.clone()), text: value, reliability });
        }
    }
    let Some(e) = embedding else { return Ok(out) };
    if e.len() != crate::store::embedding_dim(c)? {
        return Ok(out);
    }
    let near = |t: VecTable| -> Result<Vec<i64>, StoreError> {
        let repo = VectorRepo(c);
        let found = if t == VecTable::Concepts {
            repo.search(t, e, PRESCREEN_K)?
        } else {
            repo.search_with(t, e, PRESCREEN_K, PRESCREEN_CANDIDATES)?
        };
        Ok(found.into_iter().filter(|(_, d)| 1.0 - d >= PRESCREEN_MIN_COSINE).map(|(id, _)| id).collect())
    };
    for id in near(VecTable::Traits)? {
        if out.iter().any(|x| x.kind == "trait" && x.id == id) {
            continue;
        }
        if let Some((key, value, reliability)) = TraitsRepo(c).describe(id)?
            && reliability != "superseded"
        {
            out.push(Candidate { kind: "trait", id, slot: None, text: trait_sentence(&key, &value), reliability });
        }
    }
    for id in near(VecTable::Facts)? {
        if out.iter().any(|x| x.kind == "fact" && x.id == id) {
            continue;
        }
        if let Some((key, value, reliability)) = FactsRepo(c).describe_live(id, now)?
            && reliability != "superseded"
        {
            out.push(Candidate { kind: "fact", id, slot: None, text: trait_sentence(&key, &value), reliability });
        }
    }
    for id in near(VecTable::Concepts)? {
        if ConceptsRepo(c).is_live(id)? {
            let (name, definition) = ConceptsRepo(c).name_and_definition(id)?;
            out.push(Candidate {
                kind: "concept",
                id,
                slot: None,
                text: format!("{name}: {definition}"),
                reliability: "reliable".into(),
            });
        }
    }
    Ok(out)
}

/// The rules over every candidate: one finding per candidate at most. Pure.
pub fn judge(message: &str, claims: &[Claim], candidates: &[Candidate]) -> Vec<Finding> {
    let marker = rules::temporal_marker(message);
    let mut out = Vec::new();
    for cand in candidates {
        let verdict = match &cand.slot {
            Some(slot) => claims
                .iter()
                .find(|cl| &cl.slot == slot)
                .and_then(|cl| rules::compare_claim(&cand.text, cl, marker).map(|v| (Some(cl.clone()), v))),
            None => rules::compare_texts(&cand.text, message, rules::NEGATION_OVERLAP).map(|v| {
                let slot_claim = rules::claims(&cand.text)
                    .into_iter()
                    .find_map(|o| claims.iter().find(|n| n.slot == o.slot).cloned());
                (slot_claim, v)
            }),
        };
        if let Some((claim, verdict)) = verdict {
            out.push(Finding { candidate: cand.clone(), claim, verdict });
        }
    }
    out
}

fn category(slot: &str) -> &'static str {
    match slot {
        "location" | "employer" | "occupation" | "hometown" => "core",
        "partner" | "manager" => "relationship",
        "diet" | "reading" | "learning" | "gym" | "car" => "preference",
        _ => "general",
    }
}

fn stated<'a>(cl: &'a Claim, now: i64) -> TraitWrite<'a> {
    TraitWrite {
        key: &cl.slot,
        value: &cl.value,
        category: category(&cl.slot),
        confidence: STATED_CONFIDENCE,
        source: "explicit",
        is_literal: true,
        observed_at: now,
    }
}

/// What [`apply`] wrote, with the lines the reply is given (never stored).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Applied {
    pub report: UncertaintyReport,
    /// For the reply: what changed, and what to ask about.
    pub notes: Vec<String>,
    /// The slot values this message replaced, for a reply that acknowledges the change
    /// without a model (the built-in path's templates).
    pub changes: Vec<Change>,
}

/// One value the user said has changed: `slot` was `old`, is now `new`.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub slot: String,
    pub old: String,
    pub new: String,
}

/// Write what the findings decide, and learn the message's new slots. `auto_min` is the
/// confidence from which a temporal change is resolved silently (tolerance-steered).
pub fn apply(
    c: &Connection,
    claims: &[Claim],
    findings: &[Finding],
    auto_min: f64,
    now: i64,
) -> Result<Applied, StoreError> {
    let mut out = Applied::default();
    let traits = TraitsRepo(c);
    let records = UncertaintiesRepo(c);
    let mut handled: Vec<String> = Vec::new();
    for f in findings {
        let cand = &f.candidate;
        let a_id = cand.id.to_string();
        let slot_label = f.claim.as_ref().map_or_else(|| "that".to_string(), |cl| cl.slot.replace('_', " "));
        let new_row = |out_kind: &mut &'static str| -> Result<Option<i64>, StoreError> {
            let Some(cl) = &f.claim else { return Ok(None) };
            if handled.contains(&cl.slot) {
                return Ok(traits.find(&cl.slot)?.map(|t| t.id));
            }
            *out_kind = "trait";
            Ok(Some(match (cand.kind, f.verdict.classification) {
                ("trait", Class::TemporalChange) => traits.supersede_with(cand.id, &stated(cl, now), now)?,
                ("trait", _) => traits.insert_rival(cand.id, &stated(cl, now), now)?,
                _ => match traits.find(&cl.slot)? {
                    Some(t) => t.id,
                    None => traits.insert(&stated(cl, now), now)?,
                },
            }))
        };
        let temporal = f.verdict.classification == Class::TemporalChange && f.verdict.confidence >= auto_min;
        let mut b_kind: &'static str = "exchange";
        let b =
            if temporal || f.verdict.classification == Class::TrueContradiction { new_row(&mut b_kind)? } else { None };
        if let Some(cl) = &f.claim {
            handled.push(cl.slot.clone());
        }
        let (state_a, force) = if temporal { ("superseded", true) } else { ("contradicted", false) };
        match cand.kind {
            "trait" => {
                traits.set_reliability(cand.id, state_a, force, now)?;
                if let (true, Some(new)) = (temporal && b_kind == "trait", b) {
                    traits.link_successor(cand.id, new)?;
                }
            }
            "fact" => {
                FactsRepo(c).set_reliability(cand.id, state_a, force)?;
            }
            "concept" => {
                ConceptsRepo(c).set_reliability(cand.id, state_a, force)?;
            }
            _ => {}
        }
        let b_ref = b.map(|id| (b_kind, id.to_string()));
        let sev = severity(cand.kind, Some(if b.is_some() { b_kind } else { "episode" }));
        let resolved = temporal.then_some(("temporal_supersede", "a newer statement replaced it; kept as past"));
        if temporal {
            for r in records.open_about(cand.kind, &a_id)? {
                records.resolve(&r.item.id, "resolved", "temporal_supersede", "the memory was superseded", now)?;
                out.report.resolved.extend(records.get(&r.item.id)?.map(|x| x.item));
            }
        }
        let rec = NewUncertainty {
            a: (cand.kind, a_id),
            b: b_ref,
            kind: f.verdict.record_kind(),
            severity: sev,
            context: "ingestion",
            reasoning: Some(&f.verdict.reasoning),
            temporal_signal: f.verdict.temporal_signal,
            surface_context: f.verdict.surface_context.as_deref(),
            resolved,
        };
        let id = records.insert(&rec, now)?;
        if let Some(r) = records.get(&id)? {
            out.report.detected.push(r.item);
        }
        let new_value = f.claim.as_ref().map(|cl| cl.value.clone());
        let old = cand.text.clone();
        if let (true, Some(slot), Some(new)) = (temporal, &cand.slot, &new_value)
            && !out.changes.iter().any(|c| &c.slot == slot)
        {
            out.changes.push(Change { slot: slot.clone(), old: old.clone(), new: new.clone() });
        }
        out.notes.push(match (temporal, new_value) {
            (true, Some(v)) => format!(
                "The user's {slot_label} has changed: it is now {v} (it used to be {old}). Use the new value; mention the old one only as past."
            ),
            (true, None) => format!("What you remembered ({old}) is out of date; do not state it as current."),
            (false, Some(v)) => format!(
                "You remembered the user's {slot_label} as {old}, and now they say {v}. Both are kept as doubtful; if it fits, ask one short, natural question about which is right."
            ),
            (false, None) => format!(
                "This seems to conflict with what you remembered ({old}); do not assert either, and if it fits ask one short, natural question."
            ),
        });
    }
    // Slots the message states that memory did not hold yet, or that it says are over.
    for cl in claims {
        if handled.contains(&cl.slot) {
            continue;
        }
        match traits.find(&cl.slot)? {
            None if !cl.past => {
                traits.insert(&stated(cl, now), now)?;
            }
            Some(t) if cl.past && rules::same_value(&t.value, &cl.value) => {
                traits.set_reliability(t.id, "superseded", true, now)?;
                let rec = NewUncertainty {
                    a: ("trait", t.id.to_string()),
                    b: None,
                    kind: "stale",
                    severity: "low",
                    context: "ingestion",
                    reasoning: Some("the user said this is no longer so"),
                    temporal_signal: true,
                    surface_context: None,
                    resolved: Some(("temporal_supersede", "the user placed it in the past")),
                };
                let id = records.insert(&rec, now)?;
                if let Some(r) = records.get(&id)? {
                    out.report.detected.push(r.item);
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

/// The whole deterministic check in one call (what the turn runs on the database thread,
/// and what the bench times without the writes: [`candidates`] + [`judge`]).
pub fn check(
    c: &Connection,
    message: &str,
    embedding: Option<&[f32]>,
    auto_min: f64,
    now: i64,
) -> Result<Applied, StoreError> {
    if message.trim_end().ends_with('?') {
        return Ok(Applied::default());
    }
    let claims = rules::claims(message);
    let cands = candidates(c, &claims, embedding, now)?;
    let findings = judge(message, &claims, &cands);
    if findings.is_empty() && claims.is_empty() {
        return Ok(Applied::default());
    }
    let tx = c.unchecked_transaction()?;
    let applied = apply(&tx, &claims, &findings, auto_min, now)?;
    tx.commit()?;
    Ok(applied)
}

/// The model is given this long per pair (the turn waits [`TIME_BOX`] in all; a later answer
/// is still written, for surfacing and drift).
pub const MODEL_TIMEOUT: Duration = Duration::from_secs(5);

/// What the database read for one check: the message's claims, the candidates, the rules'
/// findings and the tolerance-steered auto-resolution confidence.
type Prepared = (Vec<Claim>, Vec<Candidate>, Vec<Finding>, f64);

/// What the check's one read found: the message answered an asked question (that record,
/// closed), it is a question (nothing to check), or what the rules need.
enum Read {
    Answered(UncertaintyItem),
    Question,
    Prepared(Prepared),
}

/// The check as the turn runs it: the rules on the database thread; when they find nothing
/// and the memory workers ask the model (`[llm] memory_extraction`), the lightweight model
/// classifies up to [`MAX_MODEL_PAIRS`] pre-screened pairs (strict JSON, the layer's bounded
/// repairs; a failure or a low-confidence answer falls back to no finding); then the writes.
pub async fn run(
    db: crate::store::Db,
    llm: std::sync::Arc<crate::llm::Llm>,
    message: String,
    embedding: Option<Vec<f32>>,
    now: i64,
) -> Result<Applied, StoreError> {
    // The answer to a question, or else the rules' reads, in one trip to the database thread:
    // the turn's own calls queue behind this one.
    let text = message.clone();
    let first = db
        .call(move |c| {
            if let Some(item) = answer_to_a_question(c, &text, now)? {
                return Ok(Read::Answered(item));
            }
            if text.trim_end().ends_with('?') {
                return Ok(Read::Question);
            }
            let t =
                crate::store::IdentityRepo(c).current(super::tolerance::NAME)?.unwrap_or(super::tolerance::BASELINE);
            let claims = rules::claims(&text);
            let cands = candidates(c, &claims, embedding.as_deref(), now)?;
            let findings = judge(&text, &claims, &cands);
            Ok(Read::Prepared((claims, cands, findings, super::tolerance::auto_resolve_confidence(t))))
        })
        .await?;
    let (claims, cands, mut findings, auto_min): Prepared = match first {
        Read::Answered(item) => {
            return Ok(Applied {
                report: UncertaintyReport { resolved: vec![item], ..Default::default() },
                ..Default::default()
            });
        }
        Read::Question => return Ok(Applied::default()),
        Read::Prepared(prepared) => prepared,
    };
    if findings.is_empty() && llm.memory_uses_model() {
        findings.extend(classify(&llm, &message, &cands).await);
    }
    if findings.is_empty() && claims.is_empty() {
        return Ok(Applied::default());
    }
    db.call(move |c| {
        let tx = c.transaction()?;
        let applied = apply(&tx, &claims, &findings, auto_min, now)?;
        tx.commit()?;
        Ok(applied)
    })
    .await
}

/// When `message` answers a question a recent reply asked about two memories (opened or raised
/// in the last [`super::answer::ANSWER_WINDOW_S`]), resolve the record the way the TUI's 1/2/3
/// would ([`super::resolve::resolve_by_user`]). Returns the record as closed.
pub fn answer_to_a_question(
    c: &mut Connection,
    message: &str,
    now: i64,
) -> Result<Option<UncertaintyItem>, StoreError> {
    let asked = UncertaintiesRepo(c).recently_asked(now - super::answer::ANSWER_WINDOW_S)?;
    for rec in asked {
        let Some(b) = rec.memory_b.as_deref() else { continue };
        let (Some((older, _)), Some((newer, _))) =
            (crate::store::memory_text(c, &rec.memory_a)?, crate::store::memory_text(c, b)?)
        else {
            continue;
        };
        if let Some(choice) = super::answer::classify(message, &older, &newer) {
            return super::resolve::resolve_by_user(c, &rec.id, choice, now);
        }
    }
    Ok(None)
}

/// The model's verdicts on the pre-screened candidates the rules could not judge: the first
/// hit wins.
pub async fn classify(llm: &crate::llm::Llm, message: &str, cands: &[Candidate]) -> Option<Finding> {
    use super::classifier::{Side, parse, request, schema};
    let cancel = tokio_util::sync::CancellationToken::new();
    let incoming = Side { text: message, kind: "incoming", age_days: 0.0, established: false };
    for cand in cands.iter().filter(|c| c.slot.is_none()).take(MAX_MODEL_PAIRS) {
        let stored = Side { text: &cand.text, kind: cand.kind, age_days: 0.0, established: false };
        let req = request(&incoming, &stored, message);
        let reply = llm.structured(crate::config::Role::Lightweight, &req, &schema(), MODEL_TIMEOUT, &cancel).await;
        match reply.ok().and_then(|v| parse(&v)) {
            Some(verdict) if verdict.classification.is_hit() => {
                return Some(Finding { candidate: cand.clone(), claim: None, verdict });
            }
            _ => {}
        }
    }
    None
}

/// The record to raise in this reply (see [`super::surface::pick`]).
pub async fn surface(
    db: crate::store::Db,
    topic: String,
    message: String,
    now: i64,
) -> Result<Option<(UncertaintyItem, String)>, StoreError> {
    db.call(move |c| surface_in(c, &topic, &message, now)).await
}

/// [`surface`] on the database thread (the turn asks with its other reads there).
pub fn surface_in(
    c: &Connection,
    topic: &str,
    message: &str,
    now: i64,
) -> Result<Option<(UncertaintyItem, String)>, StoreError> {
    let t = crate::store::IdentityRepo(c).current(super::tolerance::NAME)?.unwrap_or(super::tolerance::BASELINE);
    super::surface::pick(c, topic, message, t, now)
}
