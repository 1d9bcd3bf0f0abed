//! `import --merge` between two independent databases: both numbered their rows from 1, so an
//! exported row whose integer key is held here by a different row gets a fresh id, and every
//! reference to it follows — declared foreign keys, and the vector family, whose rows are
//! keyed by the id of the row they embed (`*_vec` and `(tbl, id)` in
//! `vector_codes` / `reembed_pending`). A row identical to the one here is the same row
//! (an export merged twice) and is skipped as before; one whose content is here under
//! another id (a foreign export merged twice) maps onto that id.
//!
//! Two more kinds of row are the same row by what they say rather than by their id: one
//! whose UNIQUE columns (its natural key: a list's name, an item on a list) match a row here
//! maps onto that row, so what points at it follows there instead of to a row the import
//! skips; and in a table a new database already seeds (`vector_code_state`,
//! `embedding_space`), the integer key *is* the natural key, so a seeded row that differs
//! only in a timestamp or a random epoch keeps the row here rather than coming in twice.
//!
//! Ids in text and JSON columns are followed where the schema says what they name:
//! `uncertainties.memory_a_id`/`memory_b_id` (a row id as text, of the layer
//! `memory_a_type`/`memory_b_type` names: trait, episode, concept, gist, fact) and
//! `semantic_concepts.source_episodes` (a JSON array of episode ids). Not followed, and
//! keeping the exported number: ids inside free-form JSON (a task's plan and progress,
//! routing snapshots, ACT results) and `memory_deletions.row_id`, which names a row that no
//! longer exists anywhere.

use super::{ExportDoc, ExportError, TableDump, from_json, to_json};
use rusqlite::{Connection, OptionalExtension, params_from_iter};
use serde_json::Value;
use std::collections::HashMap;

/// Tables keyed by another table's id.
const FOLLOWERS: &[(&str, &str)] = &[
    ("episode_vec", "episodes"),
    ("concept_vec", "semantic_concepts"),
    ("trait_vec", "user_traits"),
    ("fact_vec", "facts"),
    // A concept's trace and potential (migration 0021).
    ("concept_traces", "semantic_concepts"),
];
/// Tables whose `(tbl, id)` names a vector table by its code (`VecTable::code_table`).
const CODED: &[&str] = &["vector_codes", "reembed_pending"];
/// The owners of the vector tables, by code.
const BY_CODE: [&str; 4] = ["episodes", "semantic_concepts", "user_traits", "facts"];

/// Text columns holding a row id of the layer another column names: (table, kind column, id column).
const TYPED: &[(&str, &str, &str)] =
    &[("uncertainties", "memory_a_type", "memory_a_id"), ("uncertainties", "memory_b_type", "memory_b_id")];
/// The layer kinds of [`TYPED`] (`MemoryLayer::kind`) and their tables.
const BY_KIND: &[(&str, &str)] = &[
    ("trait", "user_traits"),
    ("episode", "episodes"),
    ("concept", "semantic_concepts"),
    ("gist", "gists"),
    ("fact", "facts"),
];
/// JSON arrays of ids: (table, column, the table the ids are of).
const JSON_IDS: &[(&str, &str, &str)] = &[("semantic_concepts", "source_episodes", "episodes")];

fn follows(table: &str) -> Option<&'static str> {
    FOLLOWERS.iter().find(|(t, _)| *t == table).map(|(_, owner)| *owner)
}

/// How one column of a table is renumbered.
enum Ref {
    /// Through this table's map.
    Table(String),
    /// Through the map of the table the row's `tbl` column names.
    Coded { tbl: usize },
    /// A decimal id in text, through the map of the layer the row's `kind` column names.
    Typed { kind: usize },
    /// A JSON array of ids (as text), through this table's map.
    JsonIds(&'static str),
}

/// Old id → new id, per table, for the exported rows whose key was taken here.
#[derive(Debug, Default)]
pub(super) struct Renumber {
    maps: HashMap<String, HashMap<i64, i64>>,
}

/// The table's single INTEGER PRIMARY KEY column, if it has one.
fn integer_key(conn: &Connection, table: &str) -> Result<Option<String>, ExportError> {
    let mut stmt = conn.prepare("SELECT name, type, pk FROM pragma_table_info(?1)")?;
    let keys: Vec<(String, String)> = stmt
        .query_map([table], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)?)))?
        .filter_map(Result::ok)
        .filter(|(_, _, pk)| *pk > 0)
        .map(|(n, t, _)| (n, t))
        .collect();
    Ok(match keys.as_slice() {
        [(name, ty)] if ty.eq_ignore_ascii_case("INTEGER") => Some(name.clone()),
        _ => None,
    })
}

