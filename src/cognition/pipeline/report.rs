//! What one turn did, as `ask --json` prints it and the UI's events carry it.

use crate::cognition::boundary::{BoundaryOutcome, FocusLevel};
use crate::cognition::intent::IntentResult;
use crate::cognition::router::Mode;
use serde::{Deserialize, Serialize};

pub use crate::vocab::report::{RouterReport, Timings, TopicReport, TriageReport};

impl TopicReport {
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
    /// The silence before this message when it exceeded 45 min (it ended a session).
    pub silence_gap_s: Option<i64>,
    pub focus: FocusLevel,
    /// What an open focus session is on.
    pub focus_on: Option<String>,
    /// This message left the focus session's topic.
    pub distraction: bool,
}

/// One whole turn, as `ask --json` prints it (written, never read back).
#[derive(Debug, Clone, PartialEq, Serialize)]
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
    pub memories: Vec<crate::memory::recall::Hit>,
    /// ACT loop iterations: the plan (and which planner made it), each action's result,
    /// time, fatigue and cost.
    pub act_iterations: Vec<super::act::Iteration>,
    /// Why the ACT loop stopped.
    pub act_termination: Option<crate::cognition::act::plan::Termination>,
    /// The regulator's verdict on this turn's model calls (docs/cognition.md §13; the shape is
    /// part of `ask --json`'s contract).
    pub regulator: crate::vocab::regulator::RegulatorReport,
    /// Every fallback that fired, in order ("triage_timeout", "generation_failed", …).
    pub fallbacks: Vec<String>,
    /// The reply was cut short by the user.
    pub cancelled: bool,
    /// Why no real reply could be generated (then `response` explains it to the user).
    pub failed: Option<String>,
    pub tokens_in: u32,
    pub tokens_out: u32,
    pub timings_ms: Timings,
    /// Records this message opened, raised and closed (docs/cognition.md §10).
    #[serde(default)]
    pub uncertainty: crate::memory::uncertainty::ingest::UncertaintyReport,
    /// What the concept graph did and cost (docs/cognition.md §9.4.10); the replay judgement
    /// reads it, `ask --json` does not print it.
    #[serde(skip)]
    pub graph: Option<crate::memory::graph::GraphTurnStats>,
}
