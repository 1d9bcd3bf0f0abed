//! The post-action critic against the scripted endpoint (docs/cognition.md §16.1–16.3): a safe
//! action the model finds wrong is corrected without asking, a consequential one stops the loop
//! and asks, a silent or junk critic is skipped and named, and on the built-in lightweight
//! model only the deterministic checks run.

use crate::support::harness::{Harness, settings, start_custom};
use crate::support::openai_double::{Double, Reply};
use chalie::cognition::pipeline::Engine;
use chalie::cognition::router::Mode;
use chalie::config::{ModelUse, Role};
use chalie::events::{EngineEvent, EventBus};
use chalie::llm::openai::OpenAiProvider;
use chalie::llm::{Llm, Route};
use chalie::store::{Db, ListsRepo};
use serde_json::{Value, json};
use std::sync::Arc;

fn plan(actions: Value) -> Reply {
    Reply::text(&json!({ "actions": actions }).to_string())
}

fn verdict(v: Value) -> Reply {
    Reply::text(&v.to_string())
}

async fn with_critic(script: Vec<Reply>, timeout_ms: u64) -> Harness {
    let mut s = settings(ModelUse::Heuristic);
    s.critic = ModelUse::Auto;
    s.request_timeout_ms = timeout_ms;
    start_custom(script, s, &[]).await
}

async fn lists(h: &Harness) -> Vec<(String, Vec<String>)> {
    h.read(|c| {
        let repo = ListsRepo(c);
        let mut out = Vec::new();
        for (id, name) in repo.names()? {
            out.push((name, repo.entries(id)?.into_iter().map(|e| e.content).collect()));
        }
        out.sort();
        Ok(out)
    })
    .await
}

fn critic_of(r: &chalie::cognition::pipeline::TurnReport, i: usize) -> Value {
    r.act_iterations[0].results[i].data["critic"].clone()
}

