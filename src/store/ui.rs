//! Read-only queries the terminal UI runs in a background task (never in its draw path):
//! the routing audit table and one decision in full, stored drift thoughts, and open
//! uncertainties. The row types travel to the UI inside `EngineEvent`s, so they are
//! small, owned and serialisable.

use super::{RoutingRecord, StoreError};
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One routing decision as the audit table lists it: enough for a row, not the snapshots.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditRow {
    pub id: String,
    pub created_at: i64,
    pub topic: String,
    /// The delivered mode, as stored ("RESPOND", …).
    pub mode: String,
    pub confidence: Option<f64>,
    pub tiebreaker_used: bool,
    pub routing_time_ms: Option<f64>,
    pub pre_routed: bool,
    /// Which fallbacks fired, comma-separated, when any did.
    pub fallback: Option<String>,
    /// The post-exchange feedback label, once the feedback detector has filled it.
    pub feedback: Option<Value>,
    /// The regulator's decision on the turn ("continue", "circuit_break", …), once it ran.
    pub regulator: Option<String>,
}

/// A background thought from the drift engine, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DriftItem {
    pub id: i64,
    /// reflection | question | hypothesis | insight
    pub kind: String,
    pub content: String,
    pub topic: Option<String>,
    /// What the drift engine did with it (COMMUNICATE, REFLECT, …, NOTHING).
    pub action: Option<String>,
    pub energy: Option<f64>,
    pub created_at: i64,
}

/// An uncertainty the engine holds about two memories (or one), as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UncertaintyItem {
    pub id: String,
    /// contradiction | unverified | stale | ambiguous
    pub kind: String,
    /// low | medium | high | critical
    pub severity: String,
    /// open | surfaced | resolved | decayed
    pub state: String,
    /// `type:id` of the memory in question, and of the one it conflicts with.
    pub memory_a: String,
    pub memory_b: Option<String>,
    pub reasoning: Option<String>,
    /// What the conversation should be about for the record to be raised.
    #[serde(default)]
    pub surface_context: Option<String>,
    /// How often it was raised in a reply.
    #[serde(default)]
    pub surfaced_count: i64,
    pub created_at: i64,
}

impl UncertaintyItem {
    /// Still to be shown: neither resolved nor decayed.
    pub fn is_open(&self) -> bool {
        matches!(self.state.as_str(), "open" | "surfaced")
    }

    /// Sort key: critical first.
    pub fn severity_rank(&self) -> u8 {
        match self.severity.as_str() {
            "critical" => 0,
            "high" => 1,
            "medium" => 2,
            _ => 3,
        }
    }
}

