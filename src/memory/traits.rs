//! User traits (docs/cognition.md §9.5): the store rules as a pure function ([`decide`]) and the
//! write ([`store_trait`]) that applies them inside the chunker's transaction.
//!
//! A conflict opens an uncertainty record (docs/cognition.md §10) naming both rows: a value more than
//! twice as confident supersedes the old one (kept as past; the record is resolved at once as
//! `confidence_dominance`); a weaker one is stored beside it, both contradicted, the record
//! open for the reply to raise. A reinforcement can settle an open record by evidence.

use crate::store::{NewUncertainty, StoreError, TraitWrite, TraitsRepo, UncertaintiesRepo, VecTable, VectorRepo};
use rusqlite::Connection;
use serde::Serialize;

/// docs/cognition.md §9.5 extraction categories plus the adaptive layer's two.
pub const CATEGORIES: [&str; 8] = [
    "core",
    "preference",
    "physical",
    "relationship",
    "general",
    "communication_style",
    "micro_preference",
    "behavioral_pattern",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The user said it ("my sister is Ana").
    Explicit,
    /// Read between the lines ("my wife" → married).
    Inferred,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Explicit => "explicit",
            Source::Inferred => "inferred",
        }
    }
}

/// One trait as an extractor saw it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraitObservation {
    pub key: String,
    pub value: String,
    /// One of [`CATEGORIES`].
    pub category: String,
    pub source: Source,
    pub is_literal: bool,
    /// The speaker confidence, 0–1, before the docs/cognition.md §9.5 adjustments.
    pub confidence: f64,
}

impl TraitObservation {
    /// What the trait vector embeds, and what recall shows: `key: value`.
    pub fn embedding_text(&self) -> String {
        format!("{}: {}", self.key, self.value)
    }
}

/// The stored row, as the rules need it.
pub use crate::store::StoredTrait;

/// What [`decide`] says to do.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum TraitDecision {
    /// Speaker confidence below 0.3.
    Rejected,
    /// No trait under this key yet.
    Insert { confidence: f64 },
    /// The same value again.
    Reinforce { confidence: f64, count: u32 },
    /// The same value, already counted for this exchange (the identity hook of Phase A stores
    /// "my name is …" before the chunker runs; one statement counts once).
    AlreadyCounted,
    /// A different value more than twice as confident: it replaces the old one.
    Overwrite { confidence: f64 },
    /// A different value, not confident enough: the old one stays, the conflict is stamped.
    KeepOld,
}

impl TraitDecision {
    /// Whether the row's value or existence changed (its vector must be (re)written).
    pub fn changes_value(&self) -> bool {
        matches!(self, TraitDecision::Insert { .. } | TraitDecision::Overwrite { .. })
    }
}

/// The confidence stored for an observation: `None` below 0.3; halved below 0.5; ×0.7 when
/// inferred.
pub fn adjusted_confidence(speaker: f64, source: Source) -> Option<f64> {
    let c = speaker.clamp(0.0, 1.0);
    if c < 0.3 {
        return None;
    }
    let c = if c < 0.5 { c * 0.5 } else { c };
    Some(if source == Source::Inferred { c * 0.7 } else { c })
}

fn same_value(a: &str, b: &str) -> bool {
    a.trim().eq_ignore_ascii_case(b.trim())
}

/// The docs/cognition.md §9.5 store rules. `observed_at` is when the user said it.
pub fn decide(existing: Option<&StoredTrait>, obs: &TraitObservation, observed_at: i64) -> TraitDecision {
    let Some(new) = adjusted_confidence(obs.confidence, obs.source) else {
        return TraitDecision::Rejected;
    };
    let Some(old) = existing else {
        return TraitDecision::Insert { confidence: new };
    };
    if same_value(&old.value, &obs.value) {
        if old.last_reinforced_at.is_some_and(|t| t >= observed_at) {
            return TraitDecision::AlreadyCounted;
        }
        let count = old.reinforcement_count.max(1).saturating_add(1);
        let confidence = (old.confidence.max(new) + 0.05 / f64::from(count + 1).log2()).min(1.0);
        return TraitDecision::Reinforce { confidence, count };
    }
    if new > 2.0 * old.confidence { TraitDecision::Overwrite { confidence: new } } else { TraitDecision::KeepOld }
}

