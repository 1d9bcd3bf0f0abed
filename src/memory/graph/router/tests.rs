use super::*;
use crate::memory::graph::activate::{Edge, Node, Params, Seed, activate};
use crate::memory::graph::routed::Routed;
use crate::memory::graph::run::Run;

fn t(source: i64, target: i64, weight: f64) -> Transfer {
    Transfer { source, target, edge: source * 100 + target, weight, energy: 2.0 }
}

#[test]
fn tiers_follow_the_seed_and_the_faint_band_is_its_own() {
    assert_eq!(tier(0.81), Tier::Reflex);
    assert_eq!(tier(0.8), Tier::Habitual);
    assert_eq!(tier(-0.51), Tier::Reflex);
    assert_eq!(tier(-0.5), Tier::Habitual);
    assert_eq!(tier(0.2), Tier::Habitual);
    assert_eq!(tier(-0.2), Tier::Habitual);
    assert_eq!(tier(0.19), Tier::Faint);
    assert_eq!(tier(-0.15), Tier::Faint);
}

#[test]
fn candidates_skip_reflex_put_habitual_before_faint_and_keep_one_per_pair() {
    let c = candidates([t(1, 2, 0.9), t(1, 3, 0.15), t(1, 4, 0.3), t(1, 5, -0.6), t(1, 4, 0.5)].into_iter());
    let pairs: Vec<(i64, i64, f64)> = c.iter().map(|x| (x.source, x.target, x.weight)).collect();
    assert_eq!(pairs, vec![(1, 4, 0.5), (1, 3, 0.15)]);
    let many: Vec<Transfer> = (0..40).map(|i| t(1, 10 + i, 0.3)).collect();
    assert_eq!(candidates(many.into_iter()).len(), MAX_CANDIDATES);
}

#[test]
fn a_verdict_blends_by_confidence() {
    let sure = Verdict { multiplier: -1.0, confidence: 1.0 };
    assert!((effective(0.5, sure) + 0.5).abs() < 1e-12);
    let unsure = Verdict { multiplier: 0.0, confidence: 0.3 };
    assert!((effective(0.5, unsure) - 0.35).abs() < 1e-12);
    let half = Verdict { multiplier: 1.0, confidence: 0.5 };
    assert!((effective(-0.4, half) - 0.0).abs() < 1e-12, "half a sure +1 cancels a negative edge");
}

