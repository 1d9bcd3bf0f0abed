//! Confidence and spans, cost and quality breaks, corrections, the decision order, state;
//! drift in `drift.rs`, the feedback detector in `feedback_cases.rs`.

use super::confidence::{self, Token};
use super::*;
use crate::vocab::Mode;

#[test]
fn regulator_confidence_formula_and_fallback() {
    assert!((confidence::from_mean_nll(1.0) - 1.0).abs() < 1e-12);
    assert!((confidence::from_mean_nll(4.0) - 0.5).abs() < 1e-12);
    assert!(confidence::from_mean_nll(7.0).abs() < 1e-12);
    assert_eq!(confidence::structural(""), 0.5);
    assert_eq!(confidence::structural("what? why?"), 0.2);
    assert_eq!(confidence::structural("ok sure"), 0.4);
    assert_eq!(confidence::structural(&"a declarative sentence that runs long enough. ".repeat(2)), 0.7);
    let mut w = confidence::Window::default();
    for _ in 0..200 {
        w.push(-7.0);
    }
    for _ in 0..128 {
        w.push(-1.0);
    }
    w.push(0.0);
    w.push(f64::NAN);
    w.push(0.3);
    assert_eq!(w.len(), 128);
    assert!((w.confidence("x") - 1.0).abs() < 1e-9, "only the newest 128 count");
}

fn toks(parts: &[(&str, f64)]) -> Vec<Token> {
    parts.iter().map(|(t, lp)| Token { text: t.to_string(), logprob: Some(*lp) }).collect()
}

#[test]
fn regulator_spans_land_on_the_unsure_characters() {
    let tokens = toks(&[
        ("The", -0.1),
        (" capital", -0.2),
        (" is", -0.1),
        (" Zan", -3.5),
        ("ziba", -2.9),
        ("r", -2.2),
        (",", -0.3),
        (" I", -0.2),
        (" think", -0.4),
        (".", -0.1),
    ]);
    let reply: String = tokens.iter().map(|t| t.text.as_str()).collect();
    let s = confidence::spans(&tokens, &reply);
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].text, "Zanzibar");
    assert_eq!((s[0].start, s[0].end), (15, 23));
    assert_eq!(&reply[15..23], "Zanzibar");
    assert!((s[0].mean_logprob - (-3.5 - 2.9 - 2.2) / 3.0).abs() < 1e-9);
    // A reply trimmed of the tokens' leading space keeps its offsets right.
    let mut lead = toks(&[(" ", -0.1)]);
    lead.extend(tokens.clone());
    let s2 = confidence::spans(&lead, &reply);
    assert_eq!((s2[0].start, s2[0].end), (15, 23));
    // One low token alone is not a span unless very low; a different text gets none.
    assert!(confidence::spans(&toks(&[("a", -0.1), (" b", -2.5), (" c", -0.1)]), "a b c").is_empty());
    assert_eq!(confidence::spans(&toks(&[("a", -0.1), (" b", -5.0), (" c", -0.1)]), "a b c")[0].text, "b");
    assert!(confidence::spans(&tokens, "something else").is_empty());
}

fn turn(r: &mut Regulator, msg: &str, reply: &str, tokens_out: u32) {
    r.on_event(Event::TurnStart { user_message: msg.into(), at_ms: 0 });
    r.on_event(Event::Cost { role: "primary".into(), tokens_in: 50, tokens_out, wall_ms: 100 });
    r.on_event(Event::TurnComplete { response: reply.into(), at_ms: 1 });
    let d = r.decide();
    r.finish_turn(&d);
}

fn judge(r: &mut Regulator, q: f64) {
    let fb = Feedback { label: FeedbackLabel::CorrectRoute, quality: q, correction: false, cue: String::new() };
    r.on_feedback(&fb, "next", 0);
}

