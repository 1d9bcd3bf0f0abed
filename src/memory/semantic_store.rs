//! Match-or-create of concepts and upsert of relationships (docs/cognition.md §9.3): the writes of
//! semantic consolidation, plain synchronous code over a `&Connection` so they run inside
//! the consolidation transaction and tests call them directly.

use super::concepts::{Concept, EpisodeText, Extraction, Relationship};
use crate::store::{
    ConceptFields, ConceptsRepo, EpisodesRepo, JobsRepo, NewEdge, RelationshipsRepo, StoreError, VecTable, VectorRepo,
};
use rusqlite::Connection;
use std::collections::HashMap;

/// An existing concept matches a new one above this similarity (`1/(1 + L2)`).
pub const MATCH_SIM: f64 = 0.85;
/// Strength never grows past this (strength is on 0–10).
pub const MAX_STRENGTH: f64 = 10.0;
/// `source_episodes` keeps at most this many (the newest), so a much-repeated concept's row
/// stays small.
pub const MAX_SOURCE_EPISODES: usize = 100;

/// sqlite-vec's cosine distance `d = 1 − cos` as the Euclidean distance of unit vectors:
/// `L2² = 2 − 2·cos = 2d`.
pub fn l2_from_cosine_distance(d: f64) -> f64 {
    (2.0 * d).max(0.0).sqrt()
}

/// The match similarity of docs/cognition.md §9.3.
pub fn sim_from_l2(l2: f64) -> f64 {
    1.0 / (1.0 + l2)
}

/// A concept after one more mention.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Strengthened {
    pub strength: f64,
    pub consolidation_count: i64,
    pub decay_resistance: f64,
}

/// `strength = min(10, 1.1·strength)`, `count + 1`, `decay_resistance = min(1, 0.5 +
/// 0.05·ln(count + 1))` with the new count.
pub fn strengthen(strength: f64, consolidation_count: i64) -> Strengthened {
    let count = consolidation_count + 1;
    Strengthened {
        strength: (1.1 * strength).min(MAX_STRENGTH),
        consolidation_count: count,
        decay_resistance: (0.5 + 0.05 * ((count + 1) as f64).ln()).min(1.0),
    }
}

/// The text a concept is embedded as.
pub fn embed_text(c: &Concept) -> String {
    format!("{} ({}): {}", c.name, c.concept_type, c.definition)
}

/// The signed graph weight: `contradicts` inhibits.
pub fn signed_weight(rel_type: &str, strength: f64) -> f64 {
    let s = strength.clamp(0.0, 1.0);
    if rel_type == "contradicts" { -s } else { s }
}

/// Relations that read the same both ways are stored once and walked both ways.
pub fn is_symmetric(rel_type: &str) -> bool {
    matches!(rel_type, "related-to" | "alternative-to" | "contradicts")
}

/// What happened to one extracted concept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Upserted {
    Created(i64),
    Strengthened(i64),
}

impl Upserted {
    pub fn id(self) -> i64 {
        match self {
            Upserted::Created(id) | Upserted::Strengthened(id) => id,
        }
    }
}

/// The live concept `c` matches: same name (any case) and type, else the nearest vector when
/// its similarity is above [`MATCH_SIM`].
fn find_match(conn: &Connection, c: &Concept, embedding: Option<&[f32]>) -> Result<Option<i64>, StoreError> {
    let concepts = ConceptsRepo(conn);
    let by_name = concepts.live_by_name(&c.name, &c.concept_type)?;
    if by_name.is_some() {
        return Ok(by_name);
    }
    let Some(v) = embedding else { return Ok(None) };
    let Some((id, distance)) = VectorRepo(conn).knn(VecTable::Concepts, v, 1)?.into_iter().next() else {
        return Ok(None);
    };
    if sim_from_l2(l2_from_cosine_distance(f64::from(distance))) <= MATCH_SIM {
        return Ok(None);
    }
    Ok(concepts.is_live(id)?.then_some(id))
}

/// The consolidation contradiction check (docs/cognition.md §10.4): a matched concept whose stored
/// definition the new one contradicts (by the deterministic rules) is marked contradicted and
/// a record names it and the episode the new definition came from. Returns whether it did.
pub fn check_definition(
    conn: &Connection,
    id: i64,
    c: &Concept,
    episode_id: i64,
    now: i64,
) -> Result<bool, StoreError> {
    use crate::memory::uncertainty::{rules, severity};
    let (_, old) = ConceptsRepo(conn).name_and_definition(id)?;
    if old.trim().eq_ignore_ascii_case(c.definition.trim()) || c.definition.trim().is_empty() {
        return Ok(false);
    }
    let Some(v) = rules::compare_texts(&old, &c.definition, rules::NEGATION_OVERLAP) else { return Ok(false) };
    if !v.classification.is_hit() {
        return Ok(false);
    }
    let records = crate::store::UncertaintiesRepo(conn);
    if !records.open_about("concept", &id.to_string())?.is_empty() {
        return Ok(false);
    }
    ConceptsRepo(conn).set_reliability(id, "contradicted", false)?;
    let rec = crate::store::NewUncertainty {
        a: ("concept", id.to_string()),
        b: Some(("episode", episode_id.to_string())),
        kind: v.record_kind(),
        severity: severity("concept", Some("episode")),
        context: "consolidation",
        reasoning: Some(&v.reasoning),
        temporal_signal: v.temporal_signal,
        surface_context: Some(&c.name),
        resolved: None,
    };
    records.insert(&rec, now)?;
    Ok(true)
}

