//! Stability regulators (docs/cognition.md §15.2): slow, bounded, reversible tuning of a
//! deterministic stage's parameters from the pressures its health signals report.
//!
//! [`plan`] is the whole control law and is pure: parameters, pressures, the history of past
//! changes and an injected clock in, the actions of one cycle out. It moves at most one
//! parameter per cycle, by at most the policy's step, never a pinned parameter, never a
//! parameter inside its cooldown and never past a hard bound; it re-checks each earlier change
//! once its window has passed and takes the change back when the pressure it targeted did not
//! drop. The routing regulator ([`routing`]) applies a plan to the router weights; any other
//! stage can reuse the same law with its own parameters and signals.

pub mod distribution;
pub mod reflection;
pub mod routing;
pub mod topics;
pub mod topics_cycle;
pub mod worker;

use serde::Serialize;
use std::collections::BTreeMap;

/// The numbers of one regulator.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Policy {
    /// Largest move of a parameter per cycle.
    pub max_step: f64,
    /// Step per unit of severity before the cap (`step = min(severity × gain, max_step)`).
    pub gain: f64,
    /// A parameter moved (or reverted) this recently is left alone.
    pub cooldown_s: i64,
    /// How long after a change its pressure is measured again.
    pub recheck_after_s: i64,
    /// Fewer observations than this in the window: no cycle (nothing can be judged).
    pub min_samples: usize,
}

/// A tunable parameter as the regulator sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Param {
    pub name: String,
    pub value: f64,
    pub min: f64,
    pub max: f64,
    /// Set by the user (config): never moved.
    pub pinned: bool,
}

/// A health signal above its threshold and the parameters that answer it, first choice first
/// (the next is tried when the first is pinned, cooling down or at its bound).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pressure {
    pub name: String,
    pub value: f64,
    pub threshold: f64,
    /// `(parameter, direction)`: +1.0 raises it, −1.0 lowers it.
    pub controls: Vec<(String, f64)>,
}

impl Pressure {
    /// How far over its threshold, relative to the threshold (0 when not over).
    pub fn severity(&self) -> f64 {
        if self.threshold <= 0.0 {
            return (self.value - self.threshold).max(0.0);
        }
        ((self.value - self.threshold) / self.threshold).max(0.0)
    }
}

/// An earlier change, as the history gives it back.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    pub id: i64,
    pub param: String,
    pub old: f64,
    pub new: f64,
    pub pressure: String,
    /// The pressure's value when the change was made.
    pub before: f64,
    pub at: i64,
    /// Already re-checked (kept or reverted).
    pub closed: bool,
    pub reverted_at: Option<i64>,
    /// The pressure's progress measure when the change was made (`"<pressure>:progress"` in the
    /// metrics: lower is better), for a pressure whose value moves in discrete jumps.
    #[serde(default)]
    pub progress: Option<f64>,
}

/// The metric that tells whether a change moved its pressure's cases toward a fix before any
/// case flipped (e.g. how far the misrouted decisions' wanted mode trailed).
pub fn progress_key(pressure: &str) -> String {
    format!("{pressure}:progress")
}

/// One thing a cycle does.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    Adjust {
        param: String,
        old: f64,
        new: f64,
        pressure: String,
        value: f64,
        threshold: f64,
        severity: f64,
    },
    /// The change's pressure did not drop: the parameter goes back by the change's step.
    Revert {
        change_id: i64,
        param: String,
        from: f64,
        to: f64,
        pressure: String,
        before: f64,
        after: f64,
    },
    /// The change's pressure dropped: it stays.
    Keep {
        change_id: i64,
        pressure: String,
        before: f64,
        after: f64,
    },
}

/// The outcome of a cycle's planning.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Plan {
    pub actions: Vec<Action>,
    /// Why each pressure over its threshold was not acted on, one line each.
    pub skipped: Vec<String>,
    /// Why the cycle did nothing at all (too few observations).
    pub idle: Option<String>,
}

/// What a `regulate` command prints after its own header: why nothing ran, one line per
/// action, each pressure left alone, and what was stored (`stored`, when a version was).
pub fn describe_plan(
    out: &mut String,
    plan: &Plan,
    line: impl Fn(&Action) -> String,
    stored: Option<String>,
    dry_run: bool,
) {
    if let Some(why) = &plan.idle {
        out.push_str(&format!("\nno cycle: {why}"));
    }
    for a in &plan.actions {
        out.push_str(&format!("\n{}", line(a)));
    }
    for s in &plan.skipped {
        out.push_str(&format!("\nnot acted on: {s}"));
    }
    match (stored, dry_run) {
        (Some(s), _) => out.push_str(&format!("\n{s}")),
        (None, true) => out.push_str("\ndry run: nothing stored"),
        (None, false) if plan.idle.is_none() => out.push_str("\nno change"),
        _ => {}
    }
}

