use super::read::load_state;
use super::*;
use crate::store::{
    ConceptFields, ConceptsRepo, EpisodesRepo, NewEdge, NewEpisode, RelationshipsRepo, now_ts, open_in_memory,
};
use crate::store::{JobKind, JobsRepo};
use std::sync::Arc;

/// Ten episodes on "coffee", concepts coffee ↔ mornings (strength 0.9) and eight strong fillers
/// outside the decaying range. With `user_wrote`, the user's last message was just now.
fn world(user_wrote: bool) -> (Db, EventBus, i64) {
    let c = open_in_memory().unwrap();
    let now = now_ts();
    for i in 0..10 {
        let e = NewEpisode {
            intent: "{}",
            context: "{}",
            action: None,
            emotion: None,
            outcome: None,
            gist: "User said coffee helps on early mornings",
            salience: 7,
            freshness: 0.5,
            topic: Some("coffee"),
            thread_id: None,
            exchange_id: None,
            created_at: now - 3600 - i,
            salience_factors: "{}",
            open_loops: "[]",
        };
        EpisodesRepo(&c).insert(&e).unwrap();
    }
    let concept = |name: &str| {
        let f = ConceptFields { name, concept_type: "domain", definition: "", abstraction_level: 3, domain: None };
        ConceptsRepo(&c).insert(&f, "[1]", now - 100).unwrap()
    };
    let (coffee, mornings) = (concept("coffee"), concept("mornings"));
    for i in 0..8 {
        let id = concept(&format!("filler{i}"));
        let s = ConceptsRepo(&c).strength(id).unwrap();
        ConceptsRepo(&c).reinforce(id, 4.0, s.consolidation_count, 0.5, &s.source_episodes, now).unwrap();
    }
    let edge = NewEdge { source: coffee, target: mornings, rel_type: "related", weight: 0.9, bidirectional: true };
    RelationshipsRepo(&c).upsert(&edge, now).unwrap();
    if user_wrote {
        ChatRepo(&c).append("t1", "x1", "user", "hello", None, Some("coffee")).unwrap();
    }
    (Db::spawn(c), EventBus::new(), now)
}

fn opts(quiet: (u8, u8)) -> Options {
    Options { quiet, strategy: Some(Strategy::Decaying), ..Options::default() }
}

#[tokio::test]
async fn a_busy_queue_skips_the_cycle_and_the_cycle_is_on_the_bus() {
    let (db, bus, now) = world(false);
    db.call(|c| JobsRepo(c).enqueue(JobKind::Chunk, &serde_json::json!({}), 3)).await.unwrap();
    let mut rx = bus.subscribe();
    let r = run_cycle(&db, None, &bus, now, 7, &opts((0, 0)), &CancellationToken::new()).await.unwrap();
    assert_eq!(r.skipped.as_deref(), Some("queue busy: chunk"));
    let ev = rx.recv().await.unwrap().event;
    assert!(matches!(ev, EngineEvent::DriftCycle { cycle } if *cycle == r));
    // A turn in flight stops it first.
    let o = Options { turn_in_flight: true, ..opts((0, 0)) };
    let r = run_cycle(&db, None, &bus, now, 7, &o, &CancellationToken::new()).await.unwrap();
    assert_eq!(r.skipped.as_deref(), Some("a turn is in flight"));
}

