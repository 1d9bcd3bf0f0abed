//! The OpenAI-compatible provider against an in-process double of the HTTP API.

use std::time::{Duration, Instant};

use crate::support::harness::dead_url;
use crate::support::openai_double::{Double, Reply, embedding_for};
use chalie::llm::openai::{OpenAiProvider, list_models};
use chalie::llm::{ChatRequest, Completion, FinishReason, LlmError, Message, Provider, ResponseFormat, Token};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const KEY: &str = "sk-test-0123456789-secret";
/// Generous: nothing here should take more than a fraction of this.
const LIMIT: Duration = Duration::from_secs(5);

fn provider(double: &Double) -> OpenAiProvider {
    OpenAiProvider::new("double", &double.base_url(), Some(KEY.to_string()))
}

fn request(text: &str) -> ChatRequest {
    ChatRequest::new(vec![Message::system("Be brief."), Message::user(text)])
}

async fn chat_with(
    provider: &OpenAiProvider,
    req: &ChatRequest,
    cancel: &CancellationToken,
) -> (Result<Completion, LlmError>, Vec<Token>) {
    let mut tokens = Vec::new();
    let mut sink = |t: Token| tokens.push(t);
    let result = tokio::time::timeout(LIMIT, provider.chat("double-chat", req, &mut sink, cancel))
        .await
        .expect("chat did not finish in time");
    (result, tokens)
}

async fn chat(provider: &OpenAiProvider, req: &ChatRequest) -> (Result<Completion, LlmError>, Vec<Token>) {
    chat_with(provider, req, &CancellationToken::new()).await
}

#[tokio::test]
async fn streamed_tokens_arrive_in_order_and_assemble_the_text() {
    let double = Double::start(vec![Reply::text("The quick brown fox jumps.")]).await;
    let (result, tokens) = chat(&provider(&double), &request("go")).await;

    let completion = result.unwrap();
    let pieces: Vec<&str> = tokens.iter().map(|t| t.text.as_str()).collect();
    assert_eq!(pieces, ["The ", "quick ", "brown ", "fox ", "jumps."]);
    assert_eq!(completion.text, "The quick brown fox jumps.");
    assert_eq!(completion.finish, FinishReason::Stop);
    // From the double's usage chunk, not the chars/4 estimate.
    assert_eq!((completion.tokens_in, completion.tokens_out), (20, 5));
}

#[tokio::test]
async fn request_carries_the_parameters_and_asks_for_usage() {
    let double = Double::start(vec![Reply::text("ok")]).await;
    let mut req = request("go");
    req.max_tokens = 77;
    req.temperature = 0.7;
    req.stop = vec!["\n\n".into()];
    chat(&provider(&double), &req).await.0.unwrap();

    let body = &double.chat_requests()[0].body;
    assert_eq!(body["model"], "double-chat");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
    assert_eq!(body["max_tokens"], 77);
    assert_eq!(body["temperature"], 0.7);
    assert_eq!(body["stop"], json!(["\n\n"]));
    assert_eq!(body["messages"][0], json!({ "role": "system", "content": "Be brief." }));
    assert_eq!(body["messages"][1], json!({ "role": "user", "content": "go" }));
}

#[tokio::test]
async fn logprobs_are_passed_through() {
    let chunks = vec!["Yes".to_string(), ", sure".to_string()];
    let reply = Reply::Text { chunks, delay_ms: 0, logprobs: Some(vec![-0.25, -1.5]) };
    let double = Double::start(vec![reply]).await;
    let (result, tokens) = chat(&provider(&double), &request("go")).await;

    result.unwrap();
    assert_eq!(double.chat_requests()[0].body["logprobs"], true);
    let logprobs: Vec<Option<f64>> = tokens.iter().map(|t| t.logprob).collect();
    assert_eq!(logprobs, [Some(-0.25), Some(-1.5)]);
}

