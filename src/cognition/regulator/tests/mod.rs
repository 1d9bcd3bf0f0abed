//! The recorded vectors of parameters §13.8, hand-labelled cases, and the decision order.

use super::confidence::{self, Token};
use super::keywords::{cluster, task_bag};
use super::scope::drift;
use super::*;
use crate::vocab::Mode;

fn score(task: &str, reply: &str) -> f64 {
    drift(&task_bag(task), reply).map_or(0.0, |d| d.score)
}

#[test]
fn regulator_recorded_drift_vectors_classify_all_ten() {
    let flagged = [
        ("refactor this function to be async", "add logging and error handling"),
        ("explain tokio runtime", "here is a recipe for chocolate cake with frosting"),
        ("help me with SQL queries", "JavaScript frameworks overview: React, Vue, Angular"),
        ("fix the authentication bug", "my thoughts on microservice architecture patterns"),
        ("explain docker containers", "chocolate cake baking instructions with butter"),
    ];
    let clean = [
        ("refactor async function", "refactor async function"),
        ("refactor the async function", "refactored async function returned"),
        ("tokio async runtime rust", "Tokio is an async runtime for Rust: futures scheduling"),
        ("fix error authentication rust", "Fix the authentication error in Rust, then verify"),
        ("jwt token format explain", "A JWT token format: explain the signature"),
    ];
    for (t, r) in flagged {
        assert!(score(t, r) >= 0.5, "{t} / {r}: {}", score(t, r));
    }
    for (t, r) in clean {
        assert!(score(t, r) < 0.5, "{t} / {r}: {}", score(t, r));
    }
    assert!((score("refactor the async function", "refactored async function returned") - 0.25).abs() < 1e-9);
}

#[test]
fn regulator_scope_drift_cases_of_the_reference() {
    let d = drift(
        &task_bag("explain tokio runtime rust async"),
        "Tokio is async Rust runtime for scheduling event driven tasks and timers",
    )
    .unwrap();
    assert!((d.score - 5.0 / 9.0).abs() < 1e-9, "{}", d.score);
    assert_eq!(d.terms.len(), 5);
    assert!(d.terms.contains(&"scheduling".to_string()));
    let mut r = Regulator::for_user("u");
    r.on_event(Event::TurnStart { user_message: "explain tokio runtime rust async".into(), at_ms: 0 });
    r.on_event(Event::TurnComplete {
        response: "Tokio is async Rust runtime for scheduling event driven tasks and timers".into(),
        at_ms: 1,
    });
    assert_eq!(r.decide().name(), "scope_drift_warn");
    let mut strict =
        Regulator::new(Settings { drift_threshold: 0.9, ..Settings::default() }, RegulatorState::default());
    strict.on_event(Event::TurnStart { user_message: "explain tokio runtime rust async".into(), at_ms: 0 });
    strict.on_event(Event::TurnComplete {
        response: "Tokio is async Rust runtime for scheduling event driven tasks and timers".into(),
        at_ms: 1,
    });
    assert_eq!(strict.decide(), Decision::Continue);

    let long_task = "users deployment configure timeout cluster service ingress secrets rollout replicas \
                     namespace volumes probes";
    assert!((score(long_task, "users should configure timeout via yaml") - 0.4).abs() < 1e-9);
    // Synonyms are missed (a known weakness kept).
    assert!(score("make this function async", "convert to non-blocking code") >= 0.5);
    assert!((score("asynchronous programming patterns", "async code patterns") - 1.0 / 3.0).abs() < 1e-9);
    // The prefix rule needs four characters on both sides.
    assert!((score("fix bug", "fixture bugs arguments") - 1.0).abs() < 1e-9);
    let verbose = "Tokio gives Rust programs an executor, a reactor for sockets and files, timers, channels, \
                   synchronisation primitives and a work-stealing scheduler that spreads tasks over threads";
    assert!(score("explain tokio runtime", verbose) > 0.5);
}

