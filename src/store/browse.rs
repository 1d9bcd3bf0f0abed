//! The one query layer over what the assistant remembers, shared by `chalie-tui memory` and
//! the TUI's memory browser so both always show the same rows the same way.
//!
//! Every row carries a typed id (`episode:42`, `trait:7`): row ids repeat across tables, and
//! forgetting must never guess which layer a bare number meant. The prefixes are the words
//! the uncertainty engine already uses for `memory_a_type`, so an uncertainty's
//! `trait:3` names the same memory a listing shows.

use super::{StoreError, now_ts};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, Row};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;
use std::str::FromStr;

/// The layers a user can browse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryLayer {
    Traits,
    Episodes,
    Concepts,
    Gists,
    Facts,
    Lists,
    Reminders,
    /// The drift engine's stored thoughts (docs/cognition.md §14).
    Thoughts,
    World,
}

impl MemoryLayer {
    /// Browser tab order: who you are, what happened, what it meant, then the short-lived
    /// layers and the skills' own stores.
    pub const ALL: [MemoryLayer; 9] = [
        MemoryLayer::Traits,
        MemoryLayer::Episodes,
        MemoryLayer::Concepts,
        MemoryLayer::Gists,
        MemoryLayer::Facts,
        MemoryLayer::Lists,
        MemoryLayer::Reminders,
        MemoryLayer::Thoughts,
        MemoryLayer::World,
    ];

    /// The prefix of this layer's typed ids.
    pub fn kind(self) -> &'static str {
        match self {
            MemoryLayer::Traits => "trait",
            MemoryLayer::Episodes => "episode",
            MemoryLayer::Concepts => "concept",
            MemoryLayer::Gists => "gist",
            MemoryLayer::Facts => "fact",
            MemoryLayer::Lists => "list",
            MemoryLayer::Reminders => "reminder",
            MemoryLayer::Thoughts => "thought",
            MemoryLayer::World => "world",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            MemoryLayer::Traits => "Traits",
            MemoryLayer::Episodes => "Episodes",
            MemoryLayer::Concepts => "Concepts",
            MemoryLayer::Gists => "Gists",
            MemoryLayer::Facts => "Facts",
            MemoryLayer::Lists => "Lists",
            MemoryLayer::Reminders => "Reminders",
            MemoryLayer::Thoughts => "Thoughts",
            MemoryLayer::World => "World state",
        }
    }

    /// The table holding the layer's rows.
    pub(super) fn table(self) -> &'static str {
        match self {
            MemoryLayer::Traits => "user_traits",
            MemoryLayer::Episodes => "episodes",
            MemoryLayer::Concepts => "semantic_concepts",
            MemoryLayer::Gists => "gists",
            MemoryLayer::Facts => "facts",
            MemoryLayer::Lists => "lists",
            MemoryLayer::Reminders => "reminders",
            MemoryLayer::Thoughts => "drift_thoughts",
            MemoryLayer::World => "world_state",
        }
    }

    /// Layers whose rows are soft-deleted (`deleted_at`), because other rows point at them.
    pub(super) fn soft_deleted(self) -> bool {
        matches!(self, MemoryLayer::Episodes | MemoryLayer::Concepts)
    }

    fn from_kind(s: &str) -> Option<MemoryLayer> {
        let s = s.to_ascii_lowercase();
        MemoryLayer::ALL.into_iter().find(|l| l.kind() == s || l.title().eq_ignore_ascii_case(&s))
    }
}

/// A memory's id with its layer: `episode:42`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct MemoryId {
    pub layer: MemoryLayer,
    pub row: i64,
}

impl fmt::Display for MemoryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.layer.kind(), self.row)
    }
}

impl From<MemoryId> for String {
    fn from(id: MemoryId) -> String {
        id.to_string()
    }
}

/// Why a string is not a typed memory id; the message shows the expected form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a memory id; use LAYER:N, e.g. episode:42 (layers: {layers})", layers = kinds())]
pub struct BadMemoryId(pub String);

