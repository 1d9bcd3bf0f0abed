//! Routing reflection at idle (docs/cognition.md §15.6, parameters §10): the strong model
//! reviews a few past routing decisions as a consultant and says where the ambiguity lay.
//! Its answer is advisory: it is stored in `routing_decisions.reflection` and only the
//! regulator reads it, as the share of the week's confident reflections naming each dimension
//! ([`super::routing::reflection_shares`]).
//!
//! Sampling, the request and the reading of the answer are pure; [`reflect_batch`] ties them
//! to the store and the model.

use crate::SplitMix64;
use crate::config::Role;
use crate::llm::{ChatRequest, Llm, Message, ResponseFormat};
use crate::store::{ChatRepo, Db, RoutingRecord, RoutingRepo, StoreError};
use serde_json::{Value, json};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

pub const PROMPT: &str = include_str!("../../../prompts/routing-reflection.md");
/// Decisions reviewed per run.
pub const BATCH: usize = 5;
/// Runs are at least this far apart.
pub const MIN_GAP_S: i64 = 30 * 60;
/// A reflection less confident than this is stored but not counted as a pressure.
pub const CONFIDENCE_GATE: f64 = 0.7;
/// Sampling shares: low-confidence, high-confidence and tie-break decisions.
pub const SHARES: [(Stratum, f64); 3] = [(Stratum::Low, 0.5), (Stratum::High, 0.2), (Stratum::Tie, 0.3)];
/// Below this router confidence a decision is low-confidence (the hysteresis threshold, §6.5).
pub const LOW_CONFIDENCE: f64 = 0.15;
/// From this router confidence on a decision is high-confidence.
pub const HIGH_CONFIDENCE: f64 = 0.5;
pub const TIMEOUT: Duration = Duration::from_secs(60);
pub const DIMENSIONS: [&str; 5] =
    ["memory_availability", "intent_clarity", "tone_ambiguity", "context_sufficiency", "social_vs_substantive"];
const LEVELS: [&str; 4] = ["none", "low", "moderate", "high"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stratum {
    Low,
    High,
    Tie,
}

/// Which stratum a decision belongs to: a tie-break candidate first, then by confidence;
/// `None` for a pre-routed decision (no scores to judge) or a middling one.
pub fn stratum(r: &RoutingRecord) -> Option<Stratum> {
    if r.pre_routed {
        return None;
    }
    if r.tiebreaker_candidates.as_ref().is_some_and(|v| !v.is_null()) {
        return Some(Stratum::Tie);
    }
    match r.router_confidence {
        Some(c) if c < LOW_CONFIDENCE => Some(Stratum::Low),
        Some(c) if c >= HIGH_CONFIDENCE => Some(Stratum::High),
        _ => None,
    }
}

/// Up to [`BATCH`] unreflected decisions: each slot draws a stratum by [`SHARES`]; an empty
/// stratum gives its slot to the largest share that still has decisions.
pub fn sample<'a>(rows: &'a [RoutingRecord], rng: &mut SplitMix64) -> Vec<&'a RoutingRecord> {
    let mut pools: Vec<(Stratum, f64, Vec<&RoutingRecord>)> = SHARES
        .iter()
        .map(|(s, w)| (*s, *w, rows.iter().filter(|r| r.reflection.is_none() && stratum(r) == Some(*s)).collect()))
        .collect();
    let mut out = Vec::new();
    while out.len() < BATCH {
        let u = rng.next_f64();
        let mut acc = 0.0;
        let mut pick = None;
        for (i, (_, w, _)) in pools.iter().enumerate() {
            acc += w;
            if u < acc {
                pick = Some(i);
                break;
            }
        }
        let drawn = pick.filter(|&i| !pools[i].2.is_empty());
        let i = match drawn.or_else(|| {
            (0..pools.len()).filter(|&i| !pools[i].2.is_empty()).max_by(|&a, &b| pools[a].1.total_cmp(&pools[b].1))
        }) {
            Some(i) => i,
            None => break,
        };
        let k = rng.below(pools[i].2.len());
        out.push(pools[i].2.swap_remove(k));
    }
    out
}

pub fn schema() -> Value {
    json!({
        "type": "object",
        "required": ["ambiguity_level", "uncertainty_dimensions", "agree_with_decision", "confidence"],
        "properties": {
            "ambiguity_level": {"type": "string", "enum": LEVELS},
            "uncertainty_dimensions": {"type": "array", "items": {
                "type": "object",
                "required": ["dimension"],
                "properties": {
                    "dimension": {"type": "string", "enum": DIMENSIONS},
                    "description": {"type": "string"},
                    "affected_modes": {"type": "array", "items": {"type": "string"}},
                    "signal_gap": {"type": "string"}
                }
            }},
            "agree_with_decision": {"type": "boolean"},
            "confidence": {"type": "number"}
        }
    })
}

