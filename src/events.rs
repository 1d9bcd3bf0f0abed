//! `EngineEvent`: everything the engine does, as one typed stream.
//!
//! The UI renders from it, the session log records it, tests assert on it. Producers
//! never wait for consumers: the bus is a broadcast channel, and a consumer that falls
//! behind is told how many events it missed instead of slowing the engine down.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

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
}

impl EventBus {
    /// Room for a burst of streamed tokens while a slow consumer catches up.
    pub const CAPACITY: usize = 8192;

    pub fn new() -> EventBus {
        EventBus { tx: broadcast::channel(Self::CAPACITY).0 }
    }

    /// Publish an event to every current subscriber. Having none is fine.
    pub fn emit(&self, event: EngineEvent) {
        let _ = self.tx.send(Stamped { ts: Utc::now(), event });
    }

    pub fn notice(&self, level: NoticeLevel, message: impl Into<String>) {
        self.emit(EngineEvent::Notice { level, message: message.into() });
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Stamped> {
        self.tx.subscribe()
    }
}

impl Default for EventBus {
    fn default() -> Self {
        Self::new()
    }
}
