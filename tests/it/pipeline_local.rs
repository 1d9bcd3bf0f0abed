//! The whole pipeline on the built-in CPU models (SmolLM2-135M chat through llama.cpp,
//! all-MiniLM-L6-v2 embeddings): no endpoint, no scripted answers. Slower than the other
//! pipeline tests (a few seconds of real generation) but part of the normal suite.

use crate::support::{bin, models};
use chalie::cognition::intent::TriageSource;
use chalie::cognition::pipeline::Engine;
use chalie::cognition::router::Mode;
use chalie::config::{LlmSettings, ModelUse, Role};
use chalie::events::EventBus;
use chalie::llm::local::{CHAT_MODEL, EMBED_MODEL, LocalProvider};
use chalie::llm::{Llm, Route};
use chalie::store::{ChatRepo, Db, RoutingRepo};
use std::path::PathBuf;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

async fn fetched_models() -> PathBuf {
    tokio::task::spawn_blocking(models::fetched).await.unwrap()
}

#[tokio::test]
async fn the_builtin_models_carry_every_mode_end_to_end() {
    let dir = fetched_models().await;

    let bus = EventBus::new();
    let provider = Arc::new(LocalProvider::new("local", &dir));
    let routes = Role::ALL.map(|role| {
        let model = if role == Role::Embedding { EMBED_MODEL } else { CHAT_MODEL };
        (role, Route { provider: provider.clone(), model: model.into(), builtin: true })
    });
    let settings = LlmSettings {
        triage: ModelUse::Auto,
        memory_extraction: ModelUse::Auto,
        critic: ModelUse::Auto,
        graph_router: ModelUse::Heuristic,
        graph_router_timeout_ms: 800,
        triage_timeout_ms: 500,
        tiebreak_timeout_ms: 1500,
        request_timeout_ms: 120_000,
        max_retries: 0,
        regulator_token_cap: 10_000,
        regulator: Default::default(),
    };
    let llm = Arc::new(Llm::new(bus.clone(), settings, routes));
    let db = Db::spawn(chalie::store::open_in_memory().unwrap());
    let engine = Engine::start(db.clone(), llm, bus.clone()).await.unwrap();
    assert!(!engine.model_pre_routing(), "auto with the built-in lightweight model is heuristic");

    // Each message opens its own thread, so each is the first message of a fresh thread.
    let cases = [
        ("hey, good morning!", Mode::Acknowledge),
        ("What is the capital of France?", Mode::Respond),
        ("can you fix it?", Mode::Clarify),
        ("add eggs and milk to my shopping list", Mode::Act),
        ("", Mode::Ignore),
    ];
    for (i, (text, mode)) in cases.into_iter().enumerate() {
        let (thread, xid) = (format!("thread-{i}"), format!("exchange-{i}"));
        let (t, x, body) = (thread.clone(), xid.clone(), text.to_string());
        db.call(move |c| ChatRepo(c).append(&t, &x, "user", &body, None, None)).await.unwrap();
        let r = engine.turn(&thread, &xid, text, &CancellationToken::new()).await.unwrap();
        eprintln!("{text:?}: {} in {:.0} ms {:?}: {:?}", r.mode, r.timings_ms.total, r.timings_ms, r.response);
        assert_eq!(r.mode, mode, "{text:?}: {}", r.router.reason);
        assert!(r.failed.is_none(), "{text:?}: {:?}", r.failed);
        assert_ne!(r.triage.result.source, TriageSource::Model, "no model call before routing");
        if mode != Mode::Act {
            // A weak model's clarification may be replaced; nothing else may degrade.
            assert!(r.fallbacks.iter().all(|f| f == "clarify_no_question"), "{text:?}: {:?}", r.fallbacks);
        }
        if mode == Mode::Ignore {
            assert_eq!(r.response, "");
        } else {
            assert!(!r.response.trim().is_empty(), "{text:?} got an empty reply");
            assert!(!r.topic.degraded, "the local embedding worked for {text:?}");
        }
        if mode == Mode::Clarify {
            assert!(r.response.contains('?'), "{:?}", r.response);
        }
        let rows = db.call(|c| RoutingRepo(c).recent(100, None)).await.unwrap();
        let row = rows.iter().find(|d| d.exchange_id.as_deref() == Some(xid.as_str())).expect("audited");
        assert_eq!(row.selected_mode, mode.as_str());
        assert!(row.signal_snapshot.is_object() && row.routing_time_ms.is_some());
        let history = db.call(move |c| ChatRepo(c).recent(&thread, 10)).await.unwrap();
        assert_eq!(history.len(), if mode == Mode::Ignore { 1 } else { 2 }, "{history:?}");
    }
}

/// A new user's first minutes on the built-in model, through the real binary (so the memory
/// workers store what was said between turns): the introduction is acknowledged by a template
/// that says back what was learned, own-trait questions are answered from memory with the
/// source, and a question about something never told is "I don't know that yet".
#[tokio::test]
async fn the_deterministic_side_carries_introductions_and_own_questions() {
    let models = fetched_models().await;
    let data = tempfile::tempdir().unwrap();
    let batch = data.path().join("batch.txt");
    std::fs::write(
        &batch,
        "Hi! My name is Ada and I'm allergic to peanuts.\nWhat am I allergic to?\nwhere do I live?\nthanks!\n",
    )
    .unwrap();
    let models = models.to_string_lossy().into_owned();
    let out = bin::chalie_with(
        data.path(),
        &data.path().join("config.toml"),
        &[("CHALIE_MODELS_DIR", models.as_str())],
        &["ask", "--json", "--batch", batch.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", bin::text(&out.stderr));
    let reports: Vec<serde_json::Value> =
        bin::text(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let said = |i: usize| (reports[i]["response"].as_str().unwrap().to_string(), reports[i]["reply_source"].clone());
    assert_eq!(reports.len(), 4);

    let (hello, source) = said(0);
    assert_eq!(source, "template", "{hello}");
    assert!(hello.contains("Ada") && hello.contains("allergic to peanuts"), "{hello}");

    let (allergy, source) = said(1);
    assert_eq!(source, "memory", "{allergy}");
    assert!(allergy.starts_with("You're allergic to peanuts."), "{allergy}");
    assert!(reports[1]["answered_from"][0].as_str().unwrap().starts_with("trait:allergy"), "{:?}", reports[1]);

    let (home, source) = said(2);
    assert_eq!(source, "memory");
    assert!(home.starts_with("I don't know that yet"), "{home}");

    let (thanks, source) = said(3);
    assert_eq!(source, "template");
    assert!(!thanks.is_empty() && thanks.len() < 60, "{thanks}");
}
