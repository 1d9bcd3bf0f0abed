//! The topic stability regulator's control law (docs/cognition.md §5.6), pure: the health of
//! the last days of topic assignments in, pressures out, and a version of the regulated topic
//! and boundary parameters applied to the classifier's and detector's settings. The cycle that
//! reads the store and writes versions is [`super::topics_cycle`].
//!
//! The generic law ([`super::plan`]) moves one parameter a cycle by a step in the parameter's
//! own units. The regulated parameters here span ranges from 0.15 wide (`w_salience`) to
//! 1 740 s wide (`decay_constant_s`), so the plan runs on each parameter's position within its
//! bounds (0 at the lower, 1 at the upper) and parameters §1.3's "≤ 0.01/day" is 1 % of the
//! parameter's range a day.

use super::{Change, Param, Policy, Pressure};
use crate::cognition::boundary::BoundaryParams;
use crate::cognition::topic::ClassifierParams;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

pub const DAY_S: i64 = 86_400;
/// The problem must persist this many consecutive days (parameters §1.3).
pub const PERSIST_DAYS: usize = 3;
/// A day with fewer user messages says nothing (parameters §1.3).
pub const MIN_MESSAGES_PER_DAY: usize = 10;

/// parameters §1.3: a 24 h cycle, ≤ 0.01 a day (of the range, see the module doc), 48 h
/// cooldown; a change is re-checked once a whole persistence window has passed after it.
pub const POLICY: Policy = Policy {
    max_step: 0.01,
    gain: 0.05,
    cooldown_s: 2 * DAY_S,
    recheck_after_s: PERSIST_DAYS as i64 * DAY_S,
    min_samples: MIN_MESSAGES_PER_DAY,
};

/// Healthy bands (parameters §1.3).
pub const SWITCH_BAND: (f64, f64) = (0.05, 0.25);
pub const LIFESPAN_BAND_S: (f64, f64) = (180.0, 2400.0);
pub const FRAGMENTATION_MAX: f64 = 0.15;

pub const BASE: &str = "boundary.base";
pub const LEAK: &str = "boundary.leak";
pub const SWITCH_THRESHOLD: &str = "topic.switch_threshold";
pub const DECAY: &str = "topic.decay_constant_s";
pub const W_SEMANTIC: &str = "topic.w_semantic";
pub const W_FRESHNESS: &str = "topic.w_freshness";
pub const W_SALIENCE: &str = "topic.w_salience";

/// The regulated parameters and their hard bounds (parameters §1.3; the boundary detector's
/// base and leak: docs/cognition.md §5.4). `topic.switch_threshold` is the classifier's
/// `static_threshold`, the boundary rule used while a thread has no detector state.
pub const BOUNDS: [(&str, f64, f64); 7] = [
    (BASE, 1.5, 4.0),
    (LEAK, 0.2, 0.7),
    (SWITCH_THRESHOLD, 0.3, 0.7),
    (DECAY, 60.0, 1800.0),
    (W_SEMANTIC, 0.3, 0.8),
    (W_FRESHNESS, 0.1, 0.6),
    (W_SALIENCE, 0.05, 0.2),
];

/// One user message as the regulator sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Filed {
    pub thread: String,
    pub topic: String,
    pub at: i64,
}

/// The health of one stretch of topic assignments.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Health {
    pub messages: usize,
    pub topics: usize,
    /// Share of a thread's messages (after its first) filed under another topic than the one
    /// before.
    pub switch_frequency: f64,
    /// Mean time from a topic's first message to its last, seconds, over the topics that got a
    /// second message (a one-message topic has no lifespan; fragmentation counts it). None
    /// when there was none.
    pub mean_lifespan_s: Option<f64>,
    /// Share of topics that hold one message only.
    pub fragmentation: f64,
}

