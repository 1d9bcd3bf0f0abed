//! The session log's shape, pinned to its schema number. A log written today must read the same
//! way in every later version, so a field added, removed or renamed in an event (or in a report
//! an event carries) has to be a deliberate change: bump `LOG_SCHEMA`, record the new shape
//! below, and teach the reader about older logs if they now read differently.

use crate::events::{EngineEvent, Stamped};
use crate::session::LOG_SCHEMA;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// `(schema, shape digest)` for every schema whose shape was pinned.
const PINNED: &[(u32, &str)] = &[
    (2, "5f7ac39d6801f0df"),
    (3, "a1fd94fc26fcbc2e"),
    (4, "bd815abf21e133d6"),
    (5, "e6d0e009f0770d7a"),
    (6, "d9ee3c4b2b10ac88"),
];

/// The recorded fixture session gives real examples of the events a turn emits; the rest are
/// written here, every optional field present.
fn samples() -> Vec<EngineEvent> {
    let mut lines: Vec<String> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for line in include_str!("../../../tests/data/replay_session.jsonl").lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
        let Some(t) = v.get("type").and_then(Value::as_str) else { continue };
        if t != "session_header" && t != "reply_done" && seen.insert(t.to_string()) {
            lines.push(line.to_string());
        }
    }
    // Schema 5: the graph a routed event carries, on the fixture's first routed event.
    if let Some(mut v) =
        lines.iter().filter_map(|l| serde_json::from_str::<Value>(l).ok()).find(|v| v["type"] == "routed")
    {
        v["graph"] = serde_json::json!({
            "seeds": [{"name": "coffee", "energy": 2.0}],
            "fired": [{"name": "tea", "step": 1, "energy": 1.2, "via": "coffee", "weight": 0.6}],
            "inhibited": [{"name": "decaf", "energy": -0.5}],
            "grown": "espresso machine",
        });
        lines.push(v.to_string());
    }
    let ts = r#""ts":"2026-11-24T10:00:00Z""#;
    for rest in [
        r#""type":"reply_done","thread_id":"t","exchange_id":"x","mode":"RESPOND","text":"hi","cancelled":false,"failed":"generation_failed","timings_ms":{"context":1.0,"embedding":1.0,"topic":1.0,"intent":1.0,"triage":1.0,"routing":1.0,"tiebreak":1.0,"act":1.0,"generation":1.0,"commit":1.0,"total":1.0},"reply_source":"template""#,
        r#""type":"llm_failed","call_id":"c","error":"refused","will_retry":true"#,
        r#""type":"identity_learned","name":"Ada""#,
        r#""type":"reminder_fired","id":1,"message":"call mum","due_at":"2026-11-22T09:00","thread_id":"t","late":true"#,
        r#""type":"model_fetch","step":"downloading","done":1,"total":2,"finished":false,"error":"offline""#,
        r#""type":"reembed","model":"m","done":1,"total":2"#,
        r#""type":"drift_thought","thought":{"id":1,"kind":"question","content":"c","topic":"t","action":"REFLECT","energy":0.5,"created_at":1}"#,
        r#""type":"uncertainty_changed","item":{"id":"u","kind":"contradiction","severity":"high","state":"open","memory_a":"trait:1","memory_b":"trait:2","reasoning":"r","surface_context":"home","surfaced_count":1,"created_at":1}"#,
        r#""type":"turn_failed","exchange_id":"x","error":"disk full""#,
        r#""type":"router_weights_changed","version":3,"author":"regulator","reason":"clarify.cold_boost 0.100 → 0.120""#,
        r#""type":"memory_forgotten","id":"episode:2","error":"already forgotten""#,
        r#""type":"forgotten","exchanges":["x"],"rows":3"#,
        r#""type":"task_message","task_id":1,"thread_id":"t","text":"Task #1: 2 of 4 steps done""#,
        r#""type":"route_judged","exchange_id":"x","mode":"RESPOND","by_exchange_id":"y","label":"missed_clarify","cue":"i meant","quality":0.3,"misroute":true"#,
        r#""type":"llm_start","call_id":"c","role":"primary","provider":"p","model":"m","prompt_chars":3,"prompt_digest":"d","origin":"exchange:x""#,
        r#""type":"regulated","exchange_id":"x","report":{"decision":"circuit_break","confidence":0.4,"low_confidence_spans":[{"start":1,"end":3,"text":"ab","mean_logprob":-2.5}],"scope_drift":{"score":0.6,"terms":["cake"]},"cost":{"tokens_in":1,"tokens_out":2,"wall_ms":3},"procedural_warning":{"cluster":"a+b","corrections":["no"]},"breaks":[{"reason":"cost_cap_reached","tokens_spent":2,"tokens_cap":1,"mean_quality":0.2,"message":"Stopped."}]}"#,
        r#""type":"drift_cycle","cycle":{"at":1,"skipped":"s","seed":"coffee","strategy":"recent","fired":[{"name":"tea","energy":0.6}],"energy":0.6,"gate":0.4,"kind":"question","thought":"t","author":"template","action":"REFLECT","scores":[{"action":"REFLECT","score":0.5,"rejected_by":"g"}],"effect":"e","thought_id":1}"#,
    ] {
        lines.push(format!("{{{ts},{rest}}}"));
    }
    lines.iter().map(|l| serde_json::from_str::<Stamped>(l).unwrap_or_else(|e| panic!("{e}: {l}")).event).collect()
}

