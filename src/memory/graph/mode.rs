//! Which graph a turn runs (docs/cognition.md §9.4.10): the three modes seed 004 §8.4 compares
//! by replay, and what one turn's graph did, for that comparison.

use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// How a turn uses the concept graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GraphMode {
    /// Deterministic activation over the stored weights; no node is grown.
    Mechanical,
    /// Mechanical activation, and novel message content grows probationary nodes (the default
    /// when the v2 router is off).
    #[default]
    Novelty,
    /// Novelty, with the v2 router asking the lightweight model about non-reflex edges.
    V2,
}

impl GraphMode {
    pub const ALL: [GraphMode; 3] = [GraphMode::Mechanical, GraphMode::Novelty, GraphMode::V2];

    pub fn as_str(self) -> &'static str {
        match self {
            GraphMode::Mechanical => "mechanical",
            GraphMode::Novelty => "novelty",
            GraphMode::V2 => "v2",
        }
    }

    /// Whether novel content grows nodes in this mode.
    pub fn grows(self) -> bool {
        self != GraphMode::Mechanical
    }
}

impl fmt::Display for GraphMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown graph mode {0:?} (mechanical, novelty or v2)")]
pub struct UnknownMode(pub String);

impl FromStr for GraphMode {
    type Err = UnknownMode;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        GraphMode::ALL.into_iter().find(|m| m.as_str() == s.trim()).ok_or_else(|| UnknownMode(s.to_string()))
    }
}

/// What the graph did for one turn, for the replay judgement: what it activated, what it added
/// to the reply's context, what it cost, and (after the reply) which concepts the reply named.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GraphTurnStats {
    pub mode: GraphMode,
    /// Concepts in the graph the turn ran on.
    pub nodes: usize,
    /// Names of the fired concepts kept (seeds included), strongest first.
    pub fired: Vec<String>,
    /// Names of the fired concepts that became context lines.
    pub context: Vec<String>,
    /// Tokens those lines add to the reply's context (the `context::tokens` scale).
    pub context_tokens: usize,
    /// Wall time of the graph stage (activation, the router's calls, persistence, growth).
    pub ms: f64,
    /// The v2 router's model calls and tokens.
    pub calls: u32,
    pub tokens_in: u32,
    pub tokens_out: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grown: Option<String>,
    /// Names of the graph's concepts the reply names (whole words, any case), fired or not.
    pub used: Vec<String>,
}

impl GraphTurnStats {
    /// The stats of a turn's graph, before the reply.
    pub fn of(mode: GraphMode, t: &super::turn::TurnGraph, ms: f64) -> GraphTurnStats {
        let a = &t.activated;
        let routing = t.routing.clone().unwrap_or_default();
        GraphTurnStats {
            mode,
            nodes: a.graph.len(),
            fired: a.activation.fired.iter().map(|f| a.name(f.node).to_string()).collect(),
            context: t.lines.iter().map(|l| l.name.clone()).collect(),
            context_tokens: t.lines.iter().map(|l| super::context::tokens(&l.text) + 1).sum(),
            ms,
            calls: routing.calls,
            tokens_in: routing.tokens_in,
            tokens_out: routing.tokens_out,
            fallback: routing.fallback,
            grown: t.grown_name.clone(),
            used: Vec::new(),
        }
    }

    /// Record which of the graph's concepts `reply` names.
    pub fn used_by(&mut self, t: &super::turn::TurnGraph, reply: &str) {
        let g = &t.activated.graph;
        let mut used: Vec<String> =
            g.named_in(reply).into_iter().filter_map(|id| g.node(id)).map(|n| n.name.clone()).collect();
        used.sort();
        used.dedup();
        self.used = used;
    }
}

/// One mode's figures over a replay (docs/cognition.md §9.4.10). Precision and recall are
/// pooled over turns: of all concepts fired, the share the reply named; of all concepts the
/// reply named, the share that fired. Only turns where the graph ran count.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Judgement {
    pub turns: usize,
    pub fired: usize,
    pub used: usize,
    pub hits: usize,
    pub precision: f64,
    pub recall: f64,
    /// Context tokens added per turn, on average.
    pub context_tokens: f64,
    pub ms_median: f64,
    pub ms_p99: f64,
    pub calls: u32,
    pub tokens_in: u32,
    pub tokens_out: u32,
    /// Turns whose router fell back to mechanical transfer.
    pub fallbacks: usize,
    pub grown: usize,
}

impl Judgement {
    pub fn over<'a>(turns: impl IntoIterator<Item = &'a GraphTurnStats>) -> Judgement {
        let mut j = Judgement::default();
        let (mut tokens, mut times) = (0usize, Vec::new());
        for t in turns {
            j.turns += 1;
            j.fired += t.fired.len();
            j.used += t.used.len();
            j.hits += t.fired.iter().filter(|f| t.used.contains(f)).count();
            tokens += t.context_tokens;
            times.push(t.ms);
            j.calls += t.calls;
            j.tokens_in += t.tokens_in;
            j.tokens_out += t.tokens_out;
            j.fallbacks += usize::from(t.fallback.is_some());
            j.grown += usize::from(t.grown.is_some());
        }
        let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        j.precision = ratio(j.hits, j.fired);
        j.recall = ratio(j.hits, j.used);
        j.context_tokens = tokens as f64 / j.turns.max(1) as f64;
        times.sort_by(f64::total_cmp);
        j.ms_median = quantile(&times, 0.5);
        j.ms_p99 = quantile(&times, 0.99);
        j
    }
}

/// The nearest-rank quantile of sorted values (0 for none).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(fired: &[&str], used: &[&str], ms: f64) -> GraphTurnStats {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
        GraphTurnStats { fired: names(fired), used: names(used), ms, context_tokens: 10, ..Default::default() }
    }

    #[test]
    fn precision_and_recall_are_pooled_over_turns() {
        let turns =
            [turn(&["gym", "coffee"], &["gym"], 2.0), turn(&["dog"], &["cat", "piano"], 4.0), turn(&[], &[], 1.0)];
        let j = Judgement::over(&turns);
        assert_eq!((j.turns, j.fired, j.used, j.hits), (3, 3, 3, 1));
        assert!((j.precision - 1.0 / 3.0).abs() < 1e-12 && (j.recall - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!((j.ms_median, j.ms_p99), (2.0, 4.0));
        assert!((j.context_tokens - 10.0).abs() < 1e-12);
        assert_eq!(Judgement::over(&[]).precision, 0.0);
    }

    #[test]
    fn modes_read_back_what_they_print() {
        for m in GraphMode::ALL {
            assert_eq!(m.as_str().parse::<GraphMode>(), Ok(m));
        }
        assert!("v3".parse::<GraphMode>().is_err());
        assert!(!GraphMode::Mechanical.grows() && GraphMode::Novelty.grows() && GraphMode::V2.grows());
    }
}
