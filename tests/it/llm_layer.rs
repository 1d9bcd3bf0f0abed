//! The `Llm` layer over the real OpenAI-compatible client and a scripted server:
//! deadlines, retries, events, structured output and its repair loop.

use crate::support::harness::drain;
use crate::support::openai_double::{Double, Reply};
use chalie::config::{LlmSettings, ModelUse, Role};
use chalie::events::{EngineEvent, EventBus};
use chalie::llm::openai::OpenAiProvider;
use chalie::llm::{ChatRequest, Llm, LlmError, Message, ResponseFormat, Route};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

const KEY: &str = "sk-test-SECRET-4242";

fn settings(max_retries: u32) -> LlmSettings {
    LlmSettings {
        triage: ModelUse::Llm,
        memory_extraction: ModelUse::Llm,
        critic: ModelUse::Heuristic,
        graph_router: ModelUse::Heuristic,
        graph_router_timeout_ms: 800,
        triage_timeout_ms: 500,
        tiebreak_timeout_ms: 1500,
        request_timeout_ms: 5000,
        max_retries,
        regulator_token_cap: 10_000,
        regulator: Default::default(),
    }
}

fn llm_for(base_url: &str, bus: &EventBus, max_retries: u32) -> Llm {
    let provider = Arc::new(OpenAiProvider::new("scripted", base_url, Some(KEY.to_string())));
    let routes = Role::ALL.map(|r| (r, Route { provider: provider.clone(), model: "m".into(), builtin: false }));
    Llm::new(bus.clone(), settings(max_retries), routes)
}

fn req(text: &str) -> ChatRequest {
    ChatRequest::new(vec![Message::system("You are terse."), Message::user(text)])
}

async fn chat(llm: &Llm, text: &str) -> Result<String, LlmError> {
    let mut tokens = String::new();
    let c = llm.chat(Role::Primary, &req(text), &mut |t| tokens.push_str(&t.text), &CancellationToken::new()).await?;
    assert_eq!(tokens, c.text, "streamed tokens assemble the reply");
    Ok(c.text)
}

#[tokio::test]
async fn a_streamed_reply_emits_start_tokens_complete_and_cost_without_secrets() {
    let double = Double::start(vec![Reply::text("Paris is the capital of France.")]).await;
    let bus = EventBus::new();
    let mut rx = bus.subscribe();
    let llm = llm_for(&double.base_url(), &bus, 2);
    assert_eq!(chat(&llm, "capital of France?").await.unwrap(), "Paris is the capital of France.");
    let events = drain(&mut rx);
    assert!(matches!(&events[0], EngineEvent::LlmStart { role: Role::Primary, model, .. } if model == "m"));
    assert!(events.iter().filter(|e| matches!(e, EngineEvent::LlmToken { .. })).count() >= 2);
    assert!(matches!(events.iter().rev().nth(1), Some(EngineEvent::LlmComplete { .. })));
    assert!(matches!(events.last(), Some(EngineEvent::LlmCost { tokens_out, .. }) if *tokens_out > 0));
    for e in &events {
        assert!(!serde_json::to_string(e).unwrap().contains(KEY), "secret leaked into {e:?}");
    }
}

#[tokio::test]
async fn transient_failures_are_retried_before_any_token() {
    let double = Double::start(vec![
        Reply::Status { code: 500, body: "overloaded".into() },
        Reply::Status { code: 429, body: "slow down".into() },
        Reply::text("third time lucky"),
    ])
    .await;
    let bus = EventBus::new();
    let mut rx = bus.subscribe();
    let llm = llm_for(&double.base_url(), &bus, 2);
    assert_eq!(chat(&llm, "hi").await.unwrap(), "third time lucky");
    assert_eq!(double.requests().len(), 3);
    let retries =
        drain(&mut rx).into_iter().filter(|e| matches!(e, EngineEvent::LlmFailed { will_retry: true, .. })).count();
    assert_eq!(retries, 2);
}

#[tokio::test]
async fn retries_are_bounded() {
    let double = Double::start(vec![
        Reply::Status { code: 503, body: "down".into() },
        Reply::Status { code: 503, body: "down".into() },
        Reply::Status { code: 503, body: "down".into() },
    ])
    .await;
    let llm = llm_for(&double.base_url(), &EventBus::new(), 1);
    assert!(matches!(chat(&llm, "hi").await, Err(LlmError::Http { status: 503, .. })));
    assert_eq!(double.requests().len(), 2, "one try plus max_retries = 1");
}

