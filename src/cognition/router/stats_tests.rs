use super::*;
use serde_json::{Value, json};

pub(crate) fn row(mode: &str, label: Option<&str>, tie: bool, at: i64) -> RoutingRecord {
    RoutingRecord {
        id: format!("r{at}"),
        thread_id: Some("t".into()),
        topic: "t".into(),
        exchange_id: Some(format!("x{at}")),
        selected_mode: mode.into(),
        router_confidence: Some(0.3),
        scores: json!({}),
        pre_routed: false,
        tiebreaker_used: false,
        tiebreaker_candidates: tie.then(|| json!(["RESPOND", "CLARIFY"])),
        margin: None,
        effective_margin: None,
        signal_snapshot: Value::Null.into(),
        weight_snapshot: None,
        weights_version: Some(2),
        routing_time_ms: None,
        fallback: None,
        reasoning: None,
        feedback: label.map(|l| json!({"label": l, "quality": 0.5, "correction": false, "cue": ""})),
        reflection: None,
        previous_mode: None,
        created_at: at,
        regulator: None,
        adaptive: None,
    }
}

#[test]
fn an_even_spread_has_entropy_one_and_a_single_mode_zero() {
    let even: Vec<_> = Mode::ALL.iter().enumerate().map(|(i, m)| row(m.as_str(), None, false, i as i64)).collect();
    assert!((routing_stats(&even).entropy - 1.0).abs() < 1e-12);
    let one: Vec<_> = (0..10).map(|i| row("RESPOND", None, false, i)).collect();
    let s = routing_stats(&one);
    assert_eq!(s.entropy, 0.0);
    assert!(s.flags.iter().any(|f| f.starts_with("RESPOND 100.0 % RED FLAG")), "{:?}", s.flags);
    assert!(s.flags.iter().any(|f| f.starts_with("CLARIFY 0.0 % RED FLAG")), "{:?}", s.flags);
    assert_eq!(routing_stats(&[]).entropy, 0.0);
}

#[test]
fn rates_count_ties_and_misroutes_over_their_own_pools() {
    let rows = vec![
        row("RESPOND", Some("missed_clarify"), true, 1),
        row("RESPOND", Some("correct_route"), false, 2),
        row("CLARIFY", Some("missed_clarify"), true, 3), // the detector never says this of a CLARIFY; counted anyway
        row("ACT", Some("thanks"), false, 4),
        row("RESPOND", Some("missed_act"), false, 5),
        row("RESPOND", None, false, 6),
    ];
    let s = routing_stats(&rows);
    assert_eq!((s.decisions, s.labelled), (6, 5));
    assert!((s.tie_break_rate - 2.0 / 6.0).abs() < 1e-12);
    assert!((s.misroute_rate - 3.0 / 5.0).abs() < 1e-12);
    assert!((s.clarify_miss_rate - 1.0 / 4.0).abs() < 1e-12, "non-CLARIFY pool of four");
    assert!((s.act_miss_rate - 1.0 / 4.0).abs() < 1e-12, "non-ACT pool of four");
    assert!((s.respond_misroute_rate - 2.0 / 3.0).abs() < 1e-12);
}

#[test]
fn respond_overuse_needs_misroutes_on_respond() {
    // 18 of 20 RESPOND (90 %), every route fine: a question-heavy user, no pressure.
    let mut rows: Vec<_> = (0..18).map(|i| row("RESPOND", Some("correct_route"), false, i)).collect();
    rows.extend((18..20).map(|i| row("CLARIFY", Some("correct_route"), false, i)));
    assert_eq!(routing_stats(&rows).respond_overuse, 0.0);
    // The same share with a quarter of the RESPOND turns re-explained: 0.90 − 0.75.
    for r in rows.iter_mut().take(5) {
        r.feedback = Some(json!({"label": "missed_clarify"}));
    }
    let s = routing_stats(&rows);
    assert!((s.respond_overuse - 0.15).abs() < 1e-9, "{}", s.respond_overuse);
    assert!(describe(&s).contains("RESPOND misroutes 27.8 %"), "{}", describe(&s));
}
