//! The reads and writes of one decay pass; the rules and formulas are in the parent module.

use super::{
    ACCESS_GRACE_S, ACTIVATION_FLOOR, DecayReport, Gate, STRENGTH_FLOOR, decay_activation, decay_confidence,
    decay_strength, due_for_deletion, episode_decay_hours, gate, kept_at_floor, periods, reliability_multiplier,
    richness, trait_params,
};
use crate::memory::warmth::warmth;
use crate::store::{StoreError, VecTable, VectorRepo};
use crate::store::{close_uncertainties, record_deletion, row_object};
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

const KV_NAMESPACE: &str = "decay";
const KV_LAST_PASS: &str = "last_pass";
const EPS: f64 = 1e-9;
/// Short-lived tables, the layer name `memory_deletions` records (the memory browser's kinds,
/// so a user's "forget" and decay name the same row alike), and the column naming a row.
const EXPIRING: [(&str, &str, &str); 4] = [
    ("gists", "gist", "id"),
    ("facts", "fact", "id"),
    ("working_memory", "working_memory", "id"),
    ("fok", "fok", "topic"),
];

/// When the previous pass ran, if one has.
pub(super) fn last_pass(c: &Connection) -> Result<Option<i64>, StoreError> {
    Ok(c.query_row(
        "SELECT value FROM kv_state WHERE namespace = ?1 AND key = ?2",
        params![KV_NAMESPACE, KV_LAST_PASS],
        |r| r.get::<_, String>(0),
    )
    .optional()?
    .and_then(|v| v.parse().ok()))
}

pub(super) fn run(c: &mut Connection, now: i64) -> Result<DecayReport, StoreError> {
    let tx = c.transaction()?;
    let last_pass = last_pass(&tx)?;
    let count = |sql: &str| -> Result<i64, StoreError> { Ok(tx.query_row(sql, [], |r| r.get(0))?) };
    let episodes = count("SELECT COUNT(*) FROM episodes WHERE deleted_at IS NULL")?;
    let concepts = count("SELECT COUNT(*) FROM semantic_concepts WHERE deleted_at IS NULL")?;
    let traits = count("SELECT COUNT(*) FROM user_traits")?;
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
    tx.execute(
        "INSERT INTO kv_state (namespace, key, value, updated_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        params![KV_NAMESPACE, KV_LAST_PASS, now.to_string(), now],
    )?;
    tx.commit()?;
    Ok(report)
}

/// Context warmth (§2) of the most recently active thread, for the richness gate.
pub fn current_warmth(c: &Connection, now: i64) -> Result<f64, StoreError> {
    let thread: Option<String> = c
        .query_row(
            "SELECT thread_id FROM working_memory WHERE expires_at > ?1 ORDER BY id DESC LIMIT 1",
            params![now],
            |r| r.get(0),
        )
        .optional()?;
    let wm: i64 = match &thread {
        Some(t) => c.query_row(
            "SELECT COUNT(*) FROM working_memory WHERE thread_id = ?1 AND expires_at > ?2",
            params![t, now],
            |r| r.get(0),
        )?,
        None => 0,
    };
    let gists: i64 =
        c.query_row("SELECT COUNT(*) FROM gists WHERE expires_at > ?1 AND is_cold_start = 0", params![now], |r| {
            r.get(0)
        })?;
    let world: bool = c.query_row(
        "SELECT EXISTS (SELECT 1 FROM world_state WHERE expires_at IS NULL OR expires_at > ?1)",
        params![now],
        |r| r.get(0),
    )?;
    Ok(warmth(wm.max(0) as usize, gists.max(0) as usize, world))
}