fn kinds() -> String {
    MemoryLayer::ALL.iter().map(|l| l.kind()).collect::<Vec<_>>().join(", ")
}

impl FromStr for MemoryId {
    type Err = BadMemoryId;

    fn from_str(s: &str) -> Result<MemoryId, BadMemoryId> {
        let bad = || BadMemoryId(s.to_string());
        let (kind, row) = s.trim().split_once(':').ok_or_else(bad)?;
        let layer = MemoryLayer::from_kind(kind.trim()).ok_or_else(bad)?;
        let row: i64 = row.trim().parse().map_err(|_| bad())?;
        if row <= 0 {
            return Err(bad());
        }
        Ok(MemoryId { layer, row })
    }
}

impl TryFrom<String> for MemoryId {
    type Error = BadMemoryId;

    fn try_from(s: String) -> Result<MemoryId, BadMemoryId> {
        s.parse()
    }
}

/// One memory as the browser and the CLI show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryRow {
    pub id: MemoryId,
    /// What it says, on one line.
    pub text: String,
    /// reliable | uncertain | contradicted | superseded, for the durable layers.
    pub reliability: Option<String>,
    /// On 0–1 in every layer (gists store 0–10 and are scaled here).
    pub confidence: Option<f64>,
    pub created_at: i64,
    pub updated_at: i64,
    /// When a short-lived memory lapses by itself.
    pub expires_at: Option<i64>,
    /// Where it came from and how it has been used; the fields differ per layer.
    pub provenance: Map<String, Value>,
}

impl MemoryRow {
    /// The one provenance detail worth a column in a listing: where an episode or gist
    /// belongs, how a trait was learned, how strong a concept is, when a reminder is due.
    pub fn note(&self) -> String {
        let p = |k: &str| match self.provenance.get(k) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => String::new(),
            Some(v) => v.to_string(),
        };
        match self.id.layer {
            MemoryLayer::Traits => format!("{} ×{}", p("source"), p("reinforcement_count")),
            MemoryLayer::Episodes | MemoryLayer::Gists | MemoryLayer::Facts => p("topic"),
            MemoryLayer::Concepts => {
                let strength = self.provenance.get("strength").and_then(Value::as_f64).unwrap_or(0.0);
                format!("strength {strength:.1}")
            }
            MemoryLayer::Lists => format!("{}/{} done", p("checked"), p("items")),
            MemoryLayer::Reminders => format!("due {}", p("due_at")),
            MemoryLayer::Thoughts => format!("{} → {}", p("thought_type"), p("action")),
            MemoryLayer::World => p("key"),
        }
    }
}

/// Columns holding JSON text, shown as JSON rather than as strings.
const JSON_COLUMNS: &[&str] = &["source_episodes", "intent", "emotion", "open_loops"];