#[test]
fn regulator_cost_cap_needs_poor_quality_and_three_samples() {
    let settings = Settings { token_cap: 1000, ..Settings::default() };
    let mut r = Regulator::new(settings.clone(), RegulatorState::default());
    for q in [0.50, 0.35] {
        turn(&mut r, "plan my trip", "A plan.", 400);
        judge(&mut r, q);
    }
    turn(&mut r, "plan my trip", "A plan.", 400);
    // 1200 tokens over the cap, but two samples: quality is unknown, nothing fires.
    r.on_event(Event::TurnStart { user_message: "plan my trip".into(), at_ms: 0 });
    assert!(!matches!(r.decide(), Decision::CircuitBreak(Break::CostCap { .. })));
    let mut r = Regulator::new(settings.clone(), RegulatorState::default());
    for q in [0.50, 0.35, 0.20] {
        turn(&mut r, "plan my trip", "A plan.", 400);
        judge(&mut r, q);
    }
    r.on_event(Event::TurnStart { user_message: "plan my trip".into(), at_ms: 0 });
    let Decision::CircuitBreak(Break::CostCap { tokens_spent, tokens_cap, mean_quality }) = r.decide() else {
        panic!("{:?}", r.decide());
    };
    assert_eq!((tokens_spent, tokens_cap), (1200, 1000));
    assert!((mean_quality - 0.35).abs() < 1e-9);
    // The same spend with good replies goes on.
    let mut good = Regulator::new(settings, RegulatorState::default());
    for _ in 0..3 {
        turn(&mut good, "plan my trip", "A plan.", 400);
        judge(&mut good, 0.9);
    }
    good.on_event(Event::TurnStart { user_message: "plan my trip".into(), at_ms: 0 });
    assert!(good.breaks().is_empty());
    // The break resets what it acted on: the next turn starts afresh.
    let d = r.decide();
    r.finish_turn(&d);
    r.on_event(Event::TurnStart { user_message: "plan my trip".into(), at_ms: 0 });
    assert!(r.breaks().is_empty());
}

#[test]
fn regulator_quality_decline_without_recovery() {
    let mut r = Regulator::for_user("u");
    for q in [0.8, 0.5, 0.3, 0.2, 0.15] {
        r.state.judge("", q);
    }
    let Some(Break::QualityDecline { mean_delta, mean_quality }) = r.breaks().into_iter().next() else {
        panic!("{:?}", r.breaks());
    };
    assert!((mean_delta - 0.15).abs() < 1e-9);
    assert!((mean_quality - 0.65 / 3.0).abs() < 1e-9);
    // A recovery (the newest better than the oldest) does not break.
    let mut up = Regulator::for_user("u");
    for q in [0.2, 0.3, 0.45] {
        up.state.judge("", q);
    }
    assert!(up.breaks().is_empty());
}

#[test]
fn regulator_repeated_failure_on_a_cluster_and_tool_loop() {
    let mut r = Regulator::for_user("u");
    for q in [0.45, 0.6, 0.45, 0.4, 0.3, 0.2, 0.1] {
        r.state.judge("date+photos", q);
    }
    // The last three make a decline; clear it to see the failure pattern on its own.
    r.state.qualities.0.clear();
    r.on_event(Event::TurnStart { user_message: "sort the photos by date please".into(), at_ms: 0 });
    assert_eq!(
        r.decide(),
        Decision::CircuitBreak(Break::RepeatedFailure { cluster: "date+photos".into(), failure_count: 5 })
    );
    r.on_event(Event::TurnStart { user_message: "what's the weather".into(), at_ms: 0 });
    assert_eq!(r.decide(), Decision::Continue);
    for name in ["search", "search", "list", "search", "search", "search", "search"] {
        r.on_event(Event::ToolCall { name: name.into() });
    }
    assert!(r.breaks().is_empty(), "four in a row is not a loop");
    r.on_event(Event::ToolCall { name: "search".into() });
    assert_eq!(r.decide(), Decision::CircuitBreak(Break::ToolLoop { tool: "search".into(), count: 5 }));
    let mut alt = Regulator::for_user("u");
    alt.on_event(Event::TurnStart { user_message: "x".into(), at_ms: 0 });
    for i in 0..12 {
        alt.on_event(Event::ToolCall { name: if i % 2 == 0 { "a" } else { "b" }.into() });
    }
    assert!(alt.breaks().is_empty());
}

