use super::*;
use crate::cognition::stability::Action;
use crate::cognition::stability::topics_cycle::plan_cycle;

const NOW: i64 = 1_800_000_000;

/// A day of `n` messages in one thread, switching topic every `every` messages, `gap` s apart.
fn day(n: usize, every: usize, gap: i64) -> Vec<Filed> {
    (0..n).map(|i| Filed { thread: "t".into(), topic: format!("topic-{}", i / every), at: i as i64 * gap }).collect()
}

/// A day of `n` messages alternating between two topics, a minute apart: every message a switch.
fn alternating(n: usize) -> Health {
    health(
        &(0..n)
            .map(|i| Filed { thread: "t".into(), topic: format!("topic-{}", i % 2), at: i as i64 * 60 })
            .collect::<Vec<_>>(),
    )
}

fn healthy() -> Health {
    health(&day(40, 8, 60))
}

#[test]
fn health_counts_switches_lifespans_and_one_message_topics() {
    // a a b c c, one minute apart: two switches in four pairs; topics live 60, 0 and 60 s.
    let msgs: Vec<Filed> = ["a", "a", "b", "c", "c"]
        .iter()
        .enumerate()
        .map(|(i, t)| Filed { thread: "t".into(), topic: t.to_string(), at: i as i64 * 60 })
        .collect();
    let h = health(&msgs);
    assert_eq!((h.messages, h.topics), (5, 3));
    assert!((h.switch_frequency - 0.5).abs() < 1e-9);
    assert_eq!(h.mean_lifespan_s, Some(60.0), "the one-message topic has no lifespan");
    assert!((h.fragmentation - 1.0 / 3.0).abs() < 1e-9);
    // Another thread's message between them is no switch of this thread.
    let mut two = msgs.clone();
    two.push(Filed { thread: "u".into(), topic: "z".into(), at: 30 });
    assert!((health(&two).switch_frequency - 0.5).abs() < 1e-9);
}

#[test]
fn a_healthy_stretch_is_no_pressure() {
    let h = healthy();
    assert!(h.switch_frequency > SWITCH_BAND.0 && h.switch_frequency < SWITCH_BAND.1, "{h:?}");
    let (ps, _) = pressures(&[h, h, h]);
    assert!(ps.iter().all(|p| p.severity() == 0.0), "{ps:?}");
}

#[test]
fn too_many_switches_for_three_days_raise_the_boundary_base_by_a_hundredth_of_its_range() {
    let bad = alternating(40);
    let values = defaults();
    let (p, _) = plan_cycle(&[bad, bad, bad], &values, &BTreeSet::new(), Vec::new(), NOW);
    let Some(Action::Adjust { param, old, new, pressure, .. }) = p.actions.first() else { panic!("{p:?}") };
    assert_eq!((param.as_str(), pressure.as_str()), (BASE, "switch_frequency_high"));
    assert!((new - old - 0.025).abs() < 1e-6, "1 % of 1.5–4.0: {old} → {new}");
    assert_eq!(p.actions.len(), 1, "one parameter a cycle");
}

#[test]
fn a_problem_on_two_of_three_days_or_a_quiet_day_is_not_acted_on() {
    let bad = alternating(40);
    let (p, _) = plan_cycle(&[healthy(), bad, bad], &defaults(), &BTreeSet::new(), Vec::new(), NOW);
    assert!(p.actions.is_empty(), "not persistent: {p:?}");
    let quiet = health(&day(9, 1, 60));
    let (p, _) = plan_cycle(&[bad, quiet, bad], &defaults(), &BTreeSet::new(), Vec::new(), NOW);
    assert!(p.actions.is_empty() && p.idle.is_some(), "a day under 10 messages: {p:?}");
    let (p, _) = plan_cycle(&[bad, bad], &defaults(), &BTreeSet::new(), Vec::new(), NOW);
    assert!(p.idle.is_some(), "fewer than three days");
}

