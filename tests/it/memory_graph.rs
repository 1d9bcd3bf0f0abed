//! The concept graph in the turn path (docs/cognition.md §9.4), with the double answering
//! embeddings at the store's dimension so a message can seed concepts: what fired reaches the
//! reply's context, what fired is kept for the next message, and that message's feedback
//! teaches the edges that carried it.

use crate::support::harness::{drain, start_heuristic, system_prompt};
use crate::support::openai_double::{Reply, embedding_of_size};
use chalie::events::EngineEvent;
use chalie::memory::graph::turn::FIRED_NAMESPACE;
use chalie::store::{ConceptFields, ConceptsRepo, KvStateRepo, RelationshipsRepo, VecTable, VectorRepo};

fn coffee_edge_weight(c: &rusqlite::Connection) -> Result<f64, chalie::store::StoreError> {
    let edges = RelationshipsRepo(c).strongest(10)?;
    Ok(edges.iter().find(|e| e.source == "coffee" && e.target == "morning").map_or(f64::NAN, |e| e.weight))
}

#[tokio::test]
async fn a_turn_fires_the_graph_and_the_next_message_teaches_it() {
    let reply = "Perhaps a slow morning, then.";
    let h = start_heuristic(vec![Reply::text(reply), Reply::text(reply), Reply::text(reply), Reply::text(reply)]).await;
    coffee_and_morning(&h).await;

    let mut events = h.bus.subscribe();
    let r = h.say("t", "my coffee machine is broken").await;
    assert_eq!(r.response, reply);
    let graph = drain(&mut events).into_iter().find_map(|e| match e {
        EngineEvent::Routed { graph, .. } => graph,
        _ => None,
    });
    let graph = graph.expect("the routed event says what the graph did");
    assert_eq!(graph.seeds.first().map(|s| s.name.as_str()), Some("coffee"));
    let morning = graph.fired.iter().find(|f| f.name == "morning").expect("morning fired");
    assert_eq!((morning.step, morning.via.as_deref(), morning.weight), (1, Some("coffee"), Some(0.7)));
    let prompts: Vec<String> = h.double.chat_requests().iter().map(|q| q.body.to_string()).collect();
    assert!(
        prompts.iter().any(|p| p.contains("Associated: morning (brought to mind by coffee, 1 step)")),
        "the fired concept is in the reply's context: {:?}",
        h.double.chat_requests().iter().map(system_prompt).collect::<Vec<_>>()
    );
    let xid = r.exchange_id.clone();
    let (kept, w1) =
        h.read(move |c| Ok((KvStateRepo(c).get_text(FIRED_NAMESPACE, &xid)?, coffee_edge_weight(c)?))).await;
    assert!(kept.is_some_and(|k| k.contains("\"used\"")), "what fired is kept for the feedback");

    // "thanks" judges the reply (quality 1, y = 1): coffee→morning carried morning, which the
    // reply used, so it grows by η·y·f(1) = 0.1·1·0.5 over what the turn itself left.
    h.say("t", "thanks, that helps").await;
    let xid = r.exchange_id.clone();
    let (kept, w2) =
        h.read(move |c| Ok((KvStateRepo(c).get_text(FIRED_NAMESPACE, &xid)?, coffee_edge_weight(c)?))).await;
    assert_eq!(kept, None, "applied once");
    assert!((w2 - w1 - 0.05).abs() < 1e-9, "{w1} → {w2}");
}

/// Two concepts joined by a habitual edge (0.7), at the store's dimension; their ids.
pub(crate) async fn coffee_and_morning(h: &crate::support::harness::Harness) -> (i64, i64) {
    let dim = chalie::store::EMBEDDING_DIM;
    h.double.set_embedding_dim(dim);
    h.read(move |c| {
        let mut ids = Vec::new();
        for name in ["coffee", "morning"] {
            let f = ConceptFields { name, concept_type: "topic", definition: name, abstraction_level: 1, domain: None };
            let id = ConceptsRepo(c).insert(&f, "[]", 1)?;
            VectorRepo(c).upsert(VecTable::Concepts, id, &embedding_of_size(name, dim))?;
            ids.push(id);
        }
        RelationshipsRepo(c).insert_learned(ids[0], ids[1], 0.7, 1)?;
        Ok((ids[0], ids[1]))
    })
    .await
}