/// The tables `table` declares foreign keys to.
fn parents(conn: &Connection, table: &str) -> Result<Vec<String>, ExportError> {
    let mut stmt = conn.prepare("SELECT \"table\" FROM pragma_foreign_key_list(?1)")?;
    let mut out: Vec<String> = stmt.query_map([table], |r| r.get::<_, String>(0))?.filter_map(Result::ok).collect();
    out.extend(JSON_IDS.iter().filter(|(t, ..)| *t == table).map(|(.., of)| of.to_string()));
    Ok(out)
}

/// The table's UNIQUE indexes other than its key, as `"col" IS ?N [COLLATE c]` conditions over
/// the dump's column positions; a partial index or one over an expression is left out (no
/// plain equality decides it).
fn natural_keys(conn: &Connection, table: &str, dump: &TableDump) -> Result<Vec<(String, Vec<usize>)>, ExportError> {
    let mut stmt =
        conn.prepare("SELECT name FROM pragma_index_list(?1) WHERE \"unique\" = 1 AND origin != 'pk' AND partial = 0")?;
    let names: Vec<String> = stmt.query_map([table], |r| r.get(0))?.filter_map(Result::ok).collect();
    let mut info = conn.prepare("SELECT name, coll FROM pragma_index_xinfo(?1) WHERE key = 1 ORDER BY seqno")?;
    let mut out = Vec::new();
    'index: for index in names {
        let cols: Vec<(Option<String>, String)> =
            info.query_map([&index], |r| Ok((r.get(0)?, r.get(1)?)))?.filter_map(Result::ok).collect();
        let (mut conds, mut at) = (Vec::new(), Vec::new());
        for (name, coll) in cols {
            let Some(i) = name.as_deref().and_then(|n| column(dump, n)) else { continue 'index };
            conds.push(format!("\"{}\" IS ?{} COLLATE \"{coll}\"", dump.columns[i].replace('"', "\"\""), at.len() + 1));
            at.push(i);
        }
        if !at.is_empty() {
            out.push((conds.join(" AND "), at));
        }
    }
    Ok(out)
}

fn column(dump: &TableDump, name: &str) -> Option<usize> {
    dump.columns.iter().position(|c| c == name)
}

impl Renumber {
    /// Decide the new ids before anything is written, parents before children: a child row
    /// is compared with the rows here after its references are renumbered, so an edge
    /// between two renumbered concepts is not mistaken for the edge here with the same ids.
    /// `seeded`: the tables a new database already has rows in.
    pub(super) fn plan(
        conn: &Connection,
        doc: &ExportDoc,
        tables: &[String],
        seeded: &[String],
    ) -> Result<Renumber, ExportError> {
        let mut plan = Renumber::default();
        let mut pending: Vec<&String> =
            doc.tables.keys().filter(|n| tables.contains(n) && follows(n).is_none()).collect();
        while !pending.is_empty() {
            let mut ready = Vec::new();
            for name in &pending {
                let parents = parents(conn, name)?;
                if parents.iter().all(|p| p == *name || !pending.contains(&p)) {
                    ready.push(*name);
                }
            }
            // A cycle of references: plan what is left as it is.
            if ready.is_empty() {
                ready = pending.clone();
            }
            pending.retain(|n| !ready.contains(n));
            for name in ready {
                if let Some(dump) = doc.tables.get(name.as_str()) {
                    plan.plan_table(conn, name, dump, seeded.contains(name))?;
                }
            }
        }
        Ok(plan)
    }

