//! The v2 router's `new_nodes` and `prune_candidates` applied in a turn (docs/cognition.md
//! §9.4.11), with the scripted double as the lightweight model: a valid suggestion grows a
//! probationary node, one naming a missing concept or over the turn's budget is dropped and
//! reported in `routed.graph.router`, and a prune suggestion only weakens the edges into a concept.

use crate::support::harness::{Harness, drain, settings, start_custom};
use crate::support::openai_double::Reply;
use chalie::config::ModelUse;
use chalie::events::EngineEvent;
use chalie::memory::graph::grow::graph_key;
use chalie::store::ConceptsRepo;
use serde_json::json;

/// Two concepts joined by a habitual edge (0.7) (`memory_graph`'s setup); their ids and the edge's.
async fn coffee_and_morning(h: &Harness) -> (i64, i64, i64) {
    let (coffee, morning) = crate::memory_graph::coffee_and_morning(h).await;
    let edge = h
        .read(move |c| {
            Ok(chalie::memory::graph::load(c)?.outgoing(coffee).find(|e| e.0 == morning).map_or(-1, |e| e.2))
        })
        .await;
    (coffee, morning, edge)
}

#[tokio::test]
async fn the_models_suggestions_grow_probationary_nodes_within_budget_and_only_weaken_on_prune() {
    let mut s = settings(ModelUse::Heuristic);
    s.graph_router = ModelUse::Llm;
    s.graph_router_timeout_ms = 2000;
    let h = start_custom(Vec::new(), s, &[]).await;
    let (coffee, morning, edge) = coffee_and_morning(&h).await;
    assert!(edge > 0, "the edge is in the graph");
    let answer = json!({
        "step": 0,
        "routes": [{"source_id": coffee.to_string(), "target_id": morning.to_string(), "multiplier": 1.0,
            "confidence": 1.0, "reason": "related"}],
        "new_nodes": [
            {"content": "espresso machine", "from_source_ids": [coffee.to_string()], "confidence": 0.9},
            {"content": "latte art class", "from_source_ids": ["987654"], "confidence": 0.9},
            {"content": "cold brew jar", "from_source_ids": [coffee.to_string()], "proposed_out_edges_to": [morning.to_string()], "confidence": 0.7},
            {"content": "french press", "from_source_ids": [coffee.to_string()], "confidence": 0.8}
        ],
        "prune_candidates": [
            {"node_id": morning.to_string(), "reason": "stale", "confidence": 1.0},
            {"node_id": "123456", "reason": "superseded", "confidence": 0.9}
        ]
    });
    h.double.push(Reply::text(&answer.to_string()));
    h.double.push(Reply::text("A slow morning, then."));
    let mut events = h.bus.subscribe();
    // One word: it seeds coffee and is too short to grow a node of its own.
    h.say("t", "coffee").await;
    let graph = drain(&mut events)
        .into_iter()
        .find_map(|e| match e {
            EngineEvent::Routed { graph, .. } => graph,
            _ => None,
        })
        .expect("the routed event carries the graph");
    let router = graph.router.clone().expect("the router reports");
    assert_eq!((router.mode.as_str(), router.calls, router.fallback.as_deref()), ("v2", 1, None), "{router:?}");
    assert_eq!(router.created, ["espresso machine", "cold brew jar"], "{router:?}");
    assert_eq!(router.weakened, ["morning"], "{router:?}");
    let refused = router.refused.join("; ");
    for why in [
        "\"latte art class\": no existing concept",
        "\"french press\": over the budget of 2 a turn",
        "prune 123456: no such concept",
    ] {
        assert!(refused.contains(why), "{why:?} in {refused}");
    }

    let (created, missing, weight) = h
        .read(move |c| {
            let concepts = ConceptsRepo(c);
            let probation: Vec<i64> = concepts.probationers()?.into_iter().map(|p| p.id).collect();
            let mut created = Vec::new();
            for name in ["espresso machine", "cold brew jar"] {
                let id = concepts.by_graph_key(&graph_key(name))?;
                created.push(id.is_some_and(|id| probation.contains(&id)));
            }
            let missing = ["latte art class", "french press"]
                .iter()
                .map(|n| concepts.by_graph_key(&graph_key(n)))
                .collect::<Result<Vec<_>, _>>()?;
            let g = chalie::memory::graph::load(c)?;
            let weight = g.outgoing(coffee).find(|e| e.0 == morning).map_or(f64::NAN, |e| e.1);
            let alive = g.node(morning).is_some();
            Ok((created, missing, (weight, alive)))
        })
        .await;
    assert_eq!(created, [true, true], "both nodes exist and are probationary");
    assert_eq!(missing, [None, None], "the dropped suggestions made nothing");
    let (w, alive) = weight;
    assert!(alive, "a prune suggestion never deletes the concept");
    assert!(w < 0.5 && w > 0.0, "coffee→morning weakened from 0.7, not removed: {w}");
}