/// The trait stored under `key`, if any: a non-superseded row holding `value` first (one of
/// two contradicted rivals), else the current one.
pub fn find(c: &Connection, key: &str, value: &str) -> Result<Option<StoredTrait>, StoreError> {
    let rows = TraitsRepo(c).rows_for_key(key)?;
    if let Some((t, _)) = rows.iter().find(|(t, _)| t.reliability != "superseded" && same_value(&t.value, value)) {
        return Ok(Some(t.clone()));
    }
    TraitsRepo(c).find(key)
}

/// Where one exchange's thread and topic are, for the conflict log.
pub use crate::store::LogOrigin as Origin;

/// Apply [`decide`] to the database (in the caller's transaction): insert, reinforce,
/// overwrite or stamp the conflict; write `embedding` into `trait_vec` when the value is new or
/// changed (or the row had none). Returns the row id (none when rejected) and the decision.
pub fn store_trait(
    c: &Connection,
    obs: &TraitObservation,
    observed_at: i64,
    now: i64,
    embedding: Option<&[f32]>,
    origin: Origin<'_>,
) -> Result<(Option<i64>, TraitDecision), StoreError> {
    let existing = find(c, &obs.key, &obs.value)?;
    let decision = decide(existing.as_ref(), obs, observed_at);
    let repo = TraitsRepo(c);
    let write = |confidence: f64| TraitWrite {
        key: &obs.key,
        value: &obs.value,
        category: &obs.category,
        confidence,
        source: obs.source.as_str(),
        is_literal: obs.is_literal,
        observed_at,
    };
    let id = match (&decision, &existing) {
        (TraitDecision::Rejected, _) => return Ok((None, decision)),
        (TraitDecision::Insert { confidence }, _) => repo.insert(&write(*confidence), now)?,
        (TraitDecision::Reinforce { confidence, count }, Some(old)) => {
            repo.reinforce(old.id, *confidence, *count, obs.source.as_str(), observed_at, now)?;
            crate::memory::uncertainty::resolve::after_reinforcement(c, old.id, *confidence, now)?;
            old.id
        }
        (TraitDecision::Overwrite { confidence }, Some(old)) => {
            let new = repo.supersede_with(old.id, &write(*confidence), now)?;
            open_record(
                c,
                old.id,
                new,
                Some(("confidence_dominance", "the new value was more than twice as confident")),
                now,
                origin,
            )?;
            new
        }
        (TraitDecision::KeepOld, Some(old)) => {
            let rival =
                repo.insert_rival(old.id, &write(adjusted_confidence(obs.confidence, obs.source).unwrap_or(0.0)), now)?;
            open_record(c, old.id, rival, None, now, origin)?;
            rival
        }
        (TraitDecision::AlreadyCounted, Some(old)) => old.id,
        // decide() only reinforces, overwrites or keeps what exists.
        (_, None) => return Ok((None, decision)),
    };
    if let Some(v) = embedding {
        let vectors = VectorRepo(c);
        if decision.changes_value() || !vectors.contains(VecTable::Traits, id)? {
            vectors.upsert(VecTable::Traits, id, v)?;
        }
    }
    Ok((Some(id), decision))
}

