//! `kv_state`: small named values that outlive a restart (the decay pass's clock, the
//! router's per-topic state, the adaptive layer's style profile). [`super::TurnRepo::kv_get`]
//! and `kv_set` keep JSON in it through these.

use super::CachedSql;
use super::StoreError;
use rusqlite::{Connection, OptionalExtension, params};

pub struct KvStateRepo<'c>(pub &'c Connection);

impl KvStateRepo<'_> {
    pub fn get_text(&self, namespace: &str, key: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .0
            .row("SELECT value FROM kv_state WHERE namespace = ?1 AND key = ?2", params![namespace, key], |r| r.get(0))
            .optional()?)
    }

    pub fn set_text(&self, namespace: &str, key: &str, value: &str, now: i64) -> Result<(), StoreError> {
        self.0.exec(
            "INSERT INTO kv_state (namespace, key, value, updated_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
            params![namespace, key, value, now],
        )?;
        Ok(())
    }

    /// Remove one value; whether it was there.
    pub fn delete(&self, namespace: &str, key: &str) -> Result<bool, StoreError> {
        Ok(self.0.exec("DELETE FROM kv_state WHERE namespace = ?1 AND key = ?2", params![namespace, key])? > 0)
    }
}

impl KvStateRepo<'_> {
    /// The concept graph's version: bumped by the triggers of migration 0012 on every write to
    /// concepts or relationships that activation reads (docs/cognition.md §9.4.7). `None` when
    /// the row is missing or unreadable.
    pub fn graph_version(&self) -> Result<Option<i64>, StoreError> {
        Ok(self.get_text("graph", "version")?.and_then(|v| v.trim().parse().ok()))
    }
}

impl KvStateRepo<'_> {
    /// Read and remove one value (something applied once).
    pub fn take_text(&self, namespace: &str, key: &str) -> Result<Option<String>, StoreError> {
        let v = self.get_text(namespace, key)?;
        self.0.exec("DELETE FROM kv_state WHERE namespace = ?1 AND key = ?2", params![namespace, key])?;
        Ok(v)
    }

    /// Remove a namespace's values written before `before`.
    pub fn delete_older(&self, namespace: &str, before: i64) -> Result<usize, StoreError> {
        Ok(self.0.exec("DELETE FROM kv_state WHERE namespace = ?1 AND updated_at < ?2", params![namespace, before])?)
    }
}