/// Write a cycle's actions to its audit table: an adjustment or a revert moves its value
/// through `set` and is recorded (`progress`: the pressure's progress measure, if it has one),
/// a keep closes its change. True when a value moved, so the caller stores `next_version`.
pub fn record<E: From<crate::store::StoreError>>(
    log: &crate::store::AdjustmentLog<'_>,
    actions: &[Action],
    next_version: u32,
    progress: impl Fn(&str) -> Option<f64>,
    mut set: impl FnMut(&str, f64) -> Result<(), E>,
    now: i64,
) -> Result<bool, E> {
    use serde_json::json;
    let mut moved = false;
    for a in actions {
        match a {
            Action::Adjust { param, old, new, pressure, value, threshold, severity } => {
                set(param, *new)?;
                let m = json!({"before": value, "threshold": threshold, "severity": severity,
                    "version": next_version, "progress": progress(pressure)});
                log.insert(param, *old, *new, pressure, &m, now)?;
                moved = true;
            }
            Action::Revert { change_id, param, to, before, after, .. } => {
                set(param, *to)?;
                log.close(*change_id, &json!({"before": before, "after": after, "verdict": "reverted"}), Some(now))?;
                moved = true;
            }
            Action::Keep { change_id, before, after, .. } => {
                log.close(*change_id, &json!({"before": before, "after": after, "verdict": "kept"}), None)?;
            }
        }
    }
    Ok(moved)
}

/// Values are stored to six decimals, so a step and its revert cancel exactly.
fn round6(v: f64) -> f64 {
    (v * 1e6).round() / 1e6
}

/// One cycle of the control law at `now`. `metrics` holds the current value of every signal a
/// pressure can be named by (over its threshold or not), for the re-checks.
pub fn plan(
    policy: &Policy,
    params: &[Param],
    pressures: &[Pressure],
    metrics: &BTreeMap<String, f64>,
    history: &[Change],
    samples: usize,
    now: i64,
) -> Plan {
    plan_with(policy, params, pressures, metrics, history, samples, now, &|_, _| None)
}

/// A check on a candidate move `(parameter, new value)`: `Some(reason)` refuses it.
pub type Veto<'a> = &'a dyn Fn(&str, f64) -> Option<String>;

/// [`plan`] with a veto on each candidate move (the routing regulator refuses a move that
/// would lower the labelled agreement); a refused control passes to the next.
#[allow(clippy::too_many_arguments)]
pub fn plan_with(
    policy: &Policy,
    params: &[Param],
    pressures: &[Pressure],
    metrics: &BTreeMap<String, f64>,
    history: &[Change],
    samples: usize,
    now: i64,
    veto: Veto<'_>,
) -> Plan {
    let mut out = Plan::default();
    if samples < policy.min_samples {
        out.idle = Some(format!("{samples} observations, fewer than the {} a cycle needs", policy.min_samples));
        return out;
    }
    let mut values: BTreeMap<&str, f64> = params.iter().map(|p| (p.name.as_str(), p.value)).collect();
    let mut last_moved: BTreeMap<&str, i64> = BTreeMap::new();
    for c in history {
        let t = c.reverted_at.unwrap_or(c.at).max(c.at);
        let e = last_moved.entry(c.param.as_str()).or_insert(t);
        *e = (*e).max(t);
    }
    for c in history.iter().filter(|c| !c.closed && now - c.at >= policy.recheck_after_s) {
        let Some(&after) = metrics.get(&c.pressure) else { continue };
        // A step too small to flip a case yet is judged by its progress, as long as the
        // pressure itself did not rise.
        let progressed = c.progress.zip(metrics.get(&progress_key(&c.pressure))).is_some_and(|(b, a)| *a < b - 1e-9);
        if after < c.before || (after <= c.before && progressed) {
            out.actions.push(Action::Keep { change_id: c.id, pressure: c.pressure.clone(), before: c.before, after });
            continue;
        }
        let Some(p) = params.iter().find(|p| p.name == c.param) else { continue };
        let from = values.get(c.param.as_str()).copied().unwrap_or(p.value);
        let to = round6((from - (c.new - c.old)).clamp(p.min, p.max));
        values.insert(p.name.as_str(), to);
        last_moved.insert(p.name.as_str(), now);
        out.actions.push(Action::Revert {
            change_id: c.id,
            param: c.param.clone(),
            from,
            to,
            pressure: c.pressure.clone(),
            before: c.before,
            after,
        });
    }
    let mut over: Vec<&Pressure> = pressures.iter().filter(|p| p.severity() > 0.0).collect();
    over.sort_by(|a, b| b.severity().total_cmp(&a.severity()).then_with(|| a.name.cmp(&b.name)));
    'pressures: for pr in over {
        let severity = pr.severity();
        let step = (severity * policy.gain).min(policy.max_step);
        let mut why = Vec::new();
        for (name, direction) in &pr.controls {
            let Some(p) = params.iter().find(|p| &p.name == name) else {
                why.push(format!("{name} unknown"));
                continue;
            };
            if p.pinned {
                why.push(format!("{name} pinned by the config"));
                continue;
            }
            if let Some(&t) = last_moved.get(name.as_str())
                && now - t < policy.cooldown_s
            {
                why.push(format!("{name} cooling down ({} h left)", (policy.cooldown_s - (now - t) + 3599) / 3600));
                continue;
            }
            let old = values.get(name.as_str()).copied().unwrap_or(p.value);
            let new = round6((old + direction * step).clamp(p.min, p.max));
            if (new - old).abs() < 1e-9 {
                why.push(format!("{name} at its bound"));
                continue;
            }
            if let Some(no) = veto(name, new) {
                why.push(format!("{name} → {new:.3} refused: {no}"));
                continue;
            }
            out.actions.push(Action::Adjust {
                param: name.clone(),
                old,
                new,
                pressure: pr.name.clone(),
                value: pr.value,
                threshold: pr.threshold,
                severity,
            });
            break 'pressures;
        }
        out.skipped.push(format!("{} {:.3} > {:.3}: {}", pr.name, pr.value, pr.threshold, why.join("; ")));
    }
    out
}

#[cfg(test)]
mod tests;
