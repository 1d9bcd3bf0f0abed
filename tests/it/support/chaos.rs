//! A hostile OpenAI-compatible endpoint: each request, chat or embedding, is answered
//! normally or with one fault drawn from a seeded generator (issue 23, item 2).
//!
//! It speaks HTTP/1.1 by hand over raw TCP, one request per connection (`Connection: close`),
//! because several faults are not expressible through a web framework: a connection dropped
//! before any answer, a body cut short of its length, bytes that are not UTF-8. The role of a
//! request is read from its `model` field, so a config naming each role's model differently
//! lets the summary count faults per role.

use super::openai_double::embedding_for;
use chalie::SplitMix64;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What a faulty endpoint does instead of answering.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fault {
    /// The connection is closed before anything is written back (the client sees a refused
    /// or reset connection; a listener cannot refuse one request and accept the next).
    Dropped,
    /// The request is read and never answered.
    Timeout,
    Unauthorized,
    /// 429 with `Retry-After: 1`.
    RateLimited,
    ServerError,
    /// A stream (or body) that stops part-way: no finish, no `[DONE]`, or fewer bytes than
    /// the announced length.
    Torn,
    Junk,
    /// Valid JSON that is not a completion (or embedding list).
    WrongShape,
    /// 200 with an empty body.
    Empty,
    /// A well-formed reply of one megabyte.
    Huge,
    /// Bytes that are not UTF-8 where text should be.
    NotUtf8,
}

pub const FAULTS: [Fault; 11] = [
    Fault::Dropped,
    Fault::Timeout,
    Fault::Unauthorized,
    Fault::RateLimited,
    Fault::ServerError,
    Fault::Torn,
    Fault::Junk,
    Fault::WrongShape,
    Fault::Empty,
    Fault::Huge,
    Fault::NotUtf8,
];

/// The text of every normal chat reply: a question, so a CLARIFY turn keeps it too.
pub const NORMAL_REPLY: &str = "All good here, anything else?";

/// One request the endpoint served.
#[derive(Debug, Clone)]
pub struct Served {
    /// The request's `model` field (the role, with the chaos config).
    pub model: String,
    pub fault: Option<Fault>,
}

struct Shared {
    rng: Mutex<SplitMix64>,
    /// Out of 100 requests, how many get a fault.
    percent: u64,
    served: Mutex<Vec<Served>>,
}

pub struct Chaos {
    addr: SocketAddr,
    shared: Arc<Shared>,
    server: tokio::task::JoinHandle<()>,
}

impl Chaos {
    pub async fn start(seed: u64, percent: u64) -> Chaos {
        let shared = Arc::new(Shared { rng: Mutex::new(SplitMix64(seed)), percent, served: Mutex::default() });
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let state = shared.clone();
        let server = tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                tokio::spawn(serve(socket, state.clone()));
            }
        });
        Chaos { addr, shared, server }
    }

    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn served(&self) -> Vec<Served> {
        self.shared.served.lock().unwrap().clone()
    }

    /// Faults served, by model and kind.
    pub fn tally(&self) -> BTreeMap<String, BTreeMap<String, usize>> {
        let mut t: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
        for s in self.served() {
            let kind = s.fault.map_or_else(|| "ok".to_string(), |f| format!("{f:?}"));
            *t.entry(s.model).or_default().entry(kind).or_default() += 1;
        }
        t
    }
}

