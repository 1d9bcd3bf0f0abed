//! The router's learning loop end to end: the next message's verdict lands in the triage
//! calibration row, a weights version the stability regulator writes is used from the next
//! turn of a running engine, and `--rerun --weights-version N` replays a stored version.

use crate::support::harness::*;
use crate::support::openai_double::Reply;
use chalie::cognition::router::{DEFAULT_WEIGHTS_VERSION, RouterWeights};
use chalie::store::{RouterWeightsRepo, TurnRepo};
use serde_json::Value;

#[tokio::test]
async fn a_new_weights_version_routes_the_next_turn_and_feedback_fills_the_triage_outcome() {
    let h = start_heuristic(vec![Reply::text("Paris is the capital."), Reply::text("Sorry, here it is again.")]).await;
    let first = h.say("t", "What is the capital of France?").await;
    assert_eq!(h.decision(&first.exchange_id).await.weights_version, Some(i64::from(DEFAULT_WEIGHTS_VERSION)));
    assert_eq!(h.triage_rows(&first.exchange_id).await.len(), 1);

    // The regulator (or anyone) stores a new version while the engine runs.
    let mut w = RouterWeights::default();
    w.clarify.cold_boost = 0.12;
    w.version = DEFAULT_WEIGHTS_VERSION + 1;
    let text = serde_json::to_string(&w).unwrap();
    h.read(move |c| RouterWeightsRepo(c).insert(w.version, &text, "regulator", "test", 1)).await;

    let second = h.say("t", "I meant the capital of the region around Lyon, not the country").await;
    let d = h.decision(&second.exchange_id).await;
    assert_eq!(d.weights_version, Some(i64::from(DEFAULT_WEIGHTS_VERSION + 1)), "picked up at the next turn");
    let snap = d.weight_snapshot.unwrap_or(Value::Null);
    assert_eq!(snap["clarify"]["cold_boost"].as_f64(), Some(0.12), "{snap}");

    // The second message judged the first reply: the label is on the first routing row and
    // on its triage row.
    let fb = h.decision(&first.exchange_id).await.feedback.expect("feedback on the first decision");
    assert_eq!(fb["label"], "missed_clarify");
    let outcomes = h.read(|c| TurnRepo(c).triage_outcomes(0, i64::MAX)).await;
    assert_eq!(outcomes.len(), 1, "{outcomes:?}");
    assert_eq!(outcomes[0].outcome["label"], "missed_clarify");
}