/// Which variant an event is; exhaustive, so a new variant does not compile until it is
/// given a number here (and then a sample above, or the coverage check fails).
fn variant(e: &EngineEvent) -> usize {
    match e {
        EngineEvent::UserMessage { .. } => 0,
        EngineEvent::Notice { .. } => 1,
        EngineEvent::LlmStart { .. } => 2,
        EngineEvent::LlmToken { .. } => 3,
        EngineEvent::LlmComplete { .. } => 4,
        EngineEvent::LlmEmbedded { .. } => 5,
        EngineEvent::LlmCost { .. } => 6,
        EngineEvent::LlmFailed { .. } => 7,
        EngineEvent::Routed { .. } => 8,
        EngineEvent::ReplyChunk { .. } => 9,
        EngineEvent::ReplyDone { .. } => 10,
        EngineEvent::IdentityLearned { .. } => 11,
        EngineEvent::ReminderFired { .. } => 12,
        EngineEvent::ModelsResolved { .. } => 13,
        EngineEvent::ModelFetch { .. } => 14,
        EngineEvent::Reembed { .. } => 15,
        EngineEvent::ActIteration { .. } => 16,
        EngineEvent::DriftThought { .. } => 17,
        EngineEvent::UncertaintyChanged { .. } => 18,
        EngineEvent::TurnFailed { .. } => 19,
        EngineEvent::MemoryForgotten { .. } => 20,
        EngineEvent::Forgotten { .. } => 21,
        EngineEvent::Regulated { .. } => 22,
        EngineEvent::DriftCycle { .. } => 23,
        EngineEvent::RouterWeightsChanged { .. } => 24,
        EngineEvent::TaskMessage { .. } => 25,
        EngineEvent::RouteJudged { .. } => 26,
    }
}
const VARIANTS: usize = 27;

/// Every key path with its JSON kind ("routed.router.scores.ACT: number"), arrays by their
/// first element.
fn shape(prefix: &str, v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                shape(&format!("{prefix}.{k}"), child, out);
            }
        }
        Value::Array(a) => match a.first() {
            Some(first) => shape(&format!("{prefix}[]"), first, out),
            None => out.push(format!("{prefix}: []")),
        },
        Value::String(_) => out.push(format!("{prefix}: string")),
        Value::Number(_) => out.push(format!("{prefix}: number")),
        Value::Bool(_) => out.push(format!("{prefix}: bool")),
        Value::Null => out.push(format!("{prefix}: null")),
    }
}

#[test]
fn every_event_has_a_sample() {
    let mut covered = [false; VARIANTS];
    for e in samples() {
        covered[variant(&e)] = true;
    }
    let missing: Vec<usize> = (0..VARIANTS).filter(|i| !covered[*i]).collect();
    assert!(missing.is_empty(), "events without a sample in session/tests/schema.rs: {missing:?}");
}

#[test]
fn the_log_shape_is_the_one_pinned_for_its_schema() {
    let mut lines = Vec::new();
    for e in samples() {
        let v = serde_json::to_value(&e).unwrap_or_default();
        let name = v.get("type").and_then(Value::as_str).unwrap_or_default().to_string();
        shape(&name, &v, &mut lines);
    }
    lines.sort();
    lines.dedup();
    let text = lines.join("\n");
    let digest: String = Sha256::digest(text.as_bytes()).iter().take(8).map(|b| format!("{b:02x}")).collect();
    let pinned = PINNED.iter().find(|(s, _)| *s == LOG_SCHEMA).map(|(_, d)| *d);
    assert_eq!(
        pinned,
        Some(digest.as_str()),
        "the session log's shape changed (digest {digest}). If that is intended, bump LOG_SCHEMA, \
         add ({}, \"{digest}\") to PINNED and make sure older logs still read. The shape:\n{text}",
        LOG_SCHEMA + 1
    );
}
