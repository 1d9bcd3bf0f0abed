//! The topic stability regulator replayed on real chit-chat (`--chitchat-regulate`,
//! docs/cognition.md §5.6).
//!
//! Calibration: the even-numbered sessions are played as days of use, five sessions (each its own
//! thread, one message every `STEP_S` seconds) a day, twice over. Each message is filed the way
//! the app files it, with the parameters the regulator has set so far; after every day from the
//! third on, one cycle of the regulator's law (`topics_cycle::plan_cycle`, the function the
//! background worker and `topics regulate` run) looks at the last three days and moves, keeps or
//! reverts, exactly as the stored cycle would. Report: the odd-numbered sessions, scored with the
//! defaults and with the regulator's final values: Pk, boundary F1, and the health signals the
//! regulator watches.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Result;
use chalie::cognition::boundary::BoundaryParams;
use chalie::cognition::stability::topics::{self, DAY_S, Filed, Health};
use chalie::cognition::stability::topics_cycle::{plan_cycle, reason};
use chalie::cognition::stability::{Action, Change};
use chalie::cognition::topic::ClassifierParams;

use super::chitchat::assign_app;
use super::{STEP_S, Stream, System, T0, evaluate_with, window_k};

const SESSIONS_PER_DAY: usize = 5;
const PASSES: usize = 2;

fn system(values: &BTreeMap<String, f64>) -> System {
    let (mut c, mut b) = (ClassifierParams::default(), BoundaryParams::default());
    topics::apply(values, &mut c, &mut b);
    System::Adaptive(c, b)
}

/// The messages of `sessions` as the app would store them: (thread, topic, time).
fn filed(sessions: &[Stream], vectors: &[Vec<f32>], system: &System, tag: &str, start: i64) -> Vec<Filed> {
    let mut out = Vec::new();
    for (k, s) in sessions.iter().enumerate() {
        let (_, topics) = assign_app(s, vectors, system);
        for (i, t) in topics.iter().enumerate() {
            if let Some(t) = t {
                out.push(Filed { thread: format!("{tag}-{k}"), topic: t.to_string(), at: start + STEP_S * i as i64 });
            }
        }
    }
    out
}

/// Carries out a plan on the values and the history, as `topics_cycle::run_cycle` does in the store.
fn carry_out(actions: &[Action], values: &mut BTreeMap<String, f64>, history: &mut Vec<Change>, now: i64) {
    for a in actions {
        match a {
            Action::Adjust { param, old, new, pressure, value, .. } => {
                values.insert(param.clone(), *new);
                let id = history.len() as i64 + 1;
                history.push(Change {
                    id,
                    param: param.clone(),
                    old: *old,
                    new: *new,
                    pressure: pressure.clone(),
                    before: *value,
                    at: now,
                    closed: false,
                    reverted_at: None,
                    progress: None,
                });
            }
            Action::Revert { change_id, param, to, .. } => {
                values.insert(param.clone(), *to);
                if let Some(c) = history.iter_mut().find(|c| c.id == *change_id) {
                    c.closed = true;
                    c.reverted_at = Some(now);
                }
            }
            Action::Keep { change_id, .. } => {
                if let Some(c) = history.iter_mut().find(|c| c.id == *change_id) {
                    c.closed = true;
                }
            }
        }
    }
}

fn show(h: &Health) -> String {
    format!(
        "switch {:.3}  lifespan {:>5}  fragmentation {:.3}",
        h.switch_frequency,
        h.mean_lifespan_s.map_or("-".into(), |l| format!("{l:.0}s")),
        h.fragmentation
    )
}

pub fn main(dev: &[Stream], held_out: &[Stream], vectors: &[Vec<f32>]) -> Result<()> {
    let defaults = topics::defaults();
    let mut values = defaults.clone();
    let mut history: Vec<Change> = Vec::new();
    let mut days: Vec<Health> = Vec::new();
    println!("== calibration: even sessions, {SESSIONS_PER_DAY} a day, {PASSES} passes");
    for pass in 0..PASSES {
        for chunk in dev.chunks(SESSIONS_PER_DAY) {
            let d = days.len() as i64;
            let start = T0 + d * DAY_S;
            let h = topics::health(&filed(chunk, vectors, &system(&values), &format!("d{d}"), start));
            println!("day {d:>3} (pass {pass}): {:>4} messages  {}", h.messages, show(&h));
            days.push(h);
            if days.len() < topics::PERSIST_DAYS {
                continue;
            }
            let now = start + DAY_S;
            let last = &days[days.len() - topics::PERSIST_DAYS..];
            let (plan, _) = plan_cycle(last, &values, &BTreeSet::new(), history.clone(), now);
            if !plan.actions.is_empty() {
                println!("   cycle: {}", reason(&plan.actions));
            }
            carry_out(&plan.actions, &mut values, &mut history, now);
        }
    }
    println!("\nregulated values (default → final):");
    for (name, v) in &values {
        println!("  {name:<24} {:>9.4} → {v:.4}", defaults[name]);
    }
    for (title, part) in [("report: odd sessions", held_out), ("calibration: even sessions", dev)] {
        let k = window_k(part);
        println!("\n== {title}: {} sessions, Pk k = {k}", part.len());
        println!("{:<10} {:>6} {:>6} {:>6} {:>6}  health", "params", "Pk", "F1", "P", "R");
        for (name, v) in [("default", &defaults), ("regulated", &values)] {
            let sys = system(v);
            let s = evaluate_with(part, k, |st| {
                let (flags, _) = assign_app(st, vectors, &sys);
                let n = flags.iter().filter(|&&b| b).count();
                (flags, n)
            });
            let h = topics::health(&filed(part, vectors, &sys, "r", T0));
            println!(
                "{name:<10} {:>6.3} {:>6.3} {:>6.3} {:>6.3}  {}",
                s.pk,
                s.f1(),
                s.precision(),
                s.recall(),
                show(&h)
            );
        }
    }
    Ok(())
}