/// Match-or-create `c`, mentioned by `episode_id`, at time `now`.
pub fn upsert_concept(
    conn: &Connection,
    c: &Concept,
    embedding: Option<&[f32]>,
    episode_id: i64,
    now: i64,
) -> Result<Upserted, StoreError> {
    let concepts = ConceptsRepo(conn);
    if let Some(id) = find_match(conn, c, embedding)? {
        check_definition(conn, id, c, episode_id, now)?;
        let old = concepts.strength(id)?;
        let mut episodes: Vec<i64> = serde_json::from_str(&old.source_episodes).unwrap_or_default();
        if !episodes.contains(&episode_id) {
            episodes.push(episode_id);
        }
        let excess = episodes.len().saturating_sub(MAX_SOURCE_EPISODES);
        episodes.drain(..excess);
        let s = strengthen(old.strength, old.consolidation_count);
        let sources = serde_json::to_string(&episodes)?;
        concepts.reinforce(id, s.strength, s.consolidation_count, s.decay_resistance, &sources, now)?;
        if let Some(v) = embedding {
            let vectors = VectorRepo(conn);
            if !vectors.contains(VecTable::Concepts, id)? {
                vectors.upsert(VecTable::Concepts, id, v)?;
            }
        }
        return Ok(Upserted::Strengthened(id));
    }
    // A forgotten concept with this name and type comes back as new (the row is unique on
    // name and type, so it is revived rather than inserted).
    let forgotten = concepts.any_by_name(&c.name, &c.concept_type)?;
    let sources = serde_json::to_string(&[episode_id])?;
    let fields = ConceptFields {
        name: &c.name,
        concept_type: &c.concept_type,
        definition: &c.definition,
        abstraction_level: i64::from(c.abstraction_level),
        domain: c.domain.as_deref(),
    };
    let id = match forgotten {
        Some(id) => {
            concepts.revive(id, &fields, &sources, now)?;
            id
        }
        None => concepts.insert(&fields, &sources, now)?,
    };
    if let Some(v) = embedding {
        VectorRepo(conn).upsert(VecTable::Concepts, id, v)?;
    }
    Ok(Upserted::Created(id))
}

/// Upsert the edge `source → target` of `r`'s type: a repeat keeps the larger strength and
/// gains confidence. A symmetric edge is stored lower id first, so "A related-to B" and
/// "B related-to A" are one row. Returns false for a self-loop (nothing written).
pub fn upsert_relationship(
    conn: &Connection,
    source: i64,
    target: i64,
    r: &Relationship,
    now: i64,
) -> Result<bool, StoreError> {
    if source == target {
        return Ok(false);
    }
    let (source, target) =
        if is_symmetric(&r.rel_type) && source > target { (target, source) } else { (source, target) };
    let strength = r.strength.clamp(0.5, 1.0);
    let edge = NewEdge {
        source,
        target,
        rel_type: &r.rel_type,
        weight: signed_weight(&r.rel_type, strength),
        bidirectional: is_symmetric(&r.rel_type),
    };
    RelationshipsRepo(conn).upsert(&edge, now)?;
    Ok(true)
}

/// Up to `limit` pending episodes, oldest first.
pub fn pending_batch(c: &Connection, limit: usize) -> Result<Vec<EpisodeText>, StoreError> {
    let rows = EpisodesRepo(c).pending_batch(limit)?;
    Ok(rows.into_iter().map(|e| EpisodeText { id: e.id, gist: e.gist, topic: e.topic }).collect())
}

/// What one job wrote.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counts {
    pub episodes: usize,
    pub created: usize,
    pub strengthened: usize,
    pub relationships: usize,
}

/// Write a batch's extractions, mark its episodes `done` and complete `job_id`, in one
/// transaction. `vectors` maps [`embed_text`] to its embedding (absent: match by name only).
pub fn store_consolidation(
    c: &mut Connection,
    job_id: i64,
    batch: &[(i64, Extraction)],
    vectors: &HashMap<String, Vec<f32>>,
    now: i64,
) -> Result<Counts, StoreError> {
    let tx = c.transaction()?;
    let mut counts = Counts::default();
    for (episode_id, ex) in batch {
        let mut ids: HashMap<String, i64> = HashMap::new();
        for concept in &ex.concepts {
            let v = vectors.get(&embed_text(concept)).map(Vec::as_slice);
            let up = upsert_concept(&tx, concept, v, *episode_id, now)?;
            match up {
                Upserted::Created(_) => counts.created += 1,
                Upserted::Strengthened(_) => counts.strengthened += 1,
            }
            ids.insert(concept.name.to_lowercase(), up.id());
        }
        for r in &ex.relationships {
            let (Some(&s), Some(&t)) = (ids.get(&r.source.to_lowercase()), ids.get(&r.target.to_lowercase())) else {
                continue;
            };
            counts.relationships += usize::from(upsert_relationship(&tx, s, t, r, now)?);
        }
        EpisodesRepo(&tx).set_consolidation(*episode_id, "done")?;
        counts.episodes += 1;
    }
    JobsRepo(&tx).complete(job_id)?;
    tx.commit()?;
    Ok(counts)
}
