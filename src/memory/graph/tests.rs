use super::activate::{Edge, Graph, Node, Params, Seed, activate};
use super::*;

fn graph(nodes: &[(i64, f64)], edges: &[(i64, i64, f64)]) -> Graph {
    let nodes = nodes.iter().map(|&(id, th)| Node { threshold: th, ..Node::new(id, format!("n{id}")) }).collect();
    let edges: Vec<Edge> = edges
        .iter()
        .enumerate()
        .map(|(i, &(s, t, w))| Edge { id: i as i64 + 1, source: s, target: t, weight: w, both: false })
        .collect();
    Graph::new(nodes, &edges)
}

fn seed(node: i64, energy: f64) -> Seed {
    Seed { node, energy }
}

fn fired(a: &Activation) -> Vec<(i64, u8, f64)> {
    let mut v: Vec<_> = a.fired.iter().map(|f| (f.node, f.step, (f.energy * 1e6).round() / 1e6)).collect();
    v.sort_by_key(|x| x.0);
    v
}

const A: i64 = 1;
const B: i64 = 2;
const C: i64 = 3;
const D: i64 = 4;

/// parameters §12.6: a→b 1.5, b→c 1.2, a→d −1.0; seed a 1.0; max_steps 5.
#[test]
fn recorded_chain_fires_in_order_and_inhibits_d() {
    let g = graph(&[(A, 1.0), (B, 1.0), (C, 1.0), (D, 1.0)], &[(A, B, 1.5), (B, C, 1.2), (A, D, -1.0)]);
    let a = activate(&g, &[seed(A, 1.0)], &Params { max_steps: 5, ..Params::default() });
    assert_eq!(fired(&a), [(A, 0, 1.0), (B, 1, 1.35), (C, 2, 1.458)]);
    assert_eq!(a.steps, 3);
    assert_eq!(a.inhibited, [(D, -1.0)]);
    let c = a.fired.iter().find(|f| f.node == C).unwrap();
    assert_eq!((c.seed, c.path.clone()), (A, vec![1, 2]), "provenance: seed a, edges a→b, b→c");
}

#[test]
fn recorded_threshold_leak_convergence_and_cycle() {
    let p = Params::default();
    let g = graph(&[(A, 10.0), (B, 1.0)], &[(A, B, 5.0)]);
    assert!(activate(&g, &[seed(A, 1.0)], &p).fired.is_empty(), "threshold 10: nothing fires");

    let g = graph(&[(A, 1.0), (B, 1.0)], &[(A, B, 0.8)]);
    let a = activate(&g, &[seed(A, 1.0)], &Params { decay: 0.9, ..p });
    assert_eq!(fired(&a), [(A, 0, 1.0)], "a sub-threshold edge does not fire its target");

    let g = graph(&[(A, 1.0), (B, 1.0), (C, 1.5)], &[(A, C, 0.9), (B, C, 0.9)]);
    let a = activate(&g, &[seed(A, 1.0), seed(B, 1.0)], &p);
    assert_eq!(fired(&a), [(A, 0, 1.0), (B, 0, 1.0), (C, 1, 1.62)], "two convergent 0.9 inputs");

    let g = graph(&[(A, 1.0), (B, 1.0)], &[(A, B, 2.0), (B, A, 2.0)]);
    let a = activate(&g, &[seed(A, 1.0)], &Params { max_steps: 5, ..p });
    assert_eq!(fired(&a), [(A, 0, 1.0), (B, 1, 1.8)], "the cycle fires each node once");
    assert_eq!(a.steps, 2);
}

/// The graded read: a sub-threshold neighbour reports how near it came; an inhibited one and
/// an unreached one do not appear; a fired node reports what it held before the leak.
#[test]
fn peak_reads_sub_threshold_nodes_too() {
    let g = graph(&[(A, 1.0), (B, 1.0), (C, 1.0), (D, 1.0)], &[(A, B, 0.55), (A, C, 1.5), (A, D, -0.4)]);
    let a = activate(&g, &[seed(A, 1.0)], &Params::default());
    assert_eq!(fired(&a), [(A, 0, 1.0), (C, 1, 1.35)], "b stays below its threshold");
    assert_eq!(a.peak, [(A, 1.0), (B, 0.55), (C, 1.5)]);
    let far = graph(&[(A, 1.0), (B, 1.0), (C, 1.0)], &[(A, B, 0.9), (B, C, 0.9)]);
    let a = activate(&far, &[seed(A, 1.0)], &Params::default());
    assert_eq!(a.peak, [(A, 1.0), (B, 0.9)], "c is beyond a node that did not fire");
}

