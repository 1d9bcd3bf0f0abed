//! The forget purge: one operation that spans every table on purpose, because "forget it"
//! must reach every place a piece of text was copied to. [`TEXT_MAP`] names each table
//! with a text column and what a forget does there; a test fails when a migration adds a
//! text column the map does not name, so a new table cannot silently keep forgotten words.
//!
//! Inputs are `needles` (strings whose every occurrence must go, matched ignoring ASCII case)
//! and `exchanges` (exchange ids whose chat lines and derived memories go whole). Rows of the
//! memory layers that hold a needle are deleted with their vectors and codes; chat lines are
//! redacted in place so the conversation still reads; audit and state rows keep their shape
//! with the needle replaced. The FTS indexes drop a deleted row's terms at once (their
//! FTS5 `secure-delete` option, migration 5; otherwise the terms stay in older segments until
//! a merge), `secure_delete` (set at open) zeroes the freed cells, and a TRUNCATE checkpoint
//! empties the WAL.

use super::vectors::{VecTable, VectorRepo};
use super::{StoreError, now_ts};
use crate::text::privacy::contains_any_ci;
use rusqlite::{Connection, params_from_iter};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};

/// What a forgotten chat line reads afterwards.
pub const FORGOTTEN_LINE: &str = "[forgotten at the user's request]";
/// What a needle inside a longer text becomes.
pub const FORGOTTEN_WORDS: &str = "[forgotten]";

/// What a forget does to a table's rows that hold a needle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// A memory: the row goes (with its vector, code and FTS entry, by trigger).
    Delete(Option<VecTable>),
    /// The chat: the line stays, its text becomes [`FORGOTTEN_LINE`].
    RedactLine,
    /// Audit, state and skill rows: the needle is replaced by [`FORGOTTEN_WORDS`].
    Replace,
}

/// Every table with a text column, the columns searched, and the policy. Tables holding only
/// numbers, names of the program's own (router weights, embedding model) or no user text
/// are listed in [`NO_USER_TEXT`].
pub const TEXT_MAP: &[(&str, &[&str], Policy)] = &[
    ("chat_history", &["content"], Policy::RedactLine),
    ("working_memory", &["content"], Policy::Delete(None)),
    (
        "episodes",
        &["gist", "action", "context", "outcome", "emotion", "intent", "open_loops"],
        Policy::Delete(Some(VecTable::Episodes)),
    ),
    ("gists", &["content", "topic"], Policy::Delete(None)),
    ("facts", &["key", "value", "topic"], Policy::Delete(Some(VecTable::Facts))),
    ("fok", &["topic"], Policy::Delete(None)),
    ("kv_state", &["key", "value"], Policy::Delete(None)),
    ("user_traits", &["trait_key", "trait_value"], Policy::Delete(Some(VecTable::Traits))),
    ("semantic_concepts", &["name", "definition"], Policy::Delete(Some(VecTable::Concepts))),
    ("jobs", &["payload", "last_error"], Policy::Delete(None)),
    ("chat_history", &["topic", "mode"], Policy::Replace),
    ("threads", &["title"], Policy::Replace),
    ("topics", &["name", "thread_id"], Policy::Replace),
    ("boundary_state", &["state"], Policy::Replace),
    ("facts", &["source"], Policy::Replace),
    ("world_state", &["key", "value"], Policy::Replace),
    ("episodes", &["topic", "salience_factors"], Policy::Replace),
    ("semantic_concepts", &["domain", "source_episodes"], Policy::Replace),
    ("semantic_relationships", &["rel_type"], Policy::Replace),
    ("memory_deletions", &["row_id", "detail"], Policy::Replace),
    ("uncertainties", &["reasoning", "surface_context", "resolution_detail"], Policy::Replace),
    (
        "routing_decisions",
        &["topic", "signal_snapshot", "reasoning", "feedback", "reflection", "tiebreaker_candidates", "regulator"],
        Policy::Replace,
    ),
    ("routing_adjustments", &["metrics"], Policy::Replace),
    ("triage_calibration", &["reasoning", "skills", "outcome"], Policy::Replace),
    ("cortex_iterations", &["actions_executed", "action_results"], Policy::Replace),
    ("interaction_log", &["topic", "payload"], Policy::Replace),
    ("lists", &["name"], Policy::Replace),
    ("list_items", &["content"], Policy::Replace),
    ("list_history", &["item"], Policy::Replace),
    ("reminders", &["message"], Policy::Replace),
    ("focus_sessions", &["description"], Policy::Replace),
    ("persistent_tasks", &["goal", "scope", "plan", "progress"], Policy::Replace),
    ("drift_thoughts", &["content", "topic", "cycle"], Policy::Replace),
    ("curiosity_threads", &["question", "topic"], Policy::Replace),
    ("regulator_state", &["state"], Policy::Replace),
];