/// The decision as the reviewer sees it: the message, the delivered mode, all five scores,
/// the margin and the signals that were on.
pub fn request(r: &RoutingRecord, message: Option<&str>) -> ChatRequest {
    let signals: serde_json::Map<String, Value> = r
        .signal_snapshot
        .as_object()
        .map(|o| {
            o.iter()
                .filter(|(_, v)| !matches!(v, Value::Bool(false) | Value::Null) && v.as_f64() != Some(0.0))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default();
    let decision = json!({
        "message": message.unwrap_or("(not kept)"),
        "delivered_mode": r.selected_mode,
        "scores": r.scores,
        "router_confidence": r.router_confidence,
        "effective_margin": r.effective_margin,
        "tie_break_candidates": r.tiebreaker_candidates,
        "previous_mode": r.previous_mode,
        "signals": signals,
    });
    let mut req = ChatRequest::new(vec![Message::system(PROMPT.trim()), Message::user(decision.to_string())]);
    req.max_tokens = 400;
    req.temperature = 0.0;
    req.logprobs = false;
    req.format = ResponseFormat::JsonSchema { name: "routing_reflection".into(), schema: schema() };
    req
}

/// The stored reflection: the answer's fields, checked; unknown dimensions and malformed
/// entries are dropped, confidence clamped to 0–1. `None` when a required field is missing
/// or of the wrong kind (nothing is stored and the decision can be sampled again).
pub fn read_answer(v: &Value, model: &str, now: i64) -> Option<Value> {
    let level = v.get("ambiguity_level")?.as_str().filter(|l| LEVELS.contains(l))?;
    let agree = v.get("agree_with_decision")?.as_bool()?;
    let confidence = v.get("confidence")?.as_f64().filter(|c| c.is_finite())?.clamp(0.0, 1.0);
    let dims: Vec<Value> = v
        .get("uncertainty_dimensions")?
        .as_array()?
        .iter()
        .filter(|d| d.get("dimension").and_then(Value::as_str).is_some_and(|n| DIMENSIONS.contains(&n)))
        .map(|d| {
            json!({
                "dimension": d["dimension"],
                "description": d.get("description").and_then(Value::as_str).unwrap_or(""),
                "affected_modes": d.get("affected_modes").filter(|m| m.is_array()).cloned().unwrap_or(json!([])),
                "signal_gap": d.get("signal_gap").and_then(Value::as_str).unwrap_or(""),
            })
        })
        .collect();
    Some(json!({
        "ambiguity_level": level,
        "uncertainty_dimensions": dims,
        "agree_with_decision": agree,
        "confidence": confidence,
        "counted": confidence >= CONFIDENCE_GATE,
        "model": model,
        "at": now,
    }))
}

/// Why a run did nothing, or how many decisions it reviewed.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The strong model is the built-in one: reflection is off.
    BuiltIn,
    Reviewed {
        stored: usize,
        failed: usize,
    },
}

/// Whether reflection can run with these models: the strong role must be a real model.
pub fn available(llm: &Llm) -> bool {
    llm.route(Role::Strong).is_some_and(|r| !r.builtin)
}

/// One run at `now`: sample the week's unreflected decisions and ask the strong model about
/// each; an answer that does not read is skipped (the decision stays unreflected).
pub async fn reflect_batch(
    db: &Db,
    llm: &Llm,
    now: i64,
    seed: u64,
    cancel: &CancellationToken,
) -> Result<Outcome, StoreError> {
    if !available(llm) {
        return Ok(Outcome::BuiltIn);
    }
    let window = super::routing::REFLECTION_WINDOW_S;
    let rows = db.call(move |c| RoutingRepo(c).between(now - window, now + 1)).await?;
    let mut rng = SplitMix64(seed);
    let picked: Vec<RoutingRecord> = sample(&rows, &mut rng).into_iter().cloned().collect();
    let model = llm.describe(Role::Strong);
    let (mut stored, mut failed) = (0, 0);
    for r in picked {
        let exchange = r.exchange_id.clone();
        let message = match exchange {
            Some(x) => db.call(move |c| ChatRepo(c).user_text(&x)).await?,
            None => None,
        };
        let req = request(&r, message.as_deref());
        let answer = match llm.structured(Role::Strong, &req, &schema(), TIMEOUT, cancel).await {
            Ok(v) => read_answer(&v, &model, now),
            Err(e) => {
                tracing::debug!("routing reflection call failed: {}", crate::describe(&e));
                None
            }
        };
        match answer {
            Some(v) => {
                let id = r.id.clone();
                db.call(move |c| RoutingRepo(c).set_reflection(&id, &v)).await?;
                stored += 1;
            }
            None => failed += 1,
        }
        if cancel.is_cancelled() {
            break;
        }
    }
    Ok(Outcome::Reviewed { stored, failed })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(i: usize, confidence: f64, tie: bool) -> RoutingRecord {
        RoutingRecord {
            id: format!("r{i}"),
            thread_id: None,
            topic: "t".into(),
            exchange_id: None,
            selected_mode: "RESPOND".into(),
            router_confidence: Some(confidence),
            scores: json!({}),
            pre_routed: false,
            tiebreaker_used: false,
            tiebreaker_candidates: tie.then(|| json!(["RESPOND", "CLARIFY"])),
            margin: None,
            effective_margin: None,
            signal_snapshot: Value::Null.into(),
            weight_snapshot: None,
            weights_version: None,
            routing_time_ms: None,
            fallback: None,
            reasoning: None,
            feedback: None,
            reflection: None,
            previous_mode: None,
            created_at: i as i64,
            regulator: None,
            adaptive: None,
        }
    }

    #[test]
    fn reflection_samples_half_low_a_fifth_high_and_the_rest_tie_breaks() {
        let mut rows: Vec<RoutingRecord> = (0..3000).map(|i| row(i, [0.05, 0.9, 0.3][i % 3], i % 3 == 2)).collect();
        rows.push(row(9000, 0.3, false)); // middling: never sampled
        let mut rng = SplitMix64(7);
        let mut counts = [0usize; 3];
        for _ in 0..400 {
            for r in sample(&rows, &mut rng) {
                counts[match stratum(r) {
                    Some(Stratum::Low) => 0,
                    Some(Stratum::High) => 1,
                    Some(Stratum::Tie) => 2,
                    None => panic!("{} is in no stratum", r.id),
                }] += 1;
            }
        }
        let n = counts.iter().sum::<usize>() as f64;
        assert_eq!(n, 2000.0, "{counts:?}");
        let share = |k: usize| counts[k] as f64 / n;
        assert!((share(0) - 0.5).abs() < 0.04 && (share(1) - 0.2).abs() < 0.04, "{counts:?}");
        assert!((share(2) - 0.3).abs() < 0.04, "{counts:?}");
    }

    #[test]
    fn reflection_sampling_skips_reviewed_and_pre_routed_decisions_and_fills_from_other_strata() {
        let mut reviewed = row(0, 0.05, false);
        reviewed.reflection = Some(json!({}));
        let mut social = row(1, 0.05, false);
        social.pre_routed = true;
        let rows = vec![reviewed, social, row(2, 0.9, false), row(3, 0.9, false)];
        let picked: Vec<&str> = sample(&rows, &mut SplitMix64(1)).iter().map(|r| r.id.as_str()).collect();
        assert_eq!(picked.len(), 2, "only the two high-confidence rows are left: {picked:?}");
        assert!(picked.contains(&"r2") && picked.contains(&"r3"), "{picked:?}");
        assert!(sample(&[], &mut SplitMix64(1)).is_empty());
    }

    #[test]
    fn reflection_answers_are_checked_and_gated_by_confidence() {
        let v = json!({
            "ambiguity_level": "moderate",
            "uncertainty_dimensions": [
                {"dimension": "intent_clarity", "description": "which plan?", "affected_modes": ["RESPOND", "CLARIFY"], "signal_gap": "no referent"},
                {"dimension": "weather", "description": "not a dimension"}
            ],
            "agree_with_decision": false,
            "confidence": 1.4
        });
        let r = read_answer(&v, "double/m", 5).expect("reads");
        assert_eq!(r["uncertainty_dimensions"].as_array().map(Vec::len), Some(1), "{r}");
        assert_eq!(r["confidence"], 1.0);
        assert_eq!(r["counted"], true);
        let mut weak = v.clone();
        weak["confidence"] = json!(0.5);
        assert_eq!(read_answer(&weak, "m", 5).expect("reads")["counted"], false);
        let mut bad = v.clone();
        bad["ambiguity_level"] = json!("extreme");
        assert_eq!(read_answer(&bad, "m", 5), None);
        assert_eq!(read_answer(&json!({"confidence": 0.9}), "m", 5), None);
    }

    #[test]
    fn reflection_request_is_strict_json_with_the_decision() {
        let mut r = row(0, 0.05, true);
        r.signal_snapshot = json!({"has_question_mark": true, "vague_reference": false, "context_warmth": 0.0}).into();
        let req = request(&r, Some("is it worth it?"));
        assert!(matches!(req.format, ResponseFormat::JsonSchema { .. }));
        let user = format!("{:?}", req.messages);
        assert!(user.contains("is it worth it?") && user.contains("has_question_mark"), "{user}");
        assert!(!user.contains("vague_reference"), "signals that were off are left out: {user}");
    }
}
