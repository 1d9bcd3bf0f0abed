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
        f.insert("semantic_concepts", &[("id", &id), ("name", &name), ("created_at", &0), ("updated_at", &0)]);
    }
    for (s, t, ty, w, both) in [(1, 2, "related-to", 1.5, 1), (1, 3, "contradicts", -1.0, 1)] {
        f.insert(
            "semantic_relationships",
            &[
                ("source_id", &s),
                ("target_id", &t),
                ("rel_type", &ty),
                ("weight", &w),
                ("bidirectional", &both),
                ("created_at", &0),
                ("updated_at", &0),
            ],
        );
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
