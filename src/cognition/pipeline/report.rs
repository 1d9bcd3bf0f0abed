//! What one turn did, as `ask --json` prints it and the UI's events carry it.

use crate::cognition::boundary::{BoundaryOutcome, FocusLevel};
use crate::cognition::intent::{IntentResult, TriageResult};
use crate::cognition::router::{Mode, ModeScores};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The router's part (§4.4 output fields plus how the delivered mode came about).
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
    pub signals: Value,
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

    pub fn with_diagnostics(mut self, d: Option<&BoundaryOutcome>) -> TopicReport {
        if let Some(d) = d {
            self.acc = Some(d.acc);
            self.bound = Some(d.bound);
            self.newma = Some(d.newma);
            self.surprise = Some(d.surprise);
            self.cold_start = d.cold_start;
        }
        self
    }
}

/// Phase A step 9: session and focus tracking.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionReport {
    /// Earlier exchanges in the current session (no silence longer than 45 min between them).
    pub exchanges: usize,
    /// The silence before this message when it exceeded 45 min; the ended session's episode
    /// consolidation was queued.
    pub silence_gap_s: Option<i64>,
    pub focus: FocusLevel,
    /// What an open focus session is on.
    pub focus_on: Option<String>,
    /// This message left the focus session's topic.
    pub distraction: bool,
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

/// A regulator decision over one model call. No regulator runs yet, so there are no
/// variants: an empty `regulator` list is the only value the type admits, and the regulator
/// adds its decisions here as variants when it arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RegulatorDecision {}

/// One whole turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnReport {
    pub thread_id: String,
    pub exchange_id: String,
    /// The reply shown to the user; empty for IGNORE.
    pub response: String,
    /// The delivered mode (what the router, triage or social exit decided).
    pub mode: Mode,
    /// The mode the reply was written in: the same, except after ACT (its re-route).
    pub reply_mode: Mode,
    /// Who wrote the reply: the model, a template or memory.
    #[serde(default)]
    pub reply_source: crate::cognition::reply::ReplySource,
    /// The memories a `memory` reply was read from ("trait:location", "episode:42").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answered_from: Vec<String>,
    pub router: RouterReport,
    pub topic: TopicReport,
    pub session: SessionReport,
    pub intent: IntentResult,
    pub triage: TriageReport,
    /// The social filter's rule when the message took the social exit.
    pub social: Option<String>,
    /// A name the identity hook stored.
    pub identity: Option<String>,
    /// Earlier episodes and concepts recalled into the reply's context, with provenance.
    pub memories: Vec<Value>,
    /// ACT loop iterations: the plan (and which planner made it), each action's result,
    /// time, fatigue and cost.
    pub act_iterations: Vec<Value>,
    /// Why the ACT loop stopped.
    pub act_termination: Option<crate::cognition::act::plan::Termination>,
    /// Regulator decisions over this turn's model calls; always empty until the regulator
    /// exists (the field is part of `ask --json`'s contract).
    pub regulator: Vec<RegulatorDecision>,
    /// Every fallback that fired, in order ("triage_timeout", "generation_failed", …).
    pub fallbacks: Vec<String>,
    /// The reply was cut short by the user.
    pub cancelled: bool,
    /// Why no real reply could be generated (then `response` explains it to the user).
    pub failed: Option<String>,
    pub tokens_in: u32,
    pub tokens_out: u32,
    pub timings_ms: Timings,
}