#[test]
fn recorded_energy_trace_and_reset() {
    let mut g = graph(&[(A, 1.0)], &[]);
    let a = activate(&g, &[seed(A, 2.5)], &Params { trace_decay: 0.5, ..Params::default() });
    assert_eq!(fired(&a), [(A, 0, 2.5)], "firing energy is the seed energy");
    assert_eq!(a.traces, [(A, 2.5)]);
    g.apply(&a);
    let b = activate(&g, &[], &Params { trace_decay: 0.5, ..Params::default() });
    g.apply(&b);
    assert_eq!(g.node(A).unwrap().trace, 1.25, "trace_decay 0.5 halves it by the next call");

    let mut g = graph(&[(A, 1.0)], &[]);
    let off = Params { reset: false, ..Params::default() };
    let first = activate(&g, &[seed(A, 0.6)], &off);
    assert!(first.fired.is_empty());
    g.apply(&first);
    assert!(activate(&g, &[seed(A, 0.6)], &Params::default()).fired.is_empty(), "reset on: no help");
    // Nothing fired, so the call stopped before any leak: 0.6 is left for the next.
    assert_eq!(fired(&activate(&g, &[seed(A, 0.6)], &off)), [(A, 0, 1.2)], "reset off: leftover 0.6 helps");
}

/// Where the reference differs: a and b both seeded over threshold, a→b 1.0. The reference
/// fires a first and hands b a's energy before b fires (b at 2.0) — but only when a comes first
/// in insertion order; listed the other way round, b fires at 1.0. Here a step reads the state
/// the step began with, so b fires at 1.0 in both orders.
#[test]
fn a_step_is_independent_of_insertion_order() {
    let edges = [(A, B, 1.0), (B, C, 0.6), (A, C, 0.6), (C, D, -2.0)];
    let one = graph(&[(A, 1.0), (B, 1.0), (C, 1.0), (D, 1.0)], &edges);
    let other = graph(&[(D, 1.0), (C, 1.0), (B, 1.0), (A, 1.0)], &edges);
    let seeds = [seed(B, 1.0), seed(A, 1.0)];
    let (x, y) = (activate(&one, &seeds, &Params::default()), activate(&other, &seeds, &Params::default()));
    assert_eq!(fired(&x), fired(&y));
    assert_eq!(x.inhibited, y.inhibited);
    assert_eq!(fired(&x), [(A, 0, 1.0), (B, 0, 1.0), (C, 1, 1.08)]);
    assert_eq!(x.inhibited, [(D, -2.16)]);
}

#[test]
fn symmetric_edges_run_both_ways_and_inhibition_keeps_a_node_out() {
    let nodes = vec![Node::new(A, "a"), Node::new(B, "b"), Node::new(C, "c")];
    let edges = [
        Edge { id: 7, source: A, target: B, weight: 1.2, both: true },
        Edge { id: 8, source: C, target: B, weight: -0.9, both: true },
    ];
    let g = Graph::new(nodes, &edges);
    assert_eq!(g.transfer_count(), 4);
    assert_eq!(fired(&activate(&g, &[seed(B, 1.0)], &Params::default())), [(A, 1, 1.08), (B, 0, 1.0)]);
    let a = activate(&g, &[seed(A, 1.0), seed(C, 1.0)], &Params::default());
    assert_eq!(fired(&a), [(A, 0, 1.0), (C, 0, 1.0)], "b gets 1.2 − 0.9 = 0.3 and stays below");
    let a = activate(&g, &[seed(C, 1.0), seed(B, 0.5)], &Params::default());
    assert!(a.inhibited.iter().any(|x| x.0 == B));
    // b is inhibited at step 0 (0.5 − 0.9); a fires at step 1 and gives it 5.4, too late.
    let g = graph(&[(A, 1.0), (B, 1.0), (C, 1.0), (D, 1.0)], &[(C, B, -0.9), (D, A, 2.0), (A, B, 3.0)]);
    let later = activate(&g, &[seed(C, 1.0), seed(B, 0.5), seed(D, 1.0)], &Params::default());
    assert_eq!(fired(&later), [(A, 1, 1.8), (C, 0, 1.0), (D, 0, 1.0)], "an inhibited node does not fire later");
    assert_eq!(later.inhibited.iter().map(|x| x.0).collect::<Vec<_>>(), [B], "inhibited once, it stays so");
}