/// The health of `msgs` (any order). A topic is a (thread, name) pair.
pub fn health(msgs: &[Filed]) -> Health {
    let mut sorted: Vec<&Filed> = msgs.iter().collect();
    sorted.sort_by(|a, b| a.thread.cmp(&b.thread).then(a.at.cmp(&b.at)));
    let (mut pairs, mut switches) = (0usize, 0usize);
    for w in sorted.windows(2) {
        if w[0].thread == w[1].thread {
            pairs += 1;
            switches += usize::from(w[0].topic != w[1].topic);
        }
    }
    let mut spans: BTreeMap<(&str, &str), (i64, i64, usize)> = BTreeMap::new();
    for m in &sorted {
        let e = spans.entry((m.thread.as_str(), m.topic.as_str())).or_insert((m.at, m.at, 0));
        e.0 = e.0.min(m.at);
        e.1 = e.1.max(m.at);
        e.2 += 1;
    }
    let topics = spans.len();
    let share = |n: usize, d: usize| if d == 0 { 0.0 } else { n as f64 / d as f64 };
    Health {
        messages: msgs.len(),
        topics,
        switch_frequency: share(switches, pairs),
        mean_lifespan_s: {
            let lived: Vec<f64> = spans.values().filter(|s| s.2 > 1).map(|(a, b, _)| (b - a) as f64).collect();
            (!lived.is_empty()).then(|| lived.iter().sum::<f64>() / lived.len() as f64)
        },
        fragmentation: share(spans.values().filter(|s| s.2 == 1).count(), topics),
    }
}

/// Each signal's distance outside its band as a ratio (over 1 = outside), so that a signal
/// too high and one too low both read as a pressure over a threshold of 1.
pub fn ratios(h: &Health) -> BTreeMap<String, f64> {
    let floor = |v: f64, eps: f64| v.max(eps);
    BTreeMap::from([
        ("switch_frequency_high".to_string(), h.switch_frequency / SWITCH_BAND.1),
        ("switch_frequency_low".to_string(), SWITCH_BAND.0 / floor(h.switch_frequency, 1e-3)),
        ("lifespan_short".to_string(), h.mean_lifespan_s.map_or(0.0, |l| LIFESPAN_BAND_S.0 / floor(l, 1.0))),
        ("lifespan_long".to_string(), h.mean_lifespan_s.map_or(0.0, |l| l / LIFESPAN_BAND_S.1)),
        ("fragmentation_high".to_string(), h.fragmentation / FRAGMENTATION_MAX),
    ])
}

/// The control map (parameters §1.3): each pressure's parameters, first choice first.
fn controls(pressure: &str) -> Vec<(String, f64)> {
    let c: &[(&str, f64)] = match pressure {
        // Too many switches: a higher bound fires less; a lower static threshold too.
        "switch_frequency_high" => &[(BASE, 1.0), (SWITCH_THRESHOLD, -1.0)],
        "switch_frequency_low" => &[(BASE, -1.0), (SWITCH_THRESHOLD, 1.0)],
        // Short-lived topics: a slower freshness decay lets a message rejoin an older topic.
        "lifespan_short" => &[(DECAY, 1.0)],
        "lifespan_long" => &[(DECAY, -1.0)],
        // One-message topics: a higher bound, or evidence that leaks away faster.
        "fragmentation_high" => &[(BASE, 1.0), (LEAK, 1.0)],
        _ => &[],
    };
    c.iter().map(|(p, d)| (p.to_string(), *d)).collect()
}

/// The pressures of the last [`PERSIST_DAYS`] days (`days`, oldest first) and the value of every
/// signal. A signal's value is its smallest ratio over the days: it is over 1, a pressure the
/// plan acts on, only when it was outside its band on every one of them.
pub fn pressures(days: &[Health]) -> (Vec<Pressure>, BTreeMap<String, f64>) {
    let mut metrics: BTreeMap<String, f64> = BTreeMap::new();
    for (i, d) in days.iter().enumerate() {
        for (name, r) in ratios(d) {
            let e = metrics.entry(name).or_insert(r);
            if i > 0 {
                *e = e.min(r);
            }
        }
    }
    let out = metrics
        .iter()
        .map(|(name, &value)| Pressure { name: name.clone(), value, threshold: 1.0, controls: controls(name) })
        .collect();
    (out, metrics)
}

