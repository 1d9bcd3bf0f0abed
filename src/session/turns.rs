//! The turns of a recorded session: each user message with what the router made of it.

use super::{LogEntry, SessionLog};
use crate::events::EngineEvent;
use crate::vocab::report::Timings;
use crate::vocab::{Mode, ModeScores};
use serde::Serialize;
use std::collections::HashMap;

/// One user message as the log recorded it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecordedTurn {
    /// 1-based.
    pub turn: usize,
    pub thread_id: String,
    pub exchange_id: String,
    pub text: String,
    /// The delivered mode (`routed`), `None` when the log ends before routing or the turn failed.
    pub mode: Option<Mode>,
    pub scores: Option<ModeScores>,
    /// The reply, when the log has it.
    pub reply: Option<String>,
    /// The turn's time per stage, in logs that record it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timings_ms: Option<Timings>,
    /// Index into [`SessionLog::entries`] of the user message: where playback jumps to.
    pub entry: usize,
}

/// Every user message in log order, with its routing and reply joined by exchange id.
pub fn recorded_turns(log: &SessionLog) -> Vec<RecordedTurn> {
    let mut turns: Vec<RecordedTurn> = Vec::new();
    let mut by_exchange: HashMap<&str, usize> = HashMap::new();
    for (entry, e) in log.entries.iter().enumerate() {
        let LogEntry::Event(stamped) = e else { continue };
        match &stamped.event {
            EngineEvent::UserMessage { thread_id, exchange_id, text } => {
                by_exchange.insert(exchange_id, turns.len());
                turns.push(RecordedTurn {
                    turn: turns.len() + 1,
                    thread_id: thread_id.clone(),
                    exchange_id: exchange_id.clone(),
                    text: text.clone(),
                    mode: None,
                    scores: None,
                    reply: None,
                    timings_ms: None,
                    entry,
                });
            }
            EngineEvent::Routed { exchange_id, mode, router, .. } => {
                if let Some(&i) = by_exchange.get(exchange_id.as_str()) {
                    turns[i].mode = Some(*mode);
                    turns[i].scores = Some(router.scores);
                }
            }
            EngineEvent::ReplyDone { exchange_id, text, timings_ms, .. } => {
                if let Some(&i) = by_exchange.get(exchange_id.as_str()) {
                    turns[i].reply = Some(text.clone());
                    turns[i].timings_ms = *timings_ms;
                }
            }
            _ => {}
        }
    }
    turns
}