/// Every query selects these first, in this order; the columns after them are provenance.
/// Parameters: ?1 limit, ?2 now, ?3 the search (a LIKE pattern, or an FTS query for
/// episodes), NULL when not searching.
fn sql(layer: MemoryLayer, fts: bool) -> &'static str {
    match (layer, fts) {
        (MemoryLayer::Traits, _) => {
            "SELECT id, trait_key || ': ' || trait_value, reliability, confidence, created_at, updated_at, NULL,
                    category, source, is_literal, reinforcement_count, last_reinforced_at, last_conflict_at,
                    superseded_by
             FROM user_traits
             WHERE ?3 IS NULL OR trait_key LIKE ?3 ESCAPE '\\' OR trait_value LIKE ?3 ESCAPE '\\'
                   OR category LIKE ?3 ESCAPE '\\'
             ORDER BY confidence DESC, updated_at DESC LIMIT ?1"
        }
        (MemoryLayer::Episodes, false) => {
            "SELECT id, gist, reliability, NULL, created_at, updated_at, NULL,
                    thread_id, exchange_id, topic, salience, activation_score, access_count, last_accessed_at,
                    semantic_consolidation_status, open_loops, json_extract(context, '$.builder') AS builder
             FROM episodes
             WHERE deleted_at IS NULL AND (?3 IS NULL OR gist LIKE ?3 ESCAPE '\\' OR action LIKE ?3 ESCAPE '\\')
             ORDER BY created_at DESC, id DESC LIMIT ?1"
        }
        (MemoryLayer::Episodes, true) => {
            "SELECT e.id, e.gist, e.reliability, NULL, e.created_at, e.updated_at, NULL,
                    e.thread_id, e.exchange_id, e.topic, e.salience, e.activation_score, e.access_count,
                    e.last_accessed_at, e.semantic_consolidation_status, e.open_loops,
                    json_extract(e.context, '$.builder') AS builder
             FROM episodes_fts JOIN episodes e ON e.id = episodes_fts.rowid
             WHERE episodes_fts MATCH ?3 AND e.deleted_at IS NULL
             ORDER BY bm25(episodes_fts), e.created_at DESC LIMIT ?1"
        }
        (MemoryLayer::Concepts, _) => {
            "SELECT c.id, CASE WHEN c.definition = '' THEN c.name ELSE c.name || ': ' || c.definition END,
                    c.reliability, c.confidence, c.created_at, c.updated_at, NULL,
                    c.concept_type, c.domain, c.strength, c.consolidation_count, c.source_episodes,
                    (SELECT COUNT(*) FROM semantic_relationships r WHERE r.source_id = c.id OR r.target_id = c.id)
                        AS relationships,
                    c.access_count, c.last_reinforced_at
             FROM semantic_concepts c
             WHERE c.deleted_at IS NULL
                   AND (?3 IS NULL OR c.name LIKE ?3 ESCAPE '\\' OR c.definition LIKE ?3 ESCAPE '\\')
             ORDER BY c.strength DESC, c.updated_at DESC LIMIT ?1"
        }
        (MemoryLayer::Gists, _) => {
            "SELECT id, content, NULL, confidence / 10.0, created_at, created_at, expires_at,
                    topic, gist_type, thread_id
             FROM gists
             WHERE expires_at > ?2 AND is_cold_start = 0
                   AND (?3 IS NULL OR content LIKE ?3 ESCAPE '\\' OR topic LIKE ?3 ESCAPE '\\')
             ORDER BY created_at DESC, id DESC LIMIT ?1"
        }
        (MemoryLayer::Facts, _) => {
            "SELECT id, key || ': ' || value, NULL, confidence, created_at, updated_at, expires_at, topic, source
             FROM facts
             WHERE expires_at > ?2
                   AND (?3 IS NULL OR key LIKE ?3 ESCAPE '\\' OR value LIKE ?3 ESCAPE '\\' OR topic LIKE ?3 ESCAPE '\\')
             ORDER BY updated_at DESC, id DESC LIMIT ?1"
        }
        (MemoryLayer::Lists, _) => {
            "SELECT l.id,
                    l.name || ': ' || COALESCE((SELECT GROUP_CONCAT(CASE WHEN i.checked THEN '[x] ' ELSE '' END
                        || i.content, '; ' ORDER BY i.id) FROM list_items i WHERE i.list_id = l.id), '(empty)'),
                    NULL, NULL, l.created_at, l.updated_at, NULL,
                    (SELECT COUNT(*) FROM list_items i WHERE i.list_id = l.id) AS items,
                    (SELECT COUNT(*) FROM list_items i WHERE i.list_id = l.id AND i.checked) AS checked
             FROM lists l
             WHERE ?3 IS NULL OR l.name LIKE ?3 ESCAPE '\\'
                   OR EXISTS (SELECT 1 FROM list_items i WHERE i.list_id = l.id AND i.content LIKE ?3 ESCAPE '\\')
             ORDER BY l.updated_at DESC, l.id DESC LIMIT ?1"
        }
        (MemoryLayer::Reminders, _) => {
            "SELECT id, message, NULL, NULL, created_at, created_at, NULL, due_at, recurrence, item_type, thread_id
             FROM reminders
             WHERE state = 'pending' AND (?3 IS NULL OR message LIKE ?3 ESCAPE '\\')
             ORDER BY due_ts, id LIMIT ?1"
        }
        // Drift's thoughts (docs/cognition.md §14), an expired deferred message included: it
        // was still written down.
        (MemoryLayer::Thoughts, _) => {
            "SELECT id, content, NULL, NULL, created_at, COALESCE(delivered_at, created_at), expires_at,
                    thought_type, action, state, author, topic, seed_strategy, energy
             FROM drift_thoughts
             WHERE ?3 IS NULL OR content LIKE ?3 ESCAPE '\\' OR topic LIKE ?3 ESCAPE '\\'
             ORDER BY created_at DESC, id DESC LIMIT ?1"
        }
        // A topic's open things (docs/cognition.md §4.7); rows are named by rowid.
        (MemoryLayer::World, _) => {
            "SELECT rowid, value, NULL, NULL, updated_at, updated_at, expires_at, key
             FROM world_state
             WHERE (expires_at IS NULL OR expires_at > ?2)
                   AND (?3 IS NULL OR key LIKE ?3 ESCAPE '\\' OR value LIKE ?3 ESCAPE '\\')
             ORDER BY updated_at DESC, rowid DESC LIMIT ?1"
        }
    }
}

