use super::*;
use crate::cognition::router::RouterSignals;
use crate::cognition::router::calibration::labelled_set;

/// The labelled set as a window of stored decisions (signals as the snapshot stores them).
fn window() -> Vec<RoutingRecord> {
    labelled_set()
        .into_iter()
        .enumerate()
        .map(|(i, x)| {
            let mut r = crate::cognition::router::stats::tests::row("RESPOND", None, false, i as i64);
            r.signal_snapshot = serde_json::to_value(RouterSignals::from_text(x.text, &x.context)).unwrap().into();
            r.previous_mode = x.previous_mode.map(|m| m.as_str().to_string());
            r
        })
        .collect()
}

fn collapsed() -> RouterWeights {
    let mut w = RouterWeights::default();
    w.respond.base = -5.0;
    w
}

#[test]
fn a_move_that_empties_a_mode_is_vetoed_with_its_reason() {
    let w = replayable(&window());
    assert_eq!(w.len(), labelled_set().len(), "every stored snapshot reads back");
    let why = veto(&w, &RouterWeights::default(), &collapsed()).expect("RESPOND collapses");
    assert!(why.starts_with(&format!("mode distribution over {} decisions: ", w.len())), "{why}");
    assert!(why.contains("RESPOND") && why.contains("→ 0.0 %"), "{why}");
}

#[test]
fn a_move_that_keeps_or_heals_the_distribution_is_not_vetoed() {
    let w = replayable(&window());
    assert_eq!(veto(&w, &RouterWeights::default(), &RouterWeights::default()), None);
    // Back from the collapse: every mode ends nearer its healthy range.
    assert_eq!(veto(&w, &collapsed(), &RouterWeights::default()), None);
    // Pre-routed decisions keep their mode whatever the weights.
    let fixed: Vec<RoutingRecord> = window()
        .into_iter()
        .map(|mut r| {
            r.pre_routed = true;
            r.selected_mode = "RESPOND".into();
            r
        })
        .collect();
    assert_eq!(veto(&replayable(&fixed), &RouterWeights::default(), &collapsed()), None);
}
