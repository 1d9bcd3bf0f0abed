//! The engine: one message from intake to committed reply (docs/architecture.md §3).
//!
//! The deterministic stages live in their own modules as pure functions; this module only
//! sequences them with the three kinds of I/O a turn needs (the database thread, model calls
//! and events). Every model call has a deterministic fallback, so a turn fails only when the
//! database does; each fallback that fired is named in the audit row.

pub mod act;
mod act_mcp;
mod after_act;
mod commit;
mod critic;
mod detector_state;
mod draft;
pub mod fallback;
mod model;
pub mod phases;
pub mod prompts;
mod regulate;
mod report;
mod turn;

pub use fallback::Fallback;
pub use phases::{SILENCE_GAP_S, session_exchanges, shape_reply};
pub use report::{RouterReport, SessionReport, Timings, TopicReport, TriageReport, TurnReport};

use crate::cognition::boundary::BoundaryParams;
use crate::cognition::intent::Analysis;
use crate::cognition::router::{DEFAULT_WEIGHTS_VERSION, RouterWeights};
use crate::cognition::topic::ClassifierParams;
use crate::events::{EventBus, NoticeLevel};
use crate::llm::Llm;
use crate::store::{Db, StoreError};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use turn::Turn;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("the database failed during the turn")]
    Store(#[from] StoreError),
}

/// What a CANCEL social exit says: deterministic, no model call.
pub const CANCEL_REPLY: &str = "Okay, dropped it.";

/// The cognition engine. Cheap to share behind an `Arc`; turns on different threads may run
/// concurrently (the database thread serialises their reads and writes).
pub struct Engine {
    db: Db,
    llm: Arc<Llm>,
    bus: EventBus,
    /// Triage and the tie-breaker ask the lightweight model.
    model_pre_routing: bool,
    triage_timeout: Duration,
    tiebreak_timeout: Duration,
    /// The router weights and their version; a newer stored version replaces them at the
    /// start of the next turn ([`Engine::refresh_weights`]).
    weights: std::sync::RwLock<(u32, RouterWeights)>,
    topic_params: ClassifierParams,
    boundary_params: BoundaryParams,
    /// The regulator (docs/cognition.md §13): one per engine, for its one user.
    regulator: tokio::sync::Mutex<regulate::Slot>,
    /// The concept graph between turns (docs/cognition.md §9.4.7).
    graph_cache: Arc<crate::memory::graph::GraphCache>,
    /// The MCP servers whose tools ACT may offer (docs/cognition.md §19); none configured: `None`.
    mcp: Option<Arc<crate::mcp::Hub>>,
    /// Where a consequential tool's "run this?" goes; `None` (the one-shot `ask`): refused.
    approvals: std::sync::Mutex<Option<tokio::sync::mpsc::Sender<crate::cognition::act::mcp::ApprovalRequest>>>,
    /// The graph's v2 router: on for this engine, its per-call cap, its breaker (§9.4.9).
    graph_router: Option<Duration>,
    graph_breaker: std::sync::Mutex<crate::memory::graph::router::Breaker>,
    /// How turns use the graph (§9.4.10): from the config, or forced by a replay's `--graph`.
    graph_mode: crate::memory::graph::GraphMode,
    /// The model the v2 router asks when it is not this engine's lightweight role (a replay
    /// answers every role from the log, but the router's calls need a live model).
    graph_llm: Option<Arc<Llm>>,
    /// The message being typed, decoded ahead on the built-in model (`draft`).
    drafts: draft::Drafts,
}

