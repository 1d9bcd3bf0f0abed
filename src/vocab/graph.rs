//! What the concept graph did for one message (docs/cognition.md §9.4.3), as the `routed` event,
//! the session log and the Routing pane carry it: names, not ids, so a log reads on its own.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GraphReport {
    /// The message's nearest concepts and the energy each was seeded with.
    pub seeds: Vec<GraphSeed>,
    /// Fired concepts kept (after inhibition and top-k), by energy.
    pub fired: Vec<GraphFiring>,
    /// Concepts driven below zero, with the potential they ended at.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inhibited: Vec<GraphSeed>,
    /// The node grown from the message, if one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grown: Option<String>,
    /// The v2 router's part (docs/cognition.md §9.4.9), when it is configured on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub router: Option<GraphRouting>,
}

/// What the v2 router did for one message, and its breaker's state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GraphRouting {
    /// `v2` (the model tier could be asked), `off` (the breaker has it off).
    pub mode: String,
    /// Model calls made (one per step that had non-reflex edges).
    pub calls: u32,
    /// Edges whose transfer used a model verdict.
    pub routed: u32,
    pub tokens_in: u32,
    pub tokens_out: u32,
    /// Why a step went mechanical (`timeout`, `junk: …`, `error: …`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// Turns after this one the tier stays off.
    #[serde(default)]
    pub off_turns: u64,
    /// Probationary nodes made from the model's `new_nodes` (docs/cognition.md §9.4.11).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub created: Vec<String>,
    /// Concepts whose incoming edges a `prune_candidates` suggestion weakened.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub weakened: Vec<String>,
    /// Suggestions dropped, each with why (a missing concept, over budget, blocked content).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphSeed {
    pub name: String,
    pub energy: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphFiring {
    pub name: String,
    pub step: u8,
    pub energy: f64,
    /// The concept whose edge brought it (none for a seed), and that edge's weight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<f64>,
}