    fn plan_table(&mut self, conn: &Connection, name: &str, dump: &TableDump, seeded: bool) -> Result<(), ExportError> {
        let Some(key) = integer_key(conn, name)? else { return Ok(()) };
        let Some(at) = column(dump, &key) else { return Ok(()) };
        let cols = dump.columns.iter().map(|c| format!("\"{}\"", c.replace('"', "\"\""))).collect::<Vec<_>>();
        let here: i64 =
            conn.query_row(&format!("SELECT coalesce(max(\"{key}\"), 0) FROM \"{name}\""), [], |r| r.get(0))?;
        let ids: Vec<Option<i64>> = dump.rows.iter().map(|r| r.get(at).and_then(Value::as_i64)).collect();
        let mut next = ids.iter().flatten().copied().max().unwrap_or(0).max(here) + 1;
        let mut stmt = conn.prepare(&format!("SELECT {} FROM \"{name}\" WHERE \"{key}\" = ?1", cols.join(", ")))?;
        // The same content under another id here (a foreign export merged before).
        let others: Vec<usize> = (0..cols.len()).filter(|i| *i != at).collect();
        let cond = others.iter().enumerate().map(|(k, i)| format!("{} IS ?{}", cols[*i], k + 1));
        let cond = cond.collect::<Vec<_>>().join(" AND ");
        let cond = if cond.is_empty() { "0".to_string() } else { cond };
        let mut same = conn.prepare(&format!("SELECT \"{key}\" FROM \"{name}\" WHERE {cond} LIMIT 1"))?;
        // The references to already planned tables, not the row's own key.
        let refs: Vec<(usize, Ref)> = self.refs(conn, name, dump)?.into_iter().filter(|(i, _)| *i != at).collect();
        let naturals = natural_keys(conn, name, dump)?;
        let mut by_natural = naturals
            .iter()
            .map(|(cond, _)| conn.prepare(&format!("SELECT \"{key}\" FROM \"{name}\" WHERE {cond} LIMIT 1")))
            .collect::<Result<Vec<_>, _>>()?;
        let mut map = HashMap::new();
        for (row, id) in dump.rows.iter().zip(ids) {
            let Some(id) = id else { continue };
            let mut row = row.clone();
            self.map_row(&mut row, &refs);
            let width = cols.len();
            let existing: Option<Vec<Value>> =
                stmt.query_row([id], |r| (0..width).map(|i| r.get_ref(i).map(to_json)).collect()).optional()?;
            if existing.as_ref() == Some(&row) || (seeded && existing.is_some()) {
                continue;
            }
            let mut natural = None;
            for ((_, cols), stmt) in naturals.iter().zip(by_natural.iter_mut()) {
                let values = cols
                    .iter()
                    .map(|i| from_json(name, row.get(*i).unwrap_or(&Value::Null)))
                    .collect::<Result<Vec<_>, _>>()?;
                natural = stmt.query_row(params_from_iter(values), |r| r.get::<_, i64>(0)).optional()?;
                if natural.is_some() {
                    break;
                }
            }
            if let Some(here) = natural {
                if here != id {
                    map.insert(id, here);
                }
                continue;
            }
            if existing.is_none() {
                continue;
            }
            let values = others
                .iter()
                .map(|i| from_json(name, row.get(*i).unwrap_or(&Value::Null)))
                .collect::<Result<Vec<_>, _>>()?;
            let found = same.query_row(params_from_iter(values), |r| r.get::<_, i64>(0)).optional()?;
            map.insert(
                id,
                found.unwrap_or_else(|| {
                    next += 1;
                    next - 1
                }),
            );
        }
        if !map.is_empty() {
            self.maps.insert(name.to_string(), map);
        }
        Ok(())
    }