/// The fewest messages of any of the days (the plan's sample count).
pub fn samples(days: &[Health]) -> usize {
    if days.len() < PERSIST_DAYS {
        return 0;
    }
    days.iter().map(|d| d.messages).min().unwrap_or(0)
}

fn bounds(name: &str) -> Option<(f64, f64)> {
    BOUNDS.iter().find(|(n, _, _)| *n == name).map(|(_, lo, hi)| (*lo, *hi))
}

/// A value as its position within the parameter's bounds (what the plan moves).
pub fn to_unit(name: &str, v: f64) -> f64 {
    bounds(name).map_or(v, |(lo, hi)| (v - lo) / (hi - lo))
}

/// A position within the bounds back in the parameter's units.
pub fn from_unit(name: &str, u: f64) -> f64 {
    let v = bounds(name).map_or(u, |(lo, hi)| lo + u * (hi - lo));
    (v * 1e6).round() / 1e6
}

/// The values the defaults give the regulated parameters.
pub fn defaults() -> BTreeMap<String, f64> {
    read(&ClassifierParams::default(), &BoundaryParams::default())
}

/// The regulated parameters' values in a pair of settings.
pub fn read(c: &ClassifierParams, b: &BoundaryParams) -> BTreeMap<String, f64> {
    BTreeMap::from([
        (BASE.to_string(), b.base),
        (LEAK.to_string(), b.leak),
        (SWITCH_THRESHOLD.to_string(), f64::from(c.static_threshold)),
        (DECAY.to_string(), f64::from(c.decay_constant_s)),
        (W_SEMANTIC.to_string(), f64::from(c.w_semantic)),
        (W_FRESHNESS.to_string(), f64::from(c.w_freshness)),
        (W_SALIENCE.to_string(), f64::from(c.w_salience)),
    ])
}

/// `values` written into a pair of settings, each clamped to its bounds; unknown names are
/// ignored. The detector's base for threads of long lines, when it has its own, moves with the
/// base by the same amount.
pub fn apply(values: &BTreeMap<String, f64>, c: &mut ClassifierParams, b: &mut BoundaryParams) {
    let get = |name: &str| {
        values.get(name).filter(|v| v.is_finite()).and_then(|v| bounds(name).map(|(lo, hi)| v.clamp(lo, hi)))
    };
    if let Some(v) = get(BASE) {
        let delta = v - b.base;
        b.base = v;
        b.long_base = b.long_base.map(|l| l + delta);
    }
    if let Some(v) = get(LEAK) {
        b.leak = v;
    }
    let set = |slot: &mut f32, name: &str| {
        if let Some(v) = get(name) {
            *slot = v as f32;
        }
    };
    set(&mut c.static_threshold, SWITCH_THRESHOLD);
    set(&mut c.decay_constant_s, DECAY);
    set(&mut c.w_semantic, W_SEMANTIC);
    set(&mut c.w_freshness, W_FRESHNESS);
    set(&mut c.w_salience, W_SALIENCE);
}

/// The regulated parameters for the plan, on the unit scale, with the config's pins.
pub fn params(values: &BTreeMap<String, f64>, pinned: &BTreeSet<String>) -> Vec<Param> {
    BOUNDS
        .iter()
        .map(|(name, lo, _)| Param {
            name: name.to_string(),
            value: to_unit(name, values.get(*name).copied().unwrap_or(*lo)),
            min: 0.0,
            max: 1.0,
            pinned: pinned.contains(*name),
        })
        .collect()
}

/// A stored change on the unit scale (the plan reverts by the change's step on that scale).
pub fn unit_change(mut c: Change) -> Change {
    c.old = to_unit(&c.param, c.old);
    c.new = to_unit(&c.param, c.new);
    c
}

#[cfg(test)]
#[path = "topics_tests.rs"]
mod tests;