#[test]
fn too_few_switches_lower_the_base_and_short_topics_slow_the_decay() {
    // One topic all day, messages 10 s apart: no switches, lifespan 390 s.
    let flat = health(&day(40, 40, 10));
    let (p, _) = plan_cycle(&[flat, flat, flat], &defaults(), &BTreeSet::new(), Vec::new(), NOW);
    assert!(
        matches!(p.actions.first(), Some(Action::Adjust { param, new, old, .. }) if param == BASE && new < old),
        "{p:?}"
    );
    // Topics of 4 messages 10 s apart: lifespan 30 s, under 180.
    let short = health(&day(40, 4, 10));
    let (p, _) = plan_cycle(&[short, short, short], &defaults(), &BTreeSet::new(), Vec::new(), NOW);
    assert!(
        p.actions.iter().any(|a| matches!(a, Action::Adjust { param, new, old, .. } if param == DECAY && new > old)),
        "{p:?}"
    );
}

#[test]
fn a_pinned_or_cooling_base_hands_switches_to_the_static_threshold() {
    let bad = alternating(40);
    let pinned = BTreeSet::from([BASE.to_string()]);
    let (p, _) = plan_cycle(&[bad, bad, bad], &defaults(), &pinned, Vec::new(), NOW);
    assert!(
        matches!(p.actions.first(), Some(Action::Adjust { param, new, old, .. }) if param == SWITCH_THRESHOLD && new < old),
        "{p:?}"
    );
    let values = defaults();
    let recent = Change {
        id: 1,
        param: BASE.into(),
        old: values[BASE],
        new: values[BASE] + 0.025,
        pressure: "switch_frequency_high".into(),
        before: 4.0,
        at: NOW - DAY_S,
        closed: false,
        reverted_at: None,
        progress: None,
    };
    let (p, _) = plan_cycle(&[bad, bad, bad], &values, &BTreeSet::new(), vec![recent], NOW);
    assert!(
        matches!(p.actions.first(), Some(Action::Adjust { param, .. }) if param == SWITCH_THRESHOLD),
        "48 h cooldown: {p:?}"
    );
}

#[test]
fn a_change_whose_pressure_did_not_drop_is_reverted_after_its_window() {
    let bad = alternating(40);
    let values = defaults();
    let (_, metrics) = pressures(&[bad, bad, bad]);
    let change = |at: i64| Change {
        id: 7,
        param: BASE.into(),
        old: values[BASE] - 0.025,
        new: values[BASE],
        pressure: "switch_frequency_high".into(),
        before: metrics["switch_frequency_high"],
        at,
        closed: false,
        reverted_at: None,
        progress: None,
    };
    let (p, _) = plan_cycle(&[bad, bad, bad], &values, &BTreeSet::new(), vec![change(NOW - 2 * DAY_S)], NOW);
    assert!(!p.actions.iter().any(|a| matches!(a, Action::Revert { .. })), "inside its window: {p:?}");
    let (p, _) = plan_cycle(&[bad, bad, bad], &values, &BTreeSet::new(), vec![change(NOW - 3 * DAY_S)], NOW);
    let Some(Action::Revert { to, .. }) = p.actions.first() else { panic!("{p:?}") };
    assert!((to - (values[BASE] - 0.025)).abs() < 1e-6, "back by the change's step: {to}");
    // The same change with a pressure that dropped is kept.
    let fine = healthy();
    let (p, _) = plan_cycle(&[fine, fine, fine], &values, &BTreeSet::new(), vec![change(NOW - 3 * DAY_S)], NOW);
    assert!(matches!(p.actions.first(), Some(Action::Keep { change_id: 7, .. })), "{p:?}");
}

#[test]
fn applied_values_reach_the_classifier_and_detector_within_bounds() {
    let mut c = ClassifierParams::default();
    let mut b = BoundaryParams { long_base: Some(2.5), ..BoundaryParams::default() };
    let base = b.base;
    let values = BTreeMap::from([
        (BASE.to_string(), base + 0.1),
        (LEAK.to_string(), 9.0),
        (DECAY.to_string(), 400.0),
        (SWITCH_THRESHOLD.to_string(), f64::NAN),
    ]);
    apply(&values, &mut c, &mut b);
    assert!((b.base - (base + 0.1)).abs() < 1e-9);
    assert!((b.long_base.unwrap_or(0.0) - 2.6).abs() < 1e-9, "the long-line base moves with it");
    assert_eq!(b.leak, 0.7, "clamped to its bound");
    assert_eq!(c.decay_constant_s, 400.0);
    assert_eq!(c.static_threshold, ClassifierParams::default().static_threshold, "not a number: ignored");
}
