//! The triage decision as it travels: in the routing event, the audit row and the report.
//! Its post-processing and self-check are in `cognition::intent` (docs/cognition.md §3.2).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Branch {
    Respond,
    Clarify,
    Act,
    /// ACKNOWLEDGE / IGNORE / CANCEL: a fast exit with no generation pipeline.
    Social,
}

/// The triage decision's mode: the router's five modes plus CANCEL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum TriageMode {
    Respond,
    Clarify,
    Act,
    Acknowledge,
    Ignore,
    Cancel,
}

/// docs/cognition.md §3.2 effort estimate; skills have tiers of the same names (`intent::skill_tier`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Effort {
    Trivial,
    Light,
    #[default]
    Moderate,
    Deep,
}

/// Where a triage result came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TriageSource {
    #[default]
    Model,
    Heuristic,
    Social,
}

/// The triage decision (docs/cognition.md §3.2 output fields).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TriageResult {
    pub branch: Branch,
    pub mode: TriageMode,
    /// External tools, at most `intent::MAX_TOOLS`.
    pub tools: Vec<String>,
    /// Innate skills: primitives first, then at most `intent::MAX_CONTEXTUAL_SKILLS` sorted contextual ones.
    pub skills: Vec<String>,
    /// Confidence that memory alone is enough (0–1).
    pub confidence_internal: f64,
    /// Confidence that external tools are needed (0–1).
    pub confidence_tool_need: f64,
    /// Risk that the answer needs recent or real-time data (0–1).
    pub freshness_risk: f64,
    #[serde(rename = "effort_estimate")]
    pub effort: Effort,
    pub reasoning: String,
    #[serde(default)]
    pub source: TriageSource,
}
