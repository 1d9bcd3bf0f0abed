use super::*;
use crate::cli::{Cli, Command};
use clap::Parser;
use serde_json::json;

fn record(mode: &str, reasoning: Option<&str>, fallback: Option<&str>) -> RoutingRecord {
    RoutingRecord {
        id: format!("r-{mode}"),
        thread_id: Some("t1".into()),
        topic: "weather-plans".into(),
        exchange_id: Some(format!("x-{mode}")),
        selected_mode: mode.into(),
        router_confidence: Some(0.42),
        scores: json!({"RESPOND": 0.8}),
        pre_routed: false,
        tiebreaker_used: true,
        tiebreaker_candidates: None,
        margin: None,
        effective_margin: None,
        signal_snapshot: json!({}).into(),
        weight_snapshot: None,
        weights_version: Some(1),
        routing_time_ms: Some(0.03),
        fallback: fallback.map(str::to_string),
        reasoning: reasoning.map(str::to_string),
        feedback: None,
        reflection: None,
        previous_mode: None,
        created_at: 0,
        regulator: None,
        adaptive: None,
    }
}

fn iteration(n: i64, planner: &str, actions: usize) -> ActIteration {
    ActIteration {
        iteration: n,
        planner: planner.into(),
        actions: (0..actions).map(|i| json!({"type": "list", "n": i})).collect(),
        results: None,
        ms: 1.5,
        fatigue: 0.25,
        termination: None,
    }
}

fn entry(record: RoutingRecord, act_iterations: Vec<ActIteration>) -> AuditEntry {
    AuditEntry { record, act_iterations }
}

#[test]
fn table_aligns_the_columns_and_says_why() {
    let act = entry(
        record("ACT", Some("wants a list"), Some("triage_timeout")),
        vec![iteration(1, "deterministic", 2), iteration(2, "llm", 0), iteration(3, "llm", 1)],
    );
    let got = table(&[act], &chrono::Utc);
    let want = "time                 topic                    mode           conf tie        ms  why\n\
                1970-01-01 00:00:00  weather-plans            ACT            0.42 yes     0.030  \
                wants a list; deterministic plan: 2, llm plan: 1 [fallback: triage_timeout]";
    assert_eq!(got, want);
}

#[test]
fn why_shows_only_the_parts_there_are() {
    let why_of = |reasoning, fallback, plans| why(&entry(record("ACT", reasoning, fallback), plans));
    assert_eq!(why_of(Some("greeting"), None, vec![]), "greeting");
    assert_eq!(why_of(None, Some("tiebreaker_invalid_json"), vec![]), "[fallback: tiebreaker_invalid_json]");
    assert_eq!(why_of(None, None, vec![]), "");
    // Plans are told as part of the reasoning; an iteration that ran nothing made no plan.
    assert_eq!(why_of(None, None, vec![iteration(1, "llm", 1)]), "");
    assert_eq!(why_of(Some("r"), None, vec![iteration(1, "llm", 0)]), "r");
}

#[test]
fn table_cuts_long_topics_and_dashes_missing_numbers() {
    let mut r = record("RESPOND", None, None);
    r.topic = "a-topic-name-much-longer-than-the-column".into();
    r.router_confidence = None;
    r.routing_time_ms = None;
    r.tiebreaker_used = false;
    let got = table(&[entry(r, vec![])], &chrono::FixedOffset::east_opt(3600).unwrap());
    let line = got.lines().nth(1).unwrap();
    assert_eq!(line, "1970-01-01 01:00:00  a-topic-name-much-longe… RESPOND           - no          -  ");
}

#[test]
fn json_keeps_the_record_fields_beside_the_iterations() {
    let r = record("ACT", None, None);
    let e = entry(r.clone(), vec![iteration(1, "deterministic", 1)]);
    let mut want = serde_json::to_value(&r).unwrap();
    want["act_iterations"] = json!([{
        "iteration": 1, "planner": "deterministic", "actions": [{"type": "list", "n": 0}],
        "results": null, "ms": 1.5, "fatigue": 0.25, "termination": null,
    }]);
    assert_eq!(serde_json::to_value(&e).unwrap(), want);
}

#[test]
fn read_attaches_iterations_to_act_decisions_only() {
    let conn = store::open_in_memory().unwrap();
    let repo = RoutingRepo(&conn);
    let mut act = record("ACT", None, None);
    act.created_at = 200;
    let mut respond = record("RESPOND", None, None);
    respond.created_at = 100;
    repo.insert(&act).unwrap();
    repo.insert(&respond).unwrap();
    store::CortexIterationsRepo(&conn)
        .insert(&store::IterationRow {
            exchange_id: "x-ACT",
            routing_decision_id: Some("r-ACT"),
            iteration: 1,
            planner: "deterministic",
            actions: "[{\"type\":\"list\"}]",
            results: None,
            execution_time_ms: 2.0,
            fatigue: 0.5,
            cost: 1.0,
            termination_reason: Some("done"),
            created_at: 200,
        })
        .unwrap();
    let all = read(&repo, 10, None).unwrap();
    assert_eq!(all.iter().map(|e| e.record.selected_mode.as_str()).collect::<Vec<_>>(), ["ACT", "RESPOND"]);
    assert_eq!(all[0].act_iterations.len(), 1);
    assert_eq!(all[0].act_iterations[0].planner, "deterministic");
    assert_eq!(all[0].act_iterations[0].termination.as_deref(), Some("done"));
    assert!(all[1].act_iterations.is_empty());
    let only = read(&repo, 10, Some(Mode::Respond)).unwrap();
    assert_eq!(only, all[1..]);
}

#[test]
fn mode_filter_takes_a_mode_in_any_case_and_nothing_else() {
    let mode = |arg: &str| match Cli::try_parse_from(["chalie-tui", "audit", "--mode", arg]).map(|c| c.command) {
        Ok(Some(Command::Audit(a))) => a.mode,
        _ => None,
    };
    assert_eq!(mode("acknowledge"), Some(Mode::Acknowledge));
    assert_eq!(mode("ACT"), Some(Mode::Act));
    assert_eq!(mode("Respond"), Some(Mode::Respond));
    assert_eq!(mode("bogus"), None);
}
