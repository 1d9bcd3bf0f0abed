//! The cycle's deterministic part in order (docs/cognition.md §14): skip gates, the
//! self-reflection draw, the seed, activation, the energy gate, cooldowns, the top concepts and
//! the grounding episode. Everything it reads is in a [`Snapshot`]; the model call and the
//! writes are [`super::run`]'s.

use super::gate::{self, Conditions, Skip};
use super::seed::{self, Episode, Pick, Pool, Strategy};
use super::{SELF_REFLECTION_P, activate, synth};
use crate::SplitMix64;
use crate::memory::graph::Graph;
use crate::vocab::drift::{DriftCycle, Fired};
use std::collections::HashMap;
use std::sync::Arc;

/// What one cycle reads, gathered at `now`.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub conditions: Conditions,
    pub pool: Pool,
    pub graph: Arc<Graph>,
    /// Concept id → cooling until.
    pub cooldowns: HashMap<i64, i64>,
    /// Noteworthy self-model items (self-reflection reads them).
    pub self_items: Vec<String>,
}

/// The deterministic part's outcome.
#[derive(Debug, Clone, PartialEq)]
pub enum Front {
    Skipped(Skip),
    /// A self-reflection gist to store; the cycle ends there.
    SelfReflection(String),
    Ready(Ready),
}

/// A seed whose neighbourhood passed the gate.
#[derive(Debug, Clone, PartialEq)]
pub struct Ready {
    pub pick: Pick,
    pub seed_name: String,
    pub energy: f64,
    /// Kept concepts (not cooling), strongest first: id, name, activation.
    pub top: Vec<(i64, String, f64)>,
    /// The kept concepts' names as the template uses them: consolidated ones first.
    pub for_template: Vec<String>,
    pub grounding: Option<Episode>,
}

/// Words in a name past which it reads as a sentence (a grown `auto:` node's name is the
/// normalised text it grew from) rather than a concept.
pub const NAME_WORDS: usize = 3;

/// A concept the template may name plainly: confirmed in the graph (not on probation) and
/// named like a concept, not like a sentence.
fn consolidated(g: &Graph, id: i64, name: &str) -> bool {
    g.node(id).is_some_and(|n| !n.probation) && name.split_whitespace().count() <= NAME_WORDS
}

/// Skip gates, then the self-reflection draw, the seed and its activation.
/// `force` runs the seed part even when the skip gates would stop it (`drift --now` still
/// reports them, see [`super::run`]); a turn in flight always stops it.
pub fn front(s: &Snapshot, now: i64, rng: &mut SplitMix64, first: Option<Strategy>) -> Front {
    if let Some(skip) = gate::skip_reason(&s.conditions, now) {
        return Front::Skipped(skip);
    }
    if !s.self_items.is_empty() && rng.next_f64() < SELF_REFLECTION_P {
        return Front::SelfReflection(format!("Looking at how I am doing: {}.", s.self_items.join("; ")));
    }
    seeded(s, now, rng, first)
}

/// The seed onward (no skip gates).
pub fn seeded(s: &Snapshot, now: i64, rng: &mut SplitMix64, first: Option<Strategy>) -> Front {
    let pick = match seed::choose(&s.pool, &s.cooldowns, now, rng, first) {
        Ok(p) => p,
        Err(tried) => return Front::Skipped(Skip::NoSeed { tried }),
    };
    let activated = activate(pick.concept, &s.graph);
    let energy = gate::energy(&activated, pick.concept);
    if !gate::passes(energy) {
        return Front::Skipped(Skip::Weak { energy });
    }
    let kept = gate::keep(&activated, pick.concept, &s.cooldowns, now);
    if kept.is_empty() {
        return Front::Skipped(Skip::NothingLeft);
    }
    let by_id: HashMap<i64, &seed::Concept> = s
        .pool
        .concepts
        .iter()
        .filter(|c| c.id == pick.concept || kept.iter().any(|k| k.0 == c.id))
        .map(|c| (c.id, c))
        .collect();
    let name = |id: i64| by_id.get(&id).map_or_else(|| format!("concept {id}"), |c| c.name.clone());
    let top: Vec<(i64, String, f64)> = kept.iter().map(|&(id, a)| (id, name(id), a)).collect();
    let ground_in: Vec<(i64, String, Vec<i64>)> = top
        .iter()
        .map(|(id, n, _)| (*id, n.clone(), by_id.get(id).map(|c| c.sources.clone()).unwrap_or_default()))
        .collect();
    let grounding = synth::ground(&s.pool.episodes, &ground_in).cloned();
    let (mut for_template, rest): (Vec<_>, Vec<_>) = top.iter().partition(|(id, n, _)| consolidated(&s.graph, *id, n));
    for_template.extend(rest);
    let for_template = for_template.into_iter().map(|t| t.1.clone()).collect();
    Front::Ready(Ready { seed_name: name(pick.concept), pick, energy, top, for_template, grounding })
}

/// The report's head for a front outcome.
pub fn report(front: &Front, now: i64) -> DriftCycle {
    let mut r = DriftCycle { at: now, gate: super::ENERGY_GATE, ..DriftCycle::default() };
    match front {
        Front::Skipped(skip) => {
            r.skipped = Some(skip.to_string());
            if let Skip::Weak { energy } = skip {
                r.energy = Some(*energy);
            }
        }
        Front::SelfReflection(_) => r.strategy = Some("self-reflection".into()),
        Front::Ready(ready) => {
            r.seed = Some(ready.seed_name.clone());
            r.strategy = Some(ready.pick.strategy.name().into());
            r.energy = Some(ready.energy);
            r.fired = ready
                .top
                .iter()
                .map(|(_, n, a)| Fired { name: n.clone(), energy: (a * 1000.0).round() / 1000.0 })
                .collect();
        }
    }
    r
}
