//! The audit snapshots are built on first read; the bytes must be those the router used to
//! build eagerly inside `route`.

use super::*;
use serde::Serialize;

/// The snapshot as `route` built it before it became lazy: the signals flattened, the derived
/// ones under `derived`, straight into a JSON tree.
#[derive(Serialize)]
struct Eager<'a> {
    #[serde(flatten)]
    signals: &'a RouterSignals,
    derived: DerivedSignals,
}

#[test]
fn lazy_snapshots_are_byte_identical_to_the_eager_ones_on_the_labelled_set() {
    let weights = RouterWeights::default();
    let eager_weights = serde_json::to_string(&serde_json::to_value(weights).unwrap()).unwrap();
    for x in labelled_set() {
        let signals = RouterSignals::from_text(x.text, &x.context);
        let state = RouterState { previous_mode: x.previous_mode, recent_confidences: vec![] };
        let d = route(&signals, &weights, &state, true);
        assert!(!d.signal_snapshot.is_built() && !d.weight_snapshot.is_built(), "route built a snapshot: {}", x.text);
        let eager = serde_json::to_value(Eager { signals: &signals, derived: signals.derived() }).unwrap();
        let lazy = serde_json::to_string(&d.signal_snapshot).unwrap();
        assert_eq!(lazy, serde_json::to_string(&eager).unwrap(), "{}", x.text);
        assert_eq!(serde_json::to_string(&d.weight_snapshot).unwrap(), eager_weights, "{}", x.text);
        // A clone (the routed event's copy) shares the tree built for the row.
        assert!(d.clone().signal_snapshot.is_built());
    }
}

#[test]
fn a_decision_read_back_from_json_carries_the_same_snapshots() {
    let x = &labelled_set()[0];
    let d =
        route(&RouterSignals::from_text(x.text, &x.context), &RouterWeights::default(), &RouterState::default(), true);
    let text = serde_json::to_string(&d).unwrap();
    let back: RoutingDecision = serde_json::from_str(&text).unwrap();
    assert_eq!(back, d);
    assert_eq!(serde_json::to_string(&back).unwrap(), text);
}
