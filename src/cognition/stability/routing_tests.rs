use super::*;
use crate::cognition::router::stats::tests::row;
use serde_json::json;

const T0: i64 = 1_800_000_000;

fn seed(c: &Connection, day_start: i64, missed_clarify: usize, fine: usize) {
    let repo = RoutingRepo(c);
    for i in 0..missed_clarify + fine {
        let label = if i < missed_clarify { "missed_clarify" } else { "correct_route" };
        let mut r = row("RESPOND", Some(label), false, day_start + i as i64 * 60);
        r.id = format!("d{day_start}-{i}");
        repo.insert(&r).unwrap();
    }
}

fn latest(c: &Connection) -> (u32, RouterWeights, String) {
    let v = RouterWeightsRepo(c).latest().unwrap().unwrap();
    (v.version, serde_json::from_str(&v.weights).unwrap(), v.author)
}

#[test]
fn missed_clarifies_raise_cold_boost_once_then_cool_down_then_revert_when_nothing_improved() {
    let c = crate::store::open_in_memory().unwrap();
    let none = BTreeSet::new();
    seed(&c, T0, 8, 12); // 40 % of RESPOND turns re-explained
    let dry = run_cycle(&c, &none, T0 + 3600 * 20, true).unwrap();
    assert!(dry.new_version.is_none() && RouterWeightsRepo(&c).latest().unwrap().is_none(), "dry run stores nothing");
    assert!(matches!(&dry.plan.actions[0], Action::Adjust { param, .. } if param == "clarify.cold_boost"));

    let r = run_cycle(&c, &none, T0 + 3600 * 20, false).unwrap();
    assert_eq!(r.new_version, Some(3), "{}", describe(&r));
    let (v, w, author) = latest(&c);
    let d = RouterWeights::default();
    assert_eq!((v, author.as_str()), (3, AUTHOR));
    assert!((w.clarify.cold_boost - d.clarify.cold_boost - 0.02).abs() < 1e-9);
    w.validate().unwrap();
    let reason = summary(&r);
    assert!(reason.starts_with("clarify.cold_boost 0.100 → 0.120: misroute_rate 0.400 > 0.100"), "{reason}");

    // The next day the pressure is still there: the re-check reverts the change (it did not
    // help), and the parameter is not moved again inside its cooldown.
    seed(&c, T0 + DAY_S, 8, 12);
    let r = run_cycle(&c, &none, T0 + DAY_S + 3600 * 20, false).unwrap();
    assert!(matches!(&r.plan.actions[0], Action::Revert { param, .. } if param == "clarify.cold_boost"), "{r:?}");
    assert!(
        matches!(&r.plan.actions[1], Action::Adjust { param, .. } if param == "clarify.dangling_reference"),
        "the cold boost cools down, so the misroute rate's next lever moves: {r:?}"
    );
    let (v, w, _) = latest(&c);
    assert_eq!(v, 4);
    assert_eq!(w.clarify.cold_boost, d.clarify.cold_boost);
    let rows = RoutingAdjustmentsRepo(&c).log().since(0).unwrap();
    let cold: Vec<_> = rows.iter().filter(|a| a.parameter == "clarify.cold_boost").collect();
    assert_eq!(cold.len(), 1, "a revert closes the change it takes back: {rows:?}");
    assert_eq!(cold[0].reverted_at, Some(T0 + DAY_S + 3600 * 20));
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1].parameter, "clarify.dangling_reference");
}

#[test]
fn a_change_that_helped_is_kept() {
    let c = crate::store::open_in_memory().unwrap();
    seed(&c, T0, 8, 12);
    run_cycle(&c, &BTreeSet::new(), T0 + 3600 * 20, false).unwrap();
    seed(&c, T0 + DAY_S, 1, 19);
    let r = run_cycle(&c, &BTreeSet::new(), T0 + DAY_S + 3600 * 20, false).unwrap();
    assert!(matches!(&r.plan.actions[..], [Action::Keep { .. }]), "{r:?}");
    assert_eq!(r.new_version, None);
    let rows = RoutingAdjustmentsRepo(&c).log().since(0).unwrap();
    assert_eq!(rows[0].metrics.as_ref().and_then(|m| m.get("verdict")), Some(&json!("kept")));
    assert_eq!(rows[0].reverted_at, None);
}

#[test]
fn pinned_parameters_and_thin_days_are_left_alone() {
    let c = crate::store::open_in_memory().unwrap();
    seed(&c, T0, 8, 12);
    let pinned = BTreeSet::from(["clarify.cold_boost".to_string(), "clarify.dangling_reference".to_string()]);
    let r = run_cycle(&c, &pinned, T0 + 3600 * 20, false).unwrap();
    assert!(r.plan.skipped[0].contains("clarify.cold_boost pinned"), "{r:?}");
    assert!(r.plan.skipped[0].contains("clarify.dangling_reference pinned"), "{r:?}");
    // The next pressure's parameter moves instead (all-RESPOND days with 40 % misroutes).
    assert!(matches!(&r.plan.actions[..], [Action::Adjust { param, .. }] if param == "respond.base"), "{r:?}");
    let (_, w, _) = latest(&c);
    assert_eq!(w.clarify.cold_boost, RouterWeights::default().clarify.cold_boost);
    let c = crate::store::open_in_memory().unwrap();
    seed(&c, T0, 5, 4);
    let r = run_cycle(&c, &BTreeSet::new(), T0 + 3600 * 20, false).unwrap();
    assert!(r.plan.idle.is_some() && r.new_version.is_none());
}

#[test]
fn dominant_reflection_dimensions_and_disagreement_are_read() {
    let mut rows: Vec<RoutingRecord> = (0..4).map(|i| row("RESPOND", None, false, i)).collect();
    rows[0].reflection = Some(
        json!({"agree_with_decision": false, "uncertainty_dimensions": [{"dimension": "intent_clarity"}, {"dimension": "intent_clarity"}]}),
    );
    rows[1].reflection =
        Some(json!({"agree_with_decision": true, "uncertainty_dimensions": [{"dimension": "tone_ambiguity"}]}));
    let (dims, disagree) = reflection_shares(&rows);
    assert_eq!(dims["intent_clarity"], 0.5, "counted once per reflection");
    assert_eq!(disagree, Some(0.5));
    let (ps, _) = pressures(&routing_stats(&rows), &dims, disagree, None);
    let p = ps.iter().find(|p| p.name == "reflection:intent_clarity").unwrap();
    assert!(p.severity() > 0.0 && p.controls[0].0 == "clarify.cold_boost");
}

#[test]
fn missed_clarifies_move_the_dangling_reference_term_when_the_cold_boost_cannot_move() {
    let c = crate::store::open_in_memory().unwrap();
    seed(&c, T0, 8, 12);
    let pinned = BTreeSet::from(["clarify.cold_boost".to_string()]);
    let r = run_cycle(&c, &pinned, T0 + 3600 * 20, false).unwrap();
    let d = RouterWeights::default().clarify.dangling_reference;
    assert!(
        matches!(&r.plan.actions[..], [Action::Adjust { param, old, new, pressure, .. }]
            if param == "clarify.dangling_reference" && pressure == "misroute_rate"
                && *old == d && (*new - d - 0.02).abs() < 1e-9),
        "{r:?}"
    );
    let (_, w, author) = latest(&c);
    assert_eq!((w.clarify.cold_boost, author.as_str()), (RouterWeights::default().clarify.cold_boost, AUTHOR));
    assert!((w.clarify.dangling_reference - d - 0.02).abs() < 1e-9);
}