#[test]
fn regulator_three_corrections_make_a_warning_and_a_prelude() {
    let mut r = Regulator::for_user("u");
    let corrections = ["No, I meant only the function", "that's not what I asked", "I said no docstrings"];
    turn(&mut r, "refactor this function", "Refactored, with docstrings.", 10);
    for (i, c) in corrections.iter().enumerate() {
        let fb = detect_feedback(feedback::Exchange { user: "refactor this function", mode: Mode::Respond, next: c });
        assert!(fb.correction, "{c}");
        r.on_feedback(&fb, c, 1);
        // The correcting message continues the corrected task: its turn keeps the cluster.
        r.on_event(Event::TurnStart { user_message: c.to_string(), at_ms: 0 });
        assert_eq!(r.cluster(), "function+refactor");
        if i < 2 {
            assert!(r.prelude().is_none(), "two corrections are no pattern yet");
            let d = r.decide();
            r.finish_turn(&d);
        }
    }
    // The third correction's own retry already carries the prelude.
    let Decision::ProceduralWarning { cluster, corrections: ex } = r.decide() else { panic!("{:?}", r.decide()) };
    assert_eq!(cluster, "function+refactor");
    assert_eq!(ex, vec!["I said no docstrings", "that's not what I asked", "No, I meant only the function"]);
    let prelude = r.prelude().unwrap();
    assert!(prelude.find("I said no docstrings") < prelude.find("No, I meant"), "{prelude}");
    // Another task has no pattern.
    let d = r.decide();
    r.finish_turn(&d);
    let fine = detect_feedback(feedback::Exchange { user: "x", mode: Mode::Respond, next: "ok" });
    r.on_feedback(&fine, "ok", 2);
    r.on_event(Event::TurnStart { user_message: "refactor the parser function".into(), at_ms: 0 });
    assert_eq!(r.cluster(), "function+parser");
    assert!(r.prelude().is_none());
}

#[test]
fn regulator_implicit_window_is_opt_in() {
    let settings = Settings { implicit_window_ms: Some(30_000), ..Settings::default() };
    let mut r = Regulator::new(settings, RegulatorState::default());
    for i in 0..3u64 {
        r.on_event(Event::TurnStart { user_message: "refactor this function".into(), at_ms: i * 10_000 });
        r.on_event(Event::TurnComplete { response: "ok".into(), at_ms: i * 10_000 + 1 });
        let d = r.decide();
        r.finish_turn(&d);
    }
    r.on_event(Event::TurnStart { user_message: "refactor this function".into(), at_ms: 30_000 });
    assert_eq!(r.decide().name(), "procedural_warning");
    let mut off = Regulator::for_user("u");
    for _ in 0..5 {
        turn(&mut off, "refactor this function", "ok", 1);
    }
    assert_eq!(off.decide(), Decision::Continue);
}

/// Builds a regulator where every kind holds at once, then checks each adjacent pair by
/// removing the winner.
#[test]
fn regulator_decision_priority_pairwise() {
    let order = [
        "cost_cap",
        "decline",
        "repeated_failure",
        "tool_loop",
        "scope_drift_warn",
        "procedural_warning",
        "low_confidence_spans",
        "continue",
    ];
    let kind = |d: &Decision| match d {
        Decision::CircuitBreak(Break::CostCap { .. }) => "cost_cap",
        Decision::CircuitBreak(Break::QualityDecline { .. }) => "decline",
        Decision::CircuitBreak(Break::RepeatedFailure { .. }) => "repeated_failure",
        Decision::CircuitBreak(Break::ToolLoop { .. }) => "tool_loop",
        other => other.name(),
    };
    let mut r = Regulator::new(Settings { token_cap: 100, ..Settings::default() }, RegulatorState::default());
    for q in [0.45, 0.45, 0.45, 0.3, 0.1] {
        r.state.judge("function+refactor", q);
        r.state.add_correction("function+refactor", "no, that's wrong", 0);
    }
    r.state.tokens_out_spent = 250;
    r.on_event(Event::TurnStart { user_message: "refactor this function".into(), at_ms: 0 });
    for _ in 0..5 {
        r.on_event(Event::ToolCall { name: "search".into() });
    }
    for (t, lp) in [("Chocolate", -3.0), (" cake", -3.0), (" recipe", -2.5), (" today", -0.1)] {
        r.on_event(Event::Token { text: t.into(), logprob: Some(lp) });
    }
    r.on_event(Event::TurnComplete { response: "Chocolate cake recipe today".into(), at_ms: 1 });
    let all: Vec<&str> = r.candidates().iter().map(kind).collect();
    assert_eq!(all, order, "every kind holds, in the fixed order");
    assert_eq!(r.decide(), r.decide(), "decide is pure");
    // Pairwise: for each adjacent pair, with only those two holding, the earlier wins.
    for pair in order.windows(2) {
        let both: Vec<Decision> = r.candidates().into_iter().filter(|d| pair.contains(&kind(d))).collect();
        let mut reversed = both.clone();
        reversed.reverse();
        reversed.sort_by_key(Decision::priority);
        assert_eq!(kind(&reversed[0]), pair[0], "{pair:?}");
    }
}

