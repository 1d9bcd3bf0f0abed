//! `world_state`: the open things of each topic (docs/cognition.md §4.7). The key is
//! `topic/slot`, so one topic has at most one line per slot and a new one replaces the old.

use super::CachedSql;
use super::StoreError;
use rusqlite::{Connection, params};

pub struct WorldStateRepo<'c>(pub &'c Connection);

/// The key of `slot` in `topic`.
pub fn world_key(topic: &str, slot: &str) -> String {
    format!("{topic}/{slot}")
}

impl WorldStateRepo<'_> {
    /// `(key, value)` of the live entries, newest first, at most `limit`.
    pub fn live(&self, now: i64, limit: usize) -> Result<Vec<(String, String)>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT key, value FROM world_state WHERE expires_at IS NULL OR expires_at > ?1 ORDER BY updated_at DESC LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![now, limit as i64], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// `(slot, value)` of `topic`'s live entries, newest first, at most `limit`.
    pub fn live_for(&self, topic: &str, now: i64, limit: usize) -> Result<Vec<(String, String)>, StoreError> {
        let prefix = world_key(topic, "");
        let mut stmt = self.0.prepare_cached(
            "SELECT substr(key, length(?1) + 1), value FROM world_state
             WHERE substr(key, 1, length(?1)) = ?1 AND (expires_at IS NULL OR expires_at > ?2)
             ORDER BY updated_at DESC, rowid DESC LIMIT ?3",
        )?;
        let rows = stmt.query_map(params![prefix, now, limit as i64], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Set `slot` of `topic` to `value` until `expires_at`.
    pub fn set(&self, topic: &str, slot: &str, value: &str, now: i64, expires_at: i64) -> Result<(), StoreError> {
        self.0.exec(
            "INSERT INTO world_state (key, value, updated_at, expires_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at,
                                            expires_at = excluded.expires_at",
            params![world_key(topic, slot), value, now, expires_at],
        )?;
        Ok(())
    }

    /// Close `slot` of `topic`.
    pub fn clear(&self, topic: &str, slot: &str) -> Result<(), StoreError> {
        self.0.exec("DELETE FROM world_state WHERE key = ?1", params![world_key(topic, slot)])?;
        Ok(())
    }

    /// Whether any entry is live at `now`.
    pub fn any_live(&self, now: i64) -> Result<bool, StoreError> {
        Ok(self.0.row(
            "SELECT EXISTS (SELECT 1 FROM world_state WHERE expires_at IS NULL OR expires_at > ?1)",
            params![now],
            |r| r.get(0),
        )?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_per_topic_replace_and_lapse() {
        let c = crate::store::open_in_memory().unwrap();
        let r = WorldStateRepo(&c);
        r.set("groceries", "list", "editing groceries", 10, 100).unwrap();
        r.set("groceries", "list", "editing groceries; just added eggs", 20, 200).unwrap();
        r.set("groceries-old", "list", "another topic", 20, 200).unwrap();
        r.set("work", "reminder", "reminder just set", 30, 60).unwrap();
        assert_eq!(
            r.live_for("groceries", 50, 10).unwrap(),
            vec![("list".to_string(), "editing groceries; just added eggs".to_string())],
            "one line per slot, the prefix of another topic's name is not this topic"
        );
        assert_eq!(r.live_for("work", 59, 10).unwrap().len(), 1);
        assert!(r.live_for("work", 60, 10).unwrap().is_empty(), "lapsed");
        r.clear("groceries", "list").unwrap();
        assert!(r.live_for("groceries", 50, 10).unwrap().is_empty());
    }
}