/// A 429's `Retry-After` is honoured within the call's deadline (5 s here): 1 s fits, so the
/// second attempt is made and answers; 30 s does not, so the call fails at once with one
/// request instead of retrying early into the server's limit or past the turn's time.
#[tokio::test]
async fn retry_after_is_honoured_inside_the_deadline_only() {
    let double = Double::start(vec![Reply::RateLimited { retry_after_s: 1 }, Reply::text("after the wait")]).await;
    let llm = llm_for(&double.base_url(), &EventBus::new(), 2);
    assert_eq!(chat(&llm, "hi").await.unwrap(), "after the wait");
    assert_eq!(double.requests().len(), 2);

    let double = Double::start(vec![Reply::RateLimited { retry_after_s: 30 }, Reply::text("too late")]).await;
    let llm = llm_for(&double.base_url(), &EventBus::new(), 2);
    let r = chat(&llm, "hi").await;
    assert!(matches!(r, Err(LlmError::RateLimited { retry_after_s: Some(30), .. })), "{r:?}");
    assert_eq!(double.requests().len(), 1, "a retry 30 s out would pass the 5 s deadline");
}

/// The HTTP-date form of `Retry-After` is read too: a date 30 s out is past the 5 s deadline,
/// so no early retry is made (read as no header, the backoff would retry at once).
#[tokio::test]
async fn retry_after_as_an_http_date_is_honoured() {
    let when = (chrono::Utc::now() + chrono::Duration::seconds(30)).format("%a, %d %b %Y %H:%M:%S GMT").to_string();
    let double = Double::start(vec![Reply::RateLimitedUntil { http_date: when }, Reply::text("too early")]).await;
    let llm = llm_for(&double.base_url(), &EventBus::new(), 2);
    let r = chat(&llm, "hi").await;
    assert!(matches!(r, Err(LlmError::RateLimited { retry_after_s: Some(s), .. }) if (28..=31).contains(&s)), "{r:?}");
    assert_eq!(double.requests().len(), 1, "no retry before the server's date");
}

#[tokio::test]
async fn auth_failures_are_not_retried_and_name_no_secret() {
    let double = Double::start(vec![Reply::Status { code: 401, body: "bad key".into() }]).await;
    let llm = llm_for(&double.base_url(), &EventBus::new(), 3);
    let err = chat(&llm, "hi").await.unwrap_err();
    assert!(matches!(err, LlmError::Auth { status: 401, .. }), "{err:?}");
    assert!(!err.to_string().contains(KEY));
    assert_eq!(double.requests().len(), 1);
}

#[tokio::test]
async fn a_stream_cut_after_tokens_is_not_retried() {
    let double = Double::start(vec![
        Reply::CutAfter { chunks: vec!["Hel".into(), "lo".into(), " wor".into(), "ld".into()], after: 2 },
        Reply::text("should not be requested"),
    ])
    .await;
    let llm = llm_for(&double.base_url(), &EventBus::new(), 3);
    let mut seen = String::new();
    let err = llm
        .chat(Role::Primary, &req("hi"), &mut |t| seen.push_str(&t.text), &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::Protocol { .. }), "{err:?}");
    assert_eq!(seen, "Hello", "what streamed before the cut was delivered once");
    assert_eq!(double.requests().len(), 1);
}

#[tokio::test]
async fn a_hanging_endpoint_times_out_and_an_unreachable_one_fails() {
    let double = Double::start(vec![Reply::Hang]).await;
    let llm = llm_for(&double.base_url(), &EventBus::new(), 0);
    let r = tokio::time::timeout(
        Duration::from_secs(10),
        llm.chat_within(
            Role::Lightweight,
            &req("hi"),
            Duration::from_millis(300),
            &mut |_| {},
            &CancellationToken::new(),
        ),
    )
    .await
    .expect("the layer's deadline must fire");
    assert!(matches!(r, Err(LlmError::Timeout { ms: 300, .. })), "{r:?}");

    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/v1", l.local_addr().unwrap())
    };
    let llm = llm_for(&dead, &EventBus::new(), 1);
    let r = tokio::time::timeout(Duration::from_secs(20), chat(&llm, "hi")).await.unwrap();
    assert!(matches!(r, Err(LlmError::Unreachable { .. })), "{r:?}");
}

#[tokio::test]
async fn the_user_can_stop_a_reply() {
    let double = Double::start(vec![Reply::Hang]).await;
    let llm = llm_for(&double.base_url(), &EventBus::new(), 2);
    let cancel = CancellationToken::new();
    let c2 = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        c2.cancel();
    });
    let r = tokio::time::timeout(Duration::from_secs(10), llm.chat(Role::Primary, &req("hi"), &mut |_| {}, &cancel))
        .await
        .unwrap();
    assert!(matches!(r, Err(LlmError::Cancelled)), "{r:?}");
}

fn triage_schema() -> serde_json::Value {
    json!({
        "type": "object",
        "required": ["mode", "confidence"],
        "properties": {
            "mode": {"type": "string", "enum": ["RESPOND", "CLARIFY", "ACT"]},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1}
        }
    })
}

fn structured_req() -> ChatRequest {
    let mut r = req("triage this");
    r.format = ResponseFormat::JsonSchema { name: "triage".into(), schema: triage_schema() };
    r
}

