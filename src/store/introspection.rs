//! What `introspect` tells about the assistant's own recent past (docs/cognition.md §7.6): how
//! its recalls went and what it did on its own (reminders fired, drift thoughts, episodes
//! written, memories decayed). A read model across tables, like `browse`: it owns none.

use super::StoreError;
use rusqlite::{Connection, params};
use serde::Serialize;

/// Recall actions looked back on for the failure rate.
pub const RECALLS_CONSIDERED: i64 = 50;

/// How the recent `recall` actions went.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct RecallOutcomes {
    pub recalls: i64,
    /// Failed, or found nothing.
    pub failed: i64,
    /// Hits below full confidence across them (the feeling-of-knowing's raw material).
    pub partial_matches: i64,
}

impl RecallOutcomes {
    pub fn failure_rate(&self) -> Option<f64> {
        (self.recalls > 0).then(|| self.failed as f64 / self.recalls as f64)
    }
}

/// The last [`RECALLS_CONSIDERED`] recall actions' outcomes.
pub fn recall_outcomes(c: &Connection) -> Result<RecallOutcomes, StoreError> {
    Ok(c.query_row(
        "SELECT COUNT(*),
                COALESCE(SUM(ok = 0 OR hits = 0), 0),
                COALESCE(SUM(partial), 0)
         FROM (SELECT COALESCE(json_extract(j.value, '$.ok'), 0) AS ok,
                      COALESCE(json_array_length(json_extract(j.value, '$.data.hits')), 0) AS hits,
                      COALESCE(json_extract(j.value, '$.data.partial_matches'), 0) AS partial
               FROM cortex_iterations ci, json_each(ci.action_results) j
               WHERE ci.action_results IS NOT NULL AND json_valid(ci.action_results)
                     AND json_extract(j.value, '$.type') = 'recall'
               ORDER BY ci.id DESC LIMIT ?1)",
        params![RECALLS_CONSIDERED],
        |r| Ok(RecallOutcomes { recalls: r.get(0)?, failed: r.get(1)?, partial_matches: r.get(2)? }),
    )?)
}

/// One thing the assistant did without being asked at that moment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Activity {
    /// `reminder_fired`, `drift`, `episodes_written`, `memories_decayed`.
    pub kind: &'static str,
    pub what: String,
    pub at: i64,
}

/// What the assistant did on its own since `since`, newest first, at most `limit` rows.
pub fn recent_activity(c: &Connection, since: i64, limit: usize) -> Result<Vec<Activity>, StoreError> {
    let mut out = Vec::new();
    let mut stmt = c.prepare_cached(
        "SELECT message, fired_at FROM reminders WHERE fired_at IS NOT NULL AND fired_at > ?1
         ORDER BY fired_at DESC LIMIT ?2",
    )?;
    for row in stmt.query_map(params![since, limit as i64], |r| Ok((r.get::<_, String>(0)?, r.get(1)?)))? {
        let (m, at) = row?;
        out.push(Activity { kind: "reminder_fired", what: format!("reminded you: {m}"), at });
    }
    let mut stmt = c.prepare_cached(
        "SELECT thought_type, content, created_at FROM drift_thoughts WHERE created_at > ?1
         ORDER BY created_at DESC LIMIT ?2",
    )?;
    for row in stmt
        .query_map(params![since, limit as i64], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get(2)?)))?
    {
        let (kind, content, at) = row?;
        out.push(Activity { kind: "drift", what: format!("{kind} while idle: {content}"), at });
    }
    let (episodes, last): (i64, Option<i64>) = c.query_row(
        "SELECT COUNT(*), MAX(created_at) FROM episodes WHERE created_at > ?1 AND deleted_at IS NULL",
        params![since],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    if let (true, Some(at)) = (episodes > 0, last) {
        out.push(Activity {
            kind: "episodes_written",
            what: format!("wrote {episodes} episode(s) from our exchanges"),
            at,
        });
    }
    let (decayed, last): (i64, Option<i64>) = c.query_row(
        "SELECT COUNT(*), MAX(created_at) FROM memory_deletions
         WHERE created_at > ?1 AND reason IN ('expired', 'decayed') AND layer NOT IN ('working_memory', 'fok')",
        params![since],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    if let (true, Some(at)) = (decayed > 0, last) {
        out.push(Activity { kind: "memories_decayed", what: format!("let {decayed} short-lived memories lapse"), at });
    }
    out.sort_by_key(|a| std::cmp::Reverse(a.at));
    out.truncate(limit);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::fixtures::Fixture;

    #[test]
    fn recall_outcomes_count_empty_and_failed_recalls() {
        let c = crate::store::open_in_memory().unwrap();
        assert_eq!(recall_outcomes(&c).unwrap().failure_rate(), None);
        let results = r#"[{"type":"recall","ok":true,"data":{"hits":[{},{}],"partial_matches":1}},
                          {"type":"recall","ok":true,"data":{"hits":[],"partial_matches":0}},
                          {"type":"list","ok":true,"data":{}}]"#;
        let failed = r#"[{"type":"recall","ok":false,"data":{"error":"x"}}]"#;
        for (i, r) in [results, failed].into_iter().enumerate() {
            Fixture(&c).insert(
                "cortex_iterations",
                &[
                    ("exchange_id", &format!("x{i}")),
                    ("iteration_number", &0),
                    ("planner", &"deterministic"),
                    ("actions_executed", &"[]"),
                    ("action_results", &r),
                    ("execution_time_ms", &1.0),
                    ("fatigue", &1.0),
                    ("iteration_cost", &1.0),
                    ("mode", &"ACT"),
                    ("created_at", &0),
                ],
            );
        }
        let o = recall_outcomes(&c).unwrap();
        assert_eq!(o, RecallOutcomes { recalls: 3, failed: 2, partial_matches: 1 });
        assert!((o.failure_rate().unwrap() - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn activity_lists_fired_reminders_and_drift_newest_first() {
        let c = crate::store::open_in_memory().unwrap();
        Fixture(&c).insert(
            "reminders",
            &[
                ("message", &"call mum"),
                ("due_at", &"2026-11-24T09:00"),
                ("due_ts", &100),
                ("state", &"fired"),
                ("fired_at", &100),
                ("created_at", &50),
            ],
        );
        Fixture(&c).insert(
            "drift_thoughts",
            &[("thought_type", &"reflection"), ("content", &"hiking and rain"), ("created_at", &200)],
        );
        let a = recent_activity(&c, 0, 10).unwrap();
        let kinds: Vec<&str> = a.iter().map(|x| x.kind).collect();
        assert_eq!(kinds, ["drift", "reminder_fired"]);
        assert_eq!(a[1].what, "reminded you: call mum");
        assert!(recent_activity(&c, 150, 10).unwrap().iter().all(|x| x.kind == "drift"), "since");
    }
}
