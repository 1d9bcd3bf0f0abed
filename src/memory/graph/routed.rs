//! The v2 router in a turn (docs/cognition.md §9.4.9): the same steps as [`activate`], but a
//! step with habitual or faint transfers first asks the lightweight model, in one batched call,
//! how much of each to pass on. A positive transfer into a concept that already fired changes
//! nothing, so it is not asked about. Junk is routed mechanically and said so; a timeout makes the
//! rest of the call mechanical and counts toward the breaker.

use super::activate::{Activation, Graph, Params, Seed};
use super::router::{self, Breaker, Verdict};
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
                match router::parse(&c.text, &cands) {
                    Ok(p) => p.verdicts,
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
    out.report.off_turns = call.breaker.lock().unwrap_or_else(PoisonError::into_inner).off_turns_left();
    if out.report.off_turns > 0 {
        out.report.mode = "off".into();
    }
    out
}

fn clip(s: &str) -> String {
    s.chars().take(80).collect()
}
