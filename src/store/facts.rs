//! `facts`: a topic's key/value facts (24 h). Every statement on the table is here but the
//! expiry sweep of the decay pass ([`super::expired_rows`]).

use super::CachedSql;
use super::{FactRow, StoreError, VecTable, VectorRepo};
use rusqlite::{Connection, params};

/// A live fact of a topic.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveFact {
    pub id: i64,
    pub key: String,
    pub value: String,
    pub confidence: f64,
    pub updated_at: i64,
}

pub struct FactsRepo<'c>(pub &'c Connection);

impl FactsRepo<'_> {
    /// `(key, value)` of the topic's live facts, newest first, at most `limit`.
    pub fn for_context(&self, topic: &str, now: i64, limit: usize) -> Result<Vec<(String, String)>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT key, CASE reliability WHEN 'contradicted' THEN value || ' (contradicted by another memory: do not assert it)'
                    ELSE value END
             FROM facts WHERE topic = ?1 AND expires_at > ?2 AND reliability != 'superseded'
             ORDER BY updated_at DESC, id DESC LIMIT ?3",
        )?;
        let rows = stmt.query_map(params![topic, now, limit as i64], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Unexpired facts of every topic, newest first (a changed fact wins over the old one).
    pub fn unexpired(&self, now: i64, limit: i64) -> Result<Vec<FactRow>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT id, key, value FROM facts WHERE expires_at > ?1 AND reliability != 'superseded'
             ORDER BY updated_at DESC, id DESC LIMIT ?2",
        )?;
        let rows =
            stmt.query_map(params![now, limit], |r| Ok(FactRow { id: r.get(0)?, key: r.get(1)?, value: r.get(2)? }))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// `(id, value, reliability)` of the unexpired, not superseded facts stored under `key`
    /// in any topic, newest first (the uncertainty check's slot lookup).
    pub fn live_by_key(&self, key: &str, now: i64) -> Result<Vec<(i64, String, String)>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT id, value, reliability FROM facts WHERE key = ?1 AND expires_at > ?2 AND reliability != 'superseded'
             ORDER BY updated_at DESC, id DESC LIMIT 5",
        )?;
        let rows = stmt.query_map(params![key, now], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Set a fact's reliability; `force` for a resolution, otherwise only downwards (the rank guard).
    pub fn set_reliability(&self, id: i64, state: &str, force: bool) -> Result<bool, StoreError> {
        Ok(self.0.exec(&super::traits::guarded_update("facts"), params![id, state, force])? > 0)
    }

    /// `(key, value, reliability)` of fact `id` while it is live (the pre-screen's lookup of a
    /// nearest vector).
    pub fn describe_live(&self, id: i64, now: i64) -> Result<Option<(String, String, String)>, StoreError> {
        use rusqlite::OptionalExtension;
        let mut stmt =
            self.0.prepare_cached("SELECT key, value, reliability FROM facts WHERE id = ?1 AND expires_at > ?2")?;
        Ok(stmt.query_row(params![id, now], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).optional()?)
    }

    /// Drop the topic's expired facts, with their vectors.
    pub fn sweep_topic(&self, topic: &str, now: i64) -> Result<usize, StoreError> {
        let mut stmt = self.0.prepare_cached("DELETE FROM facts WHERE topic = ?1 AND expires_at <= ?2 RETURNING id")?;
        let ids: Vec<i64> = stmt.query_map(params![topic, now], |r| r.get(0))?.collect::<Result<_, _>>()?;
        for &id in &ids {
            VectorRepo(self.0).delete(VecTable::Facts, id)?;
        }
        Ok(ids.len())
    }

    /// Every fact of the topic (call [`Self::sweep_topic`] first for live ones).
    pub fn of_topic(&self, topic: &str) -> Result<Vec<LiveFact>, StoreError> {
        let mut stmt =
            self.0.prepare_cached("SELECT id, key, value, confidence, updated_at FROM facts WHERE topic = ?1")?;
        let rows = stmt.query_map(params![topic], |r| {
            Ok(LiveFact {
                id: r.get(0)?,
                key: r.get(1)?,
                value: r.get(2)?,
                confidence: r.get(3)?,
                updated_at: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Delete fact `id` and its vector.
    pub fn delete(&self, id: i64) -> Result<(), StoreError> {
        VectorRepo(self.0).delete(VecTable::Facts, id)?;
        self.0.exec("DELETE FROM facts WHERE id = ?1", params![id])?;
        Ok(())
    }

    /// Set `key` of `topic`, live until `expires_at`. A conversation's value takes the row
    /// over (it becomes the conversation's); a value the user asked to remember makes a new
    /// row the user's and leaves an existing row's source alone. Returns the row's id and
    /// whether its value changed (its vector, if it has one, then describes the old value).
    #[allow(clippy::too_many_arguments)]
    pub fn upsert(
        &self,
        topic: &str,
        key: &str,
        value: &str,
        confidence: f64,
        now: i64,
        expires_at: i64,
        origin: FactOrigin,
    ) -> Result<(i64, bool), StoreError> {
        let (source, take_source) = match origin {
            FactOrigin::Conversation => ("conversation", "source = excluded.source, "),
            FactOrigin::User => ("user", ""),
        };
        use rusqlite::OptionalExtension;
        let before: Option<String> = self
            .0
            .prepare_cached("SELECT value FROM facts WHERE topic = ?1 AND key = ?2")?
            .query_row(params![topic, key], |r| r.get(0))
            .optional()?;
        let id: i64 = self.0.row(
            &format!(
                "INSERT INTO facts (topic, key, value, confidence, source, created_at, updated_at, expires_at)
                 VALUES (?1, ?2, ?3, ?4, '{source}', ?5, ?5, ?6)
                 ON CONFLICT(topic, key) DO UPDATE SET value = excluded.value, confidence = excluded.confidence,
                     {take_source}updated_at = excluded.updated_at, expires_at = excluded.expires_at
                 RETURNING id"
            ),
            params![topic, key, value, confidence, now, expires_at],
            |r| r.get(0),
        )?;
        Ok((id, before.as_deref() != Some(value)))
    }
}

/// Where a fact came from: learned from the conversation, or stated by the user ("remember
/// that …").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FactOrigin {
    Conversation,
    User,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{ShortLived, delete_expired, open_in_memory};

    fn unit(hot: usize) -> Vec<f32> {
        let mut v = vec![0.0; crate::store::EMBEDDING_DIM];
        v[hot] = 1.0;
        v
    }

    #[test]
    fn a_fact_s_vector_goes_with_it_however_it_goes() {
        let c = open_in_memory().unwrap();
        let (facts, vectors) = (FactsRepo(&c), VectorRepo(&c));
        let put = |key: &str, value: &str, expires: i64| {
            let (id, changed) = facts.upsert("t", key, value, 0.9, 1, expires, FactOrigin::Conversation).unwrap();
            vectors.upsert(VecTable::Facts, id, &unit(id as usize)).unwrap();
            (id, changed)
        };
        let (a, changed) = put("gym", "Iron Works", 100);
        assert!(changed, "a new row is a change");
        assert_eq!(facts.upsert("t", "gym", "Iron Works", 0.9, 2, 100, FactOrigin::User).unwrap(), (a, false));
        assert_eq!(facts.upsert("t", "gym", "PureGym", 0.9, 3, 100, FactOrigin::User).unwrap(), (a, true));
        let (b, _) = put("team", "platform", 100);
        let (d, _) = put("desk", "4th floor", 50);
        let (e, _) = put("car", "Corsa", 50);
        let (f, _) = put("bike", "Brompton", 20);
        assert_eq!(vectors.count(VecTable::Facts).unwrap(), 5);
        facts.delete(b).unwrap();
        assert!(!vectors.contains(VecTable::Facts, b).unwrap(), "an evicted fact");
        assert_eq!(facts.sweep_topic("t", 30).unwrap(), 1);
        assert!(!vectors.contains(VecTable::Facts, f).unwrap(), "a fact swept at its expiry");
        assert_eq!(delete_expired(&c, ShortLived::Facts, 60).unwrap(), 2);
        assert!(!vectors.contains(VecTable::Facts, d).unwrap() && !vectors.contains(VecTable::Facts, e).unwrap());
        assert_eq!(vectors.search(VecTable::Facts, &unit(a as usize), 5).unwrap()[0].0, a);
        assert_eq!(vectors.count(VecTable::Facts).unwrap(), 1, "only the live fact keeps one");
        let codes: i64 = c
            .query_row("SELECT COUNT(*) FROM vector_codes WHERE tbl = 3 AND code IS NOT NULL", [], |r| r.get(0))
            .unwrap();
        assert_eq!(codes, 1);
    }
}
