use super::*;
use crate::store::fixtures::Fixture;
use crate::store::{RoutingRecord, RoutingRepo, WorldStateRepo};
use chrono::Local;

fn ctx() -> SkillContext {
    SkillContext::new("t", "x", "family", Local::now())
}

fn ask(c: &Connection, about: Option<&str>) -> SkillOutput {
    let p = about.map_or(json!({}), |a| json!({"about": a}));
    introspect(c, p.as_object().unwrap(), &ctx()).unwrap()
}

fn decision(now: i64) -> RoutingRecord {
    RoutingRecord {
        id: "r1".into(),
        thread_id: Some("t".into()),
        topic: "family".into(),
        exchange_id: Some("x0".into()),
        selected_mode: "CLARIFY".into(),
        router_confidence: Some(0.31),
        scores: json!({"RESPOND": 0.42, "CLARIFY": 0.55, "ACT": 0.1}),
        pre_routed: false,
        tiebreaker_used: false,
        tiebreaker_candidates: None,
        margin: Some(0.13),
        effective_margin: Some(0.13),
        signal_snapshot: json!({"context_warmth": 0.25, "memory_confidence": 0.1}).into(),
        weight_snapshot: None,
        weights_version: Some(2),
        routing_time_ms: Some(0.1),
        fallback: Some("triage_timeout".into()),
        reasoning: Some("the message refers to something not in context".into()),
        feedback: None,
        reflection: None,
        regulator: None,
        adaptive: None,
        previous_mode: None,
        created_at: now - 30,
    }
}

#[test]
fn a_fresh_assistant_says_so() {
    let c = crate::store::open_in_memory().unwrap();
    let out = ask(&c, None);
    assert!(out.summary.starts_with("Warmth 0.00 (working memory 0/4"), "{}", out.summary);
    assert!(out.summary.contains("recall failure rate n/a"), "{}", out.summary);
    assert_eq!(out.data["self_model"], json!([]));
    assert_eq!(out.data["self_constraint"], 0.0);
    assert_eq!(out.data["pending_reminders"], 0);
    assert!(ask(&c, Some("last_answer")).summary.contains("not answered anything yet"));
    assert!(ask(&c, Some("activity")).summary.contains("done nothing on my own"));
}

#[test]
fn why_did_you_answer_like_that_reads_the_routing_audit() {
    let c = crate::store::open_in_memory().unwrap();
    let now = ctx().now.timestamp();
    RoutingRepo(&c).insert(&decision(now)).unwrap();
    let s = ask(&c, Some("last_answer")).summary;
    assert_eq!(
        s,
        "I answered your last message in CLARIFY mode because the message refers to something not in context. \
         Scores: CLARIFY 0.55 vs RESPOND 0.42, confidence 0.31. Context warmth was 0.25 and memory confidence 0.10. \
         A fallback fired: triage_timeout."
    );
    let data = ask(&c, None).data;
    assert_eq!(data["recent_routing"][0]["why"], "the message refers to something not in context");
}

#[test]
fn what_have_you_been_doing_reads_what_happened() {
    let c = crate::store::open_in_memory().unwrap();
    let now = ctx().now.timestamp();
    Fixture(&c).insert(
        "reminders",
        &[
            ("message", &"call mum"),
            ("due_at", &"2026-11-24T09:00"),
            ("due_ts", &(now - 600)),
            ("state", &"fired"),
            ("fired_at", &(now - 600)),
            ("created_at", &(now - 9000)),
        ],
    );
    let s = ask(&c, Some("activity")).summary;
    assert_eq!(s, "In the last day, on my own: reminded you: call mum (10 min ago).");
    WorldStateRepo(&c).set("family", "list", "editing the list gifts", now, now + 60).unwrap();
    let out = ask(&c, None);
    assert!(out.summary.contains("world state list: editing the list gifts"), "{}", out.summary);
    assert!(out.summary.starts_with("Warmth 0.33"), "world state is a third of warmth: {}", out.summary);
    assert_eq!(out.data["recent_activity"][0]["kind"], "reminder_fired");
}

#[test]
fn the_self_model_is_part_of_the_state() {
    let c = crate::store::open_in_memory().unwrap();
    Fixture(&c).insert(
        "uncertainties",
        &[
            ("id", &"u1"),
            ("memory_a_type", &"trait"),
            ("memory_a_id", &"1"),
            ("uncertainty_type", &"contradiction"),
            ("severity", &"high"),
            ("detection_context", &"ingestion"),
            ("created_at", &0),
        ],
    );
    let out = ask(&c, None);
    assert_eq!(out.data["self_model"][0]["kind"], "contradiction", "{}", out.data);
    assert_eq!(out.data["self_constraint"], 0.6);
    assert!(
        out.summary.contains("About myself: 1 contradiction(s) in memory not yet resolved (0.6)"),
        "{}",
        out.summary
    );
}

#[test]
fn a_break_that_stopped_the_last_answer_is_part_of_the_self_model() {
    use crate::vocab::regulator::{BreakReason, BreakReport, RegulatorReport};
    let c = crate::store::open_in_memory().unwrap();
    let now = ctx().now.timestamp();
    let mut report = RegulatorReport::idle();
    report.decision = "circuit_break".into();
    report.breaks.push(BreakReport {
        reason: BreakReason::CostCapReached { tokens_spent: 40, tokens_cap: 20, mean_quality: 0.1 },
        message: "Stopped: this topic has spent its budget on replies that did not help.".into(),
    });
    let mut stopped = decision(now);
    stopped.regulator = Some(serde_json::to_value(&report).unwrap());
    stopped.fallback = None;
    RoutingRepo(&c).insert(&stopped).unwrap();
    let out = ask(&c, None);
    let kinds: Vec<&str> =
        out.data["self_model"].as_array().unwrap().iter().filter_map(|i| i["kind"].as_str()).collect();
    assert!(kinds.contains(&"regulator_break"), "{}", out.data);
    assert_eq!(out.data["self_constraint"], json!(0.5), "{}", out.data);
}
