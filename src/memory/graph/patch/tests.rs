use super::super::{GraphCache, load};
use crate::SplitMix64;
use crate::store::fixtures::Fixture;
use crate::store::{ConceptsRepo, RelationshipsRepo, open_in_memory};
use rusqlite::Connection;
use std::sync::Arc;

/// The kept copy, brought up to date, is the graph a fresh load builds from the same rows.
fn assert_same_as_fresh(c: &Connection, cache: &GraphCache, what: &str) {
    let kept = cache.graph(c).unwrap();
    let fresh = load(c).unwrap();
    assert_eq!(kept.shape(), fresh.shape(), "{what}");
    assert_eq!(kept.transfer_count(), fresh.transfer_count(), "{what}");
}

fn world() -> Connection {
    let c = open_in_memory().unwrap();
    let f = Fixture(&c);
    for id in 1..=6 {
        f.concept(id, &format!("c{id}"));
    }
    f.edge(1, 2, "related-to", 0.5, false);
    f.edge(2, 3, "related-to", -0.4, true);
    f.edge(3, 1, "is-a", 0.9, false);
    c
}

/// Every kind of write a turn makes (learning's weights and new edges, a confirmed node, a
/// grown node with its edges) and the rarer edge changes (a flipped direction, moved ends, a
/// deletion) are patched in without reading the graph again, and each time the copy equals a
/// fresh load. Before migration 0020 each of these was a full load (~280 ms at 1M memories).
#[test]
fn a_turn_s_writes_are_patched_in_and_match_a_fresh_load() {
    let c = world();
    let (f, edges, concepts) = (Fixture(&c), RelationshipsRepo(&c), ConceptsRepo(&c));
    let cache = GraphCache::new();
    cache.graph(&c).unwrap();
    assert_eq!((cache.loads(), cache.patches()), (1, 0));

    edges.add_weight(1, 0.25, true, 10).unwrap();
    assert_same_as_fresh(&c, &cache, "a learned weight");
    for t in 2..=6 {
        edges.insert_learned(1, t, 0.1 * t as f64, 10).unwrap();
    }
    assert_same_as_fresh(&c, &cache, "learned edges, past the node's room");
    f.set("semantic_relationships", "bidirectional = 1", "id = 1", []);
    assert_same_as_fresh(&c, &cache, "an edge made symmetric");
    f.set("semantic_relationships", "bidirectional = 0", "id = 2", []);
    assert_same_as_fresh(&c, &cache, "a symmetric edge made one-way");
    f.set("semantic_relationships", "source_id = 4, target_id = 5", "id = 3", []);
    assert_same_as_fresh(&c, &cache, "an edge moved to other ends");
    edges.delete(2).unwrap();
    assert_same_as_fresh(&c, &cache, "a deleted edge");
    f.set("semantic_concepts", "probation = 1, threshold = 0.7", "id = 4", []);
    concepts.confirm(4).unwrap();
    assert_same_as_fresh(&c, &cache, "a node's threshold and probation");
    f.concept(7, "grown");
    edges.insert_learned(2, 7, 0.3, 10).unwrap();
    edges.insert_learned(7, 5, -0.2, 10).unwrap();
    assert_same_as_fresh(&c, &cache, "a grown node and its edges");
    assert_eq!(cache.loads(), 1, "no write above needed the whole graph read again");

    // The index of first words that finds the concepts a reply names follows renames and new nodes.
    let reply = "Oat milk and C1, with the grown one and a new idea";
    let named = |g: &super::super::Graph| {
        super::super::learn::used_concepts(reply, g.nodes.iter().map(|n| (n.id, n.name.as_str())))
    };
    assert_eq!(cache.graph(&c).unwrap().named_in(reply), named(&load(&c).unwrap()));
    f.set("semantic_concepts", "name = 'oat milk'", "id = 2", []);
    f.set("semantic_concepts", "name = 'c9'", "id = 1", []);
    f.concept(8, "new idea");
    let kept = cache.graph(&c).unwrap();
    assert_eq!(kept.named_in(reply), [2, 7, 8].into());
    assert_eq!(kept.named_in(reply), named(&load(&c).unwrap()));
    assert_eq!(cache.loads(), 1);
    assert!(cache.patches() >= 8);

    concepts.soft_delete(3, 20).unwrap();
    assert_same_as_fresh(&c, &cache, "a forgotten concept");
    assert_eq!(cache.loads(), 2, "a concept leaving the graph is a full load");
}

