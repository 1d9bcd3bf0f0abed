//! The routing regulator's second veto (docs/cognition.md §15.3): a candidate move is tried on
//! the window's own decisions, their stored signals routed again with the current and with the
//! proposed weights, and refused when it pushes a mode out of its healthy range (or further out
//! of it). Pure: decision rows and weights in, a reason or nothing out.

use crate::cognition::router::stats::distribution;
use crate::cognition::router::{HealthyRange, Mode, RouterSignals, RouterState, RouterWeights, route};
use crate::store::RoutingRecord;
use serde::Deserialize;

/// One window decision as it can be routed again: its signals and the topic's previous mode.
/// A pre-routed decision keeps its mode whatever the weights (the scores did not choose it).
#[derive(Debug, Clone)]
pub enum Replayable {
    Scored { signals: Box<RouterSignals>, previous: Option<Mode> },
    Fixed(Mode),
}

/// The window's decisions that can be replayed; a row whose snapshot no longer reads is left
/// out (it cannot be routed again, and its recorded mode would bias the comparison).
pub fn replayable(rows: &[RoutingRecord]) -> Vec<Replayable> {
    rows.iter()
        .filter_map(|r| {
            if r.pre_routed {
                return r.selected_mode.parse().ok().map(Replayable::Fixed);
            }
            let signals = RouterSignals::deserialize(r.signal_snapshot.value()).ok()?;
            let previous = r.previous_mode.as_deref().and_then(|m| m.parse().ok());
            Some(Replayable::Scored { signals: Box::new(signals), previous })
        })
        .collect()
}

/// Each decision's mode under `weights` (no tie-break call: the built-in model never makes it,
/// and a veto must not wait on a model).
pub fn modes(window: &[Replayable], weights: &RouterWeights) -> Vec<Mode> {
    window
        .iter()
        .map(|d| match d {
            Replayable::Fixed(m) => *m,
            Replayable::Scored { signals, previous } => {
                let state = RouterState { previous_mode: *previous, recent_confidences: Vec::new() };
                route(signals, weights, &state, false).mode
            }
        })
        .collect()
}

/// How far `percent` lies outside `mode`'s healthy range, in points (0 inside it).
fn outside(mode: Mode, percent: f64) -> f64 {
    let r = HealthyRange::of(mode);
    (r.low - percent).max(percent - r.high).max(0.0)
}

/// `Some(reason)` when routing `window` with `proposed` leaves some mode further outside its
/// healthy range than routing it with `current` does; both are reruns, so a difference is the
/// move's own doing and not the tie-breaker's or the stored rows'.
pub fn veto(window: &[Replayable], current: &RouterWeights, proposed: &RouterWeights) -> Option<String> {
    let n = window.len();
    if n == 0 {
        return None;
    }
    let (before, _, _) = distribution(modes(window, current).into_iter(), n);
    let (after, _, _) = distribution(modes(window, proposed).into_iter(), n);
    let worse: Vec<String> = before
        .iter()
        .zip(&after)
        .filter(|(b, a)| outside(a.mode, a.percent) > outside(b.mode, b.percent) + 1e-9)
        .map(|(b, a)| format!("{} {:.1} → {:.1} % (healthy {})", a.mode.as_str(), b.percent, a.percent, a.healthy))
        .collect();
    (!worse.is_empty()).then(|| format!("mode distribution over {n} decisions: {}", worse.join(", ")))
}

#[cfg(test)]
#[path = "distribution_tests.rs"]
mod tests;
