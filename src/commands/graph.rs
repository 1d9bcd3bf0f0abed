//! `chalie-tui graph [--json] [--activate TEXT]`: the concept graph's size, its strongest edges
//! and, for TEXT, the activation trace (seeds, firings per step with energy, inhibited nodes),
//! through the same entry point a turn uses (docs/cognition.md §9.4). Read-only.

use crate::cli::GraphArgs;
use crate::config::Paths;
use crate::memory::graph::{self, Activated, Cue, Params, learn::used_concepts};
use crate::store::{self, ConceptsRepo, RelationshipsRepo};
use rusqlite::Connection;
use serde_json::{Value, json};
use std::process::ExitCode;

/// Seed energy for a concept TEXT names (over every threshold, as `associate` seeds).
const SEED_ENERGY: f64 = 2.0;

pub fn run(paths: &Paths, args: GraphArgs) -> anyhow::Result<ExitCode> {
    let conn = store::open(&paths.db_file)?;
    let report = report(&conn, &args)?;
    if args.json {
        super::say_json(&serde_json::to_string(&report)?);
    } else {
        super::say(&text(&report));
    }
    Ok(ExitCode::SUCCESS)
}

/// The whole answer as one JSON value (the text form is printed from it).
pub fn report(c: &Connection, args: &GraphArgs) -> anyhow::Result<Value> {
    let (nodes, probationary) = ConceptsRepo(c).graph_counts()?;
    let (edges, inhibitory) = RelationshipsRepo(c).counts()?;
    let strongest: Vec<Value> = RelationshipsRepo(c)
        .strongest(args.limit)?
        .into_iter()
        .map(|e| {
            json!({"source": e.source, "target": e.target, "type": e.rel_type, "weight": round(e.weight),
                   "both_ways": e.bidirectional, "origin": e.origin})
        })
        .collect();
    let mut out = json!({
        "nodes": nodes, "probationary": probationary, "edges": edges, "inhibitory": inhibitory,
        "strongest": strongest,
    });
    if let Some(text) = &args.activate {
        let g = graph::load(c)?;
        let named: Vec<i64> =
            used_concepts(text, g.nodes.iter().map(|n| (n.id, n.name.as_str()))).into_iter().collect();
        let mut seeds = named;
        seeds.sort_unstable();
        let got = graph::activate(c, Cue::Concepts(&seeds, SEED_ENERGY), &Params::default())?;
        out["activation"] = trace(&got);
    }
    Ok(out)
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn trace(a: &Activated) -> Value {
    let act = &a.activation;
    let mut by_step: Vec<Vec<Value>> = vec![Vec::new(); usize::from(act.steps)];
    let mut all: Vec<(i64, u8)> = act.steps_of.iter().map(|(id, s)| (*id, *s)).collect();
    all.sort_by_key(|(id, s)| (*s, *id));
    let energy: std::collections::HashMap<i64, f64> = act.traces.iter().copied().collect();
    for (id, step) in all {
        let f = act.fired.iter().find(|f| f.node == id);
        by_step[usize::from(step)].push(json!({
            "concept": a.name(id),
            "energy": round(energy.get(&id).copied().unwrap_or(0.0)),
            "seed": f.map(|f| a.name(f.seed)),
            "edges": f.map(|f| f.path.clone()),
            "kept": f.is_some(),
        }));
    }
    json!({
        "seeds": a.seeds.iter().map(|s| json!({"concept": a.name(s.node), "energy": round(s.energy)})).collect::<Vec<_>>(),
        "steps": by_step,
        "inhibited": act.inhibited.iter().map(|(id, p)| json!({"concept": a.name(*id), "potential": round(*p)})).collect::<Vec<_>>(),
    })
}

/// The report as lines for a person.
pub fn text(r: &Value) -> String {
    let mut out = format!(
        "Concept graph: {} nodes ({} probationary), {} edges ({} inhibitory).",
        r["nodes"], r["probationary"], r["edges"], r["inhibitory"]
    );
    let strongest = r["strongest"].as_array().map(Vec::as_slice).unwrap_or_default();
    if !strongest.is_empty() {
        out.push_str("\nStrongest edges:");
        for e in strongest {
            let arrow = if e["both_ways"].as_bool().unwrap_or(false) { "<->" } else { "->" };
            let name = |k: &str| e[k].as_str().unwrap_or("").to_string();
            out.push_str(&format!(
                "\n  {:+.3}  {} {arrow} {} ({})",
                e["weight"].as_f64().unwrap_or(0.0),
                name("source"),
                name("target"),
                name("type")
            ));
        }
    }
    let Some(a) = r.get("activation") else { return out };
    let names = |v: &Value, key: &str, num: &str| -> String {
        v.as_array()
            .map(|xs| {
                xs.iter()
                    .map(|x| format!("{} {:.3}", x[key].as_str().unwrap_or(""), x[num].as_f64().unwrap_or(0.0)))
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default()
    };
    let seeds = names(&a["seeds"], "concept", "energy");
    if seeds.is_empty() {
        out.push_str("\nActivation: the text names no concept, so nothing is seeded.");
        return out;
    }
    out.push_str(&format!("\nSeeds: {seeds}"));
    for (i, step) in a["steps"].as_array().map(Vec::as_slice).unwrap_or_default().iter().enumerate() {
        out.push_str(&format!("\nStep {i}: {}", names(step, "concept", "energy")));
    }
    let inhibited = names(&a["inhibited"], "concept", "potential");
    out.push_str(&format!("\nInhibited: {}", if inhibited.is_empty() { "none".into() } else { inhibited }));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_edges_and_a_trace() {
        let c = store::open_in_memory().unwrap();
        let f = store::fixtures::Fixture(&c);
        for (id, name) in [(1, "coffee"), (2, "morning"), (3, "sleep")] {
            f.concept(id, name);
        }
        for (s, t, ty, w) in [(1, 2, "related-to", 0.9), (1, 3, "contradicts", -0.9)] {
            f.edge(s, t, ty, w, true);
        }
        let args = GraphArgs { json: true, activate: Some("Coffee, please".into()), limit: 5 };
        let r = report(&c, &args).unwrap();
        assert_eq!((r["nodes"].as_i64(), r["edges"].as_i64(), r["inhibitory"].as_i64()), (Some(3), Some(2), Some(1)));
        assert_eq!(r["activation"]["steps"][1][0]["concept"], "morning");
        assert_eq!(r["activation"]["inhibited"][0]["concept"], "sleep");
        let t = text(&r);
        assert!(
            t.contains("Seeds: coffee 2.000")
                && t.contains("Step 1: morning 1.620")
                && t.contains("Inhibited: sleep -1.800"),
            "{t}"
        );
        assert!(t.contains("+0.900  coffee <-> morning (related-to)"), "{t}");
    }
}
