//! An engine over an in-memory database and the scripted OpenAI double, plus readers for
//! what a turn committed.

use super::openai_double::{Double, RecordedRequest, Reply};
use chalie::cognition::pipeline::{Engine, TurnReport, prompts};
use chalie::cognition::router::Mode;
use chalie::config::{LlmSettings, ModelUse, Role};
use chalie::events::{EngineEvent, EventBus, Stamped};
use chalie::llm::openai::OpenAiProvider;
use chalie::llm::{Llm, Route};
use chalie::store::{ChatRepo, Db, RoutingRecord, RoutingRepo, StoreError};
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::sync::broadcast::Receiver;
use tokio_util::sync::CancellationToken;

pub fn settings(triage: ModelUse) -> LlmSettings {
    LlmSettings {
        triage,
        memory_extraction: ModelUse::Heuristic,
        critic: ModelUse::Heuristic,
        graph_router: ModelUse::Heuristic,
        graph_router_timeout_ms: 800,
        triage_timeout_ms: 500,
        tiebreak_timeout_ms: 1500,
        request_timeout_ms: 5000,
        max_retries: 0,
        regulator_token_cap: 10_000,
        regulator: Default::default(),
    }
}

/// An address where nothing listens (bound, then released).
pub fn dead_url() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://{}/v1", l.local_addr().unwrap())
}

fn route(url: &str) -> Route {
    Route { provider: Arc::new(OpenAiProvider::new("double", url, None)), model: "m".into(), builtin: false }
}

pub struct Harness {
    pub double: Double,
    pub db: Db,
    pub bus: EventBus,
    pub engine: Engine,
}

/// Every role on the double; triage and the tie-breaker ask the model.
pub async fn start(script: Vec<Reply>) -> Harness {
    start_custom(script, settings(ModelUse::Llm), &[]).await
}

/// Every role on the double; `[llm] triage = "heuristic"`.
pub async fn start_heuristic(script: Vec<Reply>) -> Harness {
    start_custom(script, settings(ModelUse::Heuristic), &[]).await
}

/// Every role on the double except `dead`, which point where nothing listens.
pub async fn start_custom(script: Vec<Reply>, settings: LlmSettings, dead: &[Role]) -> Harness {
    let double = Double::start(script).await;
    let db = Db::spawn(chalie::store::open_in_memory().unwrap());
    let bus = EventBus::new();
    let (url, nowhere) = (double.base_url(), dead_url());
    let routes = Role::ALL.map(|r| (r, route(if dead.contains(&r) { &nowhere } else { &url })));
    let llm = Llm::new(bus.clone(), settings, routes);
    let engine = Engine::start(db.clone(), Arc::new(llm), bus.clone()).await.unwrap();
    Harness { double, db, bus, engine }
}

/// What a recorded chat request was, told apart by its system prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    Triage,
    Tiebreak,
    /// A frontal-cortex call, with the mode prompt it carried (RESPOND also serves ACT).
    Generation(Mode),
    Other,
}

/// A request's system messages, joined: for a reply, the persona (first) and the turn's
/// instructions (after the conversation, before the message).
pub fn system_prompt(r: &RecordedRequest) -> String {
    let messages = r.body["messages"].as_array().map(Vec::as_slice).unwrap_or_default();
    let system = messages.iter().filter(|m| m["role"] == "system");
    system.filter_map(|m| m["content"].as_str()).collect::<Vec<_>>().join("\n\n")
}

pub fn kind(r: &RecordedRequest) -> Call {
    let system = system_prompt(r);
    if system.starts_with(prompts::TRIAGE.trim()) {
        Call::Triage
    } else if system.starts_with(prompts::TIEBREAK.trim()) {
        Call::Tiebreak
    } else if system.starts_with(prompts::SOUL.trim()) {
        if system.contains(prompts::CLARIFY.trim()) {
            Call::Generation(Mode::Clarify)
        } else if system.contains(prompts::ACKNOWLEDGE.trim()) {
            Call::Generation(Mode::Acknowledge)
        } else if system.contains(prompts::RESPOND.trim()) {
            Call::Generation(Mode::Respond)
        } else {
            Call::Other
        }
    } else {
        Call::Other
    }
}

/// A triage reply the schema accepts.
pub fn triage_reply(mode: &str, skills: &[&str]) -> Reply {
    let branch = match mode {
        "RESPOND" | "CLARIFY" | "ACT" => mode.to_ascii_lowercase(),
        _ => "social".into(),
    };
    let v = json!({
        "branch": branch, "mode": mode, "tools": [], "skills": skills,
        "confidence_internal": 0.8, "confidence_tool_need": 0.1, "freshness_risk": 0.1,
        "effort_estimate": "light", "reasoning": "scripted triage",
    });
    Reply::text(&v.to_string())
}