#[test]
fn top_k_and_seeds_from_similarity() {
    let nodes: Vec<(i64, f64)> = (1..=20).map(|i| (i, 1.0)).collect();
    let edges: Vec<(i64, i64, f64)> = (2..=20).map(|i| (1, i, 2.0 + i as f64 / 100.0)).collect();
    let a = activate(&graph(&nodes, &edges), &[seed(1, 1.0)], &Params { top_k: 5, ..Params::default() });
    assert_eq!(a.fired.len(), 5);
    assert_eq!(a.fired_total, 20);
    assert_eq!(a.fired[0].node, 20, "strongest first");

    let s = seeds_from_similarity(&[(1, 0.5), (2, 0.8), (3, 0.2)]);
    assert_eq!(s, [Seed { node: 2, energy: 2.0 }, Seed { node: 1, energy: 1.25 }]);
    assert!(seeds_from_similarity(&[(1, 0.1)]).is_empty());
}

#[test]
fn the_store_round_trip_reads_both_signs_and_keeps_traces() {
    let c = crate::store::open_in_memory().unwrap();
    let f = crate::store::fixtures::Fixture(&c);
    for (id, name) in [(1, "coffee"), (2, "morning"), (3, "decaf")] {
        f.concept(id, name);
    }
    for (s, t, ty, w) in [(1, 2, "related-to", 1.5), (1, 3, "contradicts", -1.0)] {
        f.edge(s, t, ty, w, true);
    }
    let got = super::activate(&c, Cue::Concepts(&[2], 1.0), &Params::default()).unwrap();
    assert_eq!(fired(&got.activation), [(1, 1, 1.35), (2, 0, 1.0)], "a symmetric edge stored 1→2 runs 2→1");
    assert_eq!(got.activation.inhibited, [(3, -1.35)], "the negative edge is kept and inhibits");
    persist(&c, &got.activation, 100).unwrap();
    let nodes = crate::store::ConceptsRepo(&c).graph_nodes().unwrap();
    assert_eq!(nodes.iter().map(|n| n.trace).collect::<Vec<_>>(), [1.35, 1.0, 0.0]);
    let lines = context::context_lines(&got, 200);
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0].text, "coffee (brought to mind by morning, 1 step)");
    assert!(context::context_lines(&got, 3).is_empty(), "the budget holds");
}

mod learning {
    use super::super::learn::{self, Change, stdp_pairs, timing};
    use super::*;
    use std::collections::HashSet;

    /// parameters §12.6 STDP vectors.
    #[test]
    fn recorded_stdp_vectors() {
        let both: HashSet<(i64, i64)> = [(A, B), (B, A)].into();
        let (d, _) = stdp_pairs(&[(A, 0), (B, 0)], &both, 0.1, 1.0, 10);
        assert!(d.iter().all(|(_, x)| (x - 0.05).abs() < 1e-12), "simultaneous pair: Δ = 0.05");
        let (d, _) = stdp_pairs(&[(A, 0), (B, 1)], &both, 0.1, 1.0, 10);
        let get = |k| d.iter().find(|(p, _)| *p == k).unwrap().1;
        assert!(get((A, B)) > 0.0 && get((B, A)) < 0.0 && get((A, B)).abs() > get((B, A)).abs());
        let (_, created) = stdp_pairs(&[(A, 0), (B, 1), (C, 2)], &HashSet::new(), 0.61, 1.0, 2);
        let expect =
            [(A, B), (B, C)].map(|(source, target)| Change::Create { source, target, weight: 0.61 * 0.5 * 0.5 });
        assert_eq!(created.len(), 2);
        for (got, want) in created.iter().zip(expect) {
            let (Change::Create { source, target, weight }, Change::Create { source: s, target: t, weight: w }) =
                (got, want)
            else {
                panic!("{got:?}")
            };
            assert_eq!((*source, *target), (s, t));
            assert!((weight - 0.1525).abs() < 1e-12 && (w - 0.1525).abs() < 1e-12);
        }
        assert_eq!([timing(None), timing(Some(0)), timing(Some(1)), timing(Some(-1))], [1.0, 0.5, 0.5, -0.25]);
    }