async fn graph_of(
    h: &crate::support::harness::Harness,
    text: &str,
) -> (chalie::cognition::pipeline::TurnReport, chalie::vocab::graph::GraphReport) {
    let mut events = h.bus.subscribe();
    let r = h.say("t", text).await;
    let g = drain(&mut events).into_iter().find_map(|e| match e {
        EngineEvent::Routed { graph, .. } => graph,
        _ => None,
    });
    (r, *g.expect("the routed event carries the graph"))
}

fn routes(source: i64, target: i64, multiplier: f64) -> Reply {
    let v = serde_json::json!({"step": 0, "routes": [{"source_id": source.to_string(), "target_id": target.to_string(),
        "multiplier": multiplier, "confidence": 1.0, "reason": "negated"}], "new_nodes": [], "prune_candidates": []});
    Reply::text(&v.to_string())
}

#[tokio::test]
async fn the_v2_router_asks_once_per_step_falls_back_on_junk_and_trips_after_three_timeouts() {
    use crate::support::harness::{settings, start_custom};
    use chalie::config::ModelUse;
    let reply = "Perhaps a slow day, then.";
    let mut s = settings(ModelUse::Heuristic);
    s.graph_router = ModelUse::Llm;
    s.graph_router_timeout_ms = 300;
    let h = start_custom(Vec::new(), s, &[]).await;
    let (coffee, morning) = coffee_and_morning(&h).await;
    // One word: the message seeds coffee alone and is too short to grow a node.
    let text = "coffee";

    // A valid batch: the model says −1 with full confidence on coffee→morning, so morning is
    // driven below zero instead of firing.
    h.double.push(routes(coffee, morning, -1.0));
    h.double.push(Reply::text(reply));
    let before = h.double.chat_requests().len();
    let (r, g) = graph_of(&h, text).await;
    assert_eq!(r.response, reply);
    let router = g.router.clone().expect("the router reports");
    assert_eq!((router.mode.as_str(), router.calls, router.routed, router.fallback), ("v2", 1, 1, None), "{g:?}");
    assert!(g.fired.iter().all(|f| f.name != "morning"), "{g:?}");
    assert!(g.inhibited.iter().any(|i| i.name == "morning"), "{g:?}");
    let asked = &h.double.chat_requests()[before];
    assert_eq!(asked.body["temperature"], 0.0);
    assert!(asked.body.to_string().contains("CANDIDATE_EDGES"), "one batched call names the candidates");

    // Junk: routed mechanically, and the report says so.
    h.double.push(Reply::text("Sure! Morning sounds related."));
    h.double.push(Reply::text(reply));
    let (_, g) = graph_of(&h, text).await;
    let router = g.router.clone().unwrap();
    assert!(router.fallback.as_deref().is_some_and(|f| f.starts_with("junk")), "{router:?}");
    assert!(g.fired.iter().any(|f| f.name == "morning"), "mechanical transfer fires morning: {g:?}");

    // Three hard timeouts in a row: the third switches the model tier off for 25 turns.
    for k in 0..3 {
        h.double.push(Reply::Hang);
        h.double.push(Reply::text(reply));
        let (r, g) = graph_of(&h, text).await;
        assert_eq!(r.response, reply, "a timed-out step never costs the reply");
        let router = g.router.unwrap();
        assert_eq!(router.fallback.as_deref(), Some("timeout"));
        assert!(g.fired.iter().any(|f| f.name == "morning"), "timeout routes mechanically");
        assert_eq!(router.mode, if k < 2 { "v2" } else { "off" });
        assert_eq!(router.off_turns, if k < 2 { 0 } else { 25 });
    }
    for k in 0..25 {
        h.double.push(Reply::text(reply));
        let before = h.double.chat_requests().len();
        let (_, g) = graph_of(&h, text).await;
        let router = g.router.unwrap();
        assert_eq!((router.mode.as_str(), router.calls), ("off", 0), "turn {k} of the 25");
        assert_eq!(h.double.chat_requests().len(), before + 1, "only the reply asked the model");
    }
    h.double.push(routes(coffee, morning, 1.0));
    h.double.push(Reply::text(reply));
    let (_, g) = graph_of(&h, text).await;
    let router = g.router.unwrap();
    assert_eq!((router.mode.as_str(), router.calls, router.routed), ("v2", 1, 1), "back on after 25 turns");
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum()
}