impl Engine {
    /// Load the router weights (the newest stored version; the defaults are stored as the
    /// first version on a fresh database) and resolve the pre-routing setting.
    pub async fn start(db: Db, llm: Arc<Llm>, bus: EventBus) -> Result<Engine, EngineError> {
        let (weights_version, weights, note) = db.call(|c| load_weights(c, None)).await?;
        if let Some(note) = note {
            bus.notice(NoticeLevel::Warn, note);
        }
        let settings = llm.settings().clone();
        let model_pre_routing = llm.pre_routing_uses_model();
        let graph_router =
            llm.graph_router_uses_model().then(|| Duration::from_millis(settings.graph_router_timeout_ms));
        Ok(Engine {
            db,
            llm,
            bus,
            model_pre_routing,
            triage_timeout: Duration::from_millis(settings.triage_timeout_ms),
            tiebreak_timeout: Duration::from_millis(settings.tiebreak_timeout_ms),
            weights: std::sync::RwLock::new((weights_version, weights)),
            topic_params: ClassifierParams::default(),
            boundary_params: BoundaryParams::default(),
            regulator: tokio::sync::Mutex::new(regulate::Slot::default()),
            graph_cache: Arc::default(),
            mcp: None,
            approvals: std::sync::Mutex::new(None),
            graph_mode: if graph_router.is_some() {
                crate::memory::graph::GraphMode::V2
            } else {
                crate::memory::graph::GraphMode::Novelty
            },
            graph_router,
            graph_breaker: Default::default(),
            graph_llm: None,
            drafts: Default::default(),
        })
    }

    /// Run the graph in `mode` whatever the config says (the replay judgement, §9.4.10); in
    /// `v2`, the router asks `router` (default: this engine's lightweight role).
    pub fn with_graph_mode(mut self, mode: crate::memory::graph::GraphMode, router: Option<Arc<Llm>>) -> Engine {
        use crate::memory::graph::GraphMode;
        self.graph_mode = mode;
        self.graph_router =
            (mode == GraphMode::V2).then(|| Duration::from_millis(self.llm.settings().graph_router_timeout_ms));
        self.graph_llm = router;
        self
    }

    /// Offer the hub's tools to the ACT loop.
    pub fn with_mcp(mut self, hub: Arc<crate::mcp::Hub>) -> Engine {
        self.mcp = (!hub.is_empty()).then_some(hub);
        self
    }

    pub fn mcp(&self) -> Option<&Arc<crate::mcp::Hub>> {
        self.mcp.as_ref()
    }

    /// Share `cache` (the runtime's, which drift reads too) instead of the engine's own, so
    /// the process keeps one copy of the graph.
    pub fn with_graph_cache(mut self, cache: Arc<crate::memory::graph::GraphCache>) -> Engine {
        self.graph_cache = cache;
        self
    }

    /// The engine's graph cache, for what reads the graph beside the turn (skills).
    pub fn graph_handle(&self) -> crate::memory::graph::GraphHandle {
        crate::memory::graph::GraphHandle::new(Arc::clone(&self.graph_cache))
    }

    /// Send consequential tools' questions to `tx` (an interactive front-end answers them).
    pub fn set_approver(&self, tx: tokio::sync::mpsc::Sender<crate::cognition::act::mcp::ApprovalRequest>) {
        *self.approvals.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(tx);
    }