/// The live rows of one layer (unexpired, not forgotten), newest or strongest first; with a
/// search, only rows that match it, the best full-text matches first where there is an index.
pub fn list_layer(
    conn: &Connection,
    layer: MemoryLayer,
    search: Option<&str>,
    limit: usize,
) -> Result<Vec<MemoryRow>, StoreError> {
    let search = search.map(str::trim).filter(|s| !s.is_empty());
    let fts = match search {
        Some(s) if layer == MemoryLayer::Episodes => fts_query(s),
        _ => None,
    };
    let pattern = match (&fts, search) {
        (Some(q), _) => Some(q.clone()),
        (None, Some(s)) => Some(like_pattern(s)),
        (None, None) => None,
    };
    let mut stmt = conn.prepare_cached(sql(layer, fts.is_some()))?;
    let names: Vec<String> = stmt.column_names().map(str::to_string).collect();
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = stmt.query_map(rusqlite::params![limit, now_ts(), pattern], |r| read_row(r, layer, &names))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// One memory by id, whether or not a listing would still show it (None when no row has it).
/// What a memory named as `layer:id` says, on one line, with its reliability: read where it is
/// shown (an uncertainty record names its memories and never copies them). `None` when the
/// name is not a memory or the memory is gone.
pub fn memory_text(conn: &Connection, name: &str) -> Result<Option<(String, Option<String>)>, StoreError> {
    use rusqlite::OptionalExtension;
    let Ok(id) = MemoryId::from_str(name) else { return Ok(None) };
    let sql = match id.layer {
        MemoryLayer::Traits => "SELECT trait_key || ': ' || trait_value, reliability FROM user_traits WHERE id = ?1",
        MemoryLayer::Episodes => "SELECT gist, reliability FROM episodes WHERE id = ?1 AND deleted_at IS NULL",
        MemoryLayer::Concepts => {
            "SELECT name || ': ' || definition, reliability FROM semantic_concepts WHERE id = ?1 AND deleted_at IS NULL"
        }
        MemoryLayer::Gists => "SELECT content, reliability FROM gists WHERE id = ?1",
        MemoryLayer::Facts => "SELECT key || ': ' || value, reliability FROM facts WHERE id = ?1",
        MemoryLayer::World => "SELECT key || ': ' || value, NULL FROM world_state WHERE rowid = ?1",
        MemoryLayer::Thoughts => "SELECT content, NULL FROM drift_thoughts WHERE id = ?1",
        MemoryLayer::Lists | MemoryLayer::Reminders => return Ok(None),
    };
    Ok(conn.query_row(sql, [id.row], |r| Ok((r.get(0)?, r.get(1)?))).optional()?)
}

/// For a superseded trait named `trait:N`: the row that replaced it (`trait:M`), its value and
/// when it was stored, read where it is shown like [`memory_text`].
pub fn replaced_by(conn: &Connection, name: &str) -> Result<Option<(String, String, i64)>, StoreError> {
    let Ok(id) = MemoryId::from_str(name) else { return Ok(None) };
    if id.layer != MemoryLayer::Traits {
        return Ok(None);
    }
    Ok(super::TraitsRepo(conn).successor(id.row)?.map(|(n, value, at)| (format!("trait:{n}"), value, at)))
}

pub fn get_row(conn: &Connection, id: MemoryId) -> Result<Option<Map<String, Value>>, StoreError> {
    let sql = match id.layer {
        MemoryLayer::World => "SELECT rowid AS id, * FROM world_state WHERE rowid = ?1".to_string(),
        _ => format!("SELECT * FROM {} WHERE id = ?1", id.layer.table()),
    };
    let mut stmt = conn.prepare(&sql)?;
    let names: Vec<String> = stmt.column_names().map(str::to_string).collect();
    let mut rows = stmt.query([id.row])?;
    let Some(row) = rows.next()? else { return Ok(None) };
    Ok(Some(row_object(row, &names)?))
}

/// Every column of `row` (named `names`) as JSON: the snapshot a deletion records and the
/// browser's detail shows. JSON columns are kept as JSON, blobs as their size.
pub fn row_object(row: &Row<'_>, names: &[String]) -> rusqlite::Result<Map<String, Value>> {
    let mut obj = Map::new();
    for (i, name) in names.iter().enumerate() {
        obj.insert(name.clone(), json_value(name, row.get_ref(i)?));
    }
    Ok(obj)
}

fn read_row(r: &Row<'_>, layer: MemoryLayer, names: &[String]) -> rusqlite::Result<MemoryRow> {
    let mut provenance = Map::new();
    for (i, name) in names.iter().enumerate().skip(7) {
        provenance.insert(name.clone(), json_value(name, r.get_ref(i)?));
    }
    Ok(MemoryRow {
        id: MemoryId { layer, row: r.get(0)? },
        text: r.get::<_, Option<String>>(1)?.unwrap_or_default(),
        reliability: r.get(2)?,
        confidence: r.get(3)?,
        created_at: r.get(4)?,
        updated_at: r.get(5)?,
        expires_at: r.get(6)?,
        provenance,
    })
}

fn json_value(name: &str, v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(n) => Value::from(n),
        ValueRef::Real(f) => Value::from(f),
        ValueRef::Text(t) => {
            let s = String::from_utf8_lossy(t).into_owned();
            if JSON_COLUMNS.contains(&name)
                && let Ok(v) = serde_json::from_str::<Value>(&s)
            {
                return v;
            }
            Value::from(s)
        }
        ValueRef::Blob(b) => Value::from(format!("<{} bytes>", b.len())),
    }
}

/// A LIKE pattern matching `s` anywhere, with LIKE's wildcards taken literally.
fn like_pattern(s: &str) -> String {
    let mut p = String::from("%");
    for c in s.chars() {
        if matches!(c, '%' | '_' | '\\') {
            p.push('\\');
        }
        p.push(c);
    }
    p.push('%');
    p
}

/// An FTS5 query from free text: every word must appear, as a word or a word's start (so
/// typing "hik" already finds "hiking"). Operators and quotes are dropped, never executed.
fn fts_query(s: &str) -> Option<String> {
    let words: Vec<String> =
        s.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(|w| format!("\"{w}\"*")).collect();
    (!words.is_empty()).then(|| words.join(" "))
}

#[cfg(test)]
mod tests;