#[test]
fn parse_keeps_good_rows_drops_bad_ones_and_rejects_junk() {
    let cands = [t(1, 2, 0.5), t(1, 3, 0.3)];
    let text = r#" {"step": 0, "routes": [
        {"source_id": "1", "target_id": "2", "multiplier": -0.8, "confidence": 1.4},
        {"source_id": "1", "target_id": "9", "multiplier": 0.5, "confidence": 0.9},
        {"source_id": "1", "target_id": "3", "multiplier": 1.5, "confidence": 0.9},
        {"source_id": "1", "target_id": null, "multiplier": 0.5, "confidence": 0.9},
        {"source_id": "1", "target_id": "2", "multiplier": 0.8, "confidence": 0.9}
    ], "new_nodes": [], "prune_candidates": []} "#;
    let g = Graph::new((1..=3).map(|i| Node::new(i, "x")).collect(), &[]);
    let p = parse(text, &cands, &g).unwrap();
    assert_eq!(p.verdicts.len(), 1);
    assert_eq!(
        p.verdicts[&(1, 2)],
        Verdict { multiplier: -0.8, confidence: 1.0 },
        "confidence clamped, first row wins"
    );
    assert_eq!(p.dropped, 4, "unknown target, multiplier out of range, null target, repeat");
    assert!(parse("```json\n{}\n```", &cands, &g).is_err(), "no markdown stripping");
    assert!(parse(r#"{"routes": []}"#, &cands, &g).unwrap_err().contains("step"));
    assert!(parse(r#"{"step": 0, "routes": [{"source_id": 1}]}"#, &cands, &g).is_err());
    assert!(parse("sure! here you go", &cands, &g).is_err());
}

#[test]
fn the_learning_rule_uses_lambda_safety_and_eta_route() {
    // w = 0.9, r = −1, g = 1, y = 1, f = 1: z = 0.9, target = 0.7·0.9 − 0.3 = 0.33,
    // Δw_llm = 0.25·(0.33 − 0.9) = −0.1425.
    let d = route_delta(0.9, Verdict { multiplier: -1.0, confidence: 1.0 }, 1.0, 1.0);
    assert!((d + 0.1425).abs() < 1e-12, "{d}");
    // A weight beyond w_ref is clamped to z = 1 first.
    let d = route_delta(4.0, Verdict { multiplier: 1.0, confidence: 1.0 }, 1.0, 1.0);
    assert!(d.abs() < 1e-12, "{d}");
    // No confidence, no move; a bad outcome reverses the direction.
    assert_eq!(route_delta(0.5, Verdict { multiplier: 1.0, confidence: 0.0 }, 1.0, 1.0), 0.0);
    let up = route_delta(0.5, Verdict { multiplier: 1.0, confidence: 1.0 }, 1.0, 0.5);
    let down = route_delta(0.5, Verdict { multiplier: 1.0, confidence: 1.0 }, -1.0, 0.5);
    assert!(up > 0.0 && (up + down).abs() < 1e-12);
}

#[test]
fn learning_adds_the_routed_term_to_stdp_on_routed_edges_only() {
    use crate::memory::graph::learn::{Change, STDP_RATE, learn, learn_routed};
    let g = Graph::new(
        vec![Node::new(1, "a"), Node::new(2, "b")],
        &[Edge { id: 7, source: 1, target: 2, weight: 0.5, both: false }],
    );
    let a = activate(&g, &[Seed { node: 1, energy: 2.5 }], &Params::default());
    assert_eq!(a.steps_of.get(&2), Some(&1), "b fired at step 1 (0.5·2.5 after one leak)");
    let used = [1, 2].into();
    let v = Verdict { multiplier: 1.0, confidence: 1.0 };
    let plain = learn(&g, &a, &used, 1.0);
    let routed = learn_routed(&g, &a, &used, &[(7, v)].into(), 1.0);
    let delta = |ch: &[Change]| {
        ch.iter().find_map(|c| match c {
            Change::Adjust { edge: 7, delta, .. } => Some(*delta),
            _ => None,
        })
    };
    assert!((delta(&plain).unwrap() - STDP_RATE * 0.5).abs() < 1e-12);
    let want = STDP_RATE * 0.5 + route_delta(0.5, v, 1.0, 0.5);
    assert!((delta(&routed).unwrap() - want).abs() < 1e-12);
}

#[test]
fn three_timeouts_in_a_row_switch_the_tier_off_for_25_turns() {
    let mut b = Breaker::default();
    assert!(b.begin_turn());
    b.timed_out();
    b.timed_out();
    b.answered();
    b.timed_out();
    assert_eq!(b.off_turns_left(), 0, "an answer in between ends the run");
    assert!(b.begin_turn());
    b.timed_out();
    assert!(b.begin_turn());
    b.timed_out();
    assert_eq!(b.off_turns_left(), OFF_TURNS);
    for k in 0..OFF_TURNS {
        assert!(!b.begin_turn(), "turn {k} after the trip is off");
    }
    assert!(b.begin_turn(), "back on after 25 turns");
    assert_eq!(b.off_turns_left(), 0);
}

#[test]
fn a_run_with_every_weight_as_stored_is_activate() {
    let g = Graph::new(
        vec![Node::new(1, "a"), Node::new(2, "b"), Node::new(3, "c")],
        &[
            Edge { id: 1, source: 1, target: 2, weight: 0.6, both: true },
            Edge { id: 2, source: 2, target: 3, weight: -0.4, both: false },
        ],
    );
    let seeds = [Seed { node: 1, energy: 2.0 }];
    let mut run = Run::start(&g, &seeds, &Params::default());
    while run.fire() {
        run.spread(|_, w| w);
    }
    assert_eq!(run.finish(), activate(&g, &seeds, &Params::default()));
    // A verdict of −1 on a→b keeps b from firing and inhibits it.
    let mut run = Run::start(&g, &seeds, &Params::default());
    while run.fire() {
        run.spread(|t, w| if t.target == 2 { effective(w, Verdict { multiplier: -1.0, confidence: 1.0 }) } else { w });
    }
    let a = run.finish();
    assert!(a.fired.iter().all(|f| f.node != 2));
    assert_eq!(a.inhibited.first().map(|x| x.0), Some(2));
    let _ = Routed::default();
}

#[test]
fn suggestions_keep_known_ids_and_refuse_the_rest() {
    let g = Graph::new(vec![Node::new(1, "coffee"), Node::new(2, "morning")], &[]);
    let text = r#"{"step": 1, "routes": [], "new_nodes": [
        {"content": "espresso machine", "from_source_ids": ["1", "99"], "initial_in_edges_from": ["2"],
         "proposed_out_edges_to": ["2", "77"], "confidence": 0.8},
        {"content": "latte art", "from_source_ids": ["42"], "confidence": 0.9},
        {"content": "ok", "from_source_ids": ["1"]},
        {"content": "thanks a lot!!", "from_source_ids": ["1"], "confidence": 2}
    ], "prune_candidates": [
        {"node_id": "2", "reason": "stale", "confidence": 0.6},
        {"node_id": "404", "reason": "superseded", "confidence": 0.9}
    ]}"#;
    let p = parse(text, &[], &g).unwrap();
    assert_eq!(p.new_nodes.len(), 2, "{p:?}");
    let n = &p.new_nodes[0];
    assert_eq!(
        (n.name.as_str(), n.from.clone(), n.to.clone(), n.confidence),
        ("espresso machine", vec![1, 2], vec![2], 0.8)
    );
    assert_eq!((p.new_nodes[1].name.as_str(), p.new_nodes[1].confidence), ("thanks a lot", 1.0));
    assert_eq!(p.prunes, vec![PruneSuggestion { node: 2, reason: "stale".into(), confidence: 0.6 }]);
    let refused = p.refused.join("; ");
    for why in
        ["99, 77 left out", "\"latte art\": no existing concept", "\"ok\": content of 2", "prune 404: no such concept"]
    {
        assert!(refused.contains(why), "{why} in {refused}");
    }
}
