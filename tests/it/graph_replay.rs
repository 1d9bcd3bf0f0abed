//! `--replay LOG --rerun --graph MODE` on the real binary (docs/cognition.md §9.4.10): a
//! session recorded against the scripted double is rerun with the concept graph in each mode.
//! Mechanical grows nothing and gives the same graph twice; novelty grows; v2 asks a live
//! lightweight model (a second double) about the graph's non-reflex edges, and its verdict
//! changes what fires.

use crate::support::bin::{chalie_with, json_lines, text};
use crate::support::openai_double::{Double, Reply, embedding_of_size};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// Three messages laid out (with the double's word-hash embeddings) so that a faint edge
/// carries a firing in the third turn:
/// 1. the graph is empty: the message grows node A;
/// 2. it shares 2 of its 7 words with A (cosine 2/(2·√7) = 0.378, novel): A is its only seed
///    and fires, the message grows node B with a 0.15 edge A→B;
/// 3. the first message again: A is known (seed energy 2.0, fires at step 0); B is seeded at
///    2·0.378 = 0.756, under its 0.8 threshold. Mechanically A→B gives it 0.3 and B fires at
///    step 1 ((0.756 + 0.3)·0.9 = 0.95); the edge is faint, so v2 asks the model first, and a
///    sure "pass none of it, inverted" (multiplier −1, confidence 1) makes the transfer −0.3 and
///    B stays silent.
const MESSAGES: &str = "lanterns glowing harbor tonight\n\
    lanterns glowing orchids meteor violins quartz saddle\n\
    lanterns glowing harbor tonight\n";

fn config(dir: &Path, base_url: &str, name: &str) -> PathBuf {
    let path = dir.join(name);
    let config = format!(
        "[providers.double]\nkind = \"openai\"\nbase_url = \"{base_url}\"\n\
         [models]\nprimary = \"double/chat\"\nlightweight = \"double/chat\"\nstrong = \"double/chat\"\n\
         embedding = \"double/embed\"\n[llm]\ntriage = \"heuristic\"\nmemory_extraction = \"heuristic\"\n\
         critic = \"heuristic\"\ngraph_router_timeout_ms = 5000\n"
    );
    std::fs::write(&path, config).unwrap();
    path
}