    fn deltas(changes: &[Change]) -> Vec<(i64, f64)> {
        changes
            .iter()
            .filter_map(|c| match c {
                Change::Adjust { edge, delta, .. } => Some((*edge, (delta * 1e6).round() / 1e6)),
                Change::Create { .. } => None,
            })
            .collect()
    }

    #[test]
    fn used_targets_gain_unused_ones_lose_and_used_pairs_link() {
        // Edges 1: a→b, 2: b→c, 3: a→d (inhibits).
        let g = graph(&[(A, 1.0), (B, 1.0), (C, 1.0), (D, 1.0)], &[(A, B, 1.5), (B, C, 1.2), (A, D, -1.0)]);
        let a = activate(&g, &[seed(A, 1.0)], &Params::default());
        let used: HashSet<i64> = [A, B, D].into();
        let ch = learn::learn(&g, &a, &used, 1.0);
        let mut d = deltas(&ch);
        d.sort_by_key(|x| x.0);
        assert_eq!(d, [(1, 0.05), (2, -0.025), (3, 0.05)], "a→b up, b→c down, a→d eased");
        let created: Vec<_> = ch.iter().filter(|c| matches!(c, Change::Create { .. })).collect();
        assert!(created.is_empty(), "a→b exists; b→a is anti-causal (−0.05, not above the floor)");
        let ch = learn::learn(&g, &a, &[A, C].into(), 1.0);
        assert!(
            ch.iter().any(|c| matches!(c, Change::Create { source: A, target: C, weight } if (weight - 0.4 / 3.0 * 0.5).abs() < 1e-12)),
            "a and c both used, two steps apart: a new edge {ch:?}"
        );
        assert!(
            learn::learn(&g, &a, &used, -1.0)
                .iter()
                .any(|c| matches!(c, Change::Adjust { edge: 1, delta, .. } if *delta < 0.0))
        );
    }

    #[test]
    fn outcome_and_used_concepts() {
        assert_eq!(learn::outcome(Some(-1.0), Some(0.9)), -1.0, "explicit feedback wins");
        assert_eq!(learn::outcome(None, Some(0.75)), 0.5);
        assert_eq!(learn::outcome(None, None), learn::DEFAULT_OUTCOME);
        assert_eq!(learn::outcome(Some(f64::NAN), None), 0.0);
        // Feedback labels' qualities (thanks, moving on, complaint) and regulator verdicts.
        assert_eq!([1.0, 0.7, 0.1].map(|q| (learn::feedback_outcome(q) * 10.0).round() / 10.0), [1.0, 0.4, -0.8]);
        let mut verdict = crate::vocab::regulator::RegulatorReport::idle();
        assert_eq!(learn::outcome(None, Some(learn::regulator_quality(&verdict))), 0.0, "no evidence: nothing learnt");
        verdict.confidence = 0.9;
        assert!((learn::outcome(None, Some(learn::regulator_quality(&verdict))) - 0.8).abs() < 1e-12);
        verdict.decision = "scope_drift_warn".into();
        assert_eq!(learn::outcome(None, Some(learn::regulator_quality(&verdict))), -0.5);
        let used = learn::used_concepts(
            "Morning coffee helps; ice cream does not.",
            [(1, "coffee"), (2, "Ice Cream"), (3, "tea"), (4, "ice")],
        );
        assert_eq!(used, [1, 2, 4].into());
        // Case folds outside ASCII too; a name is matched whole, in order, never by its first word alone.
        let used = learn::used_concepts(
            "ÉCLAIRS and Crème Brûlée, then cream ice",
            [(1, "éclairs"), (2, "crème brûlée"), (3, "ice cream"), (4, "Cream"), (5, ""), (6, "brûlée crème")],
        );
        assert_eq!(used, [1, 2, 4].into());
    }
}

mod turn {
    use super::super::turn::{after_feedback, after_reply, decay, for_message};
    use crate::store::{ConceptsRepo, RelationshipsRepo, VecTable, VectorRepo};

