//! The routing stability regulator (docs/cognition.md §15.3): the only writer of router
//! weights after the defaults and the config. Once a day it reads the last 24 h of routing
//! decisions, turns their statistics into pressures, plans one cycle with the generic law
//! ([`super::plan`]) and stores the result as a new `router_weights` version (author
//! `regulator`) with one `routing_adjustments` row per change.

use super::{Action, Change, Param, Plan, Policy, Pressure, plan_with, progress_key};
use crate::cognition::router::Mode;
use crate::cognition::router::calibration::{agreement, labelled_set};
use crate::cognition::router::overrides;
use crate::cognition::router::stats::{RoutingStats, routing_stats};
use crate::cognition::router::{RouterWeights, WeightError};
use crate::store::{
    RouterWeightsRepo, RoutingAdjustmentsRepo, RoutingRecord, RoutingRepo, StoreError, TriageOutcome, TurnRepo,
};
use rusqlite::Connection;
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// The author of the versions the regulator writes.
pub const AUTHOR: &str = "regulator";
pub const DAY_S: i64 = 86_400;
/// Reflections are read over a week; a dimension this dominant is a pressure.
pub const REFLECTION_WINDOW_S: i64 = 7 * DAY_S;
pub const DOMINANT_DIMENSION: f64 = 0.30;

/// parameters §10: 24 h cycle, ≥ 10 decisions, ≤ ±0.02 per day, 48 h cooldown.
pub const POLICY: Policy =
    Policy { max_step: 0.02, gain: 0.05, cooldown_s: 2 * DAY_S, recheck_after_s: DAY_S, min_samples: 10 };

