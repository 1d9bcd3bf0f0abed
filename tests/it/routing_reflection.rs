//! Routing reflection against the scripted endpoint: the strong model reviews a sampled batch
//! of decisions, its checked answers land in `routing_decisions.reflection`, the regulator's
//! week of reflections turns a dominant dimension into a pressure, and on the built-in strong
//! model nothing is asked and `status` says why.

use crate::support::openai_double::{Double, Reply};
use chalie::cognition::stability::reflection::{self, Outcome};
use chalie::cognition::stability::routing::{pressures, reflection_shares};
use chalie::cognition::stability::worker::{note_off, reflection_off};
use chalie::config::Role;
use chalie::events::EventBus;
use chalie::llm::openai::OpenAiProvider;
use chalie::llm::{Llm, Route};
use chalie::store::{ChatRepo, Db, RoutingRecord, RoutingRepo};
use serde_json::{Value, json};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

const NOW: i64 = 1_900_000_000;

fn record(i: usize, confidence: f64, tie: bool) -> RoutingRecord {
    RoutingRecord {
        id: format!("r{i}"),
        thread_id: Some("t".into()),
        topic: "t".into(),
        exchange_id: Some(format!("x{i}")),
        selected_mode: "RESPOND".into(),
        router_confidence: Some(confidence),
        scores: json!({"RESPOND": 0.5, "CLARIFY": 0.45}),
        pre_routed: false,
        tiebreaker_used: false,
        tiebreaker_candidates: tie.then(|| json!(["RESPOND", "CLARIFY"])),
        margin: Some(confidence),
        effective_margin: Some(0.2),
        signal_snapshot: json!({"has_question_mark": true}).into(),
        weight_snapshot: None,
        weights_version: Some(2),
        routing_time_ms: None,
        fallback: None,
        reasoning: None,
        feedback: None,
        reflection: None,
        previous_mode: None,
        created_at: NOW - 3600 + i as i64,
        regulator: None,
        adaptive: None,
    }
}

fn answer(dimension: &str, confidence: f64) -> Reply {
    Reply::text(
        &json!({
            "ambiguity_level": "moderate",
            "uncertainty_dimensions": [{"dimension": dimension, "description": "d", "affected_modes": ["RESPOND", "CLARIFY"], "signal_gap": "g"}],
            "agree_with_decision": false,
            "confidence": confidence
        })
        .to_string(),
    )
}

fn llm(url: &str, builtin: bool) -> Llm {
    let route = Route { provider: Arc::new(OpenAiProvider::new("double", url, None)), model: "m".into(), builtin };
    Llm::new(
        EventBus::new(),
        crate::support::harness::settings(chalie::config::ModelUse::Heuristic),
        [(Role::Strong, route)],
    )
}

async fn seeded() -> Db {
    let db = Db::spawn(chalie::store::open_in_memory().unwrap());
    db.call(|c| {
        for i in 0..12 {
            RoutingRepo(c).insert(&record(i, [0.05, 0.9, 0.1][i % 3], i % 3 == 2))?;
            ChatRepo(c).append("t", &format!("x{i}"), "user", &format!("message number {i}"), None, None)?;
        }
        Ok(())
    })
    .await
    .unwrap();
    db
}

#[tokio::test]
async fn reflection_reviews_a_batch_with_the_strong_model_and_feeds_the_regulator() {
    let script = vec![
        answer("intent_clarity", 0.9),
        answer("intent_clarity", 0.8),
        answer("memory_availability", 0.9),
        answer("intent_clarity", 0.4),
        answer("intent_clarity", 0.95),
    ];
    let double = Double::start(script).await;
    let db = seeded().await;
    let llm = llm(&double.base_url(), false);
    assert_eq!(reflection_off(&llm), None);
    let out = reflection::reflect_batch(&db, &llm, NOW, 3, &CancellationToken::new()).await.unwrap();
    assert_eq!(out, Outcome::Reviewed { stored: 5, failed: 0 });

    let requests = double.chat_requests();
    assert_eq!(requests.len(), 5, "one call per sampled decision");
    for r in &requests {
        let system = r.body["messages"][0]["content"].as_str().unwrap_or_default();
        assert!(system.starts_with(reflection::PROMPT.trim()), "{system}");
        let user = r.body["messages"][1]["content"].as_str().unwrap_or_default();
        assert!(user.contains("message number"), "the reviewer sees the message: {user}");
    }
    let rows = db.call(|c| RoutingRepo(c).between(0, i64::MAX)).await.unwrap();
    let reflected: Vec<&Value> = rows.iter().filter_map(|r| r.reflection.as_ref()).collect();
    assert_eq!(reflected.len(), 5);
    assert!(reflected.iter().all(|v| v["model"] == "double/m" && v["at"] == NOW), "{reflected:?}");
    assert_eq!(reflected.iter().filter(|v| v["counted"] == false).count(), 1, "the 0.4 answer is below the gate");

    // Four counted reflections, three naming intent clarity: a pressure on clarify.cold_boost.
    let (dims, disagreement) = reflection_shares(&rows);
    assert_eq!(dims.get("intent_clarity").copied(), Some(0.75), "{dims:?}");
    assert_eq!(disagreement, Some(1.0));
    let stats = chalie::cognition::router::stats::routing_stats(&rows);
    let (ps, _) = pressures(&stats, &dims, disagreement, None);
    let p = ps.iter().find(|p| p.name == "reflection:intent_clarity").expect("pressure");
    assert!(p.severity() > 0.0 && p.controls[0].0 == "clarify.cold_boost", "{p:?}");

    // A second run reviews other decisions, never one already reflected.
    let double2 = Double::start((0..5).map(|_| answer("tone_ambiguity", 0.9)).collect()).await;
    let out = reflection::reflect_batch(&db, &llm_at(&double2), NOW + 1800, 4, &CancellationToken::new()).await;
    assert_eq!(out.unwrap(), Outcome::Reviewed { stored: 5, failed: 0 });
    let rows = db.call(|c| RoutingRepo(c).between(0, i64::MAX)).await.unwrap();
    assert_eq!(rows.iter().filter(|r| r.reflection.is_some()).count(), 10);
    assert_eq!(rows.iter().filter(|r| r.reflection.as_ref().is_some_and(|v| v["at"] == NOW)).count(), 5);
}

fn llm_at(d: &Double) -> Llm {
    llm(&d.base_url(), false)
}

#[tokio::test]
async fn reflection_is_off_on_the_built_in_strong_model_and_status_says_so() {
    let double = Double::start(vec![answer("intent_clarity", 0.9)]).await;
    let db = seeded().await;
    let builtin = llm(&double.base_url(), true);
    let out = reflection::reflect_batch(&db, &builtin, NOW, 3, &CancellationToken::new()).await.unwrap();
    assert_eq!(out, Outcome::BuiltIn);
    assert!(double.chat_requests().is_empty(), "nothing is asked");
    let why = reflection_off(&builtin).expect("off");
    assert!(why.contains("built-in"), "{why}");
    let report = db
        .call(move |c| {
            note_off(c, Some(why), NOW)?;
            chalie::memory::workers::status_report(c, None, NOW)
        })
        .await
        .unwrap()
        .to_string();
    let line = report.lines().find(|l| l.starts_with("reflection")).unwrap_or_default();
    assert!(line.contains("off: the strong model is double/m (built-in)"), "{report}");
    // A real model clears the note.
    let report = db
        .call(|c| {
            note_off(c, None, NOW)?;
            chalie::memory::workers::status_report(c, None, NOW)
        })
        .await
        .unwrap()
        .to_string();
    assert!(!report.contains("off:"), "{report}");
}
