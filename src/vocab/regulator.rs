//! What the regulator decided about one turn (seed 003, docs/cognition.md §13), as `ask --json`
//! prints it, the session log records it and the chat and Routing panes show it.

use serde::{Deserialize, Serialize};

/// The regulator's verdict on one turn. The field names are `ask --json`'s contract.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegulatorReport {
    /// The decision with the highest priority that holds: `continue`, `circuit_break`,
    /// `scope_drift_warn`, `procedural_warning` or `low_confidence_spans`.
    pub decision: String,
    /// In [0, 1]: from the reply's token log-probabilities, or from its shape without them.
    pub confidence: f64,
    #[serde(default)]
    pub low_confidence_spans: Vec<SpanReport>,
    #[serde(default)]
    pub scope_drift: Option<DriftReport>,
    #[serde(default)]
    pub cost: CostReport,
    #[serde(default)]
    pub procedural_warning: Option<ProceduralReport>,
    /// Every break that held, highest priority first (the first stopped the turn).
    #[serde(default)]
    pub breaks: Vec<BreakReport>,
}

impl RegulatorReport {
    /// What an empty turn reports (no model call was judged).
    pub fn idle() -> RegulatorReport {
        RegulatorReport {
            decision: "continue".into(),
            confidence: 0.5,
            low_confidence_spans: Vec::new(),
            scope_drift: None,
            cost: CostReport::default(),
            procedural_warning: None,
            breaks: Vec::new(),
        }
    }

    /// The one line a reply carries when a break stopped its turn.
    pub fn break_line(&self) -> Option<&str> {
        self.breaks.first().map(|b| b.message.as_str())
    }
}

/// A stretch of the reply the model was unsure of; `start`/`end` count characters of the reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpanReport {
    pub start: usize,
    pub end: usize,
    pub text: String,
    pub mean_logprob: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DriftReport {
    pub score: f64,
    /// The reply's keywords not anchored in the request, in rank order.
    pub terms: Vec<String>,
}

/// The turn's model calls (every role, background work excluded).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CostReport {
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub wall_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProceduralReport {
    pub cluster: String,
    /// Past corrections on the cluster, newest first, at most 3 (what the prompt's prelude lists).
    pub corrections: Vec<String>,
}

/// Why the regulator stopped a turn from spending.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum BreakReason {
    CostCapReached { tokens_spent: u64, tokens_cap: u64, mean_quality: f64 },
    QualityDeclineNoRecovery { turns: usize, mean_delta: f64, mean_quality: f64 },
    RepeatedFailurePattern { cluster: String, failure_count: usize },
    RepeatedToolCallLoop { tool_name: String, consecutive_count: usize },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BreakReport {
    #[serde(flatten)]
    pub reason: BreakReason,
    /// One line for the user: why the turn stopped and what would help.
    pub message: String,
}
