//! `--replay LOG --rerun --graph MODE` on the real binary (docs/cognition.md §9.4.10): a
//! session recorded against the scripted double is rerun with the concept graph in each mode.
//! Mechanical grows nothing and gives the same graph twice; novelty grows; v2 asks a live
//! lightweight model (a second double) about the graph's non-reflex edges and reports its calls.

use crate::support::bin::{chalie_with, json_lines, text};
use crate::support::openai_double::{Double, Reply};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Content lines (no greeting or filler), so each can seed and grow the graph.
const MESSAGES: &str = "I just got back from the climbing gym downtown\n\
    My sister plays the cello in a small orchestra\n\
    The climbing gym added a new bouldering wall last week\n\
    Her orchestra is playing a concert with a famous cellist\n\
    Maybe I should take my sister to the climbing gym sometime\n\
    Bouldering and the cello both need strong fingers honestly\n";

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

const ROUTES: &str = r#"{"step": 0, "routes": [], "new_nodes": [], "prune_candidates": []}"#;

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
    assert!(novelty.iter().any(|g| g.get("grown").is_some()), "novelty grows nodes: {novelty:#?}\n{err}");
    assert!(novelty.iter().any(|g| g["fired"].as_array().is_some_and(|f| !f.is_empty())), "{novelty:#?}");

    // v2: the router's calls go to a live double; the log answers everything else.
    let live = rt.block_on(Double::start((0..40).map(|_| Reply::text(ROUTES)).collect()));
    let online = config(dir.path(), &live.base_url(), "live.toml");
    let (v2, _) = rerun(dir.path(), &online, &log, "v2");
    let asked = live
        .chat_requests()
        .iter()
        .filter(|r| r.body.to_string().contains("You route activation in a concept graph"))
        .count();
    let calls: u64 = v2.iter().map(|g| g["calls"].as_u64().unwrap()).sum();
    // This fixture puts no habitual edge in play (the grown nodes' 0.15 edges never carry a
    // firing into a candidate step), so v2 may make no call here; the router's calls themselves are
    // tested in `graph_router` and `memory_graph`. What must hold: whatever v2 reports, it asked.
    assert_eq!(calls as usize, asked, "every call reported is one the live model got");
    assert_eq!(live.chat_requests().len(), asked, "nothing but the router went live");
    assert!(v2.iter().all(|g| g.get("fallback").is_none()), "{v2:#?}");
}