impl Drop for Chaos {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// Read one request: its path and JSON body (`Null` when unreadable).
async fn read_request(socket: &mut TcpStream) -> Option<(String, Value)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let path = head.split_whitespace().nth(1)?.to_string();
    let length = head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    while buf.len() < head_end + length {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = serde_json::from_slice(&buf[head_end..]).unwrap_or(Value::Null);
    Some((path, body))
}

async fn serve(mut socket: TcpStream, shared: Arc<Shared>) {
    let Some((path, request)) = read_request(&mut socket).await else { return };
    let model = request["model"].as_str().unwrap_or("none").to_string();
    let fault = if path.ends_with("/models") {
        None
    } else {
        let mut rng = shared.rng.lock().unwrap();
        (rng.next_u64() % 100 < shared.percent).then(|| FAULTS[rng.below(FAULTS.len())])
    };
    shared.served.lock().unwrap().push(Served { model: model.clone(), fault });
    let bytes = if path.ends_with("/embeddings") {
        embedding_answer(&request, fault)
    } else if path.ends_with("/chat/completions") {
        chat_answer(&request, fault)
    } else {
        let list = json!({ "object": "list", "data": [{ "id": model, "object": "model", "owned_by": "chaos" }] });
        Some(http(200, "application/json", &[], list.to_string().as_bytes()))
    };
    match (fault, bytes) {
        (Some(Fault::Timeout), _) => {
            // Held open long past any timeout the program uses, then let go.
            tokio::time::sleep(Duration::from_secs(120)).await;
        }
        (_, Some(bytes)) => {
            let _ = socket.write_all(&bytes).await;
            let _ = socket.shutdown().await;
        }
        (_, None) => {}
    }
}

fn http(status: u16, content_type: &str, extra: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let reason = match status {
        200 => "OK",
        401 => "Unauthorized",
        429 => "Too Many Requests",
        _ => "Internal Server Error",
    };
    let mut head = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let mut out = head.into_bytes();
    out.extend_from_slice(body);
    out
}

/// The status faults, the same for every endpoint; `None` for the others.
fn status_fault(fault: Fault) -> Option<Vec<u8>> {
    let error = |m: &str| json!({ "error": { "message": m, "type": "chaos" } }).to_string();
    Some(match fault {
        Fault::Unauthorized => http(401, "application/json", &[], error("Incorrect API key provided").as_bytes()),
        Fault::RateLimited => {
            http(429, "application/json", &[("retry-after", "1")], error("Rate limit reached").as_bytes())
        }
        Fault::ServerError => http(500, "text/plain", &[], b"the model crashed"),
        Fault::Empty => http(200, "application/json", &[], b""),
        _ => return None,
    })
}

fn sse_event(value: &Value) -> Vec<u8> {
    format!("data: {value}\n\n").into_bytes()
}

fn delta(content: &str, finish: Option<&str>) -> Value {
    let delta = if finish.is_some() { json!({}) } else { json!({ "content": content }) };
    json!({
        "id": "chaos", "object": "chat.completion.chunk", "created": 0, "model": "chaos",
        "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }],
    })
}

/// The content a normal reply carries: triage-shaped JSON when a format was asked for.
fn normal_content(request: &Value) -> String {
    if request.get("response_format").is_some() {
        json!({
            "branch": "respond", "mode": "RESPOND", "tools": [], "skills": [],
            "confidence_internal": 0.8, "confidence_tool_need": 0.1, "freshness_risk": 0.1,
            "effort_estimate": "light", "reasoning": "chaos triage",
        })
        .to_string()
    } else {
        NORMAL_REPLY.to_string()
    }
}

fn chat_answer(request: &Value, fault: Option<Fault>) -> Option<Vec<u8>> {
    if let Some(bytes) = fault.and_then(status_fault) {
        return Some(bytes);
    }
    let content = normal_content(request);
    let stream = request["stream"].as_bool().unwrap_or(false);
    let whole = |events: Vec<Vec<u8>>| Some(http(200, "text/event-stream", &[], &events.concat()));
    if !stream {
        let body = |text: &str| {
            json!({
                "id": "chaos", "object": "chat.completion", "created": 0, "model": "chaos",
                "choices": [{ "index": 0, "message": { "role": "assistant", "content": text }, "finish_reason": "stop" }],
            })
            .to_string()
            .into_bytes()
        };
        return Some(match fault {
            Some(Fault::Dropped | Fault::Timeout) => return None,
            Some(Fault::Torn) => {
                let full = body(&content);
                let mut bytes = http(200, "application/json", &[], &full);
                bytes.truncate(bytes.len() - full.len() / 2);
                bytes
            }
            Some(Fault::Junk) => http(200, "application/json", &[], b"{\"id\": oops"),
            Some(Fault::WrongShape) => http(200, "application/json", &[], b"{\"result\": {\"text\": 42}}"),
            Some(Fault::Huge) => http(200, "application/json", &[], &body(&"lorem ipsum ".repeat(1 << 17))),
            Some(Fault::NotUtf8) => {
                let mut b = body("XX");
                let at = b.windows(2).position(|w| w == b"XX").unwrap_or(0);
                b.splice(at..at + 2, [0xff, 0xfe]);
                http(200, "application/json", &[], &b)
            }
            _ => http(200, "application/json", &[], &body(&content)),
        });
    }
    match fault {
        Some(Fault::Dropped | Fault::Timeout) => None,
        Some(Fault::Torn) => {
            // Announced as a complete stream, cut after one piece: no finish, no [DONE].
            let events = [sse_event(&delta("All good ", None))].concat();
            let mut bytes = http(200, "text/event-stream", &[], &events);
            let announced = format!("content-length: {}", events.len());
            let longer = format!("content-length: {}", events.len() + 4096);
            let text = String::from_utf8_lossy(&bytes).replacen(&announced, &longer, 1);
            bytes = text.into_bytes();
            Some(bytes)
        }
        Some(Fault::Junk) => whole(vec![b"data: {\"id\": oops, not json\n\n".to_vec()]),
        Some(Fault::WrongShape) => {
            whole(vec![b"data: {\"choices\": \"none\"}\n\n".to_vec(), b"data: [DONE]\n\n".to_vec()])
        }
        Some(Fault::Huge) => {
            let mut events: Vec<Vec<u8>> =
                (0..256).map(|_| sse_event(&delta(&"lorem ipsum ".repeat(342), None))).collect();
            events.push(sse_event(&delta("", Some("stop"))));
            events.push(b"data: [DONE]\n\n".to_vec());
            whole(events)
        }
        Some(Fault::NotUtf8) => {
            let mut event = sse_event(&delta("XX", None));
            let at = event.windows(2).position(|w| w == b"XX").unwrap_or(0);
            event.splice(at..at + 2, [0xff, 0xfe]);
            whole(vec![event, sse_event(&delta("", Some("stop"))), b"data: [DONE]\n\n".to_vec()])
        }
        _ => {
            let mut events: Vec<Vec<u8>> =
                content.split_inclusive(' ').map(|piece| sse_event(&delta(piece, None))).collect();
            events.push(sse_event(&delta("", Some("stop"))));
            events.push(b"data: [DONE]\n\n".to_vec());
            whole(events)
        }
    }
}

fn embedding_answer(request: &Value, fault: Option<Fault>) -> Option<Vec<u8>> {
    if let Some(bytes) = fault.and_then(status_fault) {
        return Some(bytes);
    }
    let inputs: Vec<String> = match &request["input"] {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items.iter().map(|v| v.as_str().unwrap_or_default().to_string()).collect(),
        _ => Vec::new(),
    };
    let list = |pad: usize| {
        let data: Vec<Value> = inputs
            .iter()
            .enumerate()
            .map(|(i, t)| json!({ "object": "embedding", "index": i, "embedding": embedding_for(t) }))
            .collect();
        json!({ "object": "list", "data": data, "model": request["model"], "pad": " ".repeat(pad) })
            .to_string()
            .into_bytes()
    };
    Some(match fault {
        Some(Fault::Dropped | Fault::Timeout) => return None,
        Some(Fault::Torn) => {
            let full = list(0);
            let mut bytes = http(200, "application/json", &[], &full);
            bytes.truncate(bytes.len() - full.len() / 2);
            bytes
        }
        Some(Fault::Junk) => http(200, "application/json", &[], b"{\"data\": [oops"),
        Some(Fault::WrongShape) => http(200, "application/json", &[], b"{\"data\": \"none\"}"),
        Some(Fault::Huge) => http(200, "application/json", &[], &list(1 << 20)),
        Some(Fault::NotUtf8) => {
            let mut b = list(2);
            let at = b.windows(4).position(|w| w == b"\"  \"").map_or(0, |i| i + 1);
            b.splice(at..at + 2, [0xff, 0xfe]);
            http(200, "application/json", &[], &b)
        }
        _ => http(200, "application/json", &[], &list(0)),
    })
}
