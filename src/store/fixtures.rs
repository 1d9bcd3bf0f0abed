//! Test-only access to any table by name, for unit tests elsewhere in the crate that set up
//! rows no repository writes (a trait at a given confidence, an episode from long ago) or
//! check columns no repository reads. It keeps statement text in the store: a test names the
//! table, the columns and a condition, never a whole statement.

use rusqlite::types::FromSql;
use rusqlite::{Connection, Params, ToSql};

pub struct Fixture<'c>(pub &'c Connection);

fn filter(condition: &str) -> String {
    if condition.is_empty() { String::new() } else { format!(" WHERE {condition}") }
}

impl Fixture<'_> {
    /// Insert one row with the given columns. Returns its rowid.
    pub fn insert(&self, table: &str, columns: &[(&str, &dyn ToSql)]) -> i64 {
        let names: Vec<&str> = columns.iter().map(|(n, _)| *n).collect();
        let marks: Vec<String> = (1..=columns.len()).map(|i| format!("?{i}")).collect();
        let values: Vec<&dyn ToSql> = columns.iter().map(|(_, v)| *v).collect();
        let sql = format!("INSERT INTO {table} ({}) VALUES ({})", names.join(", "), marks.join(", "));
        self.0.execute(&sql, values.as_slice()).unwrap();
        self.0.last_insert_rowid()
    }

    /// A live concept named `name` with row id `id`.
    pub fn concept(&self, id: i64, name: &str) {
        self.insert("semantic_concepts", &[("id", &id), ("name", &name), ("created_at", &0), ("updated_at", &0)]);
    }

    /// A relationship `source → target` of `weight` (signed), stored once and walked both ways
    /// when `both`. Returns its rowid.
    pub fn edge(&self, source: i64, target: i64, rel_type: &str, weight: f64, both: bool) -> i64 {
        self.insert(
            "semantic_relationships",
            &[
                ("source_id", &source),
                ("target_id", &target),
                ("rel_type", &rel_type),
                ("weight", &weight),
                ("bidirectional", &both),
                ("created_at", &0),
                ("updated_at", &0),
            ],
        )
    }

    /// The first row's `expr` over `table` where `condition` holds (empty: every row).
    pub fn value<T: FromSql>(&self, table: &str, expr: &str, condition: &str, params: impl Params) -> T {
        let sql = format!("SELECT {expr} FROM {table}{}", filter(condition));
        self.0.query_row(&sql, params, |r| r.get(0)).unwrap()
    }

    /// Every row's `expr`, in rowid order.
    pub fn values<T: FromSql>(&self, table: &str, expr: &str, condition: &str, params: impl Params) -> Vec<T> {
        let sql = format!("SELECT {expr} FROM {table}{} ORDER BY rowid", filter(condition));
        let mut stmt = self.0.prepare(&sql).unwrap();
        stmt.query_map(params, |r| r.get(0)).unwrap().collect::<Result<_, _>>().unwrap()
    }

    /// How many rows hold `condition`.
    pub fn count(&self, table: &str, condition: &str, params: impl Params) -> i64 {
        self.value(table, "COUNT(*)", condition, params)
    }

    /// Set `assignments` (a column list as in an update) on the rows where `condition` holds.
    pub fn set(&self, table: &str, assignments: &str, condition: &str, params: impl Params) -> usize {
        let sql = format!("UPDATE {table} SET {assignments}{}", filter(condition));
        self.0.execute(&sql, params).unwrap()
    }

    /// Remove the rows where `condition` holds.
    pub fn remove(&self, table: &str, condition: &str, params: impl Params) -> usize {
        let sql = format!("DELETE FROM {table}{}", filter(condition));
        self.0.execute(&sql, params).unwrap()
    }
}
