//! Session logs: the event stream as JSONL, one file per session.
//!
//! Line 1 is a header (program version, config digest, schema); every other line is
//! one [`Stamped`] event. Lines are flushed as written, so a crash loses at most the
//! line being written, and the reader skips a torn last line with a warning.

mod index;
pub mod journal;
mod pause;
mod reader;
pub mod scrub;
mod turns;
mod writer;

pub use crate::events::PackedVectors;
pub use index::LogIndex;
pub use pause::LogStatus;
pub use reader::{LogEntry, SessionLog, parse_log, read_log};
pub use turns::{RecordedTurn, recorded_turns};
pub use writer::{SessionWriter, WriterHandle, spawn_writer};

use serde::{Deserialize, Serialize};

/// Bumped when what a log records changes. 2: embedding calls are logged (`llm_embedded`);
/// a schema-1 log replays, but a rerun has no recorded vectors to answer embeddings with.
/// 3: a forget is logged (`forgotten`, ids and counts only), and `uncertainty_changed` items
/// carry `surface_context` and `surfaced_count` (older logs read them as absent and 0).
/// 4: the regulator's verdict per turn (`regulated`) whom each model call was for
/// (`llm_start.origin`) and each drift cycle (`drift_cycle`); older logs have none of them, and a
/// rerun recomputes the verdicts.
/// 5: `routed` carries what the concept graph fired (`graph`: seeds, firings with step and the
/// edge that brought them, inhibited, the grown node), and a new router weights version is
/// logged (`router_weights_changed`); older logs have neither, read as absent.
/// 6: the next message's verdict on a routed turn is logged (`route_judged`: judged turn, label,
/// cue); older logs have none, so a replay of them shows no misroute rate.
pub const LOG_SCHEMA: u32 = 6;

/// The first line of every session log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Always "session_header": what tells a session log from any other JSONL file.
    #[serde(rename = "type")]
    pub kind: String,
    pub ts: chrono::DateTime<chrono::Utc>,
    pub version: String,
    pub schema: u32,
    pub session_id: String,
    /// Fingerprint of the effective config; the config itself holds no secrets.
    pub config_digest: String,
}

impl Header {
    pub const KIND: &'static str = "session_header";

    pub fn new(config_digest: &str) -> Header {
        Header {
            kind: Self::KIND.to_string(),
            ts: chrono::Utc::now(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            schema: LOG_SCHEMA,
            session_id: uuid::Uuid::now_v7().to_string(),
            config_digest: config_digest.to_string(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("cannot write session log {path}")]
    Write { path: std::path::PathBuf, source: std::io::Error },
    #[error("cannot encode a session log line: {0}")]
    Encode(String),
    #[error("cannot read {path}")]
    Read { path: std::path::PathBuf, source: std::io::Error },
    #[error("{path} is not a chalie-tui session log: {reason}")]
    NotASessionLog { path: std::path::PathBuf, reason: String },
}

#[cfg(test)]
mod tests;