#[tokio::test]
async fn logprobs_refused_with_400_are_dropped_once_and_not_asked_again() {
    let refusal = Reply::Status { code: 400, body: r#"{"error":{"message":"logprobs is not supported"}}"#.into() };
    let double = Double::start(vec![refusal, Reply::text("first"), Reply::text("second")]).await;
    let p = provider(&double);

    assert_eq!(chat(&p, &request("go")).await.0.unwrap().text, "first");
    assert_eq!(chat(&p, &request("go")).await.0.unwrap().text, "second");
    let asked: Vec<bool> = double.chat_requests().iter().map(|r| r.body["logprobs"] == true).collect();
    assert_eq!(asked, [true, false, false]);
}

#[tokio::test]
async fn authorization_carries_the_key_and_no_error_shows_it() {
    let echo = format!(r#"{{"error":{{"message":"Incorrect API key provided: {KEY}"}}}}"#);
    let script = vec![
        Reply::text("hi"),
        Reply::Status { code: 401, body: echo.clone() },
        Reply::Status { code: 500, body: echo.clone() },
        Reply::Status { code: 404, body: format!("model not found (key {KEY})") },
    ];
    let double = Double::start(script).await;
    let p = provider(&double);

    chat(&p, &request("go")).await.0.unwrap();
    assert_eq!(double.chat_requests()[0].header("authorization"), Some(format!("Bearer {KEY}").as_str()));

    let mut errors = Vec::new();
    for _ in 0..3 {
        errors.push(chat(&p, &request("go")).await.0.unwrap_err());
    }
    let unreachable = OpenAiProvider::new("dead", &dead_url(), Some(KEY.into()));
    errors.push(chat(&unreachable, &request("go")).await.0.unwrap_err());
    errors.push(unreachable.embed("double-embed", &["x".into()]).await.unwrap_err());

    assert!(matches!(errors[0], LlmError::Auth { status: 401, .. }), "{:?}", errors[0]);
    assert!(matches!(errors[1], LlmError::Http { status: 500, .. }), "{:?}", errors[1]);
    assert!(matches!(errors[2], LlmError::ModelUnavailable { .. }), "{:?}", errors[2]);
    for e in &errors {
        assert!(!e.to_string().contains(KEY), "key leaked: {e}");
        assert!(!format!("{e:?}").contains(KEY), "key leaked: {e:?}");
    }
    assert!(!format!("{p:?}").contains(KEY));
}

#[tokio::test]
async fn without_a_key_no_authorization_header_is_sent() {
    let double = Double::start(vec![Reply::text("hi")]).await;
    let p = OpenAiProvider::new("local", &double.base_url(), None);
    chat(&p, &request("go")).await.0.unwrap();
    assert_eq!(double.chat_requests()[0].header("authorization"), None);
}

#[tokio::test]
async fn json_schema_response_format_is_sent() {
    let double = Double::start(vec![Reply::text("{}")]).await;
    let schema = json!({ "type": "object", "properties": { "mood": { "type": "string" } }, "required": ["mood"] });
    let mut req = request("go");
    req.format = ResponseFormat::JsonSchema { name: "mood".into(), schema: schema.clone() };
    chat(&provider(&double), &req).await.0.unwrap();

    let format = &double.chat_requests()[0].body["response_format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["json_schema"]["name"], "mood");
    assert_eq!(format["json_schema"]["strict"], true);
    assert_eq!(format["json_schema"]["schema"], schema);
}

#[tokio::test]
async fn json_object_response_format_is_sent() {
    let double = Double::start(vec![Reply::text("{}")]).await;
    let mut req = request("go");
    req.format = ResponseFormat::JsonObject;
    chat(&provider(&double), &req).await.0.unwrap();
    assert_eq!(double.chat_requests()[0].body["response_format"], json!({ "type": "json_object" }));
}

#[tokio::test]
async fn json_schema_refused_with_400_falls_back_to_json_object_and_remembers() {
    let refusal =
        Reply::Status { code: 400, body: r#"{"error":{"message":"response_format json_schema unsupported"}}"#.into() };
    let double = Double::start(vec![refusal, Reply::text("{}"), Reply::text("{}")]).await;
    let p = provider(&double);
    let mut req = request("go");
    req.logprobs = false;
    req.format = ResponseFormat::JsonSchema { name: "x".into(), schema: json!({ "type": "object" }) };

    chat(&p, &req).await.0.unwrap();
    chat(&p, &req).await.0.unwrap();
    let kinds: Vec<String> =
        double.chat_requests().iter().map(|r| r.body["response_format"]["type"].as_str().unwrap().into()).collect();
    assert_eq!(kinds, ["json_schema", "json_object", "json_object"]);
}

#[tokio::test]
async fn server_down_is_unreachable_quickly() {
    let p = OpenAiProvider::new("dead", &dead_url(), None);
    let started = Instant::now();
    let (result, _) = chat(&p, &request("go")).await;
    assert!(matches!(result, Err(LlmError::Unreachable { .. })), "{result:?}");
    assert!(started.elapsed() < Duration::from_secs(2), "took {:?}", started.elapsed());
}

#[tokio::test]
async fn status_401_and_403_are_auth() {
    let script = vec![
        Reply::Status { code: 401, body: "unauthorized".into() },
        Reply::Status { code: 403, body: r#"{"error":{"code":403,"message":"forbidden"}}"#.into() },
    ];
    let double = Double::start(script).await;
    let p = provider(&double);
    assert!(matches!(chat(&p, &request("go")).await.0, Err(LlmError::Auth { status: 401, .. })));
    assert!(matches!(chat(&p, &request("go")).await.0, Err(LlmError::Auth { status: 403, .. })));
}

#[tokio::test]
async fn status_429_is_rate_limited_at_once_without_retry() {
    let body = r#"{"error":{"message":"slow down","type":"rate_limit_error","param":null,"code":null}}"#;
    let double = Double::start(vec![Reply::Status { code: 429, body: body.into() }, Reply::text("too late")]).await;
    let started = Instant::now();
    let (result, _) = chat(&provider(&double), &request("go")).await;

    assert!(matches!(result, Err(LlmError::RateLimited { .. })), "{result:?}");
    assert_eq!(double.chat_requests().len(), 1);
    assert!(started.elapsed() < Duration::from_secs(2), "took {:?}", started.elapsed());
}

#[tokio::test]
async fn status_500_is_http_500_with_a_short_detail_and_no_retry() {
    let body = format!("backend exploded: {}", "x".repeat(1000));
    let double = Double::start(vec![Reply::Status { code: 500, body }, Reply::text("too late")]).await;
    let (result, _) = chat(&provider(&double), &request("go")).await;

    let Err(LlmError::Http { status: 500, detail, .. }) = result else { panic!("{result:?}") };
    assert!(detail.starts_with("backend exploded"), "{detail}");
    assert!(detail.chars().count() <= 201, "{} chars", detail.chars().count());
    assert_eq!(double.chat_requests().len(), 1);
}

#[tokio::test]
async fn status_404_naming_the_model_is_model_unavailable() {
    let body = r#"{"error":{"message":"model \"double-chat\" not found, try pulling it first","type":"api_error"}}"#;
    let double = Double::start(vec![Reply::Status { code: 404, body: body.into() }]).await;
    let (result, _) = chat(&provider(&double), &request("go")).await;
    let Err(LlmError::ModelUnavailable { model, detail, .. }) = result else { panic!("{result:?}") };
    assert_eq!(model, "double-chat");
    assert!(detail.contains("try pulling it first"), "{detail}");
}

#[tokio::test]
async fn other_4xx_is_http() {
    let double = Double::start(vec![Reply::Status { code: 422, body: "unprocessable".into() }]).await;
    let (result, _) = chat(&provider(&double), &request("go")).await;
    assert!(matches!(result, Err(LlmError::Http { status: 422, ref detail, .. }) if detail == "unprocessable"));
}

#[tokio::test]
async fn stream_cut_midway_is_protocol() {
    let chunks: Vec<String> = ["one ", "two ", "three ", "four"].map(String::from).into();
    let double = Double::start(vec![Reply::CutAfter { chunks, after: 2 }]).await;
    let (result, tokens) = chat(&provider(&double), &request("go")).await;

    let Err(LlmError::Protocol { detail, .. }) = result else { panic!("{result:?}") };
    assert!(detail.contains("ended early after 2 tokens"), "{detail}");
    assert_eq!(tokens.len(), 2);
}

#[tokio::test]
async fn junk_in_the_stream_is_protocol() {
    let double = Double::start(vec![Reply::Junk]).await;
    let (result, _) = chat(&provider(&double), &request("go")).await;
    assert!(matches!(result, Err(LlmError::Protocol { .. })), "{result:?}");
}

#[tokio::test]
async fn a_reply_without_content_is_empty() {
    let double = Double::start(vec![Reply::Empty]).await;
    let (result, tokens) = chat(&provider(&double), &request("go")).await;
    assert!(matches!(result, Err(LlmError::Empty { .. })), "{result:?}");
    assert!(tokens.is_empty());
}

#[tokio::test]
async fn cancelling_a_hung_request_returns_cancelled_promptly() {
    let double = Double::start(vec![Reply::Hang]).await;
    let p = provider(&double);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let (result, _) = chat_with(&p, &request("go"), &cancel).await;

    assert_eq!(result, Err(LlmError::Cancelled));
    assert!(started.elapsed() < Duration::from_secs(2), "took {:?}", started.elapsed());
}

#[tokio::test]
async fn cancelling_mid_stream_returns_cancelled() {
    let chunks: Vec<String> = (0..50).map(|i| format!("t{i} ")).collect();
    let double = Double::start(vec![Reply::Text { chunks, delay_ms: 50, logprobs: None }]).await;
    let p = provider(&double);
    let cancel = CancellationToken::new();
    let mut seen = 0;
    let mut sink = |_: Token| {
        seen += 1;
        if seen == 3 {
            cancel.cancel();
        }
    };
    let result = tokio::time::timeout(LIMIT, p.chat("double-chat", &request("go"), &mut sink, &cancel)).await.unwrap();
    assert_eq!(result, Err(LlmError::Cancelled));
    assert_eq!(seen, 3);
}

#[tokio::test]
async fn embeddings_come_back_in_input_order() {
    let double = Double::start(Vec::new()).await;
    let inputs: Vec<String> = ["alpha", "beta", "gamma", "delta"].map(String::from).into();
    let vectors = tokio::time::timeout(LIMIT, provider(&double).embed("double-embed", &inputs)).await.unwrap().unwrap();

    let expected: Vec<Vec<f32>> = inputs.iter().map(|s| embedding_for(s)).collect();
    assert_eq!(vectors, expected);
    let requests = double.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/v1/embeddings");
    assert_eq!(requests[0].body["input"], json!(inputs));
}

#[tokio::test]
async fn embedding_errors_map_like_chat_errors() {
    let p = OpenAiProvider::new("dead", &dead_url(), None);
    let result = tokio::time::timeout(LIMIT, p.embed("m", &["x".into()])).await.unwrap();
    assert!(matches!(result, Err(LlmError::Unreachable { .. })), "{result:?}");
}

#[tokio::test]
async fn probe_finds_the_double_and_not_a_dead_port() {
    let double = Double::start(Vec::new()).await;
    assert!(list_models(&double.base_url(), Duration::from_secs(2)).await.is_some_and(|m| !m.is_empty()));
    assert_eq!(double.requests()[0].path, "/v1/models");
    assert!(list_models(&dead_url(), Duration::from_secs(2)).await.is_none());
}

#[tokio::test]
async fn an_exhausted_script_fails_loudly() {
    let double = Double::start(Vec::new()).await;
    let (result, _) = chat(&provider(&double), &request("go")).await;
    assert!(matches!(result, Err(LlmError::Http { status: 500, ref detail, .. }) if detail == "script exhausted"));
}