    fn unit(dim: usize, hot: &[(usize, f32)]) -> Vec<f32> {
        let mut v = vec![0.0f32; dim];
        for &(i, x) in hot {
            v[i] = x;
        }
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / n).collect()
    }

    #[test]
    fn a_turn_fires_grows_learns_and_decays() {
        let c = crate::store::open_in_memory().unwrap();
        let cache = super::super::GraphCache::new();
        let dim = crate::store::EMBEDDING_DIM;
        let f = crate::store::fixtures::Fixture(&c);
        for (id, name) in [(1, "coffee"), (2, "morning")] {
            f.concept(id, name);
        }
        VectorRepo(&c).upsert(VecTable::Concepts, 1, &unit(dim, &[(0, 1.0)])).unwrap();
        VectorRepo(&c).upsert(VecTable::Concepts, 2, &unit(dim, &[(1, 1.0)])).unwrap();
        f.edge(1, 2, "related-to", 0.9, true);
        // Near coffee (0.45 cosine): coffee seeds at 2.0, morning fires from it; novel enough to grow.
        let msg = unit(dim, &[(0, 0.45), (5, 0.893)]);
        let t = for_message(&c, &cache, "my espresso machine is broken again", &msg, false, 100).unwrap();
        assert_eq!(t.lines.len(), 1, "{:?}", t.lines);
        assert_eq!(t.lines[0].name, "morning");
        assert_eq!(t.novelty, Some(super::super::grow::Novelty::Novel));
        let grown = t.grown.expect("a node grows");
        assert_eq!(f.value::<String>("semantic_concepts", "name", "id = ?1", [grown]), "espresso machine");
        assert_eq!(t.report().grown.as_deref(), Some("espresso machine"), "the routed event names it");
        let again = for_message(&c, &cache, "The espresso machine is on the fritz.", &msg, false, 200).unwrap();
        assert_eq!(again.grown, None, "the same content phrase is the same node");
        assert_eq!(f.value::<i64>("semantic_concepts", "seed_count", "id = ?1", [grown]), 2);
        assert_eq!(ConceptsRepo(&c).graph_counts().unwrap(), (3, 1));
        let elsewhere = unit(dim, &[(9, 1.0)]);
        assert!(for_message(&c, &cache, "hello", &elsewhere, false, 300).unwrap().grown.is_none());
        let probation = ConceptsRepo(&c).probationers().unwrap();
        assert_eq!(
            probation.iter().map(|p| (p.id, p.fired_count)).collect::<Vec<_>>(),
            [(grown, 1)],
            "fired once: not yet confirmed"
        );

        let learned = after_reply(&c, &t, "x1", "A slow morning, then.", 1.0, 400).unwrap();
        assert_eq!(learned.used, [2]);
        let w: f64 = f.value("semantic_relationships", "weight", "id = 1", []);
        assert!(w > 0.9, "the edge into the used concept grew: {w}");
        // The next message complains (quality 0.1, y = −0.8): the edge, learnt again from what
        // fired in x1, loses in both directions it was walked (coffee→morning, used, dt 1:
        // 0.1·(−0.8)·0.5; morning→coffee, unused, dt −1: −0.5·0.1·(−0.8)·0.25). Applied once only.
        let fb = after_feedback(&c, &cache, "x1", 0.1, 450).unwrap().expect("x1's firing was kept");
        assert_eq!((fb.used.as_slice(), fb.outcome, fb.adjusted), ([2].as_slice(), -0.8, 2));
        let after: f64 = f.value("semantic_relationships", "weight", "id = 1", []);
        assert!((after - (w - 0.04 + 0.01)).abs() < 1e-9, "{w} → {after}");
        assert_eq!(after_feedback(&c, &cache, "x1", 0.1, 460).unwrap(), None);
        assert_eq!(after_feedback(&c, &cache, "never", 1.0, 460).unwrap(), None);

        // Decay: the grown node's seed edge (0.15, learned) fades below 0.05 after enough periods and is
        // pruned; the never-confirmed node expires after its probation.
        let (d, removed) = decay(&c, 60.0, 100 + super::super::grow::PROBATION_TTL_S + 1).unwrap();
        assert_eq!((d.edges_pruned, d.nodes_expired), (1, 1), "{d:?}");
        assert_eq!(removed.len(), 1);
        assert!(!ConceptsRepo(&c).is_live(grown).unwrap());
        assert_eq!(RelationshipsRepo(&c).counts().unwrap().0, 1, "the extracted edge stays");
    }
}