    /// Which columns of `name`'s rows are renumbered, and through which map.
    fn refs(&self, conn: &Connection, name: &str, dump: &TableDump) -> Result<Vec<(usize, Ref)>, ExportError> {
        let mut out = Vec::new();
        if let Some(owner) = follows(name) {
            if let Some(at) = column(dump, "rowid").or_else(|| column(dump, "id")) {
                out.push((at, Ref::Table(owner.to_string())));
            }
            return Ok(out);
        }
        if CODED.contains(&name) {
            if let (Some(tbl), Some(id)) = (column(dump, "tbl"), column(dump, "id")) {
                out.push((id, Ref::Coded { tbl }));
            }
            return Ok(out);
        }
        for (_, kind, id) in TYPED.iter().filter(|(t, ..)| *t == name) {
            if let (Some(kind), Some(id)) = (column(dump, kind), column(dump, id)) {
                out.push((id, Ref::Typed { kind }));
            }
        }
        for (_, col, of) in JSON_IDS.iter().filter(|(t, ..)| *t == name) {
            if let Some(at) = column(dump, col) {
                out.push((at, Ref::JsonIds(of)));
            }
        }
        if let Some(key) = integer_key(conn, name)?
            && let Some(at) = column(dump, &key)
        {
            out.push((at, Ref::Table(name.to_string())));
        }
        let mut stmt = conn.prepare("SELECT \"table\", \"from\" FROM pragma_foreign_key_list(?1)")?;
        let fks: Vec<(String, String)> =
            stmt.query_map([name], |r| Ok((r.get(0)?, r.get(1)?)))?.filter_map(Result::ok).collect();
        for (parent, from) in fks {
            if let Some(at) = column(dump, &from) {
                out.push((at, Ref::Table(parent)));
            }
        }
        Ok(out)
    }

    /// `name`'s rows with their keys and references renumbered (a copy only when needed).
    pub(super) fn apply(&self, conn: &Connection, name: &str, dump: &TableDump) -> Result<TableDump, ExportError> {
        let refs = self.refs(conn, name, dump)?;
        let mut out = dump.clone();
        if self.maps.is_empty() || refs.is_empty() {
            return Ok(out);
        }
        for row in &mut out.rows {
            self.map_row(row, &refs);
        }
        Ok(out)
    }

    fn map_row(&self, row: &mut [Value], refs: &[(usize, Ref)]) {
        for (at, r) in refs {
            let map = match r {
                Ref::Table(t) => self.maps.get(t),
                Ref::Coded { tbl } => row
                    .get(*tbl)
                    .and_then(Value::as_u64)
                    .and_then(|c| BY_CODE.get(c as usize))
                    .and_then(|t| self.maps.get(*t)),
                Ref::Typed { kind } => {
                    let table = row
                        .get(*kind)
                        .and_then(Value::as_str)
                        .and_then(|k| BY_KIND.iter().find(|(kind, _)| *kind == k).map(|(_, t)| *t));
                    let Some(map) = table.and_then(|t| self.maps.get(t)) else { continue };
                    let cell = row.get_mut(*at);
                    if let Some(cell) = cell
                        && let Some(new) = cell.as_str().and_then(|s| s.parse::<i64>().ok()).and_then(|o| map.get(&o))
                    {
                        *cell = Value::String(new.to_string());
                    }
                    continue;
                }
                Ref::JsonIds(of) => {
                    let Some(map) = self.maps.get(*of) else { continue };
                    if let Some(cell) = row.get_mut(*at) {
                        renumber_json_ids(cell, map);
                    }
                    continue;
                }
            };
            let new = row.get(*at).and_then(Value::as_i64).and_then(|old| map.and_then(|m| m.get(&old)));
            if let (Some(new), Some(cell)) = (new.copied(), row.get_mut(*at)) {
                *cell = Value::from(new);
            }
        }
    }

    /// How many exported rows got a new id.
    pub(super) fn renumbered(&self) -> u64 {
        self.maps.values().map(|m| m.len() as u64).sum()
    }
}

/// A JSON array of ids held as text, its ids renumbered; anything else is left as it is.
fn renumber_json_ids(cell: &mut Value, map: &HashMap<i64, i64>) {
    let Some(text) = cell.as_str() else { return };
    let Ok(Value::Array(ids)) = serde_json::from_str::<Value>(text) else { return };
    let ids: Vec<Value> = ids
        .into_iter()
        .map(|v| match v.as_i64().and_then(|old| map.get(&old)) {
            Some(new) => Value::from(*new),
            None => v,
        })
        .collect();
    *cell = Value::String(Value::Array(ids).to_string());
}

#[cfg(test)]
mod tests;
