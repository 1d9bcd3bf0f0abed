//! The `associate` skill: what comes to mind from some concepts, by the same graph activation
//! a turn runs (docs/cognition.md §9.4): the named concepts are seeded at [`SEED_ENERGY`] and
//! the concepts that fire, excitatory and inhibitory edges alike, are the answer. `depth` caps
//! the steps (at most the activation's 3).

use crate::cognition::act::skill::{SkillContext, SkillError, SkillOutput, strings_param};
use crate::memory::graph::{self, Cue, Params};
use crate::store::ConceptsRepo;
use rusqlite::Connection;
use serde_json::{Map, Value, json};

/// A named concept is seeded over threshold, so it always fires and spreads.
pub const SEED_ENERGY: f64 = 2.0;

/// `associate`: `seeds` (concept names), optional `depth` (steps after the seeds, ≤ 2).
pub fn run(c: &Connection, p: &Map<String, Value>, ctx: &SkillContext) -> Result<SkillOutput, SkillError> {
    let names = strings_param(p, "seeds");
    if names.is_empty() {
        return Err(SkillError::Param { name: "seeds", problem: "give at least one concept name".into() });
    }
    let defaults = Params::default();
    let depth = p.get("depth").and_then(Value::as_u64).map_or(defaults.max_steps, |d| (d.min(2) as u8) + 1);
    let concepts = ConceptsRepo(c);
    let mut seeds = Vec::new();
    for n in &names {
        seeds.extend(concepts.live_ids_named(n)?);
    }
    if seeds.is_empty() {
        return Err(SkillError::NotFound(format!("no concept named {}", names.join(" or "))));
    }
    let params = Params { max_steps: depth, ..defaults };
    let got = graph::activate_on(c, ctx.graph.graph(c)?, Cue::Concepts(&seeds, SEED_ENERGY), &params)?;
    let a = &got.activation;
    let found: Vec<Value> = a
        .fired
        .iter()
        .map(|f| {
            let node = got.graph.node(f.node);
            json!({
                "id": f.node,
                "name": got.name(f.node),
                "energy": (f.energy * 1000.0).round() / 1000.0,
                "step": f.step,
                "seed": got.name(f.seed),
                "edges": f.path,
                "probationary": node.is_some_and(|n| n.probation),
            })
        })
        .collect();
    let inhibited: Vec<&str> = a.inhibited.iter().map(|(id, _)| got.name(*id)).collect();
    let others: Vec<&str> = a.fired.iter().filter(|f| !seeds.contains(&f.node)).map(|f| got.name(f.node)).collect();
    let mut summary = if others.is_empty() {
        format!("Nothing is associated with {} yet.", names.join(", "))
    } else {
        format!("{} brings to mind: {}.", names.join(", "), others.join(", "))
    };
    if !inhibited.is_empty() {
        summary.push_str(&format!(" It argues against: {}.", inhibited.join(", ")));
    }
    Ok(SkillOutput::new(summary, json!({"seeds": names, "activated": found, "inhibited": inhibited})))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_skill_reads_the_graph() {
        let c = crate::store::open_in_memory().unwrap();
        let f = crate::store::fixtures::Fixture(&c);
        for (id, name) in [(1, "coffee"), (2, "morning"), (3, "espresso"), (4, "sleep")] {
            f.concept(id, name);
        }
        for (source, target, rel_type, weight) in
            [(1, 2, "related-to", 0.9), (3, 1, "is-a", 0.9), (1, 4, "contradicts", -0.9)]
        {
            f.edge(source, target, rel_type, weight, false);
        }
        let ctx = SkillContext::new("t", "x", "t", chrono::Local::now());
        let out = run(&c, json!({"seeds": ["Coffee"]}).as_object().unwrap(), &ctx).unwrap();
        assert_eq!(
            out.summary, "Coffee brings to mind: morning. It argues against: sleep.",
            "one-way edge 3→1 does not spread back; the negative edge is kept"
        );
        assert!(run(&c, json!({"seeds": ["tea"]}).as_object().unwrap(), &ctx).is_err());
    }

    #[test]
    fn a_second_call_reads_the_kept_graph_until_it_changes() {
        use crate::memory::graph::{GraphCache, GraphHandle};
        let c = crate::store::open_in_memory().unwrap();
        let f = crate::store::fixtures::Fixture(&c);
        for (id, name) in [(1, "coffee"), (2, "morning"), (3, "espresso")] {
            f.concept(id, name);
        }
        f.edge(1, 2, "related-to", 0.9, false);
        let cache = std::sync::Arc::new(GraphCache::new());
        let ctx = SkillContext {
            thread_id: "t".into(),
            exchange_id: "x".into(),
            topic: "t".into(),
            now: chrono::Local::now(),
            graph: GraphHandle::new(cache.clone()),
        };
        let ask = || run(&c, json!({"seeds": ["coffee"]}).as_object().unwrap(), &ctx).unwrap().summary;
        assert_eq!(ask(), "coffee brings to mind: morning.");
        assert_eq!(ask(), "coffee brings to mind: morning.");
        assert_eq!(cache.loads(), 1, "an unchanged graph is read once");
        f.edge(1, 3, "related-to", 0.9, false);
        assert_eq!(ask(), "coffee brings to mind: morning, espresso.", "the new edge is seen");
        assert_eq!(cache.loads() + cache.patches(), 2, "the change is read, here as a patch");
    }
}
