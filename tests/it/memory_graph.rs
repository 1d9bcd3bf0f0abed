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
        Ok(())
    })
    .await;

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
