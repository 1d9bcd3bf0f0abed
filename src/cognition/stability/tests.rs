use super::*;

const DAY: i64 = 86_400;

fn policy() -> Policy {
    Policy { max_step: 0.02, gain: 0.05, cooldown_s: 2 * DAY, recheck_after_s: DAY, min_samples: 10 }
}

fn param(name: &str, value: f64) -> Param {
    Param { name: name.into(), value, min: 0.10, max: 0.40, pinned: false }
}

fn pressure(name: &str, value: f64, controls: &[(&str, f64)]) -> Pressure {
    Pressure {
        name: name.into(),
        value,
        threshold: 0.10,
        controls: controls.iter().map(|(n, d)| (n.to_string(), *d)).collect(),
    }
}

fn change(id: i64, param: &str, old: f64, new: f64, pressure: &str, before: f64, at: i64) -> Change {
    Change {
        id,
        param: param.into(),
        old,
        new,
        pressure: pressure.into(),
        before,
        at,
        closed: false,
        reverted_at: None,
        progress: None,
    }
}

fn metrics(pairs: &[(&str, f64)]) -> BTreeMap<String, f64> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

#[test]
fn the_worst_pressure_moves_one_parameter_by_a_capped_step() {
    let params = [param("a", 0.20), param("b", 0.20)];
    let ps = [pressure("mild", 0.11, &[("a", 1.0)]), pressure("bad", 0.40, &[("b", -1.0)])];
    let p = plan(&policy(), &params, &ps, &BTreeMap::new(), &[], 50, 10 * DAY);
    assert_eq!(p.actions.len(), 1, "{p:?}");
    match &p.actions[0] {
        Action::Adjust { param, old, new, severity, .. } => {
            assert_eq!(param, "b");
            assert!((severity - 3.0).abs() < 1e-12);
            assert!((old - new - 0.02).abs() < 1e-9, "severity 3 × 0.05 is capped at 0.02");
        }
        a => panic!("{a:?}"),
    }
    // A mild pressure moves by severity × gain: 0.1 × 0.05.
    let p = plan(&policy(), &params, &ps[..1], &BTreeMap::new(), &[], 50, 10 * DAY);
    assert!(matches!(&p.actions[0], Action::Adjust { new, .. } if (new - 0.205).abs() < 1e-9), "{p:?}");
}

#[test]
fn too_few_samples_do_nothing() {
    let ps = [pressure("bad", 0.9, &[("a", 1.0)])];
    let p = plan(&policy(), &[param("a", 0.2)], &ps, &BTreeMap::new(), &[], 9, 0);
    assert!(p.actions.is_empty() && p.idle.is_some());
}