    /// The weights the next turn routes with, and their version.
    pub fn weights(&self) -> (u32, RouterWeights) {
        *self.weights.read().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Route with the newest stored weights version from now on, if it differs from the one
    /// in use (the stability regulator wrote one while the engine ran).
    pub async fn refresh_weights(&self) -> Result<u32, EngineError> {
        let (current, _) = self.weights();
        let loaded = self.db.call(move |c| load_weights(c, Some(current))).await?;
        Ok(self.take_weights(current, loaded))
    }

    /// Use what [`load_weights`] read over `current` (a turn reads them with its first other
    /// reads, one trip to the database thread fewer); returns the version in use.
    fn take_weights(&self, current: u32, (version, weights, note): (u32, RouterWeights, Option<String>)) -> u32 {
        if let Some(note) = note {
            self.bus.notice(NoticeLevel::Warn, note);
        }
        if version != current {
            tracing::info!(version, "router weights reloaded");
            *self.weights.write().unwrap_or_else(std::sync::PoisonError::into_inner) = (version, weights);
        }
        version
    }

    pub fn llm(&self) -> &Llm {
        &self.llm
    }

    /// Whether triage and the tie-breaker call the lightweight model.
    pub fn model_pre_routing(&self) -> bool {
        self.model_pre_routing
    }

    /// Run one message (already stored by `Runtime::intake`) through phases A–D. The
    /// message is read once; each phase is a method of [`Turn`] that returns what it decided.
    pub async fn turn(
        &self,
        thread_id: &str,
        exchange_id: &str,
        text: &str,
        cancel: &CancellationToken,
    ) -> Result<TurnReport, EngineError> {
        let origin = crate::llm::exchange_origin(exchange_id);
        let running = self.drafts.turn_started();
        let report = crate::llm::ORIGIN.scope(origin, self.turn_inner(thread_id, exchange_id, text, cancel)).await;
        drop(running);
        if report.is_ok() {
            self.prefill_next_reply(thread_id).await;
        }
        report
    }

    async fn turn_inner(
        &self,
        thread_id: &str,
        exchange_id: &str,
        text: &str,
        cancel: &CancellationToken,
    ) -> Result<TurnReport, EngineError> {
        let lower = crate::text::normalize(text);
        let msg = Analysis::new(text, &lower);
        let mut turn = Turn::new(self, thread_id, exchange_id, &msg, cancel);
        // The newest router weights are read with the regulator's state (`Engine::refresh_weights`),
        // and Phase A's reads come on the same trip.
        let context = turn.start().await?;
        let mut topic = turn.topic().await?;
        let understood = turn.understand(&context, &topic);
        let triage = turn.triage(&context, &topic, &understood).await;
        let routed = turn.route(&topic, &understood).await;
        let delivered = turn.deliver(&context, &topic, &triage, routed);
        let acted = turn.act(&context, &topic, &understood, &triage, &delivered).await?;
        let replied = turn.reply(&context, &topic, &understood, &triage, &delivered, acted).await;
        turn.commit(&topic, &triage, &delivered, &replied).await?;
        turn.announce(&replied);
        turn.regulated(&replied).await?;
        if let (Some(stats), Some(g)) = (topic.graph_stats.as_mut(), topic.graph.as_ref()) {
            stats.used_by(g, &replied.generated.text);
        }
        // A forget request is never learned from, and learning now would write back what the
        // commit just purged.
        if turn.forgotten.is_none() {
            turn.learn_graph(topic.graph.take(), &replied.generated.text).await;
        }
        Ok(turn.finish(context, topic, understood, triage, delivered, replied))
    }
}

/// The newest stored weights (the defaults, stored, on a fresh database). With `known`, an
/// unchanged version is not parsed again and an unusable newer one keeps the weights in use
/// (reported as version `known`).
fn load_weights(
    c: &rusqlite::Connection,
    known: Option<u32>,
) -> Result<(u32, RouterWeights, Option<String>), StoreError> {
    let row = crate::store::RouterWeightsRepo(c).latest()?.map(|v| (v.version, v.weights));
    let Some((version, text)) = row else {
        if known.is_some() {
            return Ok((known.unwrap_or(DEFAULT_WEIGHTS_VERSION), RouterWeights::default(), None));
        }
        let w = crate::cognition::router::overrides::store_defaults(c)?;
        return Ok((DEFAULT_WEIGHTS_VERSION, w, None));
    };
    if known == Some(version) {
        return Ok((version, RouterWeights::default(), None));
    }
    match serde_json::from_str::<RouterWeights>(&text).map_err(|e| e.to_string()).and_then(|w| {
        w.validate()?;
        Ok(w)
    }) {
        Ok(w) => Ok((version, w, None)),
        Err(e) => Ok((
            known.unwrap_or(DEFAULT_WEIGHTS_VERSION),
            RouterWeights::default(),
            Some(format!("router weights v{version} are unusable ({e}); routing with the defaults")),
        )),
    }
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}
