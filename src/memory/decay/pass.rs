//! The reads and writes of one decay pass; the rules and formulas are in the parent module.

use super::{
    ACCESS_GRACE_S, ACTIVATION_FLOOR, DecayReport, Gate, STRENGTH_FLOOR, decay_activation, decay_confidence,
    decay_strength, due_for_deletion, episode_decay_hours, gate, kept_at_floor, periods, reliability_multiplier,
    richness, trait_params,
};
use crate::memory::warmth::warmth;
use crate::store::{
    ConceptsRepo, DecayingConcept, DecayingEpisode, DecayingTrait, EpisodesRepo, GistsRepo, KvStateRepo, MemoryId,
    MemoryLayer, RelationshipsRepo, ShortLived, StoreError, TraitsRepo, VecTable, VectorRepo, WorkingMemoryRepo,
    WorldStateRepo, delete_expired, expired_rows, get_row,
};
use crate::store::{close_uncertainties, record_deletion};
use rusqlite::Connection;
use serde_json::Value;

const KV_NAMESPACE: &str = "decay";
const KV_LAST_PASS: &str = "last_pass";
const EPS: f64 = 1e-9;

/// When the previous pass ran, if one has.
pub(super) fn last_pass(c: &Connection) -> Result<Option<i64>, StoreError> {
    Ok(KvStateRepo(c).get_text(KV_NAMESPACE, KV_LAST_PASS)?.and_then(|v| v.parse().ok()))
}

pub(super) fn run(c: &mut Connection, now: i64) -> Result<DecayReport, StoreError> {
    let tx = c.transaction()?;
    let last_pass = last_pass(&tx)?;
    let episodes = EpisodesRepo(&tx).live_count()?;
    let concepts = ConceptsRepo(&tx).live_count()?;
    let traits = TraitsRepo(&tx).count()?;
    let richness = richness(episodes, concepts, traits, current_warmth(&tx, now)?);
    let g = gate(richness);
    let mut report = DecayReport { richness, gate: Some(g), ..DecayReport::default() };
    report.expired = expire(&tx, now)?;
    let p = periods(last_pass, now);
    if g != Gate::Skip {
        decay_episodes(&tx, last_pass, now, &mut report)?;
        decay_traits(&tx, p, now, &mut report)?;
    }
    if g == Gate::All {
        decay_concepts(&tx, p, now, &mut report)?;
    }
    // The graph's own upkeep (learned edges, probationary nodes) is not gated on richness.
    let (graph, removed) = crate::memory::graph::turn::decay(&tx, p, now)?;
    for (layer, id, snap) in &removed {
        record(&tx, layer, &id.to_string(), "a learned edge faded", snap, now)?;
    }
    report.graph_edges_pruned = graph.edges_pruned;
    report.grown_nodes_expired = graph.nodes_expired;
    KvStateRepo(&tx).set_text(KV_NAMESPACE, KV_LAST_PASS, &now.to_string(), now)?;
    tx.commit()?;
    Ok(report)
}

/// Context warmth (docs/cognition.md §4.1) of the most recently active thread, for the richness gate.
pub fn current_warmth(c: &Connection, now: i64) -> Result<f64, StoreError> {
    let wm = WorkingMemoryRepo(c).latest_thread_len(now)?;
    let gists = GistsRepo(c).live_count(now)?;
    let world = WorldStateRepo(c).any_live(now)?;
    Ok(warmth(wm.max(0) as usize, gists.max(0) as usize, world))
}

/// A JSON snapshot of a trait or concept row, as `memory_deletions` keeps it.
fn snapshot(c: &Connection, layer: MemoryLayer, row: i64) -> Result<Option<Value>, StoreError> {
    Ok(get_row(c, MemoryId { layer, row })?.map(Value::Object))
}

fn key_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn record(c: &Connection, layer: &str, row_id: &str, reason: &str, snap: &Value, now: i64) -> Result<(), StoreError> {
    record_deletion(c, layer, row_id, reason, snap, now).map(drop)
}

fn resolve_uncertainties(c: &Connection, memory_type: &str, id: i64, now: i64) -> Result<usize, StoreError> {
    close_uncertainties(c, memory_type, &id.to_string(), "decayed", "the memory decayed away", now)
}

fn expire(c: &Connection, now: i64) -> Result<usize, StoreError> {
    let mut n = 0;
    for table in ShortLived::ALL {
        let rows = expired_rows(c, table, now)?;
        for row in &rows {
            record(c, table.layer(), &key_text(&row[table.key_column()]), "expired", row, now)?;
        }
        delete_expired(c, table, now)?;
        n += rows.len();
    }
    Ok(n)
}