/// Random writes of every kind, checked against a fresh load after each batch.
#[test]
fn random_writes_keep_the_copy_equal_to_a_fresh_load() {
    let c = world();
    let (f, edges, concepts) = (Fixture(&c), RelationshipsRepo(&c), ConceptsRepo(&c));
    let cache = GraphCache::new();
    let mut rng = SplitMix64(0x6EA9);
    let mut next_concept = 7;
    for round in 0..60 {
        for _ in 0..1 + rng.below(6) {
            let ids: Vec<i64> = f.values("semantic_relationships", "id", "", []);
            let live: Vec<i64> = f.values("semantic_concepts", "id", "deleted_at IS NULL", []);
            let pick = |rng: &mut SplitMix64, v: &[i64]| v[rng.below(v.len())];
            match rng.below(7) {
                0 | 1 if !ids.is_empty() => {
                    edges.add_weight(pick(&mut rng, &ids), rng.next_f64() - 0.5, true, round).unwrap()
                }
                2 => {
                    let (s, t) = (pick(&mut rng, &live), pick(&mut rng, &live));
                    f.edge(
                        s,
                        t,
                        &format!("r{round}-{}", rng.below(1000)),
                        rng.next_f64() * 2.0 - 1.0,
                        rng.below(2) == 0,
                    );
                }
                3 if !ids.is_empty() => {
                    let both = rng.below(2);
                    f.set(
                        "semantic_relationships",
                        "bidirectional = ?1",
                        "id = ?2",
                        [both as i64, pick(&mut rng, &ids)],
                    );
                }
                4 if !ids.is_empty() => edges.delete(pick(&mut rng, &ids)).unwrap(),
                5 => {
                    f.concept(next_concept, &format!("c{next_concept}"));
                    let other = pick(&mut rng, &live);
                    edges.insert_learned(other, next_concept, 0.3, round).unwrap();
                    next_concept += 1;
                }
                _ => {
                    let id = pick(&mut rng, &live);
                    f.set(
                        "semantic_concepts",
                        "threshold = ?1",
                        "id = ?2",
                        rusqlite::params![rng.next_f64() + 0.5, id],
                    );
                    concepts.confirm(id).unwrap();
                }
            }
        }
        assert_same_as_fresh(&c, &cache, &format!("round {round}"));
    }
    assert_eq!(cache.loads(), 1);
}

/// The log is trusted only when it accounts for every version step: too many writes, or a gap
/// in it (a pruned log), and the copy is read afresh; so is a concept that comes back below the
/// highest id, which a patch cannot place.
#[test]
fn a_copy_the_log_cannot_bring_up_to_date_is_read_afresh() {
    let c = world();
    let (f, edges) = (Fixture(&c), RelationshipsRepo(&c));
    let cache = GraphCache::new();
    cache.graph(&c).unwrap();
    for _ in 0..=super::super::cache::MAX_PATCH {
        edges.add_weight(1, 0.0001, false, 1).unwrap();
    }
    assert_same_as_fresh(&c, &cache, "too far behind");
    assert_eq!((cache.loads(), cache.patches()), (2, 0));

    edges.add_weight(1, 0.1, false, 2).unwrap();
    edges.add_weight(3, 0.1, false, 2).unwrap();
    let newest = crate::store::GraphLogRepo(&c).mark().unwrap().seq;
    f.remove("graph_changes", "seq = ?1", [newest]);
    assert_same_as_fresh(&c, &cache, "a gap in the log");
    assert_eq!((cache.loads(), cache.patches()), (3, 0));

    f.set("semantic_concepts", "deleted_at = 5", "id = 5", []);
    cache.graph(&c).unwrap();
    f.set("semantic_concepts", "deleted_at = NULL", "id = 5", []);
    assert_same_as_fresh(&c, &cache, "a concept back below the highest id");
    assert_eq!(cache.loads(), 5);
}

/// A copy another caller still holds (an earlier turn's activation) is not changed under it:
/// the patch goes to a clone.
#[test]
fn a_copy_held_elsewhere_is_left_as_it_was() {
    let c = world();
    let cache = GraphCache::new();
    let before = cache.graph(&c).unwrap();
    RelationshipsRepo(&c).add_weight(1, 0.25, true, 10).unwrap();
    let after = cache.graph(&c).unwrap();
    assert!(!Arc::ptr_eq(&before, &after));
    assert!((before.outgoing(1).next().unwrap().1 - 0.5).abs() < 1e-12, "the held copy keeps its weight");
    assert!((after.outgoing(1).next().unwrap().1 - 0.75).abs() < 1e-12);
    assert_eq!((cache.loads(), cache.patches()), (1, 1));
}