/// Tables whose text columns hold no user words: ids, enums, model names, JSON of numbers.
pub const NO_USER_TEXT: &[&str] = &[
    "identity_vectors",
    "router_weights",
    // The topic regulator's versions and changes: parameter names, numbers, program lines.
    "topic_params",
    "topic_adjustments",
    "embedding_space",
    "reembed_pending",
    "vector_codes",
    "vector_code_state",
    // The boundary detector's window: weights and embeddings (its JSON is `boundary_state`'s).
    "boundary_recent",
    "episode_vec",
    "concept_vec",
    "trait_vec",
    "fact_vec",
];

/// The full-text indexes, all external-content: their terms live only in the index (each has
/// FTS5 `secure-delete` on; a test checks).
pub const FTS_TABLES: &[&str] =
    &["episodes_fts", "user_traits_trgm", "facts_trgm", "gists_trgm", "concepts_trgm", "chat_user_trgm"];

/// What to forget.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Purge {
    pub needles: Vec<String>,
    pub exchanges: Vec<String>,
    /// What kind of thing it was ("statement", "trait", …) for the record.
    pub kind: String,
    /// The row forgotten by id, when it was one.
    pub row: Option<i64>,
    /// Exchanges never to be learned from (their queued jobs go, a worker holding one stores
    /// nothing) whose lines stay unless they hold a needle: the forget request itself.
    pub block_only: Vec<String>,
    /// Trait rows to delete by `(key, value)`, the value compared without case.
    pub trait_slots: Vec<(String, String)>,
}

/// What a purge did: rows per table, and the exchanges with a chat line now forgotten.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Purged {
    pub rows: PurgeCounts,
    pub lines: Vec<String>,
}

/// Rows touched, per table (no content).
pub type PurgeCounts = BTreeMap<String, usize>;

/// Forget everything `p` names, record it (counts only) and block the exchanges from being
/// learned again; then purge the FTS indexes and empty the WAL. Returns the counts.
pub fn purge(conn: &mut Connection, p: &Purge) -> Result<Purged, StoreError> {
    let tx = conn.transaction()?;
    let purged = purge_in(&tx, p)?;
    tx.commit()?;
    settle(conn)?;
    Ok(purged)
}

