//! The `associate` skill: spreading activation over the concept graph from seed concepts
//! (docs/cognition.md §9.4). Breadth-first to depth 2; a child gets parent × 0.7, scaled by a strong
//! relationship's strength; a weak one (< 0.5) passes only sometimes (probability 0.15,
//! unscaled) and only with `include_weak`; values under 0.3 are dropped; each node keeps its
//! maximum. The graph issue replaces this with leaky integrate-and-fire dynamics.

use crate::cognition::act::skill::{SkillContext, SkillError, SkillOutput, strings_param};
use crate::store::{ConceptsRepo, EdgeRow, RelationshipsRepo};
use rusqlite::Connection;
use serde_json::{Map, Value, json};
use std::collections::{HashMap, VecDeque};

pub const DECAY: f64 = 0.7;
pub const STRONG: f64 = 0.5;
pub const WEAK_PASS: f64 = 0.15;
pub const FLOOR: f64 = 0.3;
pub const MAX_DEPTH: u32 = 2;

/// One edge of the concept graph, as activation reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Edge {
    pub id: i64,
    pub from: i64,
    pub to: i64,
    pub strength: f64,
}

/// Spread from `seeds` (which are included at 1.0). Weak edges pass when
/// `weak_pass(edge_id)` returns true; the caller decides how (random in production, a fixed
/// answer in tests).
pub fn spread(seeds: &[i64], edges: &[Edge], depth: u32, weak_pass: &dyn Fn(i64) -> bool) -> Vec<(i64, f64)> {
    let mut out: HashMap<i64, f64> = seeds.iter().map(|&s| (s, 1.0)).collect();
    let mut queue: VecDeque<(i64, f64, u32)> = seeds.iter().map(|&s| (s, 1.0, 0)).collect();
    let mut visited: std::collections::HashSet<i64> = seeds.iter().copied().collect();
    while let Some((node, act, d)) = queue.pop_front() {
        if d >= depth.min(MAX_DEPTH) {
            continue;
        }
        for e in edges.iter().filter(|e| e.from == node) {
            let mut child = act * DECAY;
            if e.strength >= STRONG {
                child *= e.strength;
            } else if !weak_pass(e.id) {
                continue;
            }
            if child < FLOOR {
                continue;
            }
            let best = out.entry(e.to).or_insert(0.0);
            *best = best.max(child);
            if visited.insert(e.to) {
                queue.push_back((e.to, child, d + 1));
            }
        }
    }
    let mut v: Vec<(i64, f64)> = out.into_iter().collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    v
}

