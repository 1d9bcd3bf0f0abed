//! Phase D's rows, built from what the turn decided (pure: the engine writes them in one
//! transaction through `TurnRepo::commit`).

use super::phases::Delivery;
use super::report::TriageReport;
use crate::cognition::intent::TriageSource;
use crate::cognition::router::RoutingDecision;
use crate::store::{RoutingRecord, TriageRow};
use serde_json::{Value, json};

/// The `routing_decisions` row: the delivered mode with every signal, weight and score,
/// the margins, which fallbacks fired and why the mode was chosen.
#[allow(clippy::too_many_arguments)]
pub fn routing_record(
    id: String,
    thread_id: &str,
    exchange_id: &str,
    topic: &str,
    delivery: &Delivery,
    decision: &RoutingDecision,
    weights_version: u32,
    routing_time_ms: f64,
    fallbacks: &[String],
    now: i64,
) -> RoutingRecord {
    RoutingRecord {
        id,
        thread_id: Some(thread_id.to_string()),
        topic: topic.to_string(),
        exchange_id: Some(exchange_id.to_string()),
        selected_mode: delivery.mode.as_str().to_string(),
        router_confidence: Some(decision.router_confidence),
        scores: serde_json::to_value(decision.scores).unwrap_or(Value::Null),
        pre_routed: delivery.pre_routed,
        tiebreaker_used: decision.tiebreaker_used,
        tiebreaker_candidates: decision.tiebreak.map(|(a, b)| json!([a, b])),
        margin: Some(decision.margin),
        effective_margin: Some(decision.effective_margin),
        signal_snapshot: decision.signal_snapshot.clone(),
        weight_snapshot: Some(decision.weight_snapshot.clone()),
        weights_version: Some(i64::from(weights_version)),
        routing_time_ms: Some(routing_time_ms),
        fallback: (!fallbacks.is_empty()).then(|| fallbacks.join(",")),
        reasoning: Some(delivery.reason.clone()),
        feedback: None,
        reflection: None,
        previous_mode: decision.previous_mode.map(|m| m.as_str().to_string()),
        created_at: now,
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