#[derive(Debug, thiserror::Error)]
pub enum RegulateError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("stored router weights are unusable")]
    Weights(#[from] overrides::OverrideError),
    #[error("the regulator's change is not a router weight")]
    Param(#[from] WeightError),
    #[error("router weights cannot be serialised")]
    Json(#[from] serde_json::Error),
}

/// What one cycle saw and did (`router regulate --json` prints it).
#[derive(Debug, Clone, Serialize)]
pub struct CycleReport {
    pub at: i64,
    pub dry_run: bool,
    pub weights_version: u32,
    pub stats: RoutingStats,
    pub metrics: BTreeMap<String, f64>,
    pub plan: Plan,
    /// The version written, when a parameter moved.
    pub new_version: Option<u32>,
}

/// Share of the reflections of the window naming each ambiguity dimension, and the share that
/// disagreed with the decision. A reflection below the confidence gate (`counted: false`) is
/// advice too weak to count.
pub fn reflection_shares(rows: &[RoutingRecord]) -> (BTreeMap<String, f64>, Option<f64>) {
    let reflections: Vec<&Value> = rows
        .iter()
        .filter_map(|r| r.reflection.as_ref())
        .filter(|v| v.get("counted") != Some(&Value::Bool(false)))
        .collect();
    if reflections.is_empty() {
        return (BTreeMap::new(), None);
    }
    let n = reflections.len() as f64;
    let mut counts: BTreeMap<String, f64> = BTreeMap::new();
    for r in &reflections {
        let dims: BTreeSet<&str> = r
            .get("uncertainty_dimensions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|d| d.get("dimension").and_then(Value::as_str))
            .collect();
        for d in dims {
            *counts.entry(d.to_string()).or_default() += 1.0;
        }
    }
    let disagree = reflections.iter().filter(|r| r.get("agree_with_decision") == Some(&Value::Bool(false))).count();
    (counts.into_iter().map(|(k, c)| (k, c / n)).collect(), Some(disagree as f64 / n))
}

/// Share of the triage verdicts with an outcome whose route the next message called wrong.
pub fn triage_miscalibration(outcomes: &[TriageOutcome]) -> Option<f64> {
    if outcomes.is_empty() {
        return None;
    }
    let wrong = outcomes
        .iter()
        .filter(|t| {
            t.outcome
                .get("label")
                .and_then(Value::as_str)
                .is_some_and(|l| crate::cognition::router::stats::MISROUTE_LABELS.contains(&l))
        })
        .count();
    Some(wrong as f64 / outcomes.len() as f64)
}

/// How far, on average, the mode each misrouted decision's label asks for trailed the
/// delivered one (0 when it already led): a step too small to flip a decision still shrinks
/// it, so the re-check can tell a change on its way from one that does nothing. `None`
/// without misrouted decisions that kept their scores.
pub fn misroute_shortfall(rows: &[RoutingRecord]) -> Option<f64> {
    let gaps: Vec<f64> = rows
        .iter()
        .filter_map(|r| {
            let wanted = match r.feedback.as_ref()?.get("label")?.as_str()? {
                "missed_clarify" => Mode::Clarify,
                "missed_act" => Mode::Act,
                "under_engagement" => Mode::Respond,
                _ => return None,
            };
            let score = |m: Mode| r.scores.get(m.as_str()).and_then(Value::as_f64);
            let top = Mode::ALL.iter().filter_map(|&m| score(m)).fold(f64::NEG_INFINITY, f64::max);
            Some((top - score(wanted)?).max(0.0))
        })
        .collect();
    (!gaps.is_empty()).then(|| gaps.iter().sum::<f64>() / gaps.len() as f64)
}

fn one(name: &str, value: f64, threshold: f64, param: &str, direction: f64) -> Pressure {
    Pressure { name: name.into(), value, threshold, controls: vec![(param.into(), direction)] }
}

/// The pressures of parameters §10's control map and every signal's current value.
pub fn pressures(
    s: &RoutingStats,
    dims: &BTreeMap<String, f64>,
    disagreement: Option<f64>,
    miscalibration: Option<f64>,
) -> (Vec<Pressure>, BTreeMap<String, f64>) {
    // The misroute rate answers with the parameters of its most frequent label first. A missed
    // clarify has two levers: the cold boost, and the dangling-reference term, the narrower
    // one, tried when the boost is cooling down, at its bound or refused (§15.9).
    let mut labels: [(f64, &[&str]); 3] = [
        (s.clarify_miss_rate, &["clarify.cold_boost", "clarify.dangling_reference"]),
        (s.act_miss_rate, &["act.question_moderate_context"]),
        (s.under_engagement_rate, &["respond.warmth_boost"]),
    ];
    labels.sort_by(|a, b| b.0.total_cmp(&a.0));
    let misroute = Pressure {
        name: "misroute_rate".into(),
        value: s.misroute_rate,
        threshold: 0.10,
        controls: labels
            .iter()
            .filter(|(r, _)| *r > 0.0)
            .flat_map(|(_, ps)| ps.iter().map(|p| (p.to_string(), 1.0)))
            .collect(),
    };
    let mut out = vec![
        one("tie_break_rate", s.tie_break_rate, 0.20, "tiebreaker.base_margin", -1.0),
        one("respond_overuse", s.respond_overuse, 0.10, "respond.base", -1.0),
        misroute,
        one("act_opportunity_miss", s.act_miss_rate, 0.10, "act.question_moderate_context", 1.0),
    ];
    for (dim, param, dir) in [
        ("memory_availability", "act.question_moderate_context", 1.0),
        ("intent_clarity", "clarify.cold_boost", 1.0),
        ("tone_ambiguity", "tiebreaker.base_margin", 1.0),
    ] {
        out.push(one(
            &format!("reflection:{dim}"),
            dims.get(dim).copied().unwrap_or(0.0),
            DOMINANT_DIMENSION,
            param,
            dir,
        ));
    }
    let mut metrics: BTreeMap<String, f64> = out.iter().map(|p| (p.name.clone(), p.value)).collect();
    metrics.insert("entropy".into(), s.entropy);
    metrics.insert("missed_clarify".into(), s.clarify_miss_rate);
    metrics.insert("under_engagement".into(), s.under_engagement_rate);
    // Advisory signals: reported, mapped to no parameter.
    if let Some(d) = disagreement {
        metrics.insert("reflection_disagreement".into(), d);
    }
    if let Some(m) = miscalibration {
        metrics.insert("triage_miscalibration".into(), m);
    }
    (out, metrics)
}

/// The regulated parameters of `w`, with the config's pins.
pub fn params(w: &RouterWeights, pinned: &BTreeSet<String>) -> Vec<Param> {
    RouterWeights::bounds()
        .iter()
        .map(|b| Param {
            name: b.name.to_string(),
            value: w.get(b.name).unwrap_or(b.min),
            min: b.min,
            max: b.max,
            pinned: pinned.contains(b.name),
        })
        .collect()
}

fn history(rows: Vec<crate::store::AdjustmentRow>) -> Vec<Change> {
    rows.into_iter()
        .map(|a| {
            let m = a.metrics.unwrap_or(Value::Null);
            Change {
                id: a.id,
                before: m.get("before").and_then(Value::as_f64).unwrap_or(f64::INFINITY),
                closed: m.get("after").is_some() || a.reverted_at.is_some(),
                progress: m.get("progress").and_then(Value::as_f64),
                param: a.parameter,
                old: a.old_value,
                new: a.new_value,
                pressure: a.pressure,
                at: a.created_at,
                reverted_at: a.reverted_at,
            }
        })
        .collect()
}

/// The newest weights; on a fresh database the defaults (stored first unless `dry_run`).
fn current(c: &Connection, dry_run: bool) -> Result<(u32, RouterWeights), RegulateError> {
    match RouterWeightsRepo(c).latest()? {
        Some(v) => {
            let w = serde_json::from_str::<RouterWeights>(&v.weights)
                .map_err(|source| overrides::OverrideError::Stored { version: v.version, source })?;
            Ok((v.version, w))
        }
        None if dry_run => Ok((crate::cognition::router::DEFAULT_WEIGHTS_VERSION, RouterWeights::default())),
        None => Ok((crate::cognition::router::DEFAULT_WEIGHTS_VERSION, overrides::store_defaults(c)?)),
    }
}

/// One line per action, for the version's `reason`.
fn reason(actions: &[Action]) -> String {
    let parts: Vec<String> = actions
        .iter()
        .filter_map(|a| match a {
            Action::Adjust { param, old, new, pressure, value, threshold, .. } => {
                Some(format!("{param} {old:.3} → {new:.3}: {pressure} {value:.3} > {threshold:.3}"))
            }
            Action::Revert { param, from, to, pressure, before, after, .. } => {
                Some(format!("{param} {from:.3} → {to:.3} reverted: {pressure} {before:.3} → {after:.3} did not drop"))
            }
            Action::Keep { .. } => None,
        })
        .collect();
    parts.join("; ")
}

/// Run one cycle at `now` over `c`; with `dry_run` nothing is written. `pinned` is the
/// config's `[router.weights]` names.
pub fn run_cycle(
    c: &Connection,
    pinned: &BTreeSet<String>,
    now: i64,
    dry_run: bool,
) -> Result<CycleReport, RegulateError> {
    let rows = RoutingRepo(c).between(now - DAY_S, now + 1)?;
    let week = RoutingRepo(c).between(now - REFLECTION_WINDOW_S, now + 1)?;
    let stats = routing_stats(&rows);
    let (dims, disagreement) = reflection_shares(&week);
    let miscal = triage_miscalibration(&TurnRepo(c).triage_outcomes(now - DAY_S, now + 1)?);
    let (ps, mut metrics) = pressures(&stats, &dims, disagreement, miscal);
    if let Some(p) = misroute_shortfall(&rows) {
        metrics.insert(progress_key("misroute_rate"), p);
    }
    let (version, mut weights) = current(c, dry_run)?;
    let past = history(RoutingAdjustmentsRepo(c).log().since(now - 30 * DAY_S)?);
    // A move that routes the labelled set worse is refused: the regulator never trades the
    // set it was calibrated on for the window's few turns. Nor one that, the window's own
    // decisions routed again, pushes a mode out of its healthy range (§15.3).
    let set = labelled_set();
    let (base, n, _) = agreement(&weights, &set);
    let window = super::distribution::replayable(&rows);
    let veto = |name: &str, value: f64| {
        let mut w = weights;
        w.set(name, value).ok()?;
        let (got, _, _) = agreement(&w, &set);
        if got < base {
            return Some(format!("labelled agreement {base}/{n} → {got}/{n}"));
        }
        super::distribution::veto(&window, &weights, &w)
    };
    let planned = plan_with(&POLICY, &params(&weights, pinned), &ps, &metrics, &past, stats.decisions, now, &veto);
    let mut report =
        CycleReport { at: now, dry_run, weights_version: version, stats, metrics, plan: planned, new_version: None };
    if dry_run {
        return Ok(report);
    }
    let tx = c.unchecked_transaction().map_err(StoreError::from)?;
    let progress = |p: &str| report.metrics.get(&progress_key(p)).copied();
    let set = |p: &str, v: f64| weights.set(p, v).map(|_| ()).map_err(RegulateError::from);
    let moved = super::record(&RoutingAdjustmentsRepo(c).log(), &report.plan.actions, version + 1, progress, set, now)?;
    if moved {
        let new_version = version + 1;
        weights.version = new_version;
        let text = serde_json::to_string(&weights)?;
        RouterWeightsRepo(c).insert(new_version, &text, AUTHOR, &reason(&report.plan.actions), now)?;
        report.new_version = Some(new_version);
    }
    tx.commit().map_err(StoreError::from)?;
    Ok(report)
}

/// What the cycle changed, one line (the event's and the version's reason).
pub fn summary(r: &CycleReport) -> String {
    reason(&r.plan.actions)
}

/// The cycle in a few lines (`router regulate`).
pub fn describe(r: &CycleReport) -> String {
    let mut out = crate::cognition::router::stats::describe(&r.stats);
    out.push_str(&format!("\nweights v{}", r.weights_version));
    let line = |a: &Action| match a {
        Action::Keep { change_id, pressure, before, after } => {
            format!("change #{change_id} kept: {pressure} {before:.3} → {after:.3}")
        }
        _ => reason(std::slice::from_ref(a)),
    };
    let stored = r.new_version.map(|v| format!("stored router weights v{v} (author {AUTHOR})"));
    super::describe_plan(&mut out, &r.plan, line, stored, r.dry_run);
    out
}

#[cfg(test)]
#[path = "routing_tests.rs"]
mod tests;