#[tokio::test]
async fn a_reflected_thought_joins_its_topics_context_without_warming_it() {
    let (db, bus, now) = world(false);
    // Threads already open on both seeds, and no user message: COMMUNICATE and SEED_THREAD
    // are gated, REFLECT wins.
    db.call(|c| {
        for id in [1, 2] {
            CuriosityRepo(c).open("q", Some(id), Some("coffee"), None, 0)?;
        }
        Ok(())
    })
    .await
    .unwrap();
    let r = run_cycle(&db, None, &bus, now, 7, &opts((0, 0)), &CancellationToken::new()).await.unwrap();
    assert_eq!(r.skipped, None, "{r:?}");
    assert_eq!(r.author.as_deref(), Some("template"));
    assert_eq!(r.action.as_deref(), Some("REFLECT"), "{:?}", r.scores);
    assert!(r.energy.unwrap() > 0.6 && r.gate == 0.4);
    let rejected: Vec<&str> = r.scores.iter().filter(|s| s.rejected_by.is_some()).map(|s| s.action.as_str()).collect();
    assert!(rejected.contains(&"COMMUNICATE") && rejected.contains(&"SEED_THREAD"), "{rejected:?}");
    // The decaying seed was rescued a little (+0.1 on 1.0); the other concept was not.
    assert_eq!(r.strategy.as_deref(), Some("decaying"));
    let seed = r.seed.clone().unwrap();
    // coffee is concept 1, mornings 2.
    let (seed_id, other) = if seed == "coffee" { (1, 2) } else { (2, 1) };
    let strengths = db
        .call(move |c| Ok((ConceptsRepo(c).strength(seed_id)?.strength, ConceptsRepo(c).strength(other)?.strength)))
        .await
        .unwrap();
    assert!((strengths.0 - 1.1).abs() < 1e-9 && (strengths.1 - 1.0).abs() < 1e-9, "{strengths:?}");
    // The next turn on "coffee" reads it with its gists; it is not a real gist.
    let ctx = db.call(move |c| GistsRepo(c).for_context("coffee", now + 60, 10)).await.unwrap();
    assert!(ctx.iter().any(|g| g.gist_type == "drift" && g.content.contains("coffee")), "{ctx:?}");
    let topic = crate::store::TopicContext { gists: ctx, ..Default::default() };
    assert_eq!(topic.real_gist_count(), 0);
    assert_eq!(db.call(move |c| GistsRepo(c).live_count(now + 60)).await.unwrap(), 0);
    // Seed and neighbour are cooling down now: the next cycle finds no seed or nothing left.
    let again = run_cycle(&db, None, &bus, now + 60, 8, &opts((0, 0)), &CancellationToken::new()).await.unwrap();
    assert!(again.skipped.is_some(), "{again:?}");
}

#[tokio::test]
async fn communicate_is_deferred_through_quiet_hours_then_delivered() {
    let (db, bus, now) = world(true);
    // The user wrote an hour ago (idle window), quiet hours cover this hour.
    let later = now + 3600;
    let hour = schedule::local_hour(later, 0) as u8;
    let quiet = (hour, (hour + 1) % 24);
    // The chat line was written at the real clock; the cycle runs an hour later, so the user is idle.
    let r = run_cycle(&db, None, &bus, later, 7, &opts(quiet), &CancellationToken::new()).await.unwrap();
    assert_eq!(r.action.as_deref(), Some("COMMUNICATE"), "{r:?}");
    let id = r.thought_id.unwrap();
    let state = db.call(move |c| DriftRepo(c).state_of(id)).await.unwrap();
    assert_eq!(state.as_deref(), Some("deferred"), "{r:?}");
    // Once quiet hours are over, the deferred queue is handled first: it reaches the chat.
    let after = quiet_end(later);
    let mut rx = bus.subscribe();
    run_cycle(&db, None, &bus, after, 9, &opts(quiet), &CancellationToken::new()).await.unwrap();
    let state = db.call(move |c| DriftRepo(c).state_of(id)).await.unwrap();
    assert_eq!(state.as_deref(), Some("delivered"));
    assert!(matches!(rx.recv().await.unwrap().event, EngineEvent::DriftThought { thought } if thought.id == id));
    let chat = db.call(|c| ChatRepo(c).recent("t1", 10)).await.unwrap();
    assert!(chat.iter().any(|m| m.role == "assistant"), "{chat:?}");
    // Past 48 h a deferred thought expires instead.
    assert_eq!(db.call(move |c| DriftRepo(c).expire(after + comm::DEFER_TTL_S)).await.unwrap(), 0);
}

fn quiet_end(t: i64) -> i64 {
    (t.div_euclid(3600) + 1) * 3600 + 1
}