/// The newest routing decisions first, optionally only those that delivered `mode`.
pub fn audit_rows(conn: &Connection, limit: usize, mode: Option<&str>) -> Result<Vec<AuditRow>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, created_at, topic, selected_mode, router_confidence, tiebreaker_used, routing_time_ms,
                pre_routed, fallback, feedback, json_extract(regulator, '$.decision')
         FROM routing_decisions
         WHERE ?1 IS NULL OR selected_mode = ?1 COLLATE NOCASE
         ORDER BY created_at DESC, rowid DESC LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![mode, limit as i64], |r| {
        Ok(AuditRow {
            id: r.get(0)?,
            created_at: r.get(1)?,
            topic: r.get(2)?,
            mode: r.get(3)?,
            confidence: r.get(4)?,
            tiebreaker_used: r.get(5)?,
            routing_time_ms: r.get(6)?,
            pre_routed: r.get(7)?,
            fallback: r.get(8)?,
            feedback: lenient_json(r.get(9)?),
            // A damaged verdict shows as none rather than failing the list.
            regulator: r.get(10).ok().flatten(),
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// One routing decision in full, for the audit's detail view.
///
/// Snapshot columns that do not parse as JSON come back as strings rather than failing the
/// whole view: the detail view is for looking at what is stored, damaged or not.
pub fn routing_decision(conn: &Connection, id: &str) -> Result<Option<RoutingRecord>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, thread_id, topic, exchange_id, selected_mode, router_confidence, scores, pre_routed,
                tiebreaker_used, tiebreaker_candidates, margin, effective_margin, signal_snapshot, weight_snapshot,
                weights_version, routing_time_ms, fallback, reasoning, feedback, reflection, previous_mode, created_at,
                regulator, adaptive
         FROM routing_decisions WHERE id = ?1",
    )?;
    Ok(stmt.query_row(params![id], record).optional()?)
}

fn record(r: &Row<'_>) -> rusqlite::Result<RoutingRecord> {
    Ok(RoutingRecord {
        id: r.get(0)?,
        thread_id: r.get(1)?,
        topic: r.get(2)?,
        exchange_id: r.get(3)?,
        selected_mode: r.get(4)?,
        router_confidence: r.get(5)?,
        scores: lenient_json(r.get(6)?).unwrap_or(Value::Null),
        pre_routed: r.get(7)?,
        tiebreaker_used: r.get(8)?,
        tiebreaker_candidates: lenient_json(r.get(9)?),
        margin: r.get(10)?,
        effective_margin: r.get(11)?,
        signal_snapshot: lenient_json(r.get(12)?).unwrap_or(Value::Null).into(),
        weight_snapshot: lenient_json(r.get(13)?).map(Into::into),
        weights_version: r.get(14)?,
        routing_time_ms: r.get(15)?,
        fallback: r.get(16)?,
        reasoning: r.get(17)?,
        feedback: lenient_json(r.get(18)?),
        reflection: lenient_json(r.get(19)?),
        previous_mode: r.get(20)?,
        created_at: r.get(21)?,
        regulator: lenient_json(r.get(22)?),
        adaptive: lenient_json(r.get(23)?),
    })
}

fn lenient_json(s: Option<String>) -> Option<Value> {
    s.map(|s| serde_json::from_str(&s).unwrap_or(Value::String(s)))
}

/// The newest stored drift thoughts first.
pub fn recent_drift(conn: &Connection, limit: usize) -> Result<Vec<DriftItem>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, thought_type, content, topic, action, energy, created_at
         FROM drift_thoughts ORDER BY created_at DESC, id DESC LIMIT ?1",
    )?;
    let rows = stmt.query_map(params![limit as i64], |r| {
        Ok(DriftItem {
            id: r.get(0)?,
            kind: r.get(1)?,
            content: r.get(2)?,
            topic: r.get(3)?,
            action: r.get(4)?,
            energy: r.get(5)?,
            created_at: r.get(6)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Open (and surfaced, unresolved) uncertainties, most severe first, then newest.
pub fn open_uncertainties(conn: &Connection, limit: usize) -> Result<Vec<UncertaintyItem>, StoreError> {
    super::UncertaintiesRepo(conn).open(limit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{RoutingRepo, open_in_memory};
    use serde_json::json;

    fn decision(id: &str, mode: &str, at: i64) -> RoutingRecord {
        RoutingRecord {
            id: id.into(),
            thread_id: Some("t".into()),
            topic: "groceries".into(),
            exchange_id: Some(format!("x-{id}")),
            selected_mode: mode.into(),
            router_confidence: Some(0.4),
            scores: json!({"RESPOND": 0.5, "CLARIFY": 0.2, "ACT": 0.1, "ACKNOWLEDGE": 0.0, "IGNORE": -0.2}),
            pre_routed: false,
            tiebreaker_used: mode == "CLARIFY",
            tiebreaker_candidates: None,
            margin: Some(0.4),
            effective_margin: Some(0.2),
            signal_snapshot: json!({"has_question_mark": true}).into(),
            weight_snapshot: Some(json!({"version": 1}).into()),
            weights_version: Some(1),
            routing_time_ms: Some(0.12),
            fallback: None,
            reasoning: Some("highest score".into()),
            feedback: None,
            reflection: None,
            previous_mode: None,
            created_at: at,
            regulator: None,
            adaptive: None,
        }
    }

    #[test]
    fn audit_rows_newest_first_and_filtered_by_mode() {
        let conn = open_in_memory().unwrap();
        let repo = RoutingRepo(&conn);
        repo.insert(&decision("a", "RESPOND", 100)).unwrap();
        repo.insert(&decision("b", "CLARIFY", 200)).unwrap();
        repo.insert(&decision("c", "RESPOND", 300)).unwrap();
        let all = audit_rows(&conn, 10, None).unwrap();
        assert_eq!(all.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["c", "b", "a"]);
        assert!(all[1].tiebreaker_used);
        let respond = audit_rows(&conn, 10, Some("respond")).unwrap();
        assert_eq!(respond.len(), 2);
        assert_eq!(audit_rows(&conn, 1, None).unwrap().len(), 1);

        let full = routing_decision(&conn, "b").unwrap().unwrap();
        assert_eq!(full, decision("b", "CLARIFY", 200));
        assert!(routing_decision(&conn, "zzz").unwrap().is_none());
    }

    #[test]
    fn drift_and_uncertainties_read_back() {
        let conn = open_in_memory().unwrap();
        conn.execute(
            "INSERT INTO drift_thoughts (thought_type, content, topic, action, energy, created_at)
             VALUES ('question', 'Why tea at 4?', 'habits', 'REFLECT', 0.6, 10),
                    ('insight', 'Walks help focus', NULL, NULL, NULL, 20)",
            [],
        )
        .unwrap();
        let d = recent_drift(&conn, 10).unwrap();
        assert_eq!(d[0].content, "Walks help focus");
        assert_eq!(d[1].topic.as_deref(), Some("habits"));

        conn.execute(
            "INSERT INTO uncertainties (id, memory_a_type, memory_a_id, memory_b_type, memory_b_id,
                 uncertainty_type, severity, detection_context, reasoning, state, created_at)
             VALUES ('u1', 'trait', '3', 'trait', '9', 'contradiction', 'critical', 'ingestion', 'lives in Oslo vs Bergen', 'open', 5),
                    ('u2', 'fact', '1', NULL, NULL, 'stale', 'low', 'consolidation', NULL, 'surfaced', 6),
                    ('u3', 'fact', '2', NULL, NULL, 'stale', 'high', 'consolidation', NULL, 'resolved', 7)",
            [],
        )
        .unwrap();
        let u = open_uncertainties(&conn, 10).unwrap();
        assert_eq!(u.iter().map(|x| x.id.as_str()).collect::<Vec<_>>(), ["u1", "u2"]);
        assert_eq!(u[0].memory_b.as_deref(), Some("trait:9"));
        assert!(u[1].is_open());
    }
}
