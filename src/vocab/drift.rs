//! One drift cycle as the engine reports it: what the session log records, the Drift pane
//! lists and `chalie-tui drift` prints (docs/cognition.md §14).

use serde::{Deserialize, Serialize};

/// A concept that fired in the cycle's spreading activation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fired {
    pub name: String,
    pub energy: f64,
}

/// One action's score, and the gate that rejected it when one did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionScore {
    pub action: String,
    pub score: f64,
    /// `None` when eligible; otherwise the gate, e.g. "relevance 0.21 < 0.40".
    pub rejected_by: Option<String>,
}

/// One drift cycle, run or skipped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DriftCycle {
    pub at: i64,
    /// Why the cycle stopped before a thought ("queue busy: chunk", "weak energy", …);
    /// `None` when a thought was produced.
    pub skipped: Option<String>,
    pub seed: Option<String>,
    pub strategy: Option<String>,
    /// The activated concepts other than the seed, strongest first (at most 5).
    pub fired: Vec<Fired>,
    /// The gate's value: the strongest non-seed activation.
    pub energy: Option<f64>,
    /// The threshold it had to pass.
    pub gate: f64,
    /// reflection | question | hypothesis | insight
    pub kind: Option<String>,
    pub thought: Option<String>,
    /// "model" or "template" (the deterministic synthesis).
    pub author: Option<String>,
    pub action: Option<String>,
    /// Every action's score, the chosen first.
    pub scores: Vec<ActionScore>,
    /// What the action did ("deferred until 08:00", "thread 3 opened", …).
    pub effect: Option<String>,
    /// The stored thought's id.
    pub thought_id: Option<i64>,
}
