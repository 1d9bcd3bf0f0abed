//! Named lists (`lists`, `list_items`, `list_history`): the only SQL over those tables outside
//! the memory browser's read and forget paths. The `list` skill decides what a request means;
//! this repository only stores and reads, so matching rules stay testable without a database.

use super::CachedSql;
use super::{StoreError, now_ts};
use rusqlite::{Connection, OptionalExtension, params};

/// One item of a list as shown to the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListEntry {
    pub content: String,
    pub checked: bool,
}

/// One recorded change to a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListChange {
    pub action: String,
    pub item: Option<String>,
    pub at: i64,
}

pub struct ListsRepo<'c>(pub &'c Connection);

impl ListsRepo<'_> {
    /// The id of the list called `name`, created empty when there is none.
    pub fn ensure(&self, name: &str) -> Result<i64, StoreError> {
        let now = now_ts();
        self.0.exec(
            "INSERT INTO lists (name, created_at, updated_at) VALUES (?1, ?2, ?2) ON CONFLICT(name) DO NOTHING",
            params![name, now],
        )?;
        Ok(self.0.row("SELECT id FROM lists WHERE name = ?1", params![name], |r| r.get(0))?)
    }

    /// Every list as (id, name), oldest first: the order ambiguous names are offered in.
    pub fn names(&self) -> Result<Vec<(i64, String)>, StoreError> {
        let mut stmt = self.0.prepare_cached("SELECT id, name FROM lists ORDER BY id")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// The most recently touched list, which a request naming none refers to.
    pub fn latest(&self) -> Result<Option<String>, StoreError> {
        Ok(self
            .0
            .row("SELECT name FROM lists ORDER BY updated_at DESC, id DESC LIMIT 1", [], |r| r.get(0))
            .optional()?)
    }

    /// Every list as (name, item count), most recently touched first.
    pub fn counts(&self) -> Result<Vec<(String, i64)>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT l.name, COUNT(i.id) FROM lists l LEFT JOIN list_items i ON i.list_id = l.id
             GROUP BY l.id ORDER BY l.updated_at DESC",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// The items of a list as (item id, content), in the order they were added.
    pub fn contents(&self, list: i64) -> Result<Vec<(i64, String)>, StoreError> {
        let mut stmt = self.0.prepare_cached("SELECT id, content FROM list_items WHERE list_id = ?1 ORDER BY id")?;
        let rows = stmt.query_map(params![list], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// The items of a list with their check marks, in the order they were added.
    pub fn entries(&self, list: i64) -> Result<Vec<ListEntry>, StoreError> {
        let mut stmt =
            self.0.prepare_cached("SELECT content, checked FROM list_items WHERE list_id = ?1 ORDER BY id")?;
        let rows = stmt
            .query_map(params![list], |r| Ok(ListEntry { content: r.get(0)?, checked: r.get(1)? }))?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// Whether `content` was added: a list holds one row per text, ignoring case.
    pub fn add_item(&self, list: i64, content: &str) -> Result<bool, StoreError> {
        let added = self.0.exec(
            "INSERT INTO list_items (list_id, content, added_at, updated_at) VALUES (?1, ?2, ?3, ?3)
             ON CONFLICT(list_id, content) DO NOTHING",
            params![list, content, now_ts()],
        )?;
        Ok(added == 1)
    }

    pub fn remove_item(&self, item: i64) -> Result<(), StoreError> {
        self.0.exec("DELETE FROM list_items WHERE id = ?1", params![item])?;
        Ok(())
    }

    pub fn set_checked(&self, item: i64, checked: bool) -> Result<(), StoreError> {
        self.0.exec(
            "UPDATE list_items SET checked = ?2, updated_at = ?3 WHERE id = ?1",
            params![item, checked, now_ts()],
        )?;
        Ok(())
    }

    /// Empty a list; the number of items removed.
    pub fn clear(&self, list: i64) -> Result<usize, StoreError> {
        Ok(self.0.exec("DELETE FROM list_items WHERE list_id = ?1", params![list])?)
    }

    /// The list, its items and its history go (the schema cascades).
    pub fn delete(&self, list: i64) -> Result<(), StoreError> {
        self.0.exec("DELETE FROM lists WHERE id = ?1", params![list])?;
        Ok(())
    }

    pub fn rename(&self, list: i64, new_name: &str) -> Result<(), StoreError> {
        self.0.exec("UPDATE lists SET name = ?2, updated_at = ?3 WHERE id = ?1", params![list, new_name, now_ts()])?;
        Ok(())
    }

    /// Mark the list as the one most recently used.
    pub fn touch(&self, list: i64) -> Result<(), StoreError> {
        self.0.exec("UPDATE lists SET updated_at = ?2 WHERE id = ?1", params![list, now_ts()])?;
        Ok(())
    }

    /// Record a change for the list's history (`item` is empty when the change names none).
    pub fn record(&self, list: i64, action: &str, item: &str) -> Result<(), StoreError> {
        self.0.exec(
            "INSERT INTO list_history (list_id, action, item, created_at) VALUES (?1, ?2, ?3, ?4)",
            params![list, action, item, now_ts()],
        )?;
        Ok(())
    }

    /// The latest `limit` changes to a list, newest first.
    pub fn history(&self, list: i64, limit: usize) -> Result<Vec<ListChange>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT action, item, created_at FROM list_history WHERE list_id = ?1 ORDER BY id DESC LIMIT ?2",
        )?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = stmt
            .query_map(params![list, limit], |r| Ok(ListChange { action: r.get(0)?, item: r.get(1)?, at: r.get(2)? }))?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }
}
