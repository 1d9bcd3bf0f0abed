//! Resolving a record (docs/cognition.md §10.6): the user's answer, new evidence, and the tolerance
//! nudges that follow. Every write for one resolution is in the caller's transaction.

use super::tolerance;
use crate::store::{
    ConceptsRepo, EpisodesRepo, FactsRepo, IdentityRepo, MemoryId, NewEpisode, StoreError, TraitsRepo,
    UncertaintiesRepo, UncertaintyItem, memory_text,
};
use rusqlite::Connection;
use std::str::FromStr;

/// What the user picked in the record's detail (or said in answer to a woven question).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserChoice {
    /// The newer memory is right: it becomes reliable, the older one superseded.
    NewIsRight,
    /// Both hold (different times or situations): both reliable.
    BothTrue,
    /// Neither: both are forgotten.
    ForgetBoth,
}

impl UserChoice {
    pub const ALL: [UserChoice; 3] = [UserChoice::NewIsRight, UserChoice::BothTrue, UserChoice::ForgetBoth];

    pub fn label(self) -> &'static str {
        match self {
            UserChoice::NewIsRight => "the new one is right",
            UserChoice::BothTrue => "both are true",
            UserChoice::ForgetBoth => "forget both",
        }
    }
}

fn set(c: &Connection, memory: &str, state: &str, now: i64) -> Result<(), StoreError> {
    let Some((kind, id)) = memory.split_once(':') else { return Ok(()) };
    let Ok(id) = id.parse::<i64>() else { return Ok(()) };
    match kind {
        "trait" => {
            TraitsRepo(c).set_reliability(id, state, true, now)?;
        }
        "fact" => {
            FactsRepo(c).set_reliability(id, state, true)?;
        }
        "concept" => {
            ConceptsRepo(c).set_reliability(id, state, true)?;
        }
        _ => {}
    }
    Ok(())
}

/// Nudge Chalie's uncertainty tolerance by `delta` (clamped to its range).
pub fn nudge_tolerance(c: &Connection, delta: f64, now: i64) -> Result<Option<f64>, StoreError> {
    let repo = IdentityRepo(c);
    let Some(cur) = repo.current(tolerance::NAME)? else { return Ok(None) };
    repo.set_current(tolerance::NAME, tolerance::nudge(cur, delta), now)
}

/// Salience of the episode that keeps a clarification: a correction the user made matters
/// more than small talk, less than a commitment (docs/cognition.md §10.6).
pub const CLARIFICATION_SALIENCE: u8 = 6;

/// What was asked and what the user chose, as an episode's gist. A "forget both" answer names
/// neither memory: quoting them would keep a copy of what the user wanted gone.
pub fn exchange_gist(a: Option<&str>, b: Option<&str>, choice: UserChoice) -> String {
    let quote = |m: Option<&str>| m.map_or_else(|| "(gone)".to_string(), |t| format!("\"{t}\""));
    match choice {
        UserChoice::ForgetBoth => format!("Asked which of two memories is current; the user chose: {}", choice.label()),
        _ => format!("Asked which is current, {} or {}; the user chose: {}", quote(a), quote(b), choice.label()),
    }
}

/// Keep the clarification as an episode (seed 002: an answered question is remembered).
fn record_exchange(c: &Connection, a: &str, b: Option<&str>, choice: UserChoice, now: i64) -> Result<i64, StoreError> {
    let text = |m: &str| -> Result<Option<String>, StoreError> { Ok(memory_text(c, m)?.map(|(t, _)| t)) };
    let (ta, tb) = (text(a)?, b.map(text).transpose()?.flatten());
    let gist = exchange_gist(ta.as_deref(), tb.as_deref(), choice);
    let s = f64::from(CLARIFICATION_SALIENCE) / 10.0;
    EpisodesRepo(c).insert(&NewEpisode {
        intent: r#"{"type":"clarification","direction":"resolving"}"#,
        context: r#"{"situational":"","conversational":"","constraints":[]}"#,
        action: Some("RESOLVE"),
        emotion: None,
        outcome: Some(choice.label()),
        gist: &gist,
        salience: CLARIFICATION_SALIENCE,
        freshness: s,
        topic: None,
        thread_id: None,
        exchange_id: None,
        created_at: now,
        salience_factors: "{}",
        open_loops: "[]",
    })
}

