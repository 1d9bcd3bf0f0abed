//! Episodes written by the model (docs/cognition.md §16.4) against the scripted endpoint: a
//! dense conversation gets the model's episode; junk and a silent model leave the rules'
//! draft, marked with why; a thin conversation never asks.

use crate::support::harness::{dead_url, settings};
use crate::support::openai_double::{Double, Reply};
use chalie::config::{ModelUse, Role};
use chalie::events::EventBus;
use chalie::llm::openai::OpenAiProvider;
use chalie::llm::{Llm, Route};
use chalie::memory::episode_model::write;
use chalie::memory::episodic::build_episode;
use chalie::store::{ChatRepo, Db, FactOrigin, FactsRepo, GistsRepo, NewGist, now_ts};
use serde_json::{Value, json};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

async fn setup(script: Vec<Reply>, timeout_ms: u64) -> (Double, Db, Llm) {
    let double = Double::start(script).await;
    let db = Db::spawn(chalie::store::open_in_memory().unwrap());
    let url = double.base_url();
    let routes = Role::ALL.map(|r| {
        let at = if r == Role::Embedding { dead_url() } else { url.clone() };
        (r, Route { provider: Arc::new(OpenAiProvider::new("double", &at, None)), model: "m".into(), builtin: false })
    });
    let mut s = settings(ModelUse::Heuristic);
    s.memory_extraction = ModelUse::Llm;
    s.request_timeout_ms = timeout_ms;
    (double, db, Llm::new(EventBus::new(), s, routes))
}

/// Two exchanges before this one, eight gists and three facts on the topic: density 0.55.
async fn dense(db: &Db) {
    db.call(|c| {
        let now = now_ts();
        for i in 0..2 {
            ChatRepo(c).append("t", &format!("x0{i}"), "user", &format!("message {i}"), None, None)?;
        }
        for i in 0..8 {
            let content = format!("the user plans a Lisbon trip, point {i}");
            let g = NewGist {
                topic: "travel",
                thread_id: Some("t"),
                gist_type: "intent",
                content: &content,
                confidence: 8.0,
            };
            GistsRepo(c).insert(&g, now, now + 600)?;
        }
        for (k, v) in [("city", "Lisbon"), ("month", "May"), ("party", "two")] {
            FactsRepo(c).upsert("travel", k, v, 0.9, now, now + 600, FactOrigin::Conversation)?;
        }
        Ok(())
    })
    .await
    .unwrap();
}

fn payload() -> Value {
    json!({"thread_id": "t", "exchange_id": "x1", "topic": "travel", "mode": "RESPOND",
        "user_text": "I think we should go to Lisbon in May", "response": "May is lovely there.", "created_at": 7})
}

fn episode() -> Value {
    json!({
        "gist": "The user settled on Lisbon in May for the trip. Dates are still open.",
        "intent": {"type": "planning", "direction": "decision-making"},
        "emotion": null,
        "open_loops": ["pick the dates"],
        "salience_factors": {"novelty": 3, "emotional": 0, "commitment": 2, "unresolved": true}
    })
}

#[tokio::test]
async fn a_dense_conversation_gets_the_models_episode() {
    let (double, db, llm) = setup(vec![Reply::text(&episode().to_string())], 5000).await;
    dense(&db).await;
    let draft = build_episode(&payload()).unwrap();
    let ep = write(&db, &llm, draft.clone(), &payload(), &CancellationToken::new()).await;
    assert_eq!(ep.context["builder"], "model");
    assert_eq!(ep.gist, "The user settled on Lisbon in May for the trip. Dates are still open.");
    assert_eq!(ep.open_loops, ["pick the dates"]);
    // (0.4·3/3 + 0 + 0.2·2/3)·1.25 = 0.6667 → 7
    assert_eq!(ep.salience, 7);
    assert_ne!(ep.salience, draft.salience, "the model's factors, not the rules'");
    let sent = double.chat_requests()[0].body["messages"][1]["content"].as_str().unwrap().to_string();
    assert!(sent.starts_with("User: I think we should go to Lisbon in May") && sent.contains("point 7"), "{sent}");
}

#[tokio::test]
async fn junk_or_silence_leaves_the_draft_and_says_why() {
    let (_double, db, llm) = setup(vec![Reply::text("A nice chat about travel."); 3], 5000).await;
    dense(&db).await;
    let draft = build_episode(&payload()).unwrap();
    let ep = write(&db, &llm, draft.clone(), &payload(), &CancellationToken::new()).await;
    assert_eq!((ep.gist.as_str(), ep.salience), (draft.gist.as_str(), draft.salience));
    let why = ep.context["builder"].as_str().unwrap();
    assert!(why.starts_with("rules (model: "), "{why}");

    let (_double, db, llm) = setup(vec![Reply::Hang], 500).await;
    dense(&db).await;
    let ep = write(&db, &llm, draft.clone(), &payload(), &CancellationToken::new()).await;
    assert_eq!(ep.gist, draft.gist);
    assert!(ep.context["builder"].as_str().unwrap().contains("did not answer within"), "{}", ep.context["builder"]);

    let mut bad = episode();
    bad["salience_factors"]["novelty"] = json!(9);
    let (_double, db, llm) = setup(vec![Reply::text(&bad.to_string())], 5000).await;
    dense(&db).await;
    let ep = write(&db, &llm, draft.clone(), &payload(), &CancellationToken::new()).await;
    assert_eq!(ep.gist, draft.gist, "off the schema: the draft stands");
}

#[tokio::test]
async fn a_thin_conversation_never_asks() {
    let (double, db, llm) = setup(vec![Reply::text(&episode().to_string())], 5000).await;
    let draft = build_episode(&payload()).unwrap();
    let ep = write(&db, &llm, draft.clone(), &payload(), &CancellationToken::new()).await;
    assert_eq!((ep.context["builder"].as_str(), ep.gist.as_str()), (Some("rules"), draft.gist.as_str()));
    assert!(double.chat_requests().is_empty());
}
