//! The routing audit trail: one row per routing decision (docs/cognition.md §6.8).

use super::CachedSql;
use super::{StoreError, now_ts};
use crate::vocab::snapshot::LazyJson;
use rusqlite::{Connection, Row, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One routing decision as stored and as `audit --json` prints it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoutingRecord {
    pub id: String,
    pub thread_id: Option<String>,
    pub topic: String,
    pub exchange_id: Option<String>,
    /// The mode actually delivered (never a mode that was overridden later).
    pub selected_mode: String,
    pub router_confidence: Option<f64>,
    pub scores: Value,
    /// True when a social exit or forced mode decided before the scorer.
    pub pre_routed: bool,
    pub tiebreaker_used: bool,
    pub tiebreaker_candidates: Option<Value>,
    pub margin: Option<f64>,
    pub effective_margin: Option<f64>,
    pub signal_snapshot: LazyJson,
    pub weight_snapshot: Option<LazyJson>,
    pub weights_version: Option<i64>,
    pub routing_time_ms: Option<f64>,
    /// Which fallback fired, if any (e.g. "triage_timeout", "tiebreaker_invalid_json").
    pub fallback: Option<String>,
    pub reasoning: Option<String>,
    pub feedback: Option<Value>,
    pub reflection: Option<Value>,
    pub previous_mode: Option<String>,
    pub created_at: i64,
    /// The regulator's verdict on the turn (`ask --json`'s `regulator`), once it ran.
    #[serde(default)]
    pub regulator: Option<Value>,
    /// The adaptive layer's directives applied to the turn's reply (docs/cognition.md §18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<Value>,
}

/// One ACT iteration of an exchange, as `audit` shows it and `audit --json` prints it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ActIteration {
    pub iteration: i64,
    /// Which planner made this iteration's plan.
    pub planner: String,
    /// The actions the plan ran, as they were logged.
    pub actions: Vec<Value>,
    pub results: Option<Value>,
    pub ms: f64,
    pub fatigue: f64,
    /// Why the loop stopped after this iteration, on the last one.
    pub termination: Option<String>,
}

/// A decision still waiting for the feedback the next message gives
/// ([`RoutingRepo::latest_unjudged_in_thread`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Unjudged {
    pub id: String,
    pub exchange_id: Option<String>,
    pub selected_mode: String,
}

pub struct RoutingRepo<'c>(pub &'c Connection);

const COLUMNS: &str = "id, thread_id, topic, exchange_id, selected_mode, router_confidence, scores, pre_routed,
    tiebreaker_used, tiebreaker_candidates, margin, effective_margin, signal_snapshot, weight_snapshot,
    weights_version, routing_time_ms, fallback, reasoning, feedback, reflection, previous_mode, created_at, regulator, adaptive";

fn json(v: &Option<Value>) -> Option<String> {
    v.as_ref().map(Value::to_string)
}

fn parse(s: Option<String>) -> rusqlite::Result<Option<Value>> {
    s.map(|s| {
        serde_json::from_str(&s)
            .map_err(|e| rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e)))
    })
    .transpose()
}

fn from_row(r: &Row<'_>) -> rusqlite::Result<RoutingRecord> {
    Ok(RoutingRecord {
        id: r.get(0)?,
        thread_id: r.get(1)?,
        topic: r.get(2)?,
        exchange_id: r.get(3)?,
        selected_mode: r.get(4)?,
        router_confidence: r.get(5)?,
        scores: parse(r.get(6)?)?.unwrap_or(Value::Null),
        pre_routed: r.get(7)?,
        tiebreaker_used: r.get(8)?,
        tiebreaker_candidates: parse(r.get(9)?)?,
        margin: r.get(10)?,
        effective_margin: r.get(11)?,
        signal_snapshot: LazyJson::ready(parse(r.get(12)?)?.unwrap_or(Value::Null)),
        weight_snapshot: parse(r.get(13)?)?.map(LazyJson::ready),
        weights_version: r.get(14)?,
        routing_time_ms: r.get(15)?,
        fallback: r.get(16)?,
        reasoning: r.get(17)?,
        feedback: parse(r.get(18)?)?,
        reflection: parse(r.get(19)?)?,
        previous_mode: r.get(20)?,
        created_at: r.get(21)?,
        regulator: parse(r.get(22)?)?,
        adaptive: parse(r.get(23)?)?,
    })
}

