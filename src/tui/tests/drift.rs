//! The Drift pane: a cycle of this session and a stored thought, Enter on the cycle opens its
//! detail (the thought and who wrote it, seed, path, gate, the action with every score and
//! rejection), Esc comes back.

use super::*;
use crate::tui::keymap::Context;
use crate::vocab::drift::{ActionScore, DriftCycle, Fired};

fn cycle() -> DriftCycle {
    let score = |a: &str, s: f64, why: Option<&str>| ActionScore {
        action: a.into(),
        score: s,
        rejected_by: why.map(str::to_string),
    };
    DriftCycle {
        at: T0 - 30,
        seed: Some("coffee".into()),
        strategy: Some("recent".into()),
        fired: vec![Fired { name: "mornings".into(), energy: 0.63 }, Fired { name: "sleep".into(), energy: 0.41 }],
        energy: Some(0.63),
        gate: 0.4,
        kind: Some("question".into()),
        thought: Some("Does coffee still help on early mornings?".into()),
        author: Some("template".into()),
        action: Some("SEED_THREAD".into()),
        scores: vec![
            score("SEED_THREAD", 0.5, None),
            score("REFLECT", 0.45, None),
            score("COMMUNICATE", 0.0, Some("idle 120 s < 1800 s")),
            score("NOTHING", 0.0, None),
        ],
        effect: Some("curiosity thread opened".into()),
        thought_id: Some(7),
        ..DriftCycle::default()
    }
}

#[test]
fn enter_opens_a_drift_cycle_and_esc_comes_back() {
    let mut a = populated();
    let t = DriftItem {
        id: 7,
        kind: "question".into(),
        content: "Does coffee still help on early mornings?".into(),
        topic: Some("coffee".into()),
        action: Some("SEED_THREAD".into()),
        energy: Some(0.63),
        created_at: T0 - 30,
    };
    a.on_engine(&ev(-30, EngineEvent::DriftThought { thought: t }));
    a.on_engine(&ev(-30, EngineEvent::DriftCycle { cycle: Box::new(cycle()) }));
    a.focus = Focus::Drift;
    a.on_terminal(key(KeyCode::Down));
    a.on_terminal(key(KeyCode::Up));
    assert_eq!(a.drift.selected, 0, "the cycle");
    insta::assert_snapshot!("drift_pane_120x40", draw(&mut a, 120, 40));
    assert_eq!(a.on_terminal(key(KeyCode::Enter)), None);
    assert_eq!(a.context(), Context::Drift);
    let screen = draw(&mut a, 120, 40);
    for want in [
        "Written by the template",
        "Seed: coffee (recent)",
        "Path: coffee → mornings 0.63, sleep 0.41",
        "Gate: energy 0.63 against 0.40, passed",
        "Action: SEED_THREAD: curiosity thread opened",
        "rejected: idle 120 s < 1800 s",
    ] {
        assert!(screen.contains(want), "{want}\n{screen}");
    }
    insta::assert_snapshot!("drift_detail_120x40", screen);
    a.on_terminal(key(KeyCode::Esc));
    assert_eq!(a.context(), Context::View);
    // A stored thought from an earlier session opens with what was kept with it.
    a.on_terminal(key(KeyCode::Down));
    a.on_terminal(key(KeyCode::Down));
    a.on_terminal(key(KeyCode::Enter));
    let screen = draw(&mut a, 120, 40);
    assert!(screen.contains("green tea") && screen.contains("earlier session"), "{screen}");
}
