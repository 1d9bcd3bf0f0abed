//! `uncertainties`: what the uncertainty engine doubts (docs/cognition.md §10). A record names its
//! memories by `(type, id)` and never copies their text: the text is read where it is shown,
//! so forgetting a memory leaves no copy of it here.

use super::CachedSql;
use super::{StoreError, UncertaintyItem};
use rusqlite::{Connection, OptionalExtension, Row, params};

/// A record to open. `a`/`b` are `(memory type, row id)`: trait, episode, concept, fact, gist,
/// relationship.
#[derive(Debug, Clone, PartialEq)]
pub struct NewUncertainty<'a> {
    pub a: (&'a str, String),
    /// `None` for a solo record (unverified, stale, ambiguous).
    pub b: Option<(&'a str, String)>,
    /// contradiction | unverified | stale | ambiguous
    pub kind: &'a str,
    /// low | medium | high | critical
    pub severity: &'a str,
    /// ingestion | drift | pre_action | consolidation
    pub context: &'a str,
    pub reasoning: Option<&'a str>,
    pub temporal_signal: bool,
    pub surface_context: Option<&'a str>,
    /// Set when the record is resolved as it is opened (a temporal supersession).
    pub resolved: Option<(&'a str, &'a str)>,
}

/// Everything a record holds (the UI item plus its resolution).
#[derive(Debug, Clone, PartialEq)]
pub struct UncertaintyRecord {
    pub item: UncertaintyItem,
    pub temporal_signal: bool,
    pub resolution_strategy: Option<String>,
    pub resolution_detail: Option<String>,
    pub last_surfaced_at: Option<i64>,
}

const COLUMNS: &str = "id, uncertainty_type, severity, state, memory_a_type, memory_a_id, memory_b_type, memory_b_id,
    reasoning, surface_context, surfaced_count, created_at, temporal_signal, resolution_strategy, resolution_detail,
    last_surfaced_at";
const BY_SEVERITY: &str = "CASE severity WHEN 'critical' THEN 0 WHEN 'high' THEN 1 WHEN 'medium' THEN 2 ELSE 3 END";

fn record(r: &Row<'_>) -> rusqlite::Result<UncertaintyRecord> {
    let b_type: Option<String> = r.get(6)?;
    let b_id: Option<String> = r.get(7)?;
    Ok(UncertaintyRecord {
        item: UncertaintyItem {
            id: r.get(0)?,
            kind: r.get(1)?,
            severity: r.get(2)?,
            state: r.get(3)?,
            memory_a: format!("{}:{}", r.get::<_, String>(4)?, r.get::<_, String>(5)?),
            memory_b: b_type.zip(b_id).map(|(t, i)| format!("{t}:{i}")),
            reasoning: r.get(8)?,
            surface_context: r.get(9)?,
            surfaced_count: r.get(10)?,
            created_at: r.get(11)?,
        },
        temporal_signal: r.get::<_, i64>(12)? != 0,
        resolution_strategy: r.get(13)?,
        resolution_detail: r.get(14)?,
        last_surfaced_at: r.get(15)?,
    })
}

pub struct UncertaintiesRepo<'c>(pub &'c Connection);

