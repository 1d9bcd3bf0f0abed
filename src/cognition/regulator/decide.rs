//! The decision and its fixed priority (docs/cognition.md §13.1): breaks (cost cap, quality
//! decline, repeated failure, tool loop) > scope drift > procedural warning > low-confidence
//! spans > continue. `decide()` only reads, so asking twice in a turn gives the same answer.

use super::{Regulator, confidence, cost, state};
use crate::vocab::regulator::{
    BreakReason, BreakReport, CostReport, DriftReport, ProceduralReport, RegulatorReport, SpanReport,
};

/// A reason to stop spending on this turn.
#[derive(Debug, Clone, PartialEq)]
pub enum Break {
    CostCap { tokens_spent: u64, tokens_cap: u64, mean_quality: f64 },
    QualityDecline { mean_delta: f64, mean_quality: f64 },
    RepeatedFailure { cluster: String, failure_count: usize },
    ToolLoop { tool: String, count: usize },
}

impl Break {
    /// The one line the reply carries.
    pub fn message(&self) -> String {
        match self {
            Break::CostCap { tokens_spent, mean_quality, .. } => format!(
                "Stopped: {tokens_spent} tokens spent and the recent replies missed (quality {mean_quality:.2}); could you say more precisely what you need?"
            ),
            Break::QualityDecline { mean_quality, .. } => format!(
                "Stopped: the last replies got worse each time (quality {mean_quality:.2}); could you rephrase what you are after?"
            ),
            Break::RepeatedFailure { cluster, failure_count } => format!(
                "Stopped: {failure_count} replies in a row about {} missed; tell me what was wrong with them and I'll start from that.",
                cluster.replace('+', " and ")
            ),
            Break::ToolLoop { tool, count } => {
                format!("Stopped: the {tool} skill ran {count} times in a row without getting anywhere.")
            }
        }
    }