/// Neurogenesis through the real turn (docs/cognition.md §9.4.5): a message whose nearest
/// concept is inside the novelty band grows a probationary node named after its first content
/// phrase, with the deterministic id, and an edge from each seed; greetings grow nothing.
#[tokio::test]
async fn a_novel_message_grows_a_probationary_node_through_the_turn() {
    use chalie::memory::graph::grow::{self, GROWN_THRESHOLD, NOISE, NOVEL_MAX, SEED_EDGE};
    let reply = "That sounds like a good find.";
    let h = start_heuristic((0..8).map(|_| Reply::text(reply)).collect()).await;
    let (coffee, _) = coffee_and_morning(&h).await;
    let text = "coffee beans from the old harbour market";
    // Seven hashed words, one of them "coffee": cosine 1/√7 ≈ 0.38 to coffee, none to morning.
    let dim = chalie::store::EMBEDDING_DIM;
    let sim = cosine(&embedding_of_size(text, dim), &embedding_of_size("coffee", dim));
    assert!(sim > NOISE + 0.05 && sim < NOVEL_MAX - 0.05, "the test is void: cosine {sim}");

    let (_, g) = graph_of(&h, text).await;
    let seeds: Vec<&str> = g.seeds.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(seeds, ["coffee"], "{g:?}");
    assert_eq!(g.grown.as_deref(), Some("coffee beans"), "the routed event names the grown node: {g:?}");
    let key = grow::graph_key("coffee beans");
    let (id, graph, edges) = h
        .read(move |c| {
            let id = ConceptsRepo(c).by_graph_key(&key)?;
            Ok((id, chalie::memory::graph::load(c)?, RelationshipsRepo(c).graph_edges()?))
        })
        .await;
    let id = id.expect("a node with the deterministic key");
    let node = graph.node(id).expect("the grown node is live");
    assert_eq!((node.name.as_str(), node.probation, node.threshold), ("coffee beans", true, GROWN_THRESHOLD));
    let into: Vec<(i64, f64)> = edges.iter().filter(|e| e.target == id).map(|e| (e.source, e.weight)).collect();
    assert_eq!(into, [(coffee, SEED_EDGE)], "one edge from the one seed (morning is no seed)");
    assert!(edges.iter().all(|e| e.source != id), "nothing leads out of it yet");

    // The same content phrase again is the same node, not a second one.
    let before = graph.len();
    let (_, g) = graph_of(&h, "more coffee beans from the harbour stalls").await;
    assert_eq!(g.grown, None, "{g:?}");
    // Greetings and short fillers never grow a node.
    for filler in ["hello", "thanks", "ok sure", "hi there"] {
        let mut events = h.bus.subscribe();
        h.say("t", filler).await;
        let grown = drain(&mut events).into_iter().find_map(|e| match e {
            EngineEvent::Routed { graph: Some(g), .. } => g.grown,
            _ => None,
        });
        assert_eq!(grown, None, "{filler}");
    }
    let after = h.read(|c| Ok(chalie::memory::graph::load(c)?.len())).await;
    assert_eq!(after, before, "no node grew after the first");
}
