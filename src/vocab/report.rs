//! What a turn reports as it goes: the routing event's parts (router, topic, triage), the
//! time per stage and who wrote the reply. The engine fills them; the UI, the audit and the
//! session log read them.

use super::mode::{Mode, ModeScores};
use super::snapshot::LazyJson;
use super::triage::TriageResult;
use serde::{Deserialize, Serialize};

/// The router's part (docs/cognition.md §6.5 output fields plus how the delivered mode came about).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouterReport {
    pub scores: ModeScores,
    pub confidence: f64,
    pub margin: f64,
    pub effective_margin: f64,
    pub tiebreaker_used: bool,
    /// `[A, B]` when the margin called for a tie-break (asked or not).
    pub tiebreaker_candidates: Option<[Mode; 2]>,
    pub routing_time_ms: f64,
    /// The mode with the highest score, before tie-break, triage or social exit.
    pub scored_mode: Mode,
    /// A social exit decided before the scorer (scores are still computed for the audit).
    pub pre_routed: bool,
    /// Why the delivered mode is what it is, in a sentence.
    pub reason: String,
    pub previous_mode: Option<Mode>,
    /// The router's signal snapshot, built when the event is written or read.
    pub signals: LazyJson,
}

/// The topic classifier's part, with the boundary detector's diagnostics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopicReport {
    pub name: String,
    pub is_new_topic: bool,
    pub switch_score: f32,
    pub confidence: f32,
    pub acc: Option<f32>,
    pub bound: Option<f32>,
    pub newma: Option<f32>,
    pub surprise: Option<f32>,
    pub cold_start: bool,
    pub contentless: bool,
    /// True when the embedding failed and the thread's current topic was kept.
    pub degraded: bool,
}

impl TopicReport {
    /// A report with no classification figures yet.
    pub fn new(name: impl Into<String>, is_new_topic: bool) -> TopicReport {
        TopicReport {
            name: name.into(),
            is_new_topic,
            switch_score: 0.0,
            confidence: 0.0,
            acc: None,
            bound: None,
            newma: None,
            surprise: None,
            cold_start: false,
            contentless: false,
            degraded: false,
        }
    }
}

/// Triage with where it came from and what corrected it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TriageReport {
    #[serde(flatten)]
    pub result: TriageResult,
    pub latency_ms: f64,
    /// Why the model's answer was not used ("triage_timeout", "triage_invalid_output", …).
    pub fallback: Option<String>,
    /// The sanity-check rules that fired.
    pub sanity_rules: Vec<String>,
}

/// Milliseconds per stage. `embedding` is the model call inside the topic stage.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Timings {
    pub context: f64,
    pub embedding: f64,
    pub topic: f64,
    pub intent: f64,
    pub triage: f64,
    pub routing: f64,
    pub tiebreak: f64,
    /// The ACT loop (planning and actions).
    pub act: f64,
    pub generation: f64,
    pub commit: f64,
    pub total: f64,
}

/// Which part of the program wrote a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ReplySource {
    /// The primary model generated it (or failed and the failure line stands in for it).
    #[default]
    Model,
    /// A fixed sentence: templates, action cards, the cancel line.
    Template,
    /// Read back from stored traits, facts or recalled memories.
    Memory,
}

impl ReplySource {
    pub fn as_str(self) -> &'static str {
        match self {
            ReplySource::Model => "model",
            ReplySource::Template => "template",
            ReplySource::Memory => "memory",
        }
    }
}