impl RoutingRepo<'_> {
    pub fn insert(&self, d: &RoutingRecord) -> Result<(), StoreError> {
        self.0.exec(
            &format!("INSERT INTO routing_decisions ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24)"),
            params![
                d.id,
                d.thread_id,
                d.topic,
                d.exchange_id,
                d.selected_mode,
                d.router_confidence,
                d.scores.to_string(),
                d.pre_routed,
                d.tiebreaker_used,
                json(&d.tiebreaker_candidates),
                d.margin,
                d.effective_margin,
                d.signal_snapshot.text(),
                d.weight_snapshot.as_ref().map(LazyJson::text),
                d.weights_version,
                d.routing_time_ms,
                d.fallback,
                d.reasoning,
                json(&d.feedback),
                json(&d.reflection),
                d.previous_mode,
                if d.created_at == 0 { now_ts() } else { d.created_at },
                json(&d.regulator),
                json(&d.adaptive),
            ],
        )?;
        Ok(())
    }

    /// The newest decisions first, optionally only those that delivered `mode`.
    pub fn recent(&self, limit: usize, mode: Option<&str>) -> Result<Vec<RoutingRecord>, StoreError> {
        let mut stmt = self.0.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM routing_decisions
             WHERE ?1 IS NULL OR selected_mode = ?1 COLLATE NOCASE
             ORDER BY created_at DESC, rowid DESC LIMIT ?2"
        ))?;
        let rows = stmt.query_map(params![mode, limit as i64], from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every decision made in `[from, to)`, oldest first: the window the routing statistics
    /// and the stability regulator read.
    pub fn between(&self, from: i64, to: i64) -> Result<Vec<RoutingRecord>, StoreError> {
        let mut stmt = self.0.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM routing_decisions WHERE created_at >= ?1 AND created_at < ?2
             ORDER BY created_at, rowid"
        ))?;
        let rows = stmt.query_map(params![from, to], from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The ACT iterations of an exchange, in order: which planner made each plan, the actions,
    /// their results and why the loop stopped (the audit's answer to "who planned this?").
    pub fn act_iterations(&self, exchange_id: &str) -> Result<Vec<ActIteration>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT iteration_number, planner, actions_executed, action_results, execution_time_ms, fatigue,
                    termination_reason
             FROM cortex_iterations WHERE exchange_id = ?1 ORDER BY iteration_number, id",
        )?;
        let rows = stmt.query_map(params![exchange_id], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, Option<String>>(3)?,
                r.get::<_, f64>(4)?,
                r.get::<_, f64>(5)?,
                r.get::<_, Option<String>>(6)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (iteration, planner, actions, results, ms, fatigue, termination) = row?;
            out.push(ActIteration {
                iteration,
                planner,
                actions: serde_json::from_str(&actions)?,
                results: results.map(|r| serde_json::from_str::<Value>(&r)).transpose()?,
                ms,
                fatigue,
                termination,
            });
        }
        Ok(out)
    }

    /// Record the regulator's verdict on the turn a decision routed.
    pub fn set_regulator(&self, id: &str, verdict: &Value) -> Result<bool, StoreError> {
        let n = self
            .0
            .exec("UPDATE routing_decisions SET regulator = ?2 WHERE id = ?1", params![id, verdict.to_string()])?;
        Ok(n == 1)
    }

    /// Record the adaptive layer's directives applied to the turn a decision routed.
    pub fn set_adaptive(&self, id: &str, applied: &Value) -> Result<bool, StoreError> {
        let n = self
            .0
            .exec("UPDATE routing_decisions SET adaptive = ?2 WHERE id = ?1", params![id, applied.to_string()])?;
        Ok(n == 1)
    }

    /// The thread's newest decision when no feedback has judged it yet: what the next message's
    /// verdict goes to. Read every turn, so it takes three columns, not the whole record with
    /// its two JSON snapshots.
    pub fn latest_unjudged_in_thread(&self, thread_id: &str) -> Result<Option<Unjudged>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT id, exchange_id, selected_mode, feedback IS NULL FROM routing_decisions
             WHERE thread_id = ?1 ORDER BY created_at DESC, rowid DESC LIMIT 1",
        )?;
        let mut rows = stmt.query_map(params![thread_id], |r| {
            Ok((Unjudged { id: r.get(0)?, exchange_id: r.get(1)?, selected_mode: r.get(2)? }, r.get::<_, bool>(3)?))
        })?;
        Ok(rows.next().transpose()?.and_then(|(u, open)| open.then_some(u)))
    }

    /// Record the strong model's review of a decision (docs/cognition.md §15.6).
    pub fn set_reflection(&self, id: &str, reflection: &Value) -> Result<bool, StoreError> {
        let n = self
            .0
            .exec("UPDATE routing_decisions SET reflection = ?2 WHERE id = ?1", params![id, reflection.to_string()])?;
        Ok(n == 1)
    }

    /// Fill the post-exchange feedback label of a decision.
    pub fn set_feedback(&self, id: &str, feedback: &Value) -> Result<bool, StoreError> {
        let n = self
            .0
            .exec("UPDATE routing_decisions SET feedback = ?2 WHERE id = ?1", params![id, feedback.to_string()])?;
        Ok(n == 1)
    }
}
