//! The adaptive layer end to end (docs/cognition.md §18): two real chit-chat users (the
//! tersest and one of the most expansive speakers of the report part of
//! `examples/adaptive_eval.rs`, in tests/data/adaptive_users.json) talk to the engine with every
//! role on the scripted double. After each turn the message is observed into the style profile
//! the way the chunker's deterministic path does. The prompts the double receives must carry
//! the directives each user calls for, and the audit row must record what was sent.

use crate::support::harness::{Call, kind, start_heuristic, system_prompt};
use crate::support::openai_double::Reply;
use chalie::cognition::pipeline::prompts::STYLE_TITLE;
use chalie::memory::style::{observe, observe_and_save};
use serde_json::Value;
use std::path::PathBuf;

fn users() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/adaptive_users.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A reply long enough (about 130 words) that a terse answer to it reads as overload.
fn long_reply() -> Reply {
    Reply::text(&"That sounds lovely, and there is a lot to say about it. ".repeat(12))
}

/// Talk as `who`; returns, per turn, the style lines of the generation prompt (None when the
/// turn made no generation call) and the audit row's `adaptive` value.
async fn conversation(who: &str) -> Vec<(Option<Vec<String>>, Option<Value>)> {
    let messages: Vec<String> =
        users()[who]["messages"].as_array().unwrap().iter().map(|m| m.as_str().unwrap().to_string()).collect();
    let h = start_heuristic((0..messages.len() * 2).map(|_| long_reply()).collect()).await;
    let mut out = Vec::new();
    for text in messages {
        let before = h.double.chat_requests().len();
        let report = h.say("t", &text).await;
        let sent: Vec<String> = h.double.chat_requests()[before..]
            .iter()
            .filter(|r| matches!(kind(r), Call::Generation(_)))
            .map(system_prompt)
            .collect();
        let lines = sent.last().map(|p| match p.split_once(&format!("{STYLE_TITLE}:\n")) {
            Some((_, tail)) => tail.lines().map(|l| l.trim_start_matches("- ").to_string()).collect(),
            None => Vec::new(),
        });
        let adaptive = h.decision(&report.exchange_id).await.adaptive;
        out.push((lines, adaptive));
        // The chunker's deterministic style observation, after the reply.
        let t = text.clone();
        h.read(move |c| observe_and_save(c, &observe(&t).unwrap()).map(|_| ())).await;
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terse_and_expansive_users_get_opposite_directives_in_the_prompt() {
    let terse = conversation("terse").await;
    let expansive = conversation("expansive").await;
    for (name, turns) in [("terse", &terse), ("expansive", &expansive)] {
        for (i, (lines, adaptive)) in turns.iter().enumerate() {
            eprintln!("{name} turn {i}: {lines:?}");
            // What the prompt carried is what the audit row says was sent.
            if let Some(lines) = lines {
                let sent: Vec<String> = adaptive
                    .as_ref()
                    .and_then(|a| serde_json::from_value(a["sent"].clone()).ok())
                    .unwrap_or_else(|| panic!("{name} turn {i}: no adaptive record: {adaptive:?}"));
                assert_eq!(&sent, lines, "{name} turn {i}");
            }
        }
    }
    let has = |turns: &[(Option<Vec<String>>, Option<Value>)], needle: &str| {
        turns.iter().skip(2).filter(|(l, _)| l.as_ref().is_some_and(|l| l.iter().any(|x| x.contains(needle)))).count()
    };
    let generated =
        |turns: &[(Option<Vec<String>>, Option<Value>)]| turns.iter().skip(2).filter(|t| t.0.is_some()).count();
    assert!(generated(&terse) >= 3 && generated(&expansive) >= 3, "the double wrote the replies");
    // Nothing before two observations: the first reply of each user is in the default voice.
    assert_eq!(terse[0].0.as_deref(), Some(&[][..]));
    assert_eq!(expansive[0].0.as_deref(), Some(&[][..]));
    // The terse user: short, simple replies after a long answer (load) on every turn, and brief
    // ones (the profile) once it has seen enough; never fuller ones.
    assert_eq!(has(&terse, "Keep this reply short and simple"), generated(&terse), "{terse:?}");
    assert!(has(&terse, "Keep replies brief") >= 3, "{terse:?}");
    assert_eq!(has(&terse, "Fuller answers"), 0);
    // The expansive user: fuller replies welcome, never told to be brief.
    assert!(has(&expansive, "Fuller answers are welcome") >= 1, "{expansive:?}");
    assert_eq!(has(&expansive, "Keep replies brief"), 0, "{expansive:?}");
    assert_eq!(has(&expansive, "Keep this reply short"), 0, "{expansive:?}");
}

/// The built-in model gets the same section, cut to its budget (the strongest first); the
/// audit row says what was cut.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_built_in_model_gets_at_most_three_directives_strongest_first() {
    use crate::support::harness::{Harness, settings};
    use crate::support::openai_double::Double;
    use chalie::cognition::adaptive::BUILTIN_MAX_DIRECTIVES;
    use chalie::config::{ModelUse, Role};
    use chalie::llm::openai::OpenAiProvider;
    use chalie::llm::{Llm, Route};
    use std::sync::Arc;

    let double = Double::start(vec![Reply::text("Tides follow the moon's pull.")]).await;
    let db = chalie::store::Db::spawn(chalie::store::open_in_memory().unwrap());
    let bus = chalie::events::EventBus::new();
    let url = double.base_url();
    // The primary role marked built-in, but answered by the double so its prompt is recorded.
    let routes = Role::ALL.map(|r| {
        let provider = Arc::new(OpenAiProvider::new("double", &url, None));
        (r, Route { provider, model: "m".into(), builtin: r == Role::Primary })
    });
    let llm = Llm::new(bus.clone(), settings(ModelUse::Heuristic), routes);
    let engine = chalie::cognition::pipeline::Engine::start(db.clone(), Arc::new(llm), bus.clone()).await.unwrap();
    let h = Harness { double, db, bus, engine };
    let report = h.say("t", "Keep it short, no bullet points, no emojis and be more formal: how do tides work?").await;
    let prompt = h
        .double
        .chat_requests()
        .iter()
        .filter(|r| matches!(kind(r), Call::Generation(_)))
        .map(system_prompt)
        .next_back()
        .expect("the model wrote the reply");
    let (_, section) = prompt.split_once(&format!("{STYLE_TITLE}:\n")).expect("a style section");
    let lines: Vec<&str> = section.lines().collect();
    assert_eq!(
        lines,
        vec![
            "- The user asked for short replies: keep it brief.",
            "- No bullet points or lists: write plain sentences.",
            "- Use a formal tone, as the user asked.",
        ]
    );
    assert_eq!(lines.len(), BUILTIN_MAX_DIRECTIVES);
    let a = h.decision(&report.exchange_id).await.adaptive.expect("recorded");
    assert_eq!(a["directives"].as_array().unwrap().len(), 4, "{a}");
    assert_eq!(a["sent"].as_array().unwrap().len(), 3, "{a}");
}