#[test]
fn regulator_long_task_keeps_its_short_terms() {
    // The published bag cut the task at 20 keywords and flagged this; the task bag here is whole.
    let task = "kubernetes deployment configuration timeout cluster service ingress secrets rollout replicas \
                namespace volumes probes autoscaling networking observability dashboards alerting pipelines \
                terraform modules auth eks env";
    assert_eq!(task_bag(task).wanted.len(), 24);
    assert!(score(task, "auth eks env") < 0.5);
}

#[test]
fn regulator_negated_instruction_stays_out_of_the_task() {
    let bag = task_bag("Refactor this function, don't add logging or error handling");
    assert_eq!(
        bag.unwanted,
        vec!["error", "handling", "logging", "or"].into_iter().filter(|w| *w != "or").collect::<Vec<_>>()
    );
    assert!(!bag.wanted.contains(&"logging".to_string()));
    let d = drift(&bag, "Refactored the function and added logging").unwrap();
    assert_eq!(d.terms[0], "logging", "a ruled-out word leads the terms");
    assert!(d.score >= 0.5, "{}", d.score);
    // Without the negation rule "logging" would anchor: the same reply scores lower.
    assert!(score("Refactor this function with logging", "Refactored the function and added logging") < d.score);
    // Mid-clause "don't" is not an instruction: the user wants closures explained.
    assert!(task_bag("I don't understand closures").wanted.contains(&"closures".to_string()));
    assert!(task_bag("rewrite it without adding tests").unwanted.contains(&"tests".to_string()));
    assert!(task_bag("how to live without sugar").wanted.contains(&"sugar".to_string()));
}

/// Hand-labelled: (task, reply, drifts?). Replies written as an assistant would answer.
#[test]
fn regulator_hand_labelled_drift_cases() {
    let cases = [
        ("what's the capital of France", "The capital of France is Paris.", false),
        ("remind me how to boil an egg", "Boil the egg for nine minutes, then cool it in cold water.", false),
        (
            "summarise the plot of Hamlet",
            "Hamlet, prince of Denmark, avenges his father's murder; the plot ends in tragedy.",
            false,
        ),
        ("convert 10 miles to kilometres", "10 miles is about 16.09 kilometres.", false),
        ("what's a good name for a cat", "For a cat, a name like Miso or Pepper works well.", false),
        ("recommend a python testing library", "For Python testing, pytest is the usual library.", false),
        (
            "how do I center a div in css",
            "Use flexbox on the parent: display flex, justify-content center, align-items center, and the div is centered.",
            false,
        ),
        ("what's the capital of France", "Bitcoin prices rose sharply after the halving event.", true),
        ("fix the typo in my email", "Here are ten tips for growing tomatoes on a balcony garden.", true),
        ("translate hello into spanish", "Quantum entanglement links particle states across distances.", true),
        (
            "rename the variable to count",
            "Consider migrating the whole service to microservices with kafka streaming.",
            true,
        ),
        (
            "just fix the null check, don't add tests",
            "Fixed the null check and added unit tests with mocks and fixtures.",
            true,
        ),
    ];
    let wrong_at = |threshold: f64| -> Vec<&str> {
        cases.iter().filter(|(t, r, want)| (score(t, r) >= threshold) != *want).map(|(t, _, _)| *t).collect()
    };
    // Measured, not wished for: every off-topic reply is caught at the default 0.5, but a short
    // on-topic answer that brings its own words (minutes, water; prince, murder) scores 0.67–0.78
    // and is flagged too: 4 of the 7 on-topic replies. At 0.8 those pass but the reply that
    // added the tests the user ruled out (0.75) is missed: 1 of 12.
    let at_default = wrong_at(scope::DEFAULT_THRESHOLD);
    assert_eq!(
        at_default,
        vec![
            "remind me how to boil an egg",
            "summarise the plot of Hamlet",
            "what's a good name for a cat",
            "how do I center a div in css"
        ]
    );
    assert_eq!(wrong_at(0.8), vec!["just fix the null check, don't add tests"]);
}

#[test]
fn regulator_cluster_of_a_task() {
    assert_eq!(cluster(&task_bag("Make my auth module async")), "async+auth");
    assert_eq!(cluster(&task_bag("ok")), "");
}

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
mod feedback_cases;