#[test]
fn pinned_cooling_and_bounded_parameters_fall_through_to_the_next_control() {
    let mut params = vec![param("pinned", 0.2), param("cool", 0.2), param("top", 0.40), param("free", 0.2)];
    params[0].pinned = true;
    let ps = [pressure("x", 0.5, &[("pinned", 1.0), ("cool", 1.0), ("top", 1.0), ("free", 1.0)])];
    let history = [change(1, "cool", 0.18, 0.2, "y", 0.3, 9 * DAY)];
    let p = plan(&policy(), &params, &ps, &metrics(&[("y", 0.1)]), &history, 50, 10 * DAY);
    let adjusted: Vec<&str> = p
        .actions
        .iter()
        .filter_map(|a| match a {
            Action::Adjust { param, .. } => Some(param.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(adjusted, ["free"], "{p:?}");
    // With every control blocked, nothing moves and the reasons are given.
    let blocked = [pressure("x", 0.5, &[("pinned", 1.0), ("cool", 1.0), ("top", 1.0)])];
    let p = plan(&policy(), &params, &blocked, &metrics(&[("y", 0.1)]), &history, 50, 10 * DAY);
    assert!(!p.actions.iter().any(|a| matches!(a, Action::Adjust { .. })), "{p:?}");
    let why = &p.skipped[0];
    assert!(why.contains("pinned") && why.contains("cooling down") && why.contains("at its bound"), "{why}");
    // After the cooldown the parameter may move again.
    let p = plan(&policy(), &params, &blocked, &metrics(&[("y", 0.1)]), &history, 50, 11 * DAY + 1);
    assert!(p.actions.iter().any(|a| matches!(a, Action::Adjust { param, .. } if param == "cool")), "{p:?}");
}

#[test]
fn a_change_that_did_not_help_is_reverted_and_one_that_did_is_kept() {
    let params = [param("a", 0.22), param("b", 0.30)];
    let history = [change(1, "a", 0.20, 0.22, "pa", 0.30, 5 * DAY), change(2, "b", 0.32, 0.30, "pb", 0.30, 5 * DAY)];
    // Not yet due: nothing is judged.
    let early = plan(&policy(), &params, &[], &metrics(&[("pa", 0.5), ("pb", 0.1)]), &history, 50, 5 * DAY + 10);
    assert!(early.actions.is_empty());
    let p = plan(&policy(), &params, &[], &metrics(&[("pa", 0.30), ("pb", 0.20)]), &history, 50, 6 * DAY);
    assert_eq!(p.actions.len(), 2, "{p:?}");
    assert!(matches!(&p.actions[0], Action::Revert { change_id: 1, to, .. } if (to - 0.20).abs() < 1e-12));
    assert!(matches!(&p.actions[1], Action::Keep { change_id: 2, .. }));
    // A reverted parameter is not moved again in the same cycle.
    let ps = [pressure("pa", 0.30, &[("a", 1.0)])];
    let p = plan(&policy(), &params, &ps, &metrics(&[("pa", 0.30), ("pb", 0.2)]), &history, 50, 6 * DAY);
    assert!(!p.actions.iter().any(|a| matches!(a, Action::Adjust { .. })), "{p:?}");
}

#[test]
fn many_cycles_never_leave_the_bounds() {
    let mut params = vec![param("a", 0.39)];
    let mut history: Vec<Change> = Vec::new();
    for day in 0..60 {
        let now = day * DAY;
        let ps = [pressure("pa", 0.9, &[("a", 1.0)])];
        let p = plan(&policy(), &params, &ps, &metrics(&[("pa", 0.05)]), &history, 50, now);
        for a in p.actions {
            match a {
                Action::Adjust { new, old, param, pressure, value, .. } => {
                    params[0].value = new;
                    history.push(Change {
                        id: day,
                        param,
                        old,
                        new,
                        pressure,
                        before: value,
                        at: now,
                        closed: false,
                        reverted_at: None,
                        progress: None,
                    });
                }
                Action::Keep { change_id, .. } => {
                    if let Some(c) = history.iter_mut().find(|c| c.id == change_id) {
                        c.closed = true;
                    }
                }
                Action::Revert { .. } => panic!("the pressure dropped"),
            }
            assert!((0.10..=0.40).contains(&params[0].value));
        }
    }
    assert_eq!(params[0].value, 0.40);
}

#[test]
fn a_change_that_flipped_nothing_yet_is_kept_when_its_cases_moved_toward_a_fix() {
    let params = [param("a", 0.30)];
    let mut c = change(1, "a", 0.28, 0.30, "pa", 0.3, 0);
    c.progress = Some(0.10);
    let keep = |m: &[(&str, f64)]| {
        let p = plan(&policy(), &params, &[], &metrics(m), std::slice::from_ref(&c), 50, DAY);
        matches!(p.actions.first(), Some(Action::Keep { .. }))
    };
    assert!(keep(&[("pa", 0.3), ("pa:progress", 0.08)]), "same rate, smaller shortfall: kept");
    assert!(!keep(&[("pa", 0.3), ("pa:progress", 0.10)]), "no progress: reverted");
    assert!(!keep(&[("pa", 0.35), ("pa:progress", 0.01)]), "the rate rose: reverted whatever the progress");
    assert!(!keep(&[("pa", 0.3)]), "no progress measured: the strict rule");
}

#[test]
fn a_vetoed_move_passes_to_the_next_control() {
    let params = [param("a", 0.30), param("b", 0.30)];
    let ps = [pressure("pa", 0.9, &[("a", 1.0), ("b", 1.0)])];
    let veto = |name: &str, _: f64| (name == "a").then(|| "labelled agreement 99 → 97".to_string());
    let p = plan_with(&policy(), &params, &ps, &metrics(&[]), &[], 50, DAY, &veto);
    assert!(matches!(&p.actions[..], [Action::Adjust { param, .. }] if param == "b"), "{p:?}");
    let all = |_: &str, _: f64| Some("no".to_string());
    let p = plan_with(&policy(), &params, &ps, &metrics(&[]), &[], 50, DAY, &all);
    assert!(p.actions.is_empty() && p.skipped[0].contains("a → 0.320 refused: no"), "{p:?}");
}
