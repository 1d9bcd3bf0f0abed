//! The topic stability regulator's cycle (docs/cognition.md §5.6): the only writer of the
//! regulated topic and boundary parameters. Once a day it reads the topics the user's
//! messages were filed under over the last three days, plans one cycle with the generic law
//! ([`super::plan`]) and stores the result as a new `topic_params` version (author
//! `regulator`) with one `topic_adjustments` row per change. The engine reads the newest
//! version at every turn ([`current`]).

use super::topics::{self, DAY_S, Filed, Health, PERSIST_DAYS, POLICY};
use super::{Action, Change, Plan, plan};
use crate::cognition::boundary::BoundaryParams;
use crate::cognition::topic::ClassifierParams;
use crate::store::{AdjustmentRow, ChatRepo, StoreError, TopicAdjustmentsRepo, TopicParamsRepo};
use rusqlite::Connection;
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

pub const AUTHOR: &str = "regulator";
/// The version the built-in values count as; the first stored version is 1.
pub const DEFAULT_VERSION: u32 = 0;

#[derive(Debug, thiserror::Error)]
pub enum TopicRegulateError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("topic parameters cannot be serialised")]
    Json(#[from] serde_json::Error),
}

/// What one cycle saw and did (`topics regulate --json` prints it).
#[derive(Debug, Clone, Serialize)]
pub struct TopicCycleReport {
    pub at: i64,
    pub dry_run: bool,
    pub params_version: u32,
    pub values: BTreeMap<String, f64>,
    /// The last [`PERSIST_DAYS`] days, oldest first.
    pub days: Vec<Health>,
    /// Each signal's smallest out-of-band ratio over the days (over 1: a pressure).
    pub metrics: BTreeMap<String, f64>,
    /// Moves and reverts in the parameters' own units.
    pub plan: Plan,
    pub new_version: Option<u32>,
}

/// The newest stored values (the defaults' when none was stored or the stored JSON is
/// unreadable) and their version.
pub fn stored_values(c: &Connection) -> Result<(u32, BTreeMap<String, f64>), StoreError> {
    let mut values = topics::defaults();
    let Some(v) = TopicParamsRepo(c).latest()? else { return Ok((DEFAULT_VERSION, values)) };
    match serde_json::from_str::<BTreeMap<String, f64>>(&v.params) {
        Ok(stored) => values.extend(stored),
        Err(e) => tracing::warn!(version = v.version, "stored topic parameters unreadable ({e}); using the defaults"),
    }
    Ok((v.version, values))
}

/// The settings a turn classifies with: `base` with the newest stored version applied.
pub fn current(
    c: &Connection,
    base: (&ClassifierParams, &BoundaryParams),
) -> Result<(u32, ClassifierParams, BoundaryParams), StoreError> {
    let (mut cp, mut bp) = (base.0.clone(), base.1.clone());
    let Some(v) = TopicParamsRepo(c).latest()? else { return Ok((DEFAULT_VERSION, cp, bp)) };
    if let Ok(stored) = serde_json::from_str::<BTreeMap<String, f64>>(&v.params) {
        topics::apply(&stored, &mut cp, &mut bp);
    }
    Ok((v.version, cp, bp))
}

fn history(rows: Vec<AdjustmentRow>) -> Vec<Change> {
    rows.into_iter()
        .map(|a| {
            let m = a.metrics.unwrap_or(Value::Null);
            Change {
                id: a.id,
                before: m.get("before").and_then(Value::as_f64).unwrap_or(f64::INFINITY),
                closed: m.get("after").is_some() || a.reverted_at.is_some(),
                param: a.parameter,
                old: a.old_value,
                new: a.new_value,
                pressure: a.pressure,
                at: a.created_at,
                reverted_at: a.reverted_at,
                progress: None,
            }
        })
        .collect()
}

/// The plan's unit-scale values back in each parameter's units.
fn in_units(mut p: Plan) -> Plan {
    for a in &mut p.actions {
        match a {
            Action::Adjust { param, old, new, .. } => {
                *old = topics::from_unit(param, *old);
                *new = topics::from_unit(param, *new);
            }
            Action::Revert { param, from, to, .. } => {
                *from = topics::from_unit(param, *from);
                *to = topics::from_unit(param, *to);
            }
            Action::Keep { .. } => {}
        }
    }
    p
}

/// The health of each of the last [`PERSIST_DAYS`] days before `now`, oldest first.
pub fn last_days(c: &Connection, now: i64) -> Result<Vec<Health>, StoreError> {
    (0..PERSIST_DAYS as i64)
        .rev()
        .map(|k| {
            let rows = ChatRepo(c).user_topics_between(now - (k + 1) * DAY_S, now - k * DAY_S + i64::from(k == 0))?;
            let filed: Vec<Filed> = rows.into_iter().map(|(thread, topic, at)| Filed { thread, topic, at }).collect();
            Ok(topics::health(&filed))
        })
        .collect()
}

/// The pure part of a cycle: the days' health, the current values, the pins and the history
/// (in the parameters' units) in; the plan, in the parameters' units, out.
pub fn plan_cycle(
    days: &[Health],
    values: &BTreeMap<String, f64>,
    pinned: &BTreeSet<String>,
    past: Vec<Change>,
    now: i64,
) -> (Plan, BTreeMap<String, f64>) {
    let (pressures, metrics) = topics::pressures(days);
    let past: Vec<Change> = past.into_iter().map(topics::unit_change).collect();
    let p = plan(&POLICY, &topics::params(values, pinned), &pressures, &metrics, &past, topics::samples(days), now);
    (in_units(p), metrics)
}