#[tokio::test]
async fn the_graph_cache_is_reused_until_the_graph_changes() {
    let (db, _bus, now) = world(false);
    let cache = Arc::new(crate::memory::graph::GraphCache::new());
    let o = Options { graph_cache: crate::memory::graph::GraphHandle::new(cache.clone()), ..opts((0, 0)) };
    let counter = cache.clone();
    let (a, b, c, d, loads_after_two) = db
        .call(move |c| {
            let first = snapshot(c, now, &o)?.0.graph;
            // Drift's own writes (state, a thought) do not touch the graph.
            save_state(c, &State { total: 9, ..State::default() }, now)?;
            let again = snapshot(c, now, &o)?.0.graph;
            let loads_after_two = counter.loads();
            let edge = NewEdge { source: 1, target: 3, rel_type: "related", weight: 0.7, bidirectional: false };
            RelationshipsRepo(c).upsert(&edge, now)?;
            let grown = snapshot(c, now, &o)?.0.graph;
            ConceptsRepo(c).soft_delete(3, now)?;
            let shrunk = snapshot(c, now, &o)?.0.graph;
            Ok((first, again, grown, shrunk, loads_after_two))
        })
        .await
        .unwrap();
    assert!(Arc::ptr_eq(&a, &b), "nothing changed: the same graph");
    assert_eq!(loads_after_two, 1, "an unchanged graph is read once");
    assert!(!Arc::ptr_eq(&b, &c), "a new edge is read in (patched into a clone: the old copy is still held)");
    assert_eq!(c.transfer_count(), a.transfer_count() + 1);
    assert!(!Arc::ptr_eq(&c, &d) && d.node(3).is_none(), "a forgotten concept reloads it");
    assert_eq!((cache.loads(), cache.patches()), (2, 1), "the edge patched in, the forget read whole");
}

#[tokio::test]
async fn a_curiosity_thread_joins_its_topics_next_turn_once() {
    let (db, bus, now) = world(true);
    let later = now + 3600;
    // The user wrote an hour ago, nothing is quiet; the question goes to SEED_THREAD when
    // COMMUNICATE is out (its breaker open).
    db.call(move |c| {
        let mut s = load_state(c)?;
        s.comm.paused_until = Some(later + 3600);
        save_state(c, &s, now)
    })
    .await
    .unwrap();
    let r = run_cycle(&db, None, &bus, later, 7, &opts((0, 0)), &CancellationToken::new()).await.unwrap();
    assert_eq!(r.action.as_deref(), Some("SEED_THREAD"), "{r:?}");
    let question = r.thought.clone().unwrap();
    let (first, second, open) = db
        .call(move |c| {
            let repo = crate::store::TurnRepo(c);
            let first = repo.topic_context("coffee", later + 60)?;
            let second = repo.topic_context("coffee", later + 120)?;
            Ok((first, second, CuriosityRepo(c).count_open()?))
        })
        .await
        .unwrap();
    let marked: Vec<&str> =
        first.gists.iter().filter(|g| g.content.contains(&question)).map(|g| g.content.as_str()).collect();
    assert_eq!(marked.len(), 1, "{:?}", first.gists);
    assert!(marked[0].starts_with("[a question I wondered about earlier"), "{marked:?}");
    assert_eq!(first.real_gist_count(), 0, "it does not warm the topic");
    assert!(!second.gists.iter().any(|g| g.content.contains(&question)), "once only");
    assert_eq!(open, 0);
}

/// Self-reflection reads the turn's self-model (an open contradiction is one of its items),
/// and drift adds only what the self-model cannot see (its own breaker).
#[tokio::test]
async fn self_reflection_reads_the_self_model() {
    let (db, _bus, now) = world(false);
    let items = db
        .call(move |c| {
            let quiet = snapshot(c, now, &opts((0, 0)))?.0.self_items;
            let u = crate::store::NewUncertainty {
                a: ("concept", "1".into()),
                b: Some(("concept", "2".into())),
                kind: "contradiction",
                severity: "high",
                context: "drift",
                reasoning: None,
                temporal_signal: false,
                surface_context: None,
                resolved: None,
            };
            crate::store::UncertaintiesRepo(c).insert(&u, now)?;
            let mut s = load_state(c)?;
            s.comm.paused_until = Some(now + 60);
            save_state(c, &s, now)?;
            Ok((quiet, snapshot(c, now, &opts((0, 0)))?.0.self_items))
        })
        .await
        .unwrap();
    assert!(items.0.is_empty(), "{:?}", items.0);
    assert_eq!(
        items.1,
        ["1 contradiction(s) in memory not yet resolved", "my last messages went unanswered, so I am holding back"]
    );
}