/// [`purge`] inside the caller's transaction (no commit, no checkpoint), so a forget that
/// first deletes its own row commits both at once: a kill between two commits left the row
/// gone and its words everywhere else, with no record to forget it by again.
pub(crate) fn purge_in(tx: &Connection, p: &Purge) -> Result<Purged, StoreError> {
    let needles: Vec<String> =
        p.needles.iter().map(|n| n.trim().to_string()).filter(|n| n.chars().count() >= 3).collect();
    let mut counts = PurgeCounts::new();
    let mut deleted_episodes: BTreeSet<i64> = BTreeSet::new();
    let mut lines: Vec<String> = Vec::new();
    // Traits the chunker learned from a forgotten exchange, by the keys its log row names.
    let mut learned = traits_learned_from(tx, &p.exchanges)?;
    learned.extend(traits_with_slots(tx, &p.trait_slots)?);
    learned.sort_unstable();
    learned.dedup();
    for id in learned {
        VectorRepo(tx).wipe(VecTable::Traits, id)?;
        tx.execute("DELETE FROM user_traits WHERE id = ?1", [id])?;
        *counts.entry("user_traits".into()).or_default() += 1;
    }
    let exchange_set: BTreeSet<&str> = p.exchanges.iter().map(String::as_str).collect();
    for (table, cols, policy) in TEXT_MAP {
        let mut terms = needles.clone();
        // Rows keyed by a forgotten exchange go whole, whatever their text.
        if *table == "jobs" {
            terms.extend(p.exchanges.iter().chain(&p.block_only).cloned());
        }
        let mut hits = matching_rows(tx, table, cols, &terms)?;
        if matches!(table, &"chat_history" | &"episodes") && *policy != Policy::Replace {
            hits.extend(exchange_rows(tx, table, &exchange_set)?);
            hits.sort_unstable();
            hits.dedup();
        }
        if hits.is_empty() {
            continue;
        }
        if *table == "jobs" {
            // A queued job whose own exchange keeps its lines (the words are only in its topic
            // label, say) stays, with the words taken out: its exchange is still remembered.
            let gone: BTreeSet<&str> =
                lines.iter().chain(&p.exchanges).chain(&p.block_only).map(String::as_str).collect();
            let (mut goes, mut n) = (Vec::new(), 0);
            for id in std::mem::take(&mut hits) {
                match job_exchange(tx, id)? {
                    Some(x) if !gone.contains(x.as_str()) => n += replace_in_row(tx, table, cols, id, &needles)?,
                    _ => goes.push(id),
                }
            }
            hits = goes;
            if n > 0 {
                *counts.entry("jobs_redacted".into()).or_default() += n;
            }
        }
        let n = match policy {
            Policy::Delete(vec) => {
                for &id in &hits {
                    if let Some(t) = vec {
                        VectorRepo(tx).wipe(*t, id)?;
                    }
                    tx.execute(&format!("DELETE FROM {table} WHERE rowid = ?1"), [id])?;
                }
                if *table == "episodes" {
                    deleted_episodes.extend(hits.iter().copied());
                }
                if *table == "semantic_concepts" {
                    for &id in &hits {
                        super::RelationshipsRepo(tx).delete_of_concept(id)?;
                    }
                }
                hits.len()
            }
            Policy::RedactLine => {
                lines.extend(exchanges_of_rows(tx, &hits)?);
                for &id in &hits {
                    tx.execute(
                        &format!("UPDATE {table} SET content = ?2 WHERE rowid = ?1"),
                        rusqlite::params![id, FORGOTTEN_LINE],
                    )?;
                }
                hits.len()
            }
            Policy::Replace => {
                let mut n = 0;
                for &id in &hits {
                    n += replace_in_row(tx, table, cols, id, &terms)?;
                }
                n
            }
        };
        if n > 0 {
            *counts.entry((*table).to_string()).or_default() += n;
        }
    }
    // The audit rows of a forgotten exchange may carry its text reworded: they keep their
    // place in the trail and lose their words.
    for x in &p.exchanges {
        let n = tx.execute("UPDATE interaction_log SET payload = '{}' WHERE exchange_id = ?1", [x])?
            + tx.execute(
                "UPDATE cortex_iterations SET actions_executed = '[]', action_results = NULL WHERE exchange_id = ?1",
                [x],
            )?
            + tx.execute("UPDATE triage_calibration SET reasoning = NULL WHERE exchange_id = ?1", [x])?;
        if n > 0 {
            *counts.entry("audit".into()).or_default() += n;
        }
    }
    let orphans = orphan_concepts(tx, &deleted_episodes)?;
    for id in &orphans {
        VectorRepo(tx).wipe(VecTable::Concepts, *id)?;
        super::RelationshipsRepo(tx).delete_of_concept(*id)?;
        tx.execute("DELETE FROM semantic_concepts WHERE id = ?1", [id])?;
    }
    if !orphans.is_empty() {
        *counts.entry("semantic_concepts".into()).or_default() += orphans.len();
    }
    let now = now_ts();
    let salt = salt(tx)?;
    for x in p.exchanges.iter().chain(&p.block_only) {
        tx.execute(
            "INSERT INTO memory_deletions (layer, row_id, reason, detail, created_at) VALUES ('exchange', ?1, 'forget_block', NULL, ?2)",
            rusqlite::params![block_hash(&salt, x), now],
        )?;
    }
    let detail = json!({"rows": counts, "exchanges": p.exchanges.len()});
    let kind = if p.kind.is_empty() { "memory" } else { p.kind.as_str() };
    tx.execute(
        "INSERT INTO memory_deletions (layer, row_id, reason, detail, created_at) VALUES (?1, ?2, 'user', ?3, ?4)",
        rusqlite::params![kind, p.row.map(|r| r.to_string()).unwrap_or_default(), detail.to_string(), now],
    )?;
    lines.sort();
    lines.dedup();
    Ok(Purged { rows: counts, lines })
}