mod cache {
    use super::super::{Activation, GraphCache};
    use crate::store::{ConceptsRepo, RelationshipsRepo};

    /// A turn that writes nothing the dynamics read keeps the copy; every kind of graph write,
    /// whoever makes it, is seen by the next turn: patched in from the graph log (migration
    /// 0020) where it can be, else read whole (`patch::tests` covers each kind).
    #[test]
    fn the_copy_is_kept_until_the_graph_changes() {
        let c = crate::store::open_in_memory().unwrap();
        let f = crate::store::fixtures::Fixture(&c);
        f.concept(1, "coffee");
        f.concept(2, "morning");
        let cache = GraphCache::new();
        let first = cache.graph(&c).unwrap();
        assert_eq!((first.len(), cache.loads()), (2, 1));
        // Firing writes traces, counts and potentials: not a change to the graph.
        let fired = Activation { traces: vec![(1, 1.5)], trace_factor: 0.9, ..Activation::default() };
        super::super::persist(&c, &fired, 10).unwrap();
        let again = cache.graph(&c).unwrap();
        assert!(std::sync::Arc::ptr_eq(&first, &again));
        assert_eq!(cache.loads(), 1);

        let edge = f.edge(1, 2, "related-to", 0.5, false);
        assert_eq!(cache.graph(&c).unwrap().transfer_count(), 1, "a new edge is seen");
        RelationshipsRepo(&c).add_weight(edge, 0.1, true, 20).unwrap();
        let g = cache.graph(&c).unwrap();
        assert!((g.outgoing(1).next().unwrap().1 - 0.6).abs() < 1e-9, "a learned weight is seen");
        ConceptsRepo(&c).soft_delete(2, 30).unwrap();
        assert_eq!(cache.graph(&c).unwrap().len(), 1, "a forgotten concept is gone");
        assert_eq!((cache.loads(), cache.patches()), (2, 2), "the edge writes patched, the forget read whole");
        cache.graph(&c).unwrap();
        assert_eq!((cache.loads(), cache.patches()), (2, 2));
    }
}

/// The run's per-node arrays are kept per thread (`run::Scratch`): a run after others on the
/// same thread, on a smaller and a larger graph, with inhibition and leftovers left behind,
/// comes out exactly as on a fresh thread.
#[test]
fn a_run_after_others_on_the_same_thread_is_as_on_a_fresh_one() {
    let small = graph(&[(A, 1.0), (B, 1.0), (C, 1.0), (D, 1.0)], &[(A, B, 1.5), (B, C, 1.2), (A, D, -1.0)]);
    let nodes: Vec<(i64, f64)> = (1..=40).map(|i| (i, 0.8)).collect();
    let edges: Vec<(i64, i64, f64)> = (1..40).flat_map(|i| [(i, i + 1, 0.9), (i + 1, i, -0.3)]).collect();
    let large = graph(&nodes, &edges);
    let p = Params { max_steps: 6, ..Params::default() };
    // The steps map prints in hash order: compared sorted.
    let shown = |mut a: Activation| {
        let mut steps: Vec<(i64, u8)> = a.steps_of.drain().collect();
        steps.sort_unstable();
        format!("{a:?} {steps:?}")
    };
    let runs = || {
        [
            shown(activate(&small, &[seed(A, 1.0)], &p)),
            shown(activate(&large, &[seed(3, 1.2), seed(20, 0.9)], &p)),
            shown(activate(&small, &[seed(B, 0.7), seed(D, 2.0)], &p)),
            shown(activate(&large, &[seed(39, 1.0)], &Params { reset: false, ..p })),
        ]
    };
    let here = runs();
    for (i, got) in runs().iter().enumerate() {
        assert_eq!(got, &here[i], "run {i} again on this thread");
    }
    for (i, got) in here.iter().enumerate() {
        let fresh = std::thread::scope(|s| s.spawn(|| runs()[i].clone()).join().unwrap());
        assert_eq!(got, &fresh, "run {i} on a fresh thread");
    }
}
