//! Scope drift and clusters: the recorded vectors of parameters §13.8, the reference's drift
//! cases, negated instructions, and hand-labelled request/reply pairs.

use crate::cognition::regulator::keywords::{cluster, task_bag};
use crate::cognition::regulator::scope::{self, drift};
use crate::cognition::regulator::{Decision, Event, Regulator, RegulatorState, Settings};

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

fn warned(settings: Settings, task: &str, reply: &str, cosine: Option<f64>) -> bool {
    let mut r = Regulator::new(settings, RegulatorState::default());
    r.on_event(Event::TurnStart { user_message: task.into(), at_ms: 0 });
    r.on_event(Event::TurnComplete { response: reply.into(), at_ms: 1 });
    if let Some(cosine) = cosine {
        r.on_event(Event::ReplySimilarity { cosine });
    }
    matches!(r.decide(), Decision::ScopeDriftWarn { .. })
}

/// A short on-topic answer in other words is a keyword candidate, and its embedding's
/// similarity to the request keeps the warning off; an unrelated reply still warns.
#[test]
fn regulator_similar_reply_is_not_warned() {
    let (task, moon) = ("tell me something about space", "A short fact about the moon: it drifts away each year.");
    assert!(score(task, moon) >= 0.5, "the keyword score alone flags it");
    let s = Settings::default();
    assert!(!warned(s.clone(), task, moon, Some(0.24)), "cosine above the threshold");
    assert!(warned(s.clone(), task, "a recipe for banana bread with walnuts", Some(0.06)));
    assert!(warned(s.clone(), task, moon, None), "no embedding: the seed's keyword rule");
    let keywords_only = Settings { similarity_threshold: 1.0, ..Settings::default() };
    assert!(warned(keywords_only, task, moon, Some(0.24)));
}

/// Doing what the user ruled out is on the request's subject, so close in embedding space: the
/// similarity check must not hide it.
#[test]
fn regulator_ruled_out_term_warns_whatever_the_similarity() {
    let task = "refactor the parser function, don't add docstrings";
    let reply = "Added docstrings everywhere and updated the readme file.";
    let d = drift(&task_bag(task), reply).expect("both bags have keywords");
    assert!(d.ruled_out, "{d:?}");
    assert!(scope::warns(&d, Some(0.9), 0.5, 0.125));
    let clean = drift(&task_bag("tell me something about space"), "the moon drifts away").expect("bags");
    assert!(!clean.ruled_out && !scope::warns(&clean, Some(0.9), 0.5, 0.125));
}

#[test]
fn regulator_cosine_of_vectors() {
    assert_eq!(scope::cosine(&[1.0, 0.0], &[1.0, 0.0]), Some(1.0));
    assert_eq!(scope::cosine(&[1.0, 0.0], &[0.0, 2.0]), Some(0.0));
    assert_eq!(scope::cosine(&[1.0], &[1.0, 0.0]), None);
    assert_eq!(scope::cosine(&[0.0, 0.0], &[1.0, 0.0]), None);
}
