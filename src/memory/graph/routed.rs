//! The v2 router in a turn (docs/cognition.md §9.4.9): the same steps as [`activate`], but a
//! step with habitual or faint transfers first asks the lightweight model, in one batched call,
//! how much of each to pass on. A positive transfer into a concept that already fired changes
//! nothing, so it is not asked about. Junk is routed mechanically and said so; a timeout makes the
//! rest of the call mechanical and counts toward the breaker.

use super::activate::{Activation, Graph, Params, Seed};
use super::router::{self, Breaker, NodeSuggestion, PruneSuggestion, Verdict};
use super::run::Run;
use crate::config::Role;
use crate::llm::{Llm, LlmError};
use crate::vocab::graph::GraphRouting;
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// What a routed activation did.
#[derive(Debug, Clone, Default)]
pub struct Routed {
    pub activation: Activation,
    pub report: GraphRouting,
    /// The verdict each routed edge was given, by edge id, for learning.
    pub verdicts: HashMap<i64, Verdict>,
    /// The model's checked suggestions, within the per-turn budgets; applied with the turn's
    /// persistence ([`super::suggest::apply`]).
    pub new_nodes: Vec<NodeSuggestion>,
    pub prunes: Vec<PruneSuggestion>,
}

/// How the router calls its model.
pub struct RouterCall<'a> {
    pub llm: &'a Llm,
    pub timeout: Duration,
    pub breaker: &'a Mutex<Breaker>,
    pub cancel: &'a CancellationToken,
}

/// Activate with the model tier. The breaker is asked once (the caller's
/// [`Breaker::begin_turn`] decided `enabled`); with it off every step is mechanical.
pub async fn activate_routed(
    call: &RouterCall<'_>,
    enabled: bool,
    graph: &Graph,
    seeds: &[Seed],
    params: &Params,
    message: &str,
) -> Routed {
    let mut out = Routed {
        report: GraphRouting { mode: if enabled { "v2" } else { "off" }.into(), ..GraphRouting::default() },
        ..Routed::default()
    };
    let mut degraded = !enabled;
    let mut run = Run::start(graph, seeds, params);
    while run.fire() {
        let cands = if degraded {
            Vec::new()
        } else {
            router::candidates(run.transfers().filter(|t| t.weight < 0.0 || !run.has_fired(t.target)))
        };
        if cands.is_empty() {
            run.spread(|_, w| w);
            continue;
        }
        let fired: Vec<(i64, f64)> = run.firing().collect();
        let req = router::request(message, run.step(), graph, &fired, &cands);
        out.report.calls += 1;
        let answer = call.llm.chat_within(Role::Lightweight, &req, call.timeout, &mut |_| {}, call.cancel).await;
        let lock = || call.breaker.lock().unwrap_or_else(PoisonError::into_inner);
        let verdicts = match answer {
            Ok(c) => {
                lock().answered();
                out.report.tokens_in += c.tokens_in;
                out.report.tokens_out += c.tokens_out;
                match router::parse(&c.text, &cands, graph) {
                    Ok(p) => {
                        out.new_nodes.extend(p.new_nodes);
                        out.prunes.extend(p.prunes);
                        out.report.refused.extend(p.refused);
                        p.verdicts
                    }
                    Err(why) => {
                        out.report.fallback = Some(format!("junk: {}", clip(&why)));
                        HashMap::new()
                    }
                }
            }
            Err(LlmError::Timeout { .. }) => {
                lock().timed_out();
                out.report.fallback = Some("timeout".into());
                degraded = true;
                HashMap::new()
            }
            Err(e) => {
                out.report.fallback = Some(format!("error: {}", clip(&e.to_string())));
                degraded = true;
                HashMap::new()
            }
        };
        for c in &cands {
            if let Some(v) = verdicts.get(&(c.source, c.target)) {
                out.verdicts.insert(c.edge, *v);
                out.report.routed += 1;
            }
        }
        run.spread(|t, w| verdicts.get(&(t.source, t.target)).map_or(w, |v| router::effective(w, *v)));
    }
    out.activation = run.finish();
    budget(&mut out);
    out.report.off_turns = call.breaker.lock().unwrap_or_else(PoisonError::into_inner).off_turns_left();
    if out.report.off_turns > 0 {
        out.report.mode = "off".into();
    }
    out
}

/// One suggestion per node name and per pruned concept (the first step's wins), at most
/// [`router::MAX_NEW_NODES_PER_TURN`] and [`router::MAX_PRUNES_PER_TURN`]; the rest are refused.
fn budget(out: &mut Routed) {
    let mut nodes: Vec<NodeSuggestion> = Vec::new();
    for n in std::mem::take(&mut out.new_nodes) {
        if nodes.iter().any(|k| k.name == n.name) {
            continue;
        }
        if nodes.len() == router::MAX_NEW_NODES_PER_TURN {
            out.report.refused.push(format!("new node {:?}: over the budget of 2 a turn", n.name));
            continue;
        }
        nodes.push(n);
    }
    out.new_nodes = nodes;
    let mut prunes: Vec<PruneSuggestion> = Vec::new();
    for p in std::mem::take(&mut out.prunes) {
        if prunes.iter().any(|k| k.node == p.node) {
            continue;
        }
        if prunes.len() == router::MAX_PRUNES_PER_TURN {
            out.report.refused.push(format!("prune {}: over the budget of 2 a turn", p.node));
            continue;
        }
        prunes.push(p);
    }
    out.prunes = prunes;
}

fn clip(s: &str) -> String {
    s.chars().take(80).collect()
}