    pub fn reason(&self) -> BreakReason {
        match self.clone() {
            Break::CostCap { tokens_spent, tokens_cap, mean_quality } => {
                BreakReason::CostCapReached { tokens_spent, tokens_cap, mean_quality }
            }
            Break::QualityDecline { mean_delta, mean_quality } => {
                BreakReason::QualityDeclineNoRecovery { turns: cost::QUALITY_WINDOW, mean_delta, mean_quality }
            }
            Break::RepeatedFailure { cluster, failure_count } => {
                BreakReason::RepeatedFailurePattern { cluster, failure_count }
            }
            Break::ToolLoop { tool, count } => {
                BreakReason::RepeatedToolCallLoop { tool_name: tool, consecutive_count: count }
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    Continue,
    CircuitBreak(Break),
    ScopeDriftWarn { score: f64, terms: Vec<String>, task: Vec<String> },
    ProceduralWarning { cluster: String, corrections: Vec<String> },
    LowConfidenceSpans(Vec<confidence::Span>),
}

impl Decision {
    /// The decision's name in the contract (`ask --json`'s `regulator.decision`).
    pub fn name(&self) -> &'static str {
        match self {
            Decision::Continue => "continue",
            Decision::CircuitBreak(_) => "circuit_break",
            Decision::ScopeDriftWarn { .. } => "scope_drift_warn",
            Decision::ProceduralWarning { .. } => "procedural_warning",
            Decision::LowConfidenceSpans(_) => "low_confidence_spans",
        }
    }

    /// Rank in the fixed order: lower wins.
    pub fn priority(&self) -> u8 {
        match self {
            Decision::CircuitBreak(Break::CostCap { .. }) => 0,
            Decision::CircuitBreak(Break::QualityDecline { .. }) => 1,
            Decision::CircuitBreak(Break::RepeatedFailure { .. }) => 2,
            Decision::CircuitBreak(Break::ToolLoop { .. }) => 3,
            Decision::ScopeDriftWarn { .. } => 4,
            Decision::ProceduralWarning { .. } => 5,
            Decision::LowConfidenceSpans(_) => 6,
            Decision::Continue => 7,
        }
    }
}

impl Regulator {
    /// Every break that holds now, highest priority first.
    pub fn breaks(&self) -> Vec<Break> {
        let mut out = Vec::new();
        let spent = self.state.tokens_out_spent + self.turn_cost().tokens_out;
        if let Some(mean) = self.state.qualities.window_mean()
            && spent >= self.settings.token_cap
            && mean < cost::POOR_QUALITY
        {
            out.push(Break::CostCap { tokens_spent: spent, tokens_cap: self.settings.token_cap, mean_quality: mean });
        }
        if let Some((delta, mean)) = self.state.qualities.decline() {
            out.push(Break::QualityDecline { mean_delta: delta, mean_quality: mean });
        }
        let cluster = &self.turn.cluster;
        if let Some(rec) = self.state.clusters.get(cluster)
            && !cluster.is_empty()
            && rec.failures_in_a_row >= state::FAILURE_PATTERN
        {
            out.push(Break::RepeatedFailure { cluster: cluster.clone(), failure_count: rec.failures_in_a_row });
        }
        if let Some((tool, count)) = cost::tool_loop(&self.turn.tools) {
            out.push(Break::ToolLoop { tool, count });
        }
        out
    }

    /// Every decision that holds now, in priority order; the first is [`Regulator::decide`]'s.
    pub fn candidates(&self) -> Vec<Decision> {
        self.parts().candidates(&self.turn.cluster)
    }

    /// What the decision is made of, each computed once.
    fn parts(&self) -> Parts {
        Parts {
            breaks: self.breaks(),
            drift: self.drift_warning(),
            pattern: self.state.pattern(&self.turn.cluster),
            spans: self.spans(),
        }
    }

    /// The decision now: the highest-priority one that holds. Pure.
    pub fn decide(&self) -> Decision {
        self.candidates().into_iter().next().unwrap_or(Decision::Continue)
    }

    /// The turn as the contract shows it, with the decision [`Regulator::decide`] gives.
    pub fn report(&self) -> (Decision, RegulatorReport) {
        let parts = self.parts();
        let decision = parts.candidates(&self.turn.cluster).into_iter().next().unwrap_or(Decision::Continue);
        let cost = self.turn_cost();
        let cluster = self.turn.cluster.clone();
        let report = RegulatorReport {
            decision: decision.name().to_string(),
            confidence: self.confidence(),
            low_confidence_spans: parts
                .spans
                .into_iter()
                .map(|s| SpanReport { start: s.start, end: s.end, text: s.text, mean_logprob: s.mean_logprob })
                .collect(),
            scope_drift: parts.drift.map(|d| DriftReport { score: d.score, terms: d.terms }),
            cost: CostReport { tokens_in: cost.tokens_in, tokens_out: cost.tokens_out, wall_ms: cost.wall_ms },
            procedural_warning: parts.pattern.map(|corrections| ProceduralReport { cluster, corrections }),
            breaks: parts
                .breaks
                .into_iter()
                .map(|b| BreakReport { message: b.message(), reason: b.reason() })
                .collect(),
        };
        (decision, report)
    }
}

/// The holding parts of a decision.
struct Parts {
    breaks: Vec<Break>,
    drift: Option<super::scope::Drift>,
    pattern: Option<Vec<String>>,
    spans: Vec<confidence::Span>,
}

impl Parts {
    fn candidates(&self, cluster: &str) -> Vec<Decision> {
        let mut out: Vec<Decision> = self.breaks.iter().cloned().map(Decision::CircuitBreak).collect();
        if let Some(d) = self.drift.clone() {
            out.push(Decision::ScopeDriftWarn { score: d.score, terms: d.terms, task: d.task });
        }
        if let Some(corrections) = self.pattern.clone() {
            out.push(Decision::ProceduralWarning { cluster: cluster.to_string(), corrections });
        }
        if !self.spans.is_empty() {
            out.push(Decision::LowConfidenceSpans(self.spans.clone()));
        }
        out.push(Decision::Continue);
        out.sort_by_key(Decision::priority);
        out
    }
}