#[test]
fn regulator_state_round_trip_and_old_snapshots() {
    let mut r = Regulator::for_user("u");
    for c in ["no, wrong", "that's wrong", "not what I asked"] {
        turn(&mut r, "refactor this function", "ok", 10);
        let fb = Feedback { label: FeedbackLabel::Correction, quality: 0.2, correction: true, cue: String::new() };
        r.on_feedback(&fb, c, 5);
    }
    let json = serde_json::to_string(r.export()).unwrap();
    let back: RegulatorState = serde_json::from_str(&json).unwrap();
    assert_eq!(&back, r.export());
    // The user's words are string values only (a forget rewrites those), never keys.
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["corrections"][0]["cluster"], "function+refactor");
    assert_eq!(v["clusters"][0]["cluster"], "function+refactor");
    // A snapshot from before cost, clusters and quality were kept.
    let old = r#"{"user_id":"u","corrections":[{"cluster":"function+refactor","data":[{"text":"a"},{"text":"b"},{"text":"c"}]}]}"#;
    let st: RegulatorState = serde_json::from_str(old).unwrap();
    assert_eq!(st.budget, 1.0);
    assert!(st.qualities.0.is_empty());
    let mut r2 = Regulator::new(Settings::default(), st);
    r2.on_event(Event::TurnStart { user_message: "refactor this function".into(), at_ms: 0 });
    assert_eq!(r2.decide().name(), "procedural_warning");
}

#[test]
fn regulator_report_has_the_contract_shape() {
    let mut r = Regulator::for_user("u");
    r.on_event(Event::TurnStart { user_message: "what is rust".into(), at_ms: 0 });
    r.on_event(Event::Cost { role: "primary".into(), tokens_in: 12, tokens_out: 3, wall_ms: 40 });
    r.on_event(Event::Cost { role: "lightweight".into(), tokens_in: 5, tokens_out: 1, wall_ms: 10 });
    let (d, report) = r.report();
    assert_eq!(d, r.decide());
    let v = serde_json::to_value(report).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    for k in ["decision", "confidence", "low_confidence_spans", "scope_drift", "cost", "procedural_warning", "breaks"] {
        assert!(keys.contains(&k), "{k} missing from {v}");
    }
    assert_eq!(v["cost"], serde_json::json!({"tokens_in": 17, "tokens_out": 4, "wall_ms": 50}));
}
mod drift;
mod feedback_cases;

/// The state is read and written every turn, so it holds a bounded number of clusters: the
/// ones judged or corrected most recently, the one just touched always among them; a snapshot
/// from before the bound (no `last_judged`, thousands of clusters) comes down at its next
/// judgement and keeps the cluster it judged.
#[test]
fn the_state_keeps_the_most_recent_clusters_only() {
    use super::state::{CLUSTERS_KEPT, CORRECTED_CLUSTERS_KEPT, RegulatorState};
    let mut s = RegulatorState::for_user("u");
    for i in 0..CLUSTERS_KEPT + 40 {
        s.judge(&format!("alpha+w{i:04}"), 0.9);
        if i % 7 == 0 {
            s.judge("kept+often", 0.2);
        }
    }
    assert_eq!(s.clusters.len(), CLUSTERS_KEPT);
    assert!(s.clusters.contains_key("kept+often"), "a cluster judged often stays");
    assert!(
        !s.clusters.contains_key("alpha+w0000")
            && s.clusters.contains_key(&format!("alpha+w{:04}", CLUSTERS_KEPT + 39))
    );
    assert_eq!(s.clusters["kept+often"].count, (CLUSTERS_KEPT + 40).div_ceil(7) as u64);

    for i in 0..CORRECTED_CLUSTERS_KEPT + 10 {
        s.add_correction(&format!("beta+w{i:04}"), "not like that", 1_000 + i as i64);
    }
    s.add_correction("beta+w0000", "still wrong", 500);
    assert_eq!(s.corrections.len(), CORRECTED_CLUSTERS_KEPT);
    assert!(s.corrections.contains_key("beta+w0000"), "the cluster just corrected stays, whatever its time");
    assert!(
        !s.corrections.contains_key("beta+w0010") && s.corrections.contains_key("beta+w0011"),
        "the oldest other went"
    );

    let mut old: serde_json::Value = serde_json::to_value(RegulatorState::for_user("u")).unwrap();
    old["clusters"] =
        (0..3000).map(|i| serde_json::json!({"cluster": format!("old+w{i}"), "data": {"count": 1}})).collect();
    let mut s: RegulatorState = serde_json::from_value(old).unwrap();
    s.judge("new+one", 0.9);
    assert_eq!(s.clusters.len(), CLUSTERS_KEPT);
    assert!(s.clusters.contains_key("new+one"));
}
