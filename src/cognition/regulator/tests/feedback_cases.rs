//! The feedback detector on hand-labelled next messages, written as users answer an assistant
//! (not built from the cue lists: several carry no cue and must stay `correct_route`).

use crate::cognition::regulator::feedback::{Exchange, FeedbackLabel, detect};
use crate::vocab::Mode;

fn label(user: &str, mode: Mode, next: &str) -> FeedbackLabel {
    detect(Exchange { user, mode, next }).label
}

#[test]
fn regulator_feedback_hand_labelled() {
    use FeedbackLabel::*;
    let cases: &[(&str, Mode, &str, FeedbackLabel)] = &[
        ("add milk to my list", Mode::Respond, "I asked you to add milk to the shopping list", MissedAct),
        ("add milk to my shopping list", Mode::Respond, "add milk to my shopping list", MissedAct),
        ("book it", Mode::Respond, "I meant the dentist appointment on friday", MissedClarify),
        ("what's a good laptop", Mode::Respond, "to clarify, for video editing under 1000", MissedClarify),
        ("what's a good laptop", Mode::Clarify, "for video editing under 1000", CorrectRoute),
        ("tell me about rust", Mode::Respond, "go on", UnderEngagement),
        ("tell me about rust", Mode::Respond, "And?", UnderEngagement),
        ("tell me about rust", Mode::Respond, "more detail", UnderEngagement),
        ("convert 5 km to miles", Mode::Respond, "thanks, that's exactly it", Thanks),
        ("convert 5 km to miles", Mode::Respond, "Perfect!", Thanks),
        ("summarise this", Mode::Respond, "that's wrong, it was published in 2019", Correction),
        ("summarise this", Mode::Respond, "No, I meant the second chapter", Correction),
        ("summarise this", Mode::Respond, "that's not what I asked", Correction),
        ("summarise this", Mode::Respond, "this is useless, it doesn't help at all", Complaint),
        ("summarise this", Mode::Respond, "thanks but that's wrong", Correction),
        // No cue: moving on, answering a question, filler.
        ("what's the weather", Mode::Respond, "ok and what about tomorrow in Lisbon", CorrectRoute),
        ("do you like jazz", Mode::Respond, "No, not really, I prefer folk", CorrectRoute),
        ("how was your day", Mode::Respond, "I mean, it was fine I guess", CorrectRoute),
        ("remind me to call mum", Mode::Act, "remind me to call mum at 6", CorrectRoute),
        ("I don't understand closures", Mode::Respond, "perfect weather for a walk today", CorrectRoute),
        ("what should I cook", Mode::Respond, "I feel useless in the kitchen honestly", CorrectRoute),
    ];
    let wrong: Vec<_> = cases
        .iter()
        .filter(|(u, m, n, want)| label(u, *m, n) != *want)
        .map(|(u, m, n, w)| (*u, *m, *n, *w, label(u, *m, n)))
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn regulator_feedback_qualities_and_correction_flag() {
    let fb = detect(Exchange { user: "x", mode: Mode::Respond, next: "No, I meant the other one" });
    assert!(fb.correction);
    assert!(fb.quality < 0.5);
    let fb = detect(Exchange { user: "x", mode: Mode::Respond, next: "thank you!" });
    assert!(!fb.correction);
    assert_eq!(fb.quality, 1.0);
    let v = serde_json::to_value(&fb).unwrap();
    assert_eq!(v["label"], "thanks");
}
