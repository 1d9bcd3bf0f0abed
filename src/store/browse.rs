//! Read-only listings of each memory layer, for `chalie-tui memory` and the browser.

use super::{StoreError, now_ts};
use rusqlite::{Connection, types::ValueRef};
use serde_json::{Map, Value};

/// The layers a user can list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MemoryLayer {
    Traits,
    Episodes,
    Concepts,
    Gists,
    Facts,
    Lists,
    Reminders,
}

impl MemoryLayer {
    /// The query for a layer: live rows only (unexpired, undeleted), most relevant first.
    fn sql(self) -> &'static str {
        match self {
            MemoryLayer::Traits => {
                "SELECT id, trait_key, trait_value, category, confidence, source, reinforcement_count, reliability, updated_at
                 FROM user_traits ORDER BY confidence DESC, updated_at DESC LIMIT ?1"
            }
            MemoryLayer::Episodes => {
                "SELECT id, gist, topic, salience, activation_score, access_count, reliability, created_at
                 FROM episodes WHERE deleted_at IS NULL ORDER BY created_at DESC LIMIT ?1"
            }
            MemoryLayer::Concepts => {
                "SELECT id, name, concept_type, definition, strength, confidence, reliability, updated_at
                 FROM semantic_concepts WHERE deleted_at IS NULL ORDER BY strength DESC LIMIT ?1"
            }
            MemoryLayer::Gists => {
                "SELECT id, topic, gist_type, content, confidence, created_at, expires_at
                 FROM gists WHERE expires_at > ?2 AND is_cold_start = 0 ORDER BY created_at DESC LIMIT ?1"
            }
            MemoryLayer::Facts => {
                "SELECT id, topic, key, value, confidence, updated_at, expires_at
                 FROM facts WHERE expires_at > ?2 ORDER BY updated_at DESC LIMIT ?1"
            }
            MemoryLayer::Lists => {
                "SELECT l.id, l.name, COUNT(i.id) AS items, COALESCE(SUM(i.checked), 0) AS checked,
                        COALESCE(GROUP_CONCAT(CASE WHEN i.checked THEN '[x] ' ELSE '' END || i.content, '; '), '') AS contents,
                        l.updated_at
                 FROM lists l LEFT JOIN list_items i ON i.list_id = l.id
                 GROUP BY l.id ORDER BY l.updated_at DESC LIMIT ?1"
            }
            MemoryLayer::Reminders => {
                "SELECT id, message, due_at, recurrence, state, created_at
                 FROM reminders WHERE state = 'pending' ORDER BY due_ts LIMIT ?1"
            }
        }
    }
}

/// Rows of one layer as JSON objects keyed by column name.
pub fn list_layer(conn: &Connection, layer: MemoryLayer, limit: usize) -> Result<Vec<Map<String, Value>>, StoreError> {
    let sql = layer.sql();
    let mut stmt = conn.prepare_cached(sql)?;
    let names: Vec<String> = stmt.column_names().map(str::to_string).collect();
    let needs_now = sql.contains("?2");
    let mut rows = if needs_now {
        stmt.query(rusqlite::params![limit as i64, now_ts()])?
    } else {
        stmt.query(rusqlite::params![limit as i64])?
    };
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        let mut obj = Map::new();
        for (i, name) in names.iter().enumerate() {
            let v = match row.get_ref(i)? {
                ValueRef::Null => Value::Null,
                ValueRef::Integer(n) => Value::from(n),
                ValueRef::Real(f) => Value::from(f),
                ValueRef::Text(t) => Value::from(String::from_utf8_lossy(t).into_owned()),
                ValueRef::Blob(b) => Value::from(format!("<{} bytes>", b.len())),
            };
            obj.insert(name.clone(), v);
        }
        out.push(obj);
    }
    Ok(out)
}
