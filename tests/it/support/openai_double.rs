//! An in-process OpenAI-compatible server for the tests.
//!
//! Chat calls are answered from a script, in order, so a test states exactly what the
//! "model" does; embeddings are deterministic; every request is recorded. It listens on
//! loopback only.

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::Response;
use axum::routing::{get, post};
use futures::StreamExt;
use serde_json::{Value, json};

/// What the double does with the next chat request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A normal reply. `logprobs[i]`, when given, goes with `chunks[i]` (if the request asked).
    Text { chunks: Vec<String>, delay_ms: u64, logprobs: Option<Vec<f64>> },
    /// An error status with this body.
    Status { code: u16, body: String },
    /// HTTP 429 with `Retry-After: retry_after_s`.
    RateLimited { retry_after_s: u64 },
    /// HTTP 429 with `Retry-After` as an HTTP-date.
    RateLimitedUntil { http_date: String },
    /// Accept the request and never answer.
    Hang,
    /// Stream the first `after` chunks, then end the response: no finish_reason, no `[DONE]`.
    CutAfter { chunks: Vec<String>, after: usize },
    /// 200 with a data line that is not JSON.
    Junk,
    /// A well-formed stream with a finish_reason but no content.
    Empty,
}

impl Reply {
    /// `s` split after each space, so the chunks join back to exactly `s`.
    pub fn text(s: &str) -> Reply {
        Reply::Text { chunks: s.split_inclusive(' ').map(String::from).collect(), delay_ms: 0, logprobs: None }
    }
}

#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub path: String,
    /// Lower-cased names.
    pub headers: HashMap<String, String>,
    /// `Value::Null` when the body was not JSON.
    pub body: Value,
}

impl RecordedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(&name.to_ascii_lowercase()).map(String::as_str)
    }
}

#[derive(Default)]
struct Shared {
    script: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<RecordedRequest>>,
    /// `Some(d)`: embeddings are word-hashed into `d` dimensions ([`embedding_of_size`]).
    embed_dim: Mutex<Option<usize>>,
    /// This many embedding requests to come are answered 500.
    embed_failures: Mutex<usize>,
}

pub struct Double {
    addr: SocketAddr,
    shared: Arc<Shared>,
    server: tokio::task::JoinHandle<()>,
}

impl Double {
    pub async fn start(script: Vec<Reply>) -> Double {
        let shared = Arc::new(Shared { script: Mutex::new(script.into()), ..Shared::default() });
        let app = Router::new()
            .route("/v1/chat/completions", post(chat))
            .route("/v1/embeddings", post(embeddings))
            .route("/v1/models", get(models))
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Double { addr, shared, server }
    }

    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.requests.lock().unwrap().clone()
    }

    /// Add a reply to the end of the script.
    pub fn push(&self, reply: Reply) {
        self.shared.script.lock().unwrap().push_back(reply);
    }

    /// Only the chat requests, which are the ones that consume the script.
    pub fn chat_requests(&self) -> Vec<RecordedRequest> {
        self.requests().into_iter().filter(|r| r.path == "/v1/chat/completions").collect()
    }

    /// Answer embeddings like a model of `dim` dimensions (texts sharing words are near).
    pub fn set_embedding_dim(&self, dim: usize) {
        *self.shared.embed_dim.lock().unwrap() = Some(dim);
    }

    /// Answer the next `n` embedding requests with a server error.
    pub fn fail_embeddings(&self, n: usize) {
        *self.shared.embed_failures.lock().unwrap() = n;
    }

    /// The texts of every embedding request so far, in order.
    pub fn embedded_texts(&self) -> Vec<String> {
        self.requests()
            .into_iter()
            .filter(|r| r.path == "/v1/embeddings")
            .flat_map(|r| match &r.body["input"] {
                Value::String(s) => vec![s.clone()],
                Value::Array(items) => items.iter().map(|v| v.as_str().unwrap_or_default().to_string()).collect(),
                _ => Vec::new(),
            })
            .collect()
    }
}

