//! The Routing pane's graph section: what the concept graph fired for the message, with the
//! step and the edge that brought each concept, and what it inhibited.

use super::*;
use crate::vocab::graph::{GraphFiring, GraphReport, GraphSeed};

fn fired(name: &str, step: u8, energy: f64, via: Option<(&str, f64)>) -> GraphFiring {
    GraphFiring { name: name.into(), step, energy, via: via.map(|v| v.0.into()), weight: via.map(|v| v.1) }
}

#[test]
fn the_routing_pane_shows_what_the_graph_fired() {
    let mut a = app();
    user(&mut a, 0, "x1", "my espresso machine is broken again");
    let mut event = routed("x1", Mode::Respond, scores(0.58, 0.2, 0.05, 0.0, -0.3), None, false, "coffee", true);
    let EngineEvent::Routed { graph, .. } = &mut event else { unreachable!() };
    *graph = Some(Box::new(GraphReport {
        seeds: vec![GraphSeed { name: "coffee".into(), energy: 2.0 }],
        fired: vec![
            fired("coffee", 0, 2.0, None),
            fired("morning", 1, 1.8, Some(("coffee", 0.9))),
            fired("routine", 2, 1.17, Some(("morning", 0.65))),
        ],
        inhibited: vec![GraphSeed { name: "decaf".into(), energy: -0.6 }],
        grown: Some("espresso machine".into()),
        router: None,
    }));
    a.on_engine(&ev(1, event));
    let screen = draw(&mut a, 120, 40);
    for want in [
        "graph seeds coffee 2.00",
        "s0 coffee (seed) 2.00",
        "s1 morning \u{2190} coffee (+0.90) 1.80",
        "grew espresso machine",
    ] {
        assert!(screen.contains(want), "{want}:\n{screen}");
    }
    assert!(screen.contains("inhibited decaf -0.60"), "{screen}");
    insta::assert_snapshot!(screen);
}

#[test]
fn nothing_seeded_says_nothing() {
    assert!(crate::tui::panes::routing::graph_lines(&GraphReport::default()).is_empty());
}

#[test]
fn the_routing_pane_says_what_the_router_did_and_when_it_is_off() {
    use crate::vocab::graph::GraphRouting;
    let text = |r: GraphRouting| {
        let g = GraphReport { router: Some(r), ..GraphReport::default() };
        crate::tui::panes::routing::graph_lines(&g).iter().map(|l| l.to_string()).collect::<Vec<_>>().join("\n")
    };
    let on = GraphRouting { mode: "v2".into(), calls: 1, routed: 3, ..GraphRouting::default() };
    assert_eq!(text(on), "  router v2: 1 call, 3 routed");
    let junk =
        GraphRouting { mode: "v2".into(), calls: 1, fallback: Some("junk: not JSON".into()), ..Default::default() };
    assert!(text(junk).contains("junk: not JSON \u{2192} deterministic"));
    let off =
        GraphRouting { mode: "off".into(), off_turns: 25, fallback: Some("timeout".into()), ..Default::default() };
    assert!(text(off).starts_with("  router off (25 more turns, deterministic)"));
}