fn record(rt: &tokio::runtime::Runtime, dir: &Path) -> PathBuf {
    let replies = (1..=24).map(|i| Reply::text(&format!("That sounds like fun, tell me more ({i}).")));
    let double = rt.block_on(Double::start(replies.collect()));
    // Vectors at the store's dimension, so a message can seed and grow the graph.
    double.set_embedding_dim(chalie::store::EMBEDDING_DIM);
    let data = dir.join("recorded");
    std::fs::create_dir_all(&data).unwrap();
    let cfg = config(dir, &double.base_url(), "record.toml");
    let batch = dir.join("batch.txt");
    std::fs::write(&batch, MESSAGES).unwrap();
    let out = chalie_with(&data, &cfg, &[], &["ask", "--json", "--batch", batch.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let logs: Vec<PathBuf> = std::fs::read_dir(data.join("sessions")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    logs[0].clone()
}

/// The per-turn `graph` objects of a headless rerun, and its stderr.
fn rerun(dir: &Path, cfg: &Path, log: &Path, mode: &str) -> (Vec<Value>, String) {
    let data = dir.join(format!("replay-{mode}"));
    let out =
        chalie_with(&data, cfg, &[], &["--replay", log.to_str().unwrap(), "--rerun", "--headless", "--graph", mode]);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    let turns = json_lines(&out);
    assert_eq!(turns.len(), MESSAGES.lines().count(), "{err}");
    let graphs: Vec<Value> = turns.iter().filter_map(|t| t.get("graph").cloned()).collect();
    assert!(!graphs.is_empty(), "no turn reported its graph: {turns:#?}");
    for g in &graphs {
        assert_eq!(g["mode"], mode, "{g}");
    }
    assert!(err.contains(&format!("graph {mode}: ")), "{err}");
    (graphs, err)
}

/// What a run decided, without its timings.
fn decisions(graphs: &[Value]) -> Vec<Value> {
    graphs
        .iter()
        .map(|g| {
            let mut g = g.clone();
            g.as_object_mut().unwrap().remove("ms");
            g
        })
        .collect()
}

/// The live model's answer to every router call: each pair of the first concepts inverted,
/// surely (pairs that are not a call's candidates are dropped by the parser), so the answer
/// does not depend on the ids the scratch database gives.
fn routes() -> String {
    let pairs = (1..=12).flat_map(|s| (1..=12).filter(move |&t| t != s).map(move |t| (s, t)));
    let routes: Vec<Value> = pairs
        .map(|(s, t)| {
            json!({"source_id": s.to_string(), "target_id": t.to_string(), "multiplier": -1.0,
                   "confidence": 1.0, "reason": "inverted"})
        })
        .collect();
    json!({"step": 0, "routes": routes, "new_nodes": [], "prune_candidates": []}).to_string()
}

/// The fixture's geometry holds under the double's embeddings (no two words share a dimension).
#[test]
fn the_fixture_messages_sit_where_the_v2_test_needs_them() {
    let dim = chalie::store::EMBEDDING_DIM;
    let lines: Vec<Vec<f32>> = MESSAGES.lines().map(|m| embedding_of_size(m, dim)).collect();
    let cos = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| f64::from(x * y)).sum::<f64>();
    let ab = cos(&lines[0], &lines[1]);
    assert!((ab - 2.0 / (2.0 * 7f64.sqrt())).abs() < 1e-6, "{ab}");
    assert!(ab > chalie::memory::graph::grow::NOISE && ab < chalie::memory::graph::grow::NOVEL_MAX, "{ab}");
    assert!(2.0 * ab < chalie::memory::graph::grow::GROWN_THRESHOLD, "B must not fire on its seed alone");
    assert_eq!(lines[0], lines[2]);
}

#[test]
fn each_graph_mode_reruns_and_mechanical_is_deterministic() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let log = record(&rt, dir.path());
    // Offline: nothing answers at this address, and only v2 asks a live model.
    let offline = config(dir.path(), "http://127.0.0.1:9/v1", "offline.toml");

    let (first, _) = rerun(dir.path(), &offline, &log, "mechanical");
    let (second, _) = rerun(dir.path(), &offline, &log, "mechanical");
    assert_eq!(decisions(&first), decisions(&second), "mechanical is deterministic");
    assert!(first.iter().all(|g| g.get("grown").is_none() && g["calls"] == 0), "{first:#?}");

    let (novelty, err) = rerun(dir.path(), &offline, &log, "novelty");
    let fired = |g: &Value| -> Vec<String> {
        g["fired"].as_array().map_or_else(Vec::new, |f| f.iter().filter_map(|n| n.as_str().map(String::from)).collect())
    };
    let grown: Vec<&str> = novelty.iter().filter_map(|g| g["grown"].as_str()).collect();
    assert_eq!(grown.len(), 2, "novelty grows A and B: {novelty:#?}\n{err}");
    let (a, b) = (grown[0], grown[1]);
    assert!(fired(&novelty[1]).contains(&a.to_string()), "A seeds the second turn: {novelty:#?}");
    let third = fired(&novelty[2]);
    assert!(third.contains(&a.to_string()) && third.contains(&b.to_string()), "A→B carries B: {novelty:#?}");

    // v2: the router's calls go to a live double; the log answers everything else.
    let live = rt.block_on(Double::start((0..40).map(|_| Reply::text(&routes())).collect()));
    let online = config(dir.path(), &live.base_url(), "live.toml");
    let (v2, err) = rerun(dir.path(), &online, &log, "v2");
    let asked: Vec<String> = live
        .chat_requests()
        .iter()
        .map(|r| r.body.to_string())
        .filter(|b| b.contains("You route activation in a concept graph"))
        .collect();
    let calls: u64 = v2.iter().map(|g| g["calls"].as_u64().unwrap()).sum();
    assert!(calls >= 1, "the faint edge A→B is asked about: {v2:#?}\n{err}");
    assert_eq!(calls as usize, asked.len(), "every call reported is one the live model got");
    assert_eq!(live.chat_requests().len(), asked.len(), "nothing but the router went live");
    assert!(asked.iter().any(|q| q.contains(a) && q.contains(b)), "the call names A and B: {asked:#?}");
    assert!(v2.iter().all(|g| g.get("fallback").is_none()), "{v2:#?}");
    // The verdict made the transfer inhibitory: A fires as before, B does not.
    let third = fired(&v2[2]);
    assert!(third.contains(&a.to_string()) && !third.contains(&b.to_string()), "{v2:#?}");
}