/// `old` (`trait:N`) was replaced by `new`: keep the link when both are traits.
pub fn link_traits(c: &Connection, old: &str, new: &str) -> Result<(), StoreError> {
    let id = |m: &str| m.strip_prefix("trait:").and_then(|x| x.parse::<i64>().ok());
    if let (Some(o), Some(n)) = (id(old), id(new)) {
        TraitsRepo(c).link_successor(o, n)?;
    }
    Ok(())
}

/// The user resolved record `id` (the exchange kept as an episode). Returns the record as closed, `None` when it was not open.
pub fn resolve_by_user(
    c: &mut Connection,
    id: &str,
    choice: UserChoice,
    now: i64,
) -> Result<Option<UncertaintyItem>, StoreError> {
    let tx = c.transaction()?;
    let Some(rec) = UncertaintiesRepo(&tx).get(id)? else { return Ok(None) };
    if !rec.item.is_open() {
        return Ok(None);
    }
    let (a, b) = (rec.item.memory_a.clone(), rec.item.memory_b.clone());
    record_exchange(&tx, &a, b.as_deref(), choice, now)?;
    match choice {
        UserChoice::NewIsRight => {
            set(&tx, &a, "superseded", now)?;
            if let Some(b) = &b {
                set(&tx, b, "reliable", now)?;
                link_traits(&tx, &a, b)?;
            }
            nudge_tolerance(&tx, tolerance::ON_CORRECTION, now)?;
        }
        UserChoice::BothTrue => {
            set(&tx, &a, "reliable", now)?;
            if let Some(b) = &b {
                set(&tx, b, "reliable", now)?;
            }
        }
        UserChoice::ForgetBoth => {}
    }
    UncertaintiesRepo(&tx).resolve(id, "resolved", "user_clarified", choice.label(), now)?;
    tx.commit()?;
    if choice == UserChoice::ForgetBoth {
        for m in [Some(a), b].into_iter().flatten() {
            if let Ok(mid) = MemoryId::from_str(&m) {
                // Already gone is fine: the user wants it gone.
                let _ = crate::store::forget(c, mid);
            }
        }
    }
    Ok(UncertaintiesRepo(c).get(id)?.map(|r| r.item))
}

/// A trait was reinforced to `confidence`: Chalie's tolerance rises a little, and an open
/// record about it is settled by evidence when the reinforced side is now more than twice as
/// confident as its rival (reinforced → reliable, rival → superseded).
pub fn after_reinforcement(c: &Connection, trait_id: i64, confidence: f64, now: i64) -> Result<(), StoreError> {
    nudge_tolerance(c, tolerance::ON_REINFORCEMENT, now)?;
    let me = format!("trait:{trait_id}");
    let records = UncertaintiesRepo(c);
    for r in records.open_about("trait", &trait_id.to_string())? {
        let other = if r.item.memory_a == me { r.item.memory_b.clone() } else { Some(r.item.memory_a.clone()) };
        let Some(other) = other else { continue };
        let Some(other_id) = other.strip_prefix("trait:").and_then(|x| x.parse::<i64>().ok()) else { continue };
        let rival = TraitsRepo(c).confidence_of(other_id)?;
        if rival.is_some_and(|conf| confidence > 2.0 * conf) {
            TraitsRepo(c).set_reliability(trait_id, "reliable", true, now)?;
            TraitsRepo(c).set_reliability(other_id, "superseded", true, now)?;
            TraitsRepo(c).link_successor(other_id, trait_id)?;
            records.resolve(&r.item.id, "resolved", "evidence_resolved", "reinforced past twice the rival", now)?;
        }
    }
    Ok(())
}