fn decay_episodes(
    c: &Connection,
    last_pass: Option<i64>,
    now: i64,
    report: &mut DecayReport,
) -> Result<(), StoreError> {
    let repo = EpisodesRepo(c);
    for DecayingEpisode { id, activation, accessed_at: accessed, reliability } in
        repo.for_decay(ACTIVATION_FLOOR, now - ACCESS_GRACE_S)?
    {
        let Some(hours) = episode_decay_hours(accessed, last_pass, now) else { continue };
        let next = decay_activation(activation, hours, reliability_multiplier(&reliability));
        if next < activation {
            repo.set_activation(id, next)?;
            report.episodes_decayed += 1;
        }
    }
    Ok(())
}

/// Stamp, keep or clear `at_floor_since`.
fn floor_stamp(at_floor: bool, since: Option<i64>, now: i64) -> Option<i64> {
    if at_floor { Some(since.unwrap_or(now)) } else { None }
}

fn decay_concepts(c: &Connection, periods: f64, now: i64, report: &mut DecayReport) -> Result<(), StoreError> {
    let repo = ConceptsRepo(c);
    for DecayingConcept {
        id,
        strength,
        decay_resistance: resistance,
        reliability,
        accessed_at: accessed,
        at_floor_since: since,
    } in repo.for_decay()?
    {
        let mut next = strength;
        if strength > STRENGTH_FLOOR + EPS && now - accessed > ACCESS_GRACE_S {
            next = decay_strength(strength, resistance, reliability_multiplier(&reliability), periods);
            report.concepts_decayed += 1;
        }
        let stamp = floor_stamp(next <= STRENGTH_FLOOR + EPS, since, now);
        if reliability != "reliable" && due_for_deletion(stamp, now) {
            forget_concept(c, id, now, report)?;
        } else if next != strength || stamp != since {
            repo.set_decayed(id, next, stamp)?;
        }
    }
    Ok(())
}

/// Soft-delete a concept (its row keeps `deleted_at`), drop its vector and its edges.
fn forget_concept(c: &Connection, id: i64, now: i64, report: &mut DecayReport) -> Result<(), StoreError> {
    let reason = "decayed: unreliable and at the strength floor for 7 days";
    if let Some(snap) = snapshot(c, MemoryLayer::Concepts, id)? {
        record(c, "concept", &id.to_string(), reason, &snap, now)?;
    }
    let edges = RelationshipsRepo(c);
    for edge in edges.of_concept_snapshots(id)? {
        record(c, "relationship", &key_text(&edge["id"]), "its concept was forgotten", &edge, now)?;
        report.relationships_deleted += 1;
    }
    edges.delete_of_concept(id)?;
    ConceptsRepo(c).soft_delete(id, now)?;
    VectorRepo(c).delete(VecTable::Concepts, id)?;
    report.uncertainties_decayed += resolve_uncertainties(c, "concept", id, now)?;
    report.concepts_deleted += 1;
    Ok(())
}

fn decay_traits(c: &Connection, periods: f64, now: i64, report: &mut DecayReport) -> Result<(), StoreError> {
    let repo = TraitsRepo(c);
    for t in repo.for_decay()? {
        let DecayingTrait {
            id,
            confidence,
            reinforcement_count: count,
            category,
            source,
            reliability,
            at_floor_since: since,
        } = t;
        let mult = reliability_multiplier(&reliability);
        let next = decay_confidence(confidence, count, &category, source == "inferred", mult, periods);
        let floor = trait_params(&category).1;
        let stamp = floor_stamp(next <= floor + EPS, since, now);
        if !kept_at_floor(&source, &reliability) && due_for_deletion(stamp, now) {
            if let Some(snap) = snapshot(c, MemoryLayer::Traits, id)? {
                record(c, "trait", &id.to_string(), "decayed: at its confidence floor for 7 days", &snap, now)?;
            }
            repo.delete(id)?;
            VectorRepo(c).delete(VecTable::Traits, id)?;
            report.uncertainties_decayed += resolve_uncertainties(c, "trait", id, now)?;
            report.traits_deleted += 1;
            continue;
        }
        if next < confidence {
            report.traits_decayed += 1;
        }
        if next != confidence || stamp != since {
            repo.set_decayed(id, next, stamp)?;
        }
    }
    Ok(())
}