/// A `triage_calibration` row, as the tests read it.
#[derive(Debug, Clone, PartialEq)]
pub struct TriageRow {
    pub source: String,
    pub fallback_reason: Option<String>,
    pub mode: String,
    pub routed_mode: String,
}

impl Harness {
    /// Store the message as `Runtime::intake` does and return its exchange id.
    pub async fn store(&self, thread: &str, text: &str) -> String {
        let xid = uuid::Uuid::now_v7().to_string();
        let (t, x, body) = (thread.to_string(), xid.clone(), text.to_string());
        self.db.call(move |c| ChatRepo(c).append(&t, &x, "user", &body, None, None)).await.unwrap();
        xid
    }

    pub async fn say(&self, thread: &str, text: &str) -> TurnReport {
        self.say_with(thread, text, &CancellationToken::new()).await
    }

    pub async fn say_with(&self, thread: &str, text: &str, cancel: &CancellationToken) -> TurnReport {
        let xid = self.store(thread, text).await;
        let report =
            self.engine.turn(thread, &xid, text, cancel).await.expect("a turn never fails while the database works");
        assert_eq!(report.exchange_id, xid);
        report
    }

    /// The chat calls so far, by kind.
    pub fn calls(&self) -> Vec<Call> {
        self.double.chat_requests().iter().map(kind).collect()
    }

    /// Run `f` on the database thread.
    pub async fn read<R: Send + 'static>(
        &self,
        f: impl FnOnce(&rusqlite::Connection) -> Result<R, StoreError> + Send + 'static,
    ) -> R {
        self.db.call(move |c| f(c)).await.unwrap()
    }

    /// The routing audit row of one exchange (exactly one must exist).
    pub async fn decision(&self, exchange: &str) -> RoutingRecord {
        let x = exchange.to_string();
        let rows: Vec<RoutingRecord> = self
            .read(|c| RoutingRepo(c).recent(1000, None))
            .await
            .into_iter()
            .filter(|r| r.exchange_id.as_deref() == Some(x.as_str()))
            .collect();
        assert_eq!(rows.len(), 1, "one routing_decisions row per exchange: {rows:?}");
        rows.into_iter().next().unwrap()
    }

    pub async fn triage_rows(&self, exchange: &str) -> Vec<TriageRow> {
        let x = exchange.to_string();
        self.read(move |c| {
            let mut stmt = c.prepare(
                "SELECT source, fallback_reason, mode, routed_mode FROM triage_calibration WHERE exchange_id = ?1",
            )?;
            let rows = stmt.query_map([x], |r| {
                Ok(TriageRow { source: r.get(0)?, fallback_reason: r.get(1)?, mode: r.get(2)?, routed_mode: r.get(3)? })
            })?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
    }

    /// `(role, content, mode, topic)` of the thread's chat history, oldest first.
    pub async fn history(&self, thread: &str) -> Vec<(String, String, Option<String>, Option<String>)> {
        let t = thread.to_string();
        self.read(move |c| {
            Ok(ChatRepo(c).recent(&t, 1000)?.into_iter().map(|m| (m.role, m.content, m.mode, m.topic)).collect())
        })
        .await
    }

    /// `(role, content)` of the thread's working memory, oldest first.
    pub async fn working_memory(&self, thread: &str) -> Vec<(String, String)> {
        let t = thread.to_string();
        self.read(move |c| {
            let mut stmt = c.prepare("SELECT role, content FROM working_memory WHERE thread_id = ?1 ORDER BY id")?;
            let rows = stmt.query_map([t], |r| Ok((r.get(0)?, r.get(1)?)))?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
    }

    /// Payloads of the queued jobs of `queue`, oldest first.
    pub async fn jobs(&self, queue: &str) -> Vec<Value> {
        let q = queue.to_string();
        self.read(move |c| {
            let mut stmt = c.prepare("SELECT payload FROM jobs WHERE queue = ?1 ORDER BY id")?;
            let rows = stmt.query_map([q], |r| r.get::<_, String>(0))?;
            rows.map(|r| Ok(serde_json::from_str(&r?)?)).collect::<Result<Vec<Value>, StoreError>>()
        })
        .await
    }

    /// `(exchange_id, payload)` of the `system_response` rows, oldest first.
    pub async fn interactions(&self) -> Vec<(String, Value)> {
        self.read(|c| {
            let mut stmt = c.prepare(
                "SELECT exchange_id, payload FROM interaction_log WHERE event_type = 'system_response' ORDER BY id",
            )?;
            let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
            rows.map(|r| {
                let (x, p) = r?;
                Ok((x, serde_json::from_str(&p)?))
            })
            .collect::<Result<Vec<_>, StoreError>>()
        })
        .await
    }
}

/// Everything waiting on the receiver.
pub fn drain(rx: &mut Receiver<Stamped>) -> Vec<EngineEvent> {
    let mut out = Vec::new();
    while let Ok(e) = rx.try_recv() {
        out.push(e.event);
    }
    out
}
