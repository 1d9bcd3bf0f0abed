//! Phase D's rows, built from what the turn decided (pure: the engine writes them in one
//! transaction through `TurnRepo::commit`).

use super::report::TriageReport;
use super::turn::Header;
use crate::cognition::intent::TriageSource;
use crate::cognition::router::{Decision, RoutingDecision};
use crate::store::{RoutingRecord, TriageRow};
use serde_json::{Value, json};

/// The `routing_decisions` row: the delivered mode with every signal, weight and score,
/// the margins, which fallbacks fired and why the mode was chosen.
pub fn routing_record(
    h: &Header,
    topic: &str,
    settled: &Decision,
    decision: &RoutingDecision,
    routing_time_ms: f64,
    fallbacks: &[String],
) -> RoutingRecord {
    RoutingRecord {
        id: h.routing_id.to_string(),
        thread_id: Some(h.thread_id.to_string()),
        topic: topic.to_string(),
        exchange_id: Some(h.exchange_id.to_string()),
        selected_mode: settled.mode.as_str().to_string(),
        router_confidence: Some(decision.router_confidence),
        scores: serde_json::to_value(decision.scores).unwrap_or(Value::Null),
        pre_routed: settled.pre_routed,
        tiebreaker_used: decision.tiebreaker_used,
        tiebreaker_candidates: decision.tiebreak.map(|(a, b)| json!([a, b])),
        margin: Some(decision.margin),
        effective_margin: Some(decision.effective_margin),
        signal_snapshot: decision.signal_snapshot.clone(),
        weight_snapshot: Some(decision.weight_snapshot.clone()),
        weights_version: Some(i64::from(h.weights_version)),
        routing_time_ms: Some(routing_time_ms),
        fallback: (!fallbacks.is_empty()).then(|| fallbacks.join(",")),
        reasoning: Some(settled.why.to_string()),
        feedback: None,
        reflection: None,
        previous_mode: decision.previous_mode.map(|m| m.as_str().to_string()),
        created_at: h.now,
        regulator: None,
        adaptive: None,
    }
}

/// The `triage_calibration` row; social exits never reached triage and have none.
pub fn triage_row(t: &TriageReport) -> Option<TriageRow> {
    let r = &t.result;
    let source = match r.source {
        TriageSource::Model => "llm",
        TriageSource::Heuristic => "heuristic",
        TriageSource::Social => return None,
    };
    Some(TriageRow {
        source,
        fallback_reason: t.fallback.clone(),
        branch: crate::wire_name(&r.branch),
        mode: crate::wire_name(&r.mode),
        skills: json!(r.skills),
        confidence_internal: r.confidence_internal,
        confidence_tool_need: r.confidence_tool_need,
        freshness_risk: r.freshness_risk,
        effort: crate::wire_name(&r.effort),
        reasoning: r.reasoning.clone(),
        latency_ms: t.latency_ms,
    })
}