/// The rows of `table` (an internal table name) matching `condition` with parameter `arg`,
/// each as a JSON object of its columns.
fn rows_json(c: &Connection, table: &str, condition: &str, arg: i64) -> Result<Vec<Value>, StoreError> {
    let mut stmt = c.prepare(&format!("SELECT * FROM {table} WHERE {condition}"))?;
    let names: Vec<String> = stmt.column_names().map(str::to_string).collect();
    let rows = stmt.query_map(params![arg], |r| row_object(r, &names).map(Value::Object))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// A JSON snapshot of row `id` of `table`, as `memory_deletions` keeps it.
pub fn snapshot(c: &Connection, table: &str, id: i64) -> Result<Option<Value>, StoreError> {
    Ok(rows_json(c, table, "id = ?1", id)?.into_iter().next())
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
    for (table, layer, key) in EXPIRING {
        let rows = rows_json(c, table, "expires_at <= ?1", now)?;
        for row in &rows {
            record(c, layer, &key_text(&row[key]), "expired", row, now)?;
        }
        c.execute(&format!("DELETE FROM {table} WHERE expires_at <= ?1"), params![now])?;
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
    let mut stmt = c.prepare_cached(
        "SELECT id, activation_score, COALESCE(last_accessed_at, created_at), reliability FROM episodes
         WHERE deleted_at IS NULL AND activation_score > ?1 AND COALESCE(last_accessed_at, created_at) < ?2",
    )?;
    let rows = stmt.query_map(params![ACTIVATION_FLOOR, now - ACCESS_GRACE_S], |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, f64>(1)?, r.get::<_, i64>(2)?, r.get::<_, String>(3)?))
    })?;
    let rows: Vec<_> = rows.collect::<Result<_, _>>()?;
    let mut update = c.prepare_cached("UPDATE episodes SET activation_score = ?2 WHERE id = ?1")?;
    for (id, activation, accessed, reliability) in rows {
        let Some(hours) = episode_decay_hours(accessed, last_pass, now) else { continue };
        let next = decay_activation(activation, hours, reliability_multiplier(&reliability));
        if next < activation {
            update.execute(params![id, next])?;
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
    let mut stmt = c.prepare_cached(
        "SELECT id, strength, decay_resistance, reliability,
                COALESCE(last_accessed_at, last_reinforced_at, created_at), at_floor_since
         FROM semantic_concepts WHERE deleted_at IS NULL",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, f64>(1)?,
            r.get::<_, f64>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, i64>(4)?,
            r.get::<_, Option<i64>>(5)?,
        ))
    })?;
    let rows: Vec<_> = rows.collect::<Result<_, _>>()?;
    let mut update =
        c.prepare_cached("UPDATE semantic_concepts SET strength = ?2, at_floor_since = ?3 WHERE id = ?1")?;
    for (id, strength, resistance, reliability, accessed, since) in rows {
        let mut next = strength;
        if strength > STRENGTH_FLOOR + EPS && now - accessed > ACCESS_GRACE_S {
            next = decay_strength(strength, resistance, reliability_multiplier(&reliability), periods);
            report.concepts_decayed += 1;
        }
        let stamp = floor_stamp(next <= STRENGTH_FLOOR + EPS, since, now);
        if reliability != "reliable" && due_for_deletion(stamp, now) {
            forget_concept(c, id, now, report)?;
        } else if next != strength || stamp != since {
            update.execute(params![id, next, stamp])?;
        }
    }
    Ok(())
}

/// Soft-delete a concept (its row keeps `deleted_at`), drop its vector and its edges.
fn forget_concept(c: &Connection, id: i64, now: i64, report: &mut DecayReport) -> Result<(), StoreError> {
    let reason = "decayed: unreliable and at the strength floor for 7 days";
    if let Some(snap) = snapshot(c, "semantic_concepts", id)? {
        record(c, "concept", &id.to_string(), reason, &snap, now)?;
    }
    for edge in rows_json(c, "semantic_relationships", "source_id = ?1 OR target_id = ?1", id)? {
        record(c, "relationship", &key_text(&edge["id"]), "its concept was forgotten", &edge, now)?;
        report.relationships_deleted += 1;
    }
    c.execute("DELETE FROM semantic_relationships WHERE source_id = ?1 OR target_id = ?1", params![id])?;
    c.execute("UPDATE semantic_concepts SET deleted_at = ?2, updated_at = ?2 WHERE id = ?1", params![id, now])?;
    VectorRepo(c).delete(VecTable::Concepts, id)?;
    report.uncertainties_decayed += resolve_uncertainties(c, "concept", id, now)?;
    report.concepts_deleted += 1;
    Ok(())
}

fn decay_traits(c: &Connection, periods: f64, now: i64, report: &mut DecayReport) -> Result<(), StoreError> {
    let mut stmt = c.prepare_cached(
        "SELECT id, confidence, reinforcement_count, category, source, reliability, at_floor_since FROM user_traits",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, f64>(1)?,
            r.get::<_, i64>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, String>(4)?,
            r.get::<_, String>(5)?,
            r.get::<_, Option<i64>>(6)?,
        ))
    })?;
    let rows: Vec<_> = rows.collect::<Result<_, _>>()?;
    let mut update = c.prepare_cached("UPDATE user_traits SET confidence = ?2, at_floor_since = ?3 WHERE id = ?1")?;
    for (id, confidence, count, category, source, reliability, since) in rows {
        let mult = reliability_multiplier(&reliability);
        let next = decay_confidence(confidence, count, &category, source == "inferred", mult, periods);
        let floor = trait_params(&category).1;
        let stamp = floor_stamp(next <= floor + EPS, since, now);
        if !kept_at_floor(&source, &reliability) && due_for_deletion(stamp, now) {
            if let Some(snap) = snapshot(c, "user_traits", id)? {
                record(c, "trait", &id.to_string(), "decayed: at its confidence floor for 7 days", &snap, now)?;
            }
            c.execute("DELETE FROM user_traits WHERE id = ?1", params![id])?;
            VectorRepo(c).delete(VecTable::Traits, id)?;
            report.uncertainties_decayed += resolve_uncertainties(c, "trait", id, now)?;
            report.traits_deleted += 1;
            continue;
        }
        if next < confidence {
            report.traits_decayed += 1;
        }
        if next != confidence || stamp != since {
            update.execute(params![id, next, stamp])?;
        }
    }
    Ok(())
}