fn exchanges_of_rows(c: &Connection, ids: &[i64]) -> Result<Vec<String>, StoreError> {
    let mut stmt = c.prepare_cached("SELECT exchange_id FROM chat_history WHERE id = ?1")?;
    let mut out = Vec::new();
    for id in ids {
        out.push(stmt.query_row([id], |r| r.get(0))?);
    }
    Ok(out)
}

/// Trait rows the chunker wrote for one of `exchanges`: the ids its `memory_chunk` log row
/// names (a key may hold a superseded value beside the current one, so a key alone cannot
/// tell which row an exchange wrote); for a row logged before ids were, the keys it names.
fn traits_learned_from(c: &Connection, exchanges: &[String]) -> Result<Vec<i64>, StoreError> {
    let mut out = Vec::new();
    let mut logs =
        c.prepare_cached("SELECT payload FROM interaction_log WHERE exchange_id = ?1 AND event_type = 'memory_chunk'")?;
    let mut find = c.prepare_cached("SELECT id FROM user_traits WHERE trait_key = ?1")?;
    for x in exchanges {
        let payloads: Vec<String> = logs.query_map([x], |r| r.get(0))?.collect::<Result<_, _>>()?;
        for p in payloads {
            let v: Value = serde_json::from_str(&p).unwrap_or(Value::Null);
            if let Some(ids) = v["trait_ids"].as_array() {
                out.extend(ids.iter().filter_map(Value::as_i64));
                continue;
            }
            let keys = v["summary"]["traits"].as_array().cloned().unwrap_or_default();
            for k in keys.iter().filter_map(|t| t.get(0).and_then(Value::as_str)) {
                if let Some(id) = find.query_map([k], |r| r.get::<_, i64>(0))?.next() {
                    out.push(id?);
                }
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Trait rows holding one of `slots` (key, value), whatever their reliability: a superseded
/// "used to" row of a forgotten statement goes as surely as the current one.
fn traits_with_slots(c: &Connection, slots: &[(String, String)]) -> Result<Vec<i64>, StoreError> {
    let mut find =
        c.prepare_cached("SELECT id FROM user_traits WHERE trait_key = ?1 AND lower(trait_value) = lower(?2)")?;
    let mut out = Vec::new();
    for (key, value) in slots {
        for id in find.query_map([key, value], |r| r.get::<_, i64>(0))? {
            out.push(id?);
        }
    }
    Ok(out)
}

/// Make deleted bytes unreadable: checkpoint the WAL into the (secure-deleting) database
/// file and truncate it. The FTS indexes need no merge: their `secure-delete` option
/// (migration 5) removes a deleted row's terms from the index pages at once; without it the
/// terms stayed in older segments (the `forget` integration tests fail on it).
pub fn settle(conn: &Connection) -> Result<(), StoreError> {
    // A busy reader makes the checkpoint partial; the next forget (or close) finishes it.
    let _: (i64, i64, i64) =
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(())
}

/// Whether a worker about to store `exchange_id` must not: the user forgot it meanwhile.
pub fn exchange_forgotten(c: &Connection, exchange_id: &str) -> Result<bool, StoreError> {
    let salt = salt(c)?;
    Ok(c.query_row(
        "SELECT EXISTS (SELECT 1 FROM memory_deletions WHERE layer = 'exchange' AND reason = 'forget_block' AND row_id = ?1)",
        [block_hash(&salt, exchange_id)],
        |r| r.get(0),
    )?)
}

fn salt(c: &Connection) -> Result<String, StoreError> {
    let found: Option<String> =
        c.query_row("SELECT value FROM kv_state WHERE namespace = 'forget' AND key = 'salt'", [], |r| r.get(0)).ok();
    if let Some(s) = found {
        return Ok(s);
    }
    let s = json!(uuid::Uuid::new_v4().to_string()).to_string();
    c.execute(
        "INSERT OR IGNORE INTO kv_state (namespace, key, value, updated_at) VALUES ('forget', 'salt', ?1, ?2)",
        rusqlite::params![s, now_ts()],
    )?;
    Ok(s)
}

fn block_hash(salt: &str, exchange_id: &str) -> String {
    let mut h = Sha256::new();
    h.update(salt.as_bytes());
    h.update(exchange_id.as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Row ids of `table` where any of `cols` holds any of `terms` as a whole word, ASCII case
/// ignored (in a JSON column, in its string values): what [`replace_in_row`] would change.
/// SQLite's `instr` picks the candidates; the word test decides.
fn matching_rows(c: &Connection, table: &str, cols: &[&str], terms: &[String]) -> Result<Vec<i64>, StoreError> {
    if terms.is_empty() {
        return Ok(Vec::new());
    }
    // The haystack is built once a row, in a subquery, however many terms there are.
    let hay = cols.iter().map(|c| format!("lower(coalesce({c}, ''))")).collect::<Vec<_>>().join(" || char(31) || ");
    let test = (1..=terms.len()).map(|i| format!("instr(hay, ?{i}) > 0")).collect::<Vec<_>>().join(" OR ");
    let values =
        cols.iter().enumerate().map(|(i, c)| format!("CAST(coalesce({c}, '') AS TEXT) AS v{i}")).collect::<Vec<_>>();
    let names = (0..cols.len()).map(|i| format!("v{i}")).collect::<Vec<_>>().join(", ");
    let sql = format!(
        "SELECT id, {names} FROM (SELECT rowid AS id, {hay} AS hay, {} FROM {table}) WHERE {test}",
        values.join(", ")
    );
    let lower: Vec<String> = terms.iter().map(|t| t.to_ascii_lowercase()).collect();
    let mut stmt = c.prepare(&sql)?;
    let mut rows = stmt.query(params_from_iter(lower.iter()))?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let mut hit = false;
        for i in 1..=cols.len() {
            let v: String = r.get(i)?;
            hit |= crate::text::needles::redact_text(&v, terms, "").is_some();
        }
        if hit {
            out.push(r.get(0)?);
        }
    }
    Ok(out)
}

/// The exchange a queued job works for, if it names one.
fn job_exchange(c: &Connection, id: i64) -> Result<Option<String>, StoreError> {
    let mut stmt = c.prepare_cached("SELECT json_extract(payload, '$.exchange_id') FROM jobs WHERE id = ?1")?;
    Ok(stmt.query_row([id], |r| r.get::<_, Option<String>>(0))?)
}

fn exchange_rows(c: &Connection, table: &str, exchanges: &BTreeSet<&str>) -> Result<Vec<i64>, StoreError> {
    let mut out = Vec::new();
    let mut stmt = c.prepare(&format!("SELECT rowid FROM {table} WHERE exchange_id = ?1"))?;
    for x in exchanges {
        for r in stmt.query_map([x], |r| r.get(0))? {
            out.push(r?);
        }
    }
    Ok(out)
}

/// Replace the terms in each of `cols` of one row; 1 when something changed.
fn replace_in_row(c: &Connection, table: &str, cols: &[&str], id: i64, terms: &[String]) -> Result<usize, StoreError> {
    let mut changed = 0;
    for col in cols {
        let v: Option<String> =
            c.query_row(&format!("SELECT {col} FROM {table} WHERE rowid = ?1"), [id], |r| r.get(0))?;
        let Some(v) = v.filter(|v| contains_any_ci(v, terms)) else { continue };
        let Some(new) = crate::text::needles::redact_text(&v, terms, FORGOTTEN_WORDS) else { continue };
        c.execute(&format!("UPDATE {table} SET {col} = ?2 WHERE rowid = ?1"), rusqlite::params![id, new])?;
        changed = 1;
    }
    Ok(changed)
}

/// Concepts whose every source episode was just deleted: derived only from what was forgotten.
fn orphan_concepts(c: &Connection, gone: &BTreeSet<i64>) -> Result<Vec<i64>, StoreError> {
    if gone.is_empty() {
        return Ok(Vec::new());
    }
    let mut stmt = c.prepare("SELECT id, source_episodes FROM semantic_concepts")?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
    let mut out = Vec::new();
    for row in rows {
        let (id, src) = row?;
        let ids: Vec<i64> = serde_json::from_str::<Value>(&src)
            .ok()
            .and_then(|v| v.as_array().map(|a| a.iter().filter_map(Value::as_i64).collect()))
            .unwrap_or_default();
        if !ids.is_empty() && ids.iter().all(|i| gone.contains(i)) {
            out.push(id);
        }
    }
    Ok(out)
}

mod history;

pub use history::{mask_secrets, thread_lines, user_lines, user_lines_of};

#[cfg(test)]
mod tests;