/// The record of a trait conflict: `old` against `new`, both traits (critical), resolved at
/// once when `resolved` says how.
fn open_record(
    c: &Connection,
    old: i64,
    new: i64,
    resolved: Option<(&str, &str)>,
    now: i64,
    origin: Origin<'_>,
) -> Result<String, StoreError> {
    let rec = NewUncertainty {
        a: ("trait", old.to_string()),
        b: Some(("trait", new.to_string())),
        kind: "contradiction",
        severity: crate::memory::uncertainty::severity("trait", Some("trait")),
        context: "consolidation",
        reasoning: Some("the same trait was given two different values"),
        temporal_signal: false,
        surface_context: origin.topic,
        resolved,
    };
    UncertaintiesRepo(c).insert(&rec, now)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::fixtures::Fixture;

    fn obs(value: &str, confidence: f64, source: Source) -> TraitObservation {
        TraitObservation {
            key: "city".into(),
            value: value.into(),
            category: "core".into(),
            source,
            is_literal: true,
            confidence,
        }
    }

    fn stored(value: &str, confidence: f64, count: u32) -> StoredTrait {
        StoredTrait {
            id: 7,
            value: value.into(),
            confidence,
            reinforcement_count: count,
            last_reinforced_at: Some(100),
            reliability: "reliable".into(),
        }
    }

    #[test]
    fn speaker_confidence_gates_and_scales() {
        assert_eq!(adjusted_confidence(0.29, Source::Explicit), None);
        assert_eq!(decide(None, &obs("Porto", 0.29, Source::Explicit), 200), TraitDecision::Rejected);
        assert_eq!(adjusted_confidence(0.4, Source::Explicit), Some(0.2), "below 0.5: halved");
        assert_eq!(adjusted_confidence(0.8, Source::Explicit), Some(0.8));
        assert!((adjusted_confidence(0.8, Source::Inferred).unwrap() - 0.56).abs() < 1e-12, "inferred ×0.7");
        assert!((adjusted_confidence(0.4, Source::Inferred).unwrap() - 0.14).abs() < 1e-12, "both");
        assert_eq!(decide(None, &obs("Porto", 0.9, Source::Explicit), 200), TraitDecision::Insert { confidence: 0.9 });
    }

    #[test]
    fn same_value_reinforces_with_a_shrinking_bonus() {
        let d = decide(Some(&stored("porto", 0.6, 1)), &obs("Porto", 0.5, Source::Explicit), 200);
        let expected = 0.6 + 0.05 / 3f64.log2();
        assert!(
            matches!(d, TraitDecision::Reinforce { count: 2, confidence } if (confidence - expected).abs() < 1e-12)
        );
        let d = decide(Some(&stored("Porto", 0.7, 3)), &obs("Porto", 0.9, Source::Explicit), 200);
        let expected = 0.9 + 0.05 / 5f64.log2();
        assert!(
            matches!(d, TraitDecision::Reinforce { count: 4, confidence } if (confidence - expected).abs() < 1e-12)
        );
        let d = decide(Some(&stored("Porto", 0.99, 1)), &obs("Porto", 0.99, Source::Explicit), 200);
        assert_eq!(d, TraitDecision::Reinforce { confidence: 1.0, count: 2 }, "capped at 1");
        let d = decide(Some(&stored("Porto", 0.99, 1)), &obs("Porto", 0.99, Source::Explicit), 100);
        assert_eq!(d, TraitDecision::AlreadyCounted, "stated in the exchange that already reinforced it");
    }

    #[test]
    fn a_different_value_overwrites_only_above_twice_the_old_confidence() {
        let d = decide(Some(&stored("Porto", 0.4, 3)), &obs("Lisbon", 0.9, Source::Explicit), 200);
        assert_eq!(d, TraitDecision::Overwrite { confidence: 0.9 });
        let d = decide(Some(&stored("Porto", 0.45, 3)), &obs("Lisbon", 0.9, Source::Explicit), 200);
        assert_eq!(d, TraitDecision::KeepOld, "0.9 is not more than 2 × 0.45");
        let d = decide(Some(&stored("Porto", 0.3, 1)), &obs("Lisbon", 0.8, Source::Inferred), 200);
        assert_eq!(d, TraitDecision::KeepOld, "inferred 0.8 → 0.56 ≤ 0.6");
    }

    #[test]
    fn store_applies_each_branch_and_records_conflicts() {
        let c = crate::store::open_in_memory().unwrap();
        let v = vec![1.0 / (crate::store::EMBEDDING_DIM as f32).sqrt(); crate::store::EMBEDDING_DIM];
        let o = Origin { thread_id: Some("t"), exchange_id: Some("x"), topic: Some("home") };
        let (id, d) = store_trait(&c, &obs("Porto", 0.4, Source::Explicit), 100, 100, Some(&v), o).unwrap();
        assert_eq!(d, TraitDecision::Insert { confidence: 0.2 });
        let id = id.unwrap();
        let vectors = |c: &Connection| -> i64 { VectorRepo(c).count(VecTable::Traits).unwrap() };
        assert_eq!(vectors(&c), 1);
        let (_, d) = store_trait(&c, &obs("Porto", 0.2, Source::Explicit), 110, 110, None, o).unwrap();
        assert_eq!(d, TraitDecision::Rejected);
        let (_, d) = store_trait(&c, &obs("Porto", 0.35, Source::Inferred), 120, 120, None, o).unwrap();
        assert!(matches!(d, TraitDecision::Reinforce { count: 2, .. }));
        let (_, d) = store_trait(&c, &obs("Lisbon", 0.45, Source::Explicit), 130, 130, None, o).unwrap();
        assert_eq!(d, TraitDecision::KeepOld);
        let row = |c: &Connection| -> (String, f64, i64, Option<i64>, String) {
            let f = Fixture(c);
            (
                f.value("user_traits", "trait_value", "id = ?1", [id]),
                f.value("user_traits", "confidence", "id = ?1", [id]),
                f.value("user_traits", "reinforcement_count", "id = ?1", [id]),
                f.value("user_traits", "last_conflict_at", "id = ?1", [id]),
                f.value("user_traits", "source", "id = ?1", [id]),
            )
        };
        let (value, conf, count, conflict, _) = row(&c);
        assert_eq!((value.as_str(), count, conflict), ("Porto", 2, Some(130)));
        assert!((conf - (0.2 + 0.05 / 3f64.log2())).abs() < 1e-9);
        let f = Fixture(&c);
        let reliability = |id: i64| -> String { Fixture(&c).value("user_traits", "reliability", "id = ?1", [id]) };
        assert_eq!(reliability(id), "contradicted", "a weaker rival makes the old value doubtful");
        assert_eq!(f.count("user_traits", "trait_value = 'Lisbon' AND reliability = 'contradicted'", []), 1);
        assert_eq!(f.count("uncertainties", "state = 'open' AND severity = 'critical'", []), 1);
        assert_eq!(f.count("interaction_log", "event_type = 'trait_conflict'", []), 0, "records, not log rows");

        // On another key: a value more than twice as confident supersedes; the old is kept.
        let job = |value: &str, conf: f64| TraitObservation { key: "job".into(), ..obs(value, conf, Source::Explicit) };
        let (old, _) = store_trait(&c, &job("clerk", 0.4), 150, 150, Some(&v), o).unwrap();
        let (new, d) = store_trait(&c, &job("pilot", 0.95), 160, 160, Some(&v), o).unwrap();
        assert_eq!(d, TraitDecision::Overwrite { confidence: 0.95 });
        let (old, new) = (old.unwrap(), new.unwrap());
        assert_ne!(old, new, "a new row, the old one kept as past");
        assert_eq!((reliability(old), reliability(new)), ("superseded".to_string(), "reliable".to_string()));
        assert_eq!(
            f.count("uncertainties", "state = 'resolved' AND resolution_strategy = 'confidence_dominance'", []),
            1
        );
        assert_eq!(find(&c, "job", "anything").unwrap().map(|t| t.value), Some("pilot".to_string()));
    }
}