/// One line per action, for the version's reason and the notice.
pub fn reason(actions: &[Action]) -> String {
    let parts: Vec<String> = actions
        .iter()
        .map(|a| match a {
            Action::Adjust { param, old, new, pressure, value, .. } => {
                format!("{param} {old:.4} → {new:.4}: {pressure} {value:.3}× its band")
            }
            Action::Revert { change_id, param, from, to, pressure, before, after } => format!(
                "{param} {from:.4} → {to:.4}: change #{change_id} reverted, {pressure} {before:.3} → {after:.3} did not drop"
            ),
            Action::Keep { change_id, pressure, before, after } => {
                format!("change #{change_id} kept: {pressure} {before:.3} → {after:.3}")
            }
        })
        .collect();
    parts.join("; ")
}

/// Run one cycle at `now` over `c`; with `dry_run` nothing is written. `pinned`: parameters the
/// regulator must leave alone.
pub fn run_cycle(
    c: &Connection,
    pinned: &BTreeSet<String>,
    now: i64,
    dry_run: bool,
) -> Result<TopicCycleReport, TopicRegulateError> {
    let days = last_days(c, now)?;
    let (version, mut values) = stored_values(c)?;
    let raw = TopicAdjustmentsRepo(c).log().since(now - 30 * DAY_S)?;
    let (planned, metrics) = plan_cycle(&days, &values, pinned, history(raw), now);
    let mut report = TopicCycleReport {
        at: now,
        dry_run,
        params_version: version,
        values: values.clone(),
        days,
        metrics,
        plan: planned,
        new_version: None,
    };
    if dry_run {
        return Ok(report);
    }
    let tx = c.unchecked_transaction().map_err(StoreError::from)?;
    let set = |p: &str, v: f64| -> Result<(), TopicRegulateError> {
        values.insert(p.to_string(), v);
        Ok(())
    };
    let moved = super::record(&TopicAdjustmentsRepo(c).log(), &report.plan.actions, version + 1, |_| None, set, now)?;
    if moved {
        let new_version = version + 1;
        let text = serde_json::to_string(&values)?;
        TopicParamsRepo(c).insert(new_version, &text, AUTHOR, &reason(&report.plan.actions), now)?;
        report.new_version = Some(new_version);
        report.values = values;
    }
    tx.commit().map_err(StoreError::from)?;
    Ok(report)
}

/// The cycle in a few lines (`topics regulate`).
pub fn describe(r: &TopicCycleReport) -> String {
    let mut out = format!("topic parameters v{}", r.params_version);
    for (i, d) in r.days.iter().enumerate() {
        out.push_str(&format!(
            "\nday -{}: {} messages, {} topics, switch frequency {:.3}, mean lifespan {} s, fragmentation {:.3}",
            r.days.len() - i,
            d.messages,
            d.topics,
            d.switch_frequency,
            d.mean_lifespan_s.map_or("-".to_string(), |l| format!("{l:.0}")),
            d.fragmentation
        ));
    }
    let stored = r.new_version.map(|v| format!("stored topic parameters v{v} (author {AUTHOR})"));
    super::describe_plan(&mut out, &r.plan, |a| reason(std::slice::from_ref(a)), stored, r.dry_run);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cognition::stability::topics::BASE;

    #[test]
    fn a_turn_classifies_with_the_newest_stored_version() {
        let c = crate::store::open_in_memory().unwrap();
        let (cp, bp) = (ClassifierParams::default(), BoundaryParams::default());
        let (v, _, b) = current(&c, (&cp, &bp)).unwrap();
        assert_eq!((v, b.base), (DEFAULT_VERSION, bp.base), "nothing stored: the defaults");
        TopicParamsRepo(&c).insert(1, r#"{"boundary.base": 2.5}"#, AUTHOR, "test", 1).unwrap();
        TopicParamsRepo(&c)
            .insert(2, r#"{"boundary.base": 2.6, "topic.decay_constant_s": 400}"#, AUTHOR, "t", 2)
            .unwrap();
        let (v, c2, b) = current(&c, (&cp, &bp)).unwrap();
        assert_eq!((v, b.base, c2.decay_constant_s), (2, 2.6, 400.0));
        let (v, values) = stored_values(&c).unwrap();
        assert_eq!((v, values[BASE]), (2, 2.6));
    }

    #[test]
    fn a_stored_cycle_reverts_its_change_when_the_pressure_stayed() {
        let c = crate::store::open_in_memory().unwrap();
        let t0 = 1_800_000_000;
        // Every line a switch, for six days.
        for day in 0..6i64 {
            for i in 0..20i64 {
                let topic = if i % 2 == 0 { "a" } else { "b" };
                let at = t0 + day * DAY_S + i * 60;
                ChatRepo(&c).append_at("t", &format!("x{day}{i}"), "user", "x", (None, Some(topic)), at).unwrap();
            }
        }
        let none = BTreeSet::new();
        let first = run_cycle(&c, &none, t0 + 3 * DAY_S, false).unwrap();
        assert_eq!(first.new_version, Some(1));
        let later = run_cycle(&c, &none, t0 + 6 * DAY_S, false).unwrap();
        assert!(
            later.plan.actions.iter().any(|a| matches!(a, Action::Revert { param, .. } if param == BASE)),
            "{later:?}"
        );
        let rows = TopicAdjustmentsRepo(&c).log().since(0).unwrap();
        assert!(rows[0].reverted_at.is_some(), "{rows:?}");
        let (_, values) = stored_values(&c).unwrap();
        assert!((values[BASE] - topics::defaults()[BASE]).abs() < 1e-6, "back where it was: {values:?}");
    }
}
