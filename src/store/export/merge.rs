//! `import --merge` between two independent databases: both numbered their rows from 1, so an
//! exported row whose integer key is held here by a different row gets a fresh id, and every
//! reference to it follows — declared foreign keys, and the vector family, whose rows are
//! keyed by the id of the row they embed (`*_vec` and `(tbl, id)` in
//! `vector_codes` / `reembed_pending`). A row identical to the one here is the same row
//! (an export merged twice) and is skipped as before; one whose content is here under
//! another id (a foreign export merged twice) maps onto that id.
//!
//! Not followed: ids written into text or JSON columns without a declared key (a drift
//! thought's id in a task's origin, `layer:id` names in uncertainty records). Those keep the
//! exported number.

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
];
/// Tables whose `(tbl, id)` names a vector table by its code (`VecTable::code_table`).
const CODED: &[&str] = &["vector_codes", "reembed_pending"];
/// The owners of the vector tables, by code.
const BY_CODE: [&str; 4] = ["episodes", "semantic_concepts", "user_traits", "facts"];

fn follows(table: &str) -> Option<&'static str> {
    FOLLOWERS.iter().find(|(t, _)| *t == table).map(|(_, owner)| *owner)
}

/// How one column of a table is renumbered.
enum Ref {
    /// Through this table's map.
    Table(String),
    /// Through the map of the table the row's `tbl` column names.
    Coded { tbl: usize },
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
    let out = stmt.query_map([table], |r| r.get::<_, String>(0))?.filter_map(Result::ok).collect();
    Ok(out)
}

fn column(dump: &TableDump, name: &str) -> Option<usize> {
    dump.columns.iter().position(|c| c == name)
}

impl Renumber {
    /// Decide the new ids before anything is written, parents before children: a child row
    /// is compared with the rows here after its references are renumbered, so an edge
    /// between two renumbered concepts is not mistaken for the edge here with the same ids.
    pub(super) fn plan(conn: &Connection, doc: &ExportDoc, tables: &[String]) -> Result<Renumber, ExportError> {
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
                    plan.plan_table(conn, name, dump)?;
                }
            }
        }
        Ok(plan)
    }

    fn plan_table(&mut self, conn: &Connection, name: &str, dump: &TableDump) -> Result<(), ExportError> {
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
        let mut map = HashMap::new();
        for (row, id) in dump.rows.iter().zip(ids) {
            let Some(id) = id else { continue };
            let mut row = row.clone();
            self.map_row(&mut row, &refs);
            let width = cols.len();
            let existing: Option<Vec<Value>> =
                stmt.query_row([id], |r| (0..width).map(|i| r.get_ref(i).map(to_json)).collect()).optional()?;
            if existing.is_none_or(|e| e == row) {
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