impl UncertaintiesRepo<'_> {
    /// Store a record; returns its id (a UUIDv7, so ids sort by creation).
    pub fn insert(&self, u: &NewUncertainty<'_>, now: i64) -> Result<String, StoreError> {
        let id = uuid::Uuid::now_v7().to_string();
        let (state, strategy, detail, resolved_at) = match u.resolved {
            Some((s, d)) => ("resolved", Some(s), Some(d), Some(now)),
            None => ("open", None, None, None),
        };
        self.0.exec(
            "INSERT INTO uncertainties (id, memory_a_type, memory_a_id, memory_b_type, memory_b_id, uncertainty_type,
                 severity, detection_context, reasoning, temporal_signal, surface_context, state, resolution_strategy,
                 resolution_detail, resolved_at, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
            params![
                id,
                u.a.0,
                u.a.1,
                u.b.as_ref().map(|b| b.0),
                u.b.as_ref().map(|b| b.1.as_str()),
                u.kind,
                u.severity,
                u.context,
                u.reasoning,
                u.temporal_signal,
                u.surface_context,
                state,
                strategy,
                detail,
                resolved_at,
                now
            ],
        )?;
        Ok(id)
    }

    pub fn get(&self, id: &str) -> Result<Option<UncertaintyRecord>, StoreError> {
        Ok(self.0.row(&format!("SELECT {COLUMNS} FROM uncertainties WHERE id = ?1"), params![id], record).optional()?)
    }

    /// Open and surfaced records, most severe first, then newest.
    pub fn open(&self, limit: usize) -> Result<Vec<UncertaintyItem>, StoreError> {
        let mut stmt = self.0.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM uncertainties WHERE state IN ('open', 'surfaced')
             ORDER BY {BY_SEVERITY}, created_at DESC, id DESC LIMIT ?1"
        ))?;
        let rows = stmt.query_map(params![limit as i64], |r| record(r).map(|x| x.item))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Unresolved records between two memories that a reply may have asked about since
    /// `since` (opened then, or raised then), the latest first.
    pub fn recently_asked(&self, since: i64) -> Result<Vec<UncertaintyItem>, StoreError> {
        let mut stmt = self.0.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM uncertainties WHERE state IN ('open', 'surfaced') AND memory_b_id IS NOT NULL
               AND MAX(created_at, COALESCE(last_surfaced_at, 0)) >= ?1
             ORDER BY MAX(created_at, COALESCE(last_surfaced_at, 0)) DESC, id DESC LIMIT 3"
        ))?;
        let rows = stmt.query_map(params![since], |r| record(r).map(|x| x.item))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every record, unresolved first, then newest (what `memory uncertainties` lists).
    pub fn all(&self, limit: usize) -> Result<Vec<UncertaintyRecord>, StoreError> {
        let mut stmt = self.0.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM uncertainties
             ORDER BY state NOT IN ('open', 'surfaced'), {BY_SEVERITY}, created_at DESC, id DESC LIMIT ?1"
        ))?;
        let rows = stmt.query_map(params![limit as i64], record)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Unresolved records naming memory `(kind, id)` on either side.
    pub fn open_about(&self, kind: &str, id: &str) -> Result<Vec<UncertaintyRecord>, StoreError> {
        let mut stmt = self.0.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM uncertainties WHERE state IN ('open', 'surfaced')
               AND ((memory_a_type = ?1 AND memory_a_id = ?2) OR (memory_b_type = ?1 AND memory_b_id = ?2))
             ORDER BY created_at DESC, id DESC"
        ))?;
        let rows = stmt.query_map(params![kind, id], record)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Whether an open or surfaced record between the two memories (either order) was created
    /// at or after `since` (RECONCILE skips those pairs).
    pub fn recent_between(&self, a: (&str, &str), b: (&str, &str), since: i64) -> Result<bool, StoreError> {
        Ok(self.0.row(
            "SELECT EXISTS (SELECT 1 FROM uncertainties WHERE state IN ('open', 'surfaced') AND created_at >= ?5
               AND ((memory_a_type = ?1 AND memory_a_id = ?2 AND memory_b_type = ?3 AND memory_b_id = ?4)
                 OR (memory_a_type = ?3 AND memory_a_id = ?4 AND memory_b_type = ?1 AND memory_b_id = ?2)))",
            params![a.0, a.1, b.0, b.1, since],
            |r| r.get(0),
        )?)
    }

    /// A reply raised the record: counted, state `surfaced`, and after `nag_after` raisings
    /// the severity steps down one level (anti-nag, docs/cognition.md §10.6). Returns the new count.
    pub fn mark_surfaced(&self, id: &str, nag_after: i64, now: i64) -> Result<i64, StoreError> {
        self.0.exec(
            "UPDATE uncertainties SET state = 'surfaced', surfaced_count = surfaced_count + 1, last_surfaced_at = ?2,
                 severity = CASE WHEN surfaced_count + 1 >= ?3 THEN
                     CASE severity WHEN 'critical' THEN 'high' WHEN 'high' THEN 'medium' ELSE 'low' END
                   ELSE severity END
             WHERE id = ?1 AND state IN ('open', 'surfaced')",
            params![id, now, nag_after],
        )?;
        Ok(self
            .0
            .row("SELECT surfaced_count FROM uncertainties WHERE id = ?1", params![id], |r| r.get(0))
            .optional()?
            .unwrap_or(0))
    }

    /// Close a record: `resolved` with a strategy, or `decayed`. Returns whether it was open.
    pub fn resolve(&self, id: &str, state: &str, strategy: &str, detail: &str, now: i64) -> Result<bool, StoreError> {
        Ok(self.0.exec(
            "UPDATE uncertainties SET state = ?2, resolution_strategy = ?3, resolution_detail = ?4, resolved_at = ?5
             WHERE id = ?1 AND state IN ('open', 'surfaced')",
            params![id, state, strategy, detail, now],
        )? > 0)
    }

    /// How many records are in each state `(open, surfaced, resolved, decayed)`.
    pub fn counts(&self) -> Result<(i64, i64, i64, i64), StoreError> {
        Ok(self.0.row(
            "SELECT COALESCE(SUM(state = 'open'), 0), COALESCE(SUM(state = 'surfaced'), 0),
                    COALESCE(SUM(state = 'resolved'), 0), COALESCE(SUM(state = 'decayed'), 0) FROM uncertainties",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::open_in_memory;

    fn new<'a>(kind: &'a str, b: Option<(&'a str, String)>) -> NewUncertainty<'a> {
        NewUncertainty {
            a: ("trait", "1".into()),
            b,
            kind,
            severity: "critical",
            context: "ingestion",
            reasoning: Some("two homes at once"),
            temporal_signal: false,
            surface_context: Some("home"),
            resolved: None,
        }
    }

    #[test]
    fn records_open_surface_with_anti_nag_and_close() {
        let c = open_in_memory().unwrap();
        let repo = UncertaintiesRepo(&c);
        let id = repo.insert(&new("contradiction", Some(("trait", "2".into()))), 10).unwrap();
        let solo = repo.insert(&new("unverified", None), 11).unwrap();
        assert_eq!(repo.open(10).unwrap().len(), 2);
        assert!(repo.get(&solo).unwrap().unwrap().item.memory_b.is_none(), "solo records are allowed");
        assert!(repo.recent_between(("trait", "2"), ("trait", "1"), 0).unwrap(), "either order");
        assert!(!repo.recent_between(("trait", "2"), ("trait", "1"), 11).unwrap(), "too old");
        assert_eq!(repo.open_about("trait", "2").unwrap().len(), 1);
        for n in 1..=2 {
            assert_eq!(repo.mark_surfaced(&id, 3, 20).unwrap(), n);
        }
        assert_eq!(repo.get(&id).unwrap().unwrap().item.severity, "critical");
        assert_eq!(repo.mark_surfaced(&id, 3, 20).unwrap(), 3);
        let r = repo.get(&id).unwrap().unwrap();
        assert_eq!((r.item.state.as_str(), r.item.severity.as_str()), ("surfaced", "high"), "stepped down once");
        assert!(repo.resolve(&id, "resolved", "user_clarified", "the new one", 30).unwrap());
        assert!(!repo.resolve(&id, "resolved", "user_clarified", "again", 31).unwrap(), "closed once");
        assert_eq!(repo.counts().unwrap(), (1, 0, 1, 0));
        let all = repo.all(10).unwrap();
        assert_eq!(all[0].item.id, solo, "unresolved first");
        assert_eq!(all[1].resolution_strategy.as_deref(), Some("user_clarified"));
    }

    #[test]
    fn a_record_can_be_resolved_as_it_is_opened() {
        let c = open_in_memory().unwrap();
        let repo = UncertaintiesRepo(&c);
        let mut u = new("contradiction", Some(("trait", "2".into())));
        u.resolved = Some(("temporal_supersede", "moved"));
        let id = repo.insert(&u, 5).unwrap();
        let r = repo.get(&id).unwrap().unwrap();
        assert_eq!((r.item.state.as_str(), r.resolution_strategy.as_deref()), ("resolved", Some("temporal_supersede")));
        assert!(repo.open(10).unwrap().is_empty());
    }
}