/// One structured triage call against the double, no transport retries.
async fn triage(double: &Double) -> Result<serde_json::Value, LlmError> {
    let llm = llm_for(&double.base_url(), &EventBus::new(), 0);
    llm.structured(
        Role::Lightweight,
        &structured_req(),
        &triage_schema(),
        Duration::from_secs(5),
        &CancellationToken::new(),
    )
    .await
}

#[tokio::test]
async fn structured_output_is_repaired_with_the_validation_error() {
    let double = Double::start(vec![
        Reply::text("Sure! Here you go: {\"mode\": \"RUN\", \"confidence\": 0.9}"),
        Reply::text("```json\n{\"mode\": \"ACT\", \"confidence\": 0.9}\n```"),
    ])
    .await;
    let v = triage(&double).await.unwrap();
    assert_eq!(v, json!({"mode": "ACT", "confidence": 0.9}));
    let reqs = double.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].body["response_format"]["type"], "json_schema");
    let feedback =
        reqs[1].body["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_string();
    assert!(feedback.contains("$.mode"), "the repair prompt names the problem: {feedback}");
}

#[tokio::test]
async fn structured_output_gives_up_with_a_typed_error() {
    let double = Double::start(vec![Reply::text("no"), Reply::text("{\"mode\": 1}"), Reply::text("{bad json")]).await;
    let err = triage(&double).await.unwrap_err();
    assert!(matches!(&err, LlmError::InvalidOutput { raw, .. } if raw == "{bad json"), "{err:?}");
    assert_eq!(double.requests().len(), 3, "bounded: one answer and two repairs");
}

#[tokio::test]
async fn junk_and_empty_replies_are_typed_errors() {
    let double = Double::start(vec![Reply::Junk, Reply::Empty]).await;
    let llm = llm_for(&double.base_url(), &EventBus::new(), 0);
    assert!(matches!(chat(&llm, "a").await, Err(LlmError::Protocol { .. })));
    assert!(matches!(chat(&llm, "b").await, Err(LlmError::Empty { .. })));
}

#[tokio::test]
async fn embeddings_go_through_the_embedding_role() {
    let double = Double::start(vec![]).await;
    let llm = llm_for(&double.base_url(), &EventBus::new(), 0);
    let inputs = vec!["one".to_string(), "two".to_string(), "one".to_string()];
    let v = llm.embed(&inputs).await.unwrap();
    assert_eq!(v.len(), 3);
    assert_eq!(v[0], v[2]);
    assert_ne!(v[0], v[1]);
}

mod selection {
    use super::*;
    use chalie::config::{Config, Env};
    use chalie::llm::resolve::{Selection, build};
    use std::path::Path;

    struct NoEnv;
    impl Env for NoEnv {
        fn var(&self, _: &str) -> Option<String> {
            None
        }
    }

    fn config(text: &str) -> Config {
        Config::from_user_toml(Path::new("/test/config.toml"), text).unwrap()
    }

    #[tokio::test]
    async fn no_roles_and_a_server_at_the_ollama_address_uses_it() {
        let double = Double::start(vec![]).await;
        let c = config(&format!("[providers.ollama]\nkind = \"openai\"\nbase_url = \"{}\"\n", double.base_url()));
        let (llm, sel) = build(&c, Path::new("/nonexistent"), &NoEnv, EventBus::new(), true).await.unwrap();
        let Selection::DetectedOllama { model, .. } = sel else { panic!("{sel:?}") };
        assert_eq!(llm.describe(Role::Primary), format!("ollama/{model}"));
        assert_eq!(llm.describe(Role::Embedding), "local/all-minilm-l6-v2 (built-in)");
    }

    #[tokio::test]
    async fn no_roles_and_nothing_answering_uses_the_builtin_models() {
        let dead = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            format!("http://{}/v1", l.local_addr().unwrap())
        };
        let c = config(&format!("[providers.ollama]\nkind = \"openai\"\nbase_url = \"{dead}\"\n"));
        let (llm, sel) = build(&c, Path::new("/nonexistent"), &NoEnv, EventBus::new(), true).await.unwrap();
        assert_eq!(sel, Selection::BuiltIn);
        assert_eq!(llm.describe(Role::Primary), "local/smollm2-135m-instruct (built-in)");
    }

    #[tokio::test]
    async fn configured_roles_are_used_as_written() {
        let double = Double::start(vec![]).await;
        let c = config(&format!(
            "[providers.ollama]\nkind = \"openai\"\nbase_url = \"{}\"\n[models]\nprimary = \"ollama/qwen3:8b\"\n",
            double.base_url()
        ));
        let (llm, sel) = build(&c, Path::new("/nonexistent"), &NoEnv, EventBus::new(), true).await.unwrap();
        assert_eq!(sel, Selection::Configured);
        assert_eq!(llm.describe(Role::Primary), "ollama/qwen3:8b");
        assert_eq!(llm.describe(Role::Lightweight), "local/smollm2-135m-instruct (built-in)");
        assert!(double.requests().is_empty(), "no probe when the user assigned roles");
    }
}
