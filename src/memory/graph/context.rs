//! Fired concepts as lines of a reply's context, beside recall (docs/cognition.md §9.4.3): each
//! with where it came from (seed, edges, step), the lot within a token budget.

use super::Activated;
use serde::Serialize;

/// Tokens the graph may add to a reply's context.
pub const CONTEXT_TOKEN_BUDGET: usize = 120;
/// Seeds are what the message already matched (recall has them); only what they led to is new.
pub const SKIP_SEEDS: bool = true;

/// One fired concept for the context, with its provenance.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GraphLine {
    pub concept: i64,
    pub name: String,
    pub energy: f64,
    pub step: u8,
    pub seed: String,
    /// Edge ids from the seed to it.
    pub edges: Vec<i64>,
    /// The line the prompt gets.
    pub text: String,
}

/// A rough token count (4 characters a token), the same scale as the prompt budgets.
pub fn tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

/// The fired concepts worth a line, strongest first, until `budget` tokens are spent.
pub fn context_lines(a: &Activated, budget: usize) -> Vec<GraphLine> {
    let mut out = Vec::new();
    let mut spent = 0;
    for f in &a.activation.fired {
        if SKIP_SEEDS && f.path.is_empty() {
            continue;
        }
        let (name, seed) = (a.name(f.node).to_string(), a.name(f.seed).to_string());
        let text = format!("{name} (brought to mind by {seed}, {} step{})", f.step, if f.step == 1 { "" } else { "s" });
        let cost = tokens(&text) + 1;
        if spent + cost > budget {
            break;
        }
        spent += cost;
        out.push(GraphLine {
            concept: f.node,
            name,
            energy: f.energy,
            step: f.step,
            seed,
            edges: f.path.clone(),
            text,
        });
    }
    out
}