impl Drop for Double {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// The vector the double returns for `text`: 8 dimensions from an FNV-1a hash, unit length.
pub fn embedding_for(text: &str) -> Vec<f32> {
    let mut h = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    let raw: Vec<f32> = (0..8)
        .map(|_| {
            h = h.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            ((h >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect();
    let norm = raw.iter().map(|x| x * x).sum::<f32>().sqrt().max(f32::EPSILON);
    raw.into_iter().map(|x| x / norm).collect()
}

/// A `dim`-dimensional unit vector: each word of three letters or more hashes (FNV-1a) to
/// one dimension, so texts that share words are near, as with a real model.
pub fn embedding_of_size(text: &str, dim: usize) -> Vec<f32> {
    let mut v = vec![0f32; dim];
    if dim == 0 {
        return v;
    }
    let lower = text.to_lowercase();
    for w in lower.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() >= 3) {
        let h = w.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
        v[(h % dim as u64) as usize] += 1.0;
    }
    if v.iter().all(|x| *x == 0.0) {
        v[0] = 1.0;
    }
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / n).collect()
}

fn record(shared: &Shared, uri: &Uri, headers: &HeaderMap, body: &Bytes) -> Value {
    let body: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let headers = headers
        .iter()
        .map(|(k, v)| (k.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect();
    let request = RecordedRequest { path: uri.path().into(), headers, body: body.clone() };
    shared.requests.lock().unwrap().push(request);
    body
}

async fn chat(State(shared): State<Arc<Shared>>, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let request = record(&shared, &uri, &headers, &body);
    let Some(reply) = shared.script.lock().unwrap().pop_front() else {
        return respond(StatusCode::INTERNAL_SERVER_ERROR, "text/plain", "script exhausted");
    };
    let model = request["model"].as_str().unwrap_or("double").to_string();
    let stream = request["stream"].as_bool().unwrap_or(false);
    let want_logprobs = request["logprobs"].as_bool().unwrap_or(false);
    let want_usage = request["stream_options"]["include_usage"].as_bool().unwrap_or(false);
    let prompt_tokens = request["messages"].as_array().map_or(0, |m| m.len() * 10);

    match reply {
        Reply::Status { code, body } => {
            let kind = if serde_json::from_str::<Value>(&body).is_ok() { "application/json" } else { "text/plain" };
            respond(StatusCode::from_u16(code).unwrap(), kind, body)
        }
        Reply::RateLimited { retry_after_s } => {
            let mut r = respond(
                StatusCode::TOO_MANY_REQUESTS,
                "application/json",
                String::from("{\"error\":{\"message\":\"slow down\"}}"),
            );
            r.headers_mut().insert("retry-after", retry_after_s.into());
            r
        }
        Reply::RateLimitedUntil { http_date } => {
            let mut r = respond(
                StatusCode::TOO_MANY_REQUESTS,
                "application/json",
                String::from("{\"error\":{\"message\":\"slow down\"}}"),
            );
            if let Ok(v) = http_date.parse() {
                r.headers_mut().insert("retry-after", v);
            }
            r
        }
        Reply::Hang => std::future::pending().await,
        Reply::Junk if stream => sse(vec!["data: {\"id\": oops, this is not json\n\n".into()], 0, false),
        Reply::Junk => respond(StatusCode::OK, "application/json", "{\"id\": oops"),
        Reply::CutAfter { .. } if !stream => {
            respond(StatusCode::OK, "application/json", "{\"id\":\"chatcmpl-double\",")
        }
        Reply::CutAfter { chunks, after } => {
            let events = chunks.iter().take(after).map(|c| data(&chunk(&model, json!({ "content": c }), None, None)));
            sse(events.collect(), 0, true)
        }
        Reply::Text { .. } | Reply::Empty if !stream => {
            let (chunks, _) = text_parts(reply);
            let text = chunks.concat();
            let completion = json!({
                "id": "chatcmpl-double", "object": "chat.completion", "created": 0, "model": model,
                "choices": [{ "index": 0, "message": { "role": "assistant", "content": text }, "finish_reason": "stop" }],
                "usage": usage(prompt_tokens, chunks.len()),
            });
            respond(StatusCode::OK, "application/json", completion.to_string())
        }
        reply => {
            let delay_ms = if let Reply::Text { delay_ms, .. } = reply { delay_ms } else { 0 };
            let (chunks, logprobs) = text_parts(reply);
            let mut events = vec![data(&chunk(&model, json!({ "role": "assistant", "content": "" }), None, None))];
            for (i, text) in chunks.iter().enumerate() {
                let lp = logprobs.as_ref().and_then(|l| l.get(i)).filter(|_| want_logprobs).map(
                    |lp| json!({ "content": [{ "token": text, "logprob": lp, "bytes": null, "top_logprobs": [] }] }),
                );
                events.push(data(&chunk(&model, json!({ "content": text }), lp, None)));
            }
            events.push(data(&chunk(&model, json!({}), None, Some("stop"))));
            if want_usage {
                let mut last = chunk(&model, json!({}), None, None);
                last["choices"] = json!([]);
                last["usage"] = usage(prompt_tokens, chunks.len());
                events.push(data(&last));
            }
            events.push("data: [DONE]\n\n".into());
            sse(events, delay_ms, false)
        }
    }
}

fn text_parts(reply: Reply) -> (Vec<String>, Option<Vec<f64>>) {
    match reply {
        Reply::Text { chunks, logprobs, .. } => (chunks, logprobs),
        _ => (Vec::new(), None),
    }
}

fn chunk(model: &str, delta: Value, logprobs: Option<Value>, finish: Option<&str>) -> Value {
    json!({
        "id": "chatcmpl-double", "object": "chat.completion.chunk", "created": 0, "model": model,
        "choices": [{ "index": 0, "delta": delta, "logprobs": logprobs, "finish_reason": finish }],
    })
}

fn usage(prompt: usize, completion: usize) -> Value {
    json!({ "prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion })
}

fn data(value: &Value) -> String {
    format!("data: {value}\n\n")
}

/// An SSE response sending `events` `delay_ms` apart; `close` ends the connection with it.
fn sse(events: Vec<String>, delay_ms: u64, close: bool) -> Response {
    let body = futures::stream::iter(events.into_iter().enumerate()).then(move |(i, event)| async move {
        if i > 0 && delay_ms > 0 {
            tokio::time::sleep(Duration::from_millis(delay_ms)).await;
        }
        Ok::<_, Infallible>(Bytes::from(event))
    });
    let mut response = Response::builder().header(header::CONTENT_TYPE, "text/event-stream");
    if close {
        response = response.header(header::CONNECTION, "close");
    }
    response.body(Body::from_stream(body)).unwrap()
}

fn respond(status: StatusCode, content_type: &str, body: impl Into<Body>) -> Response {
    Response::builder().status(status).header(header::CONTENT_TYPE, content_type).body(body.into()).unwrap()
}

/// Vectors listed in reverse input order with correct `index` fields, so a client that
/// trusts the listing order instead of `index` gets caught.
async fn embeddings(State(shared): State<Arc<Shared>>, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let request = record(&shared, &uri, &headers, &body);
    let inputs: Vec<String> = match &request["input"] {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items.iter().map(|v| v.as_str().unwrap_or_default().to_string()).collect(),
        _ => return respond(StatusCode::BAD_REQUEST, "text/plain", "input must be a string or an array"),
    };
    {
        let mut failures = shared.embed_failures.lock().unwrap();
        if *failures > 0 {
            *failures -= 1;
            return respond(StatusCode::INTERNAL_SERVER_ERROR, "text/plain", "embedding backend crashed");
        }
    }
    let dim = *shared.embed_dim.lock().unwrap();
    let embed = |text: &str| dim.map_or_else(|| embedding_for(text), |d| embedding_of_size(text, d));
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .rev()
        .map(|(i, text)| json!({ "object": "embedding", "index": i, "embedding": embed(text) }))
        .collect();
    let tokens: usize = inputs.iter().map(|s| s.len().div_ceil(4)).sum();
    let reply = json!({
        "object": "list", "data": data, "model": request["model"],
        "usage": { "prompt_tokens": tokens, "total_tokens": tokens },
    });
    respond(StatusCode::OK, "application/json", reply.to_string())
}

async fn models(State(shared): State<Arc<Shared>>, uri: Uri, headers: HeaderMap) -> Response {
    record(&shared, &uri, &headers, &Bytes::new());
    let model = |id: &str| json!({ "id": id, "object": "model", "created": 0, "owned_by": "double" });
    let reply = json!({ "object": "list", "data": [model("double-chat"), model("double-embed")] });
    respond(StatusCode::OK, "application/json", reply.to_string())
}