#[tokio::test]
async fn a_safe_action_the_model_finds_wrong_is_corrected_silently() {
    let h = with_critic(
        vec![
            plan(json!([{"type": "list", "params": {"action": "add", "name": "todo", "items": ["milk"]}}])),
            verdict(json!({
                "verified": false, "severity": "major", "issue": "the user asked for oat milk on the shopping list",
                "correction": [
                    {"type": "list", "params": {"action": "remove", "name": "todo", "items": ["milk"]}},
                    {"type": "list", "params": {"action": "add", "name": "shopping", "items": ["oat milk"]}}
                ]
            })),
            plan(json!([])),
        ],
        5000,
    )
    .await;
    let mut events = h.bus.subscribe();
    let r = h.say("t", "put oat milk on my shopping list").await;
    assert_eq!(r.mode, Mode::Act, "{}", r.router.reason);
    assert_eq!(lists(&h).await, [("shopping".to_string(), vec!["oat milk".to_string()]), ("todo".into(), vec![])]);
    assert_eq!(r.response, "Added oat milk to shopping.", "the wrong step and its undoing are not news");
    assert_eq!(r.reply_mode, Mode::Ignore, "cards, no question");
    let kinds: Vec<&str> = r.act_iterations[0].actions.iter().map(|a| a.params["action"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["add", "remove", "add"], "the corrections are logged as steps of the iteration");
    let c = critic_of(&r, 0);
    assert_eq!((c["model"].as_str(), c["outcome"].as_str()), (Some("doubted"), Some("corrected")));
    assert_eq!(c["checked"], "todo holds what was added", "the deterministic check ran first");
    assert_eq!(critic_of(&r, 2)["outcome"], "correction");
    assert_eq!(critic_of(&r, 2)["checked"], "shopping holds what was added", "the correction is checked too");
    let steps: Vec<String> = std::iter::from_fn(|| events.try_recv().ok())
        .filter_map(|e| match e.event {
            EngineEvent::ActIteration { actions, termination: None, .. } => Some(actions),
            _ => None,
        })
        .flatten()
        .map(|s| s.result)
        .collect();
    assert_eq!(
        steps,
        ["Added milk to todo.", "Removed milk from todo.", "Added oat milk to shopping."],
        "the ACT pane"
    );
    let stored: String = h
        .read(|c| {
            Ok(c.query_row("SELECT action_results FROM cortex_iterations WHERE iteration_number = 0", [], |r| {
                r.get(0)
            })?)
        })
        .await;
    assert!(stored.contains("\"corrected\"") && stored.contains("oat milk on the shopping list"), "{stored}");
    let prompt = h.double.chat_requests()[1].body["messages"][1]["content"].as_str().unwrap().to_string();
    assert!(prompt.starts_with("Request: put oat milk on my shopping list\nAction: list"), "{prompt}");
}

#[tokio::test]
async fn a_consequential_action_in_doubt_pauses_and_asks() {
    let h = with_critic(
        vec![
            plan(json!([{"type": "schedule", "params":
                {"action": "create", "message": "call mum", "due_at": "tomorrow at 9am"}}])),
            verdict(json!({
                "verified": false, "severity": "major", "issue": "the user said 10am, not 9am",
                "correction": {"type": "schedule", "params":
                    {"action": "create", "message": "call mum", "due_at": "tomorrow at 10am"}}
            })),
        ],
        5000,
    )
    .await;
    let r = h.say("t", "remind me to call mum tomorrow at 10am").await;
    assert_eq!(r.act_termination.map(|t| t.as_str()), Some("needs_confirmation"));
    assert_eq!(r.reply_mode, Mode::Clarify);
    assert!(r.response.contains("But a check says: the user said 10am, not 9am."), "{}", r.response);
    assert!(r.response.ends_with("Should I change it: create call mum at tomorrow at 10am?"), "{}", r.response);
    assert_eq!(critic_of(&r, 0)["outcome"], "asked");
    let due: Vec<String> =
        h.read(|c| Ok(chalie::store::RemindersRepo(c).pending()?.into_iter().map(|r| r.due_at).collect())).await;
    assert_eq!(due.len(), 1, "nothing more was done without the user: {due:?}");
    assert!(due[0].ends_with("T09:00"), "{due:?}");
    let topic = r.topic.name.clone();
    let now = chrono::Local::now().timestamp();
    let world = h.read(move |c| chalie::store::WorldStateRepo(c).live_for(&topic, now, 10)).await;
    assert!(world.iter().any(|(slot, v)| slot == "decision" && v.contains("critic")), "{world:?}");
    assert_eq!(h.double.chat_requests().len(), 2, "no reply generated: the question is the reply");
}

#[tokio::test]
async fn a_silent_or_junk_critic_is_skipped_and_named() {
    let add = || plan(json!([{"type": "list", "params": {"action": "add", "name": "books", "items": ["Dune"]}}]));
    let h = with_critic(vec![add(), Reply::Hang], 600).await;
    let r = h.say("t", "put Dune on my books list").await;
    assert!(r.fallbacks.contains(&"critic_timeout".to_string()), "{:?}", r.fallbacks);
    let c = critic_of(&r, 0);
    assert_eq!((c["model"].as_str(), c["outcome"].as_str()), (Some("skipped: critic_timeout"), Some("fine")));
    assert_eq!(c["checked"], "books holds what was added", "the deterministic check still ran");
    assert_eq!(r.response, "Added Dune to books.");

    let junk = vec![Reply::text("Looks good to me!"); 3];
    let h = with_critic([vec![add()], junk, vec![plan(json!([]))]].concat(), 5000).await;
    let r = h.say("t", "put Dune on my books list").await;
    assert!(r.fallbacks.contains(&"critic_invalid_output".to_string()), "{:?}", r.fallbacks);
    assert_eq!(critic_of(&r, 0)["outcome"], "fine");
    assert_eq!(lists(&h).await, [("books".to_string(), vec!["Dune".to_string()])]);
}

#[tokio::test]
async fn on_the_built_in_model_only_the_checks_run() {
    let double = Double::start(vec![
        plan(json!([{"type": "list", "params": {"action": "add", "name": "books", "items": ["Emma"]}}])),
        plan(json!([])),
    ])
    .await;
    let db = Db::spawn(chalie::store::open_in_memory().unwrap());
    let bus = EventBus::new();
    let url = double.base_url();
    let routes = Role::ALL.map(|role| {
        let provider = Arc::new(OpenAiProvider::new("double", &url, None));
        (role, Route { provider, model: "m".into(), builtin: role == Role::Lightweight })
    });
    let mut s = settings(ModelUse::Heuristic);
    s.critic = ModelUse::Auto;
    let engine = Engine::start(db.clone(), Arc::new(Llm::new(bus.clone(), s, routes)), bus.clone()).await.unwrap();
    let h = Harness { double, db, bus, engine };
    let r = h.say("t", "put Emma on my books list").await;
    let c = critic_of(&r, 0);
    assert_eq!((c["model"].as_str(), c["checked"].as_str()), (Some("off"), Some("books holds what was added")));
    assert_eq!(h.double.chat_requests().len(), 2, "two plans, no critic call");
    assert!(!r.fallbacks.iter().any(|f| f.starts_with("critic")), "{:?}", r.fallbacks);
}

/// The consequential case of [`a_consequential_action_in_doubt_pauses_and_asks`], then the
/// user's next message: the harness and the two scripted replies (plan, doubting verdict).
async fn asked_about_the_reminder(more: Vec<Reply>) -> Harness {
    let script = vec![
        plan(json!([{"type": "schedule", "params":
            {"action": "create", "message": "call mum", "due_at": "tomorrow at 9am"}}])),
        verdict(json!({
            "verified": false, "severity": "major", "issue": "the user said 10am, not 9am",
            "correction": {"type": "schedule", "params":
                {"action": "create", "message": "call mum", "due_at": "tomorrow at 10am"}}
        })),
    ];
    let h = with_critic([script, more].concat(), 5000).await;
    let r = h.say("t", "remind me to call mum tomorrow at 10am").await;
    assert_eq!(r.act_termination.map(|t| t.as_str()), Some("needs_confirmation"));
    h
}

async fn pending_due(h: &Harness) -> Vec<String> {
    h.read(|c| Ok(chalie::store::RemindersRepo(c).pending()?.into_iter().map(|r| r.due_at).collect())).await
}

#[tokio::test]
async fn a_yes_to_the_critics_question_replaces_the_wrong_reminder() {
    let h = asked_about_the_reminder(vec![]).await;
    let asked = h.double.chat_requests().len();
    let r = h.say("t", "yes please").await;
    assert!(r.response.starts_with("Changed: "), "{}", r.response);
    let due = pending_due(&h).await;
    assert_eq!(due.len(), 1, "the 9am reminder is cancelled, not kept beside the new one: {due:?}");
    assert!(due[0].ends_with("T10:00"), "{due:?}");
    assert_eq!(h.double.chat_requests().len(), asked, "a plain yes needs no model call");
    let again = h.say("t", "yes").await;
    assert!(!again.response.starts_with("Changed: "), "the question was answered once: {}", again.response);
    assert_eq!(pending_due(&h).await.len(), 1);
}

#[tokio::test]
async fn a_no_leaves_it_and_anything_else_lets_the_question_lapse() {
    let h = asked_about_the_reminder(vec![]).await;
    let r = h.say("t", "no, leave it").await;
    assert_eq!(r.response, "Okay, I left it as it is.");
    let due = pending_due(&h).await;
    assert!(due.len() == 1 && due[0].ends_with("T09:00"), "{due:?}");

    let h = asked_about_the_reminder(vec![
        plan(json!([
            {"type": "list", "params": {"action": "add", "name": "shopping", "items": ["eggs"]}}
        ])),
        verdict(json!({"verified": true})),
        plan(json!([])),
    ])
    .await;
    let r = h.say("t", "put eggs on my shopping list").await;
    assert!(!r.response.starts_with("Changed: ") && !r.response.starts_with("Okay, I left"), "{}", r.response);
    assert_eq!(lists(&h).await, [("shopping".to_string(), vec!["eggs".to_string()])], "planned as usual");
    let due = pending_due(&h).await;
    assert!(due.len() == 1 && due[0].ends_with("T09:00"), "nothing applied: {due:?}");
    let late = h.say("t", "yes").await;
    assert!(!late.response.starts_with("Changed: "), "a yes after another message is not an answer: {}", late.response);
    assert_eq!(pending_due(&h).await.len(), 1);
}