/// `associate`: `seeds` (concept names), optional `depth` (≤ 2) and `include_weak`.
pub fn run(c: &Connection, p: &Map<String, Value>, _ctx: &SkillContext) -> Result<SkillOutput, SkillError> {
    let names = strings_param(p, "seeds");
    if names.is_empty() {
        return Err(SkillError::Param { name: "seeds", problem: "give at least one concept name".into() });
    }
    let depth = p.get("depth").and_then(Value::as_u64).map_or(MAX_DEPTH, |d| d.min(u64::from(MAX_DEPTH)) as u32);
    let include_weak = p.get("include_weak").and_then(Value::as_bool).unwrap_or(false);
    let concepts = ConceptsRepo(c);
    let mut seeds = Vec::new();
    for n in &names {
        seeds.extend(concepts.live_ids_named(n)?);
    }
    if seeds.is_empty() {
        return Err(SkillError::NotFound(format!("no concept named {}", names.join(" or "))));
    }
    let mut edges = Vec::new();
    for EdgeRow { id, source: from, target: to, strength, bidirectional: both } in RelationshipsRepo(c).excitatory()? {
        edges.push(Edge { id, from, to, strength });
        if both {
            edges.push(Edge { id, from: to, to: from, strength });
        }
    }
    let salt = uuid::Uuid::new_v4().as_u128() as u64;
    let weak = |id: i64| include_weak && crate::SplitMix64(id as u64 ^ salt).next_f64() < WEAK_PASS;
    let activated = spread(&seeds, &edges, depth, &weak);
    let mut found = Vec::new();
    for (id, a) in &activated {
        let (name, def) = concepts.name_and_definition(*id)?;
        found.push(json!({"id": id, "name": name, "definition": def, "activation": (a * 1000.0).round() / 1000.0}));
    }
    let others: Vec<&str> = found.iter().skip(seeds.len()).filter_map(|f| f["name"].as_str()).collect();
    let summary = if others.is_empty() {
        format!("Nothing is associated with {} yet.", names.join(", "))
    } else {
        format!("{} brings to mind: {}.", names.join(", "), others.join(", "))
    };
    Ok(SkillOutput::new(summary, json!({"seeds": names, "activated": found})))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(id: i64, from: i64, to: i64, strength: f64) -> Edge {
        Edge { id, from, to, strength }
    }

    #[test]
    fn activation_decays_scales_and_stops_at_depth_two() {
        let edges = [e(1, 1, 2, 1.0), e(2, 2, 3, 0.8), e(3, 3, 4, 1.0), e(4, 1, 5, 0.2)];
        let got = spread(&[1], &edges, 2, &|_| false);
        assert_eq!(got[0], (1, 1.0), "seeds are included at 1.0");
        assert!((got[1].1 - 0.7).abs() < 1e-9);
        assert!((got.iter().find(|x| x.0 == 3).unwrap().1 - 0.7 * 0.7 * 0.8).abs() < 1e-9);
        assert!(got.iter().all(|x| x.0 != 4), "depth 2 stops before node 4");
        assert!(got.iter().all(|x| x.0 != 5), "a weak edge that does not pass");
        let with_weak = spread(&[1], &edges, 2, &|_| true);
        assert!((with_weak.iter().find(|x| x.0 == 5).unwrap().1 - 0.7).abs() < 1e-9, "passes unscaled");
    }

    #[test]
    fn floor_and_max_per_node() {
        let edges = [e(1, 1, 2, 0.5), e(2, 1, 3, 1.0), e(3, 3, 2, 1.0), e(4, 2, 4, 0.5)];
        let got = spread(&[1], &edges, 2, &|_| false);
        // Node 2: direct 0.35, via 3 0.49 → keeps 0.49. Node 4 from 2: below the floor.
        assert!((got.iter().find(|x| x.0 == 2).unwrap().1 - 0.49).abs() < 1e-9);
        assert!(got.iter().all(|x| x.0 != 4));
    }

    #[test]
    fn the_skill_reads_the_graph() {
        let c = crate::store::open_in_memory().unwrap();
        let f = crate::store::fixtures::Fixture(&c);
        for (id, name) in [(1, "coffee"), (2, "morning"), (3, "espresso")] {
            f.insert("semantic_concepts", &[("id", &id), ("name", &name), ("created_at", &0), ("updated_at", &0)]);
        }
        for (source, target, rel_type) in [(1, 2, "related-to"), (3, 1, "is-a")] {
            f.insert(
                "semantic_relationships",
                &[
                    ("source_id", &source),
                    ("target_id", &target),
                    ("rel_type", &rel_type),
                    ("strength", &0.9),
                    ("weight", &0.9),
                    ("created_at", &0),
                    ("updated_at", &0),
                ],
            );
        }
        let ctx = SkillContext {
            thread_id: "t".into(),
            exchange_id: "x".into(),
            topic: "t".into(),
            now: chrono::Local::now(),
        };
        let out = run(&c, json!({"seeds": ["Coffee"]}).as_object().unwrap(), &ctx).unwrap();
        assert_eq!(out.summary, "Coffee brings to mind: morning.", "one-way edge 3→1 does not spread back");
        assert!(run(&c, json!({"seeds": ["tea"]}).as_object().unwrap(), &ctx).is_err());
    }
}
