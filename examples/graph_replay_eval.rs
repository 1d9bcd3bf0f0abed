//! The concept graph judged by replay (seed 004 §8.4, docs/cognition.md §9.4.10): recorded
//! sessions rerun with the graph in each mode (mechanical, novelty, v2), one table of what it
//! activated against what the reply named, the context it added, its latency and model calls.
//!
//! Sessions are real human chat: /work/shared/data/chitchat/topic_shift_dev.jsonl. In each
//! session, runs of lines by one speaker are joined, and lines 1, 3, 5… are the user's messages,
//! each answered by the line after it (the other person's). A session is first recorded through
//! the engine (embeddings by the built-in all-MiniLM-L6-v2, the reply model answering with the
//! human reply, every other model use heuristic), then rerun offline per mode from its log.
//! Sessions with an even number are the calibration half; the figures quoted are over the odd
//! half, the default.
//!
//! v2's router asks the built-in smollm2-135m-instruct live (the log has no answer for its calls):
//! cost 0 $; its calls, tokens and latency are in the table. `--router-timeout-ms` sets the
//! per-call cap (the config's default is 800 ms).
//!
//! `--max-wall-s S` starts no new session once S seconds have passed (the table is over the
//! sessions finished, every mode run on each).
//!
//! `cargo run --example graph_replay_eval -- [--calibration] [--sessions N] [--turns N]
//!  [--modes mechanical,novelty,v2] [--router-timeout-ms MS] [--max-wall-s S] [PATH]`
//! Needs the built-in models in `CHALIE_MODELS_DIR` (default target/models).

use async_trait::async_trait;
use chalie::cognition::pipeline::Engine;
use chalie::config::{Config, ModelUse, Paths, Role};
use chalie::llm::local::{CHAT_MODEL, EMBED_MODEL, LocalProvider};
use chalie::llm::{ChatRequest, Completion, FinishReason, Llm, LlmError, Provider, Route, Token};
use chalie::memory::graph::mode::Judgement;
use chalie::memory::graph::{GraphMode, GraphTurnStats};
use chalie::runtime::rerun::Rerun;
use chalie::runtime::{ENCODE_WAIT, Runtime};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// Answers every chat call with the reply set for the turn being recorded.
struct HumanReply(Arc<Mutex<String>>);

#[async_trait]
impl Provider for HumanReply {
    fn name(&self) -> &str {
        "human"
    }

    async fn chat(
        &self,
        _model: &str,
        req: &ChatRequest,
        on_token: &mut (dyn FnMut(Token) + Send),
        _cancel: &CancellationToken,
    ) -> Result<Completion, LlmError> {
        let text = self.0.lock().map(|s| s.clone()).unwrap_or_default();
        on_token(Token { text: text.clone(), logprob: None });
        let tokens_in = req.messages.iter().map(|m| m.content.len() / 4).sum::<usize>() as u32;
        Ok(Completion { tokens_out: (text.len() / 4) as u32, text, tokens_in, finish: FinishReason::Stop })
    }

    async fn embed(&self, _model: &str, _inputs: &[String]) -> Result<Vec<Vec<f32>>, LlmError> {
        Err(LlmError::Local("the human reply provider does not embed".into()))
    }
}

struct Args {
    calibration: bool,
    sessions: usize,
    turns: usize,
    modes: Vec<GraphMode>,
    router_timeout_ms: Option<u64>,
    max_wall_s: Option<f64>,
    path: PathBuf,
}

fn args() -> anyhow::Result<Args> {
    let mut a = Args {
        calibration: false,
        sessions: 4,
        turns: 30,
        modes: GraphMode::ALL.to_vec(),
        router_timeout_ms: None,
        max_wall_s: None,
        path: PathBuf::from("/work/shared/data/chitchat/topic_shift_dev.jsonl"),
    };
    let mut it = std::env::args().skip(1);
    while let Some(x) = it.next() {
        let mut value = || it.next().ok_or_else(|| anyhow::anyhow!("{x} needs a value"));
        match x.as_str() {
            "--calibration" => a.calibration = true,
            "--sessions" => a.sessions = value()?.parse()?,
            "--turns" => a.turns = value()?.parse()?,
            "--router-timeout-ms" => a.router_timeout_ms = Some(value()?.parse()?),
            "--max-wall-s" => a.max_wall_s = Some(value()?.parse()?),
            "--modes" => {
                a.modes = value()?.split(',').map(str::parse).collect::<Result<_, _>>()?;
            }
            _ => a.path = PathBuf::from(x),
        }
    }
    Ok(a)
}

/// One session: its id and its (message, reply) pairs.
type Session = (String, Vec<(String, String)>);

fn sessions(a: &Args) -> anyhow::Result<Vec<Session>> {
    let mut out = Vec::new();
    for row in std::fs::read_to_string(&a.path)?.lines() {
        let v: serde_json::Value = serde_json::from_str(row)?;
        let id = v["session_id"].as_str().unwrap_or_default().to_string();
        let even = id.rsplit('-').next().and_then(|n| n.parse::<u32>().ok()).is_some_and(|n| n % 2 == 0);
        if even != a.calibration {
            continue;
        }
        let mut lines: Vec<(String, String)> = Vec::new();
        for u in v["utterances"].as_array().into_iter().flatten() {
            let (who, text) = (u["speaker"].as_str().unwrap_or_default(), u["text"].as_str().unwrap_or_default());
            match lines.last_mut() {
                Some((w, t)) if w == who => {
                    t.push(' ');
                    t.push_str(text);
                }
                _ => lines.push((who.to_string(), text.to_string())),
            }
        }
        let pairs: Vec<(String, String)> =
            lines.chunks_exact(2).take(a.turns).map(|p| (p[0].1.clone(), p[1].1.clone())).collect();
        out.push((id, pairs));
        if out.len() == a.sessions {
            break;
        }
    }
    Ok(out)
}

fn config(a: &Args) -> Config {
    let mut c = Config::defaults();
    c.llm.triage = ModelUse::Heuristic;
    c.llm.memory_extraction = ModelUse::Heuristic;
    c.llm.critic = ModelUse::Heuristic;
    c.llm.graph_router = ModelUse::Heuristic;
    if let Some(ms) = a.router_timeout_ms {
        c.llm.graph_router_timeout_ms = ms;
    }
    c
}

fn paths(dir: &Path, models: &Path) -> Paths {
    Paths::in_dir(dir, models)
}

/// Run the session through the engine, recording its log; returns the log's path.
fn record(
    tok: &tokio::runtime::Runtime,
    session: &Session,
    config: &Config,
    dir: &Path,
    models: &Path,
) -> anyhow::Result<PathBuf> {
    let rt = Runtime::start(paths(dir, models), config.clone())?;
    let log = rt.session_log.clone();
    let slot = Arc::new(Mutex::new(String::new()));
    let human: Arc<dyn Provider> = Arc::new(HumanReply(slot.clone()));
    let local: Arc<dyn Provider> = Arc::new(LocalProvider::new("local", models));
    let routes = Role::ALL.map(|role| {
        let route = match role {
            Role::Embedding => Route { provider: local.clone(), model: EMBED_MODEL.into(), builtin: true },
            Role::Lightweight => Route { provider: local.clone(), model: CHAT_MODEL.into(), builtin: true },
            _ => Route { provider: human.clone(), model: "human".into(), builtin: false },
        };
        (role, route)
    });
    let result = tok.block_on(async {
        let llm = Arc::new(Llm::new(rt.bus.clone(), config.llm.clone(), routes));
        let engine = Engine::start(rt.db.clone(), llm.clone(), rt.bus.clone()).await?;
        rt.provide_llm(llm);
        let memory = rt.start_memory_workers();
        let cancel = CancellationToken::new();
        let thread = format!("chitchat-{}", session.0);
        for (message, reply) in &session.1 {
            if let Ok(mut s) = slot.lock() {
                s.clone_from(reply);
            }
            let (t, x) = rt.intake(Some(thread.clone()), message.clone()).await?;
            engine.turn(&t, &x, message, &cancel).await?;
            rt.wait_for_encoding(&x, ENCODE_WAIT).await?;
            rt.wait_for_consolidation(ENCODE_WAIT).await?;
        }
        memory.cancel();
        anyhow::Ok(())
    });
    rt.finish();
    result.map(|()| log)
}

/// Rerun a recorded session in `mode`; the graph's stats for each turn it ran on.
fn rerun(
    tok: &tokio::runtime::Runtime,
    log: &Path,
    mode: GraphMode,
    config: &Config,
    scratch: &Path,
    models: &Path,
) -> anyhow::Result<Vec<GraphTurnStats>> {
    let log = chalie::session::read_log(log)?;
    let mut r = Rerun::prepare(&log, config.clone(), scratch)?;
    let live =
        Route { provider: Arc::new(LocalProvider::new("local", models)), model: CHAT_MODEL.into(), builtin: true };
    r.use_graph(mode, (mode == GraphMode::V2).then_some(live));
    let turns = tok.block_on(r.run(|_| {}));
    r.finish();
    Ok(turns?.into_iter().filter_map(|t| t.graph).collect())
}

fn main() -> anyhow::Result<()> {
    let a = args()?;
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let models = std::env::var_os("CHALIE_MODELS_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target/models"));
    let sessions = sessions(&a)?;
    let config = config(&a);
    let tok = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let scratch = tempfile::tempdir()?;
    let mut by_mode: Vec<(GraphMode, Vec<GraphTurnStats>)> = a.modes.iter().map(|&m| (m, Vec::new())).collect();
    let mut messages = 0;
    let (started, mut done) = (std::time::Instant::now(), 0);
    for (k, s) in sessions.iter().enumerate() {
        if a.max_wall_s.is_some_and(|max| started.elapsed().as_secs_f64() >= max) {
            eprintln!("wall-time budget spent after {done} of {} sessions", sessions.len());
            break;
        }
        let dir = scratch.path().join(format!("recorded-{k}"));
        std::fs::create_dir_all(&dir)?;
        let log = record(&tok, s, &config, &dir, &models)?;
        messages += s.1.len();
        for (mode, stats) in &mut by_mode {
            let clock = std::time::Instant::now();
            let got = rerun(&tok, &log, *mode, &config, scratch.path(), &models)?;
            eprintln!("{} {mode}: {} turn(s) with the graph, {:.1} s", s.0, got.len(), clock.elapsed().as_secs_f64());
            stats.extend(got);
        }
        done += 1;
    }
    let half = if a.calibration { "even (calibration)" } else { "odd (report)" };
    println!(
        "{done} of {} sessions, {half} half, {messages} messages ({} turns at most each); router timeout {} ms; {:.0} s",
        sessions.len(),
        a.turns,
        config.llm.graph_router_timeout_ms,
        started.elapsed().as_secs_f64()
    );
    println!(
        "{:<10} {:>5} {:>6} {:>6} {:>6} {:>6} {:>6} {:>7} {:>8} {:>8} {:>5} {:>7} {:>7} {:>5} {:>5} {:>6}",
        "mode",
        "turns",
        "nodes",
        "fired",
        "used",
        "P",
        "R",
        "ctx_tok",
        "ms_med",
        "ms_p99",
        "calls",
        "tok_in",
        "tok_out",
        "fallb",
        "grown",
        "cost$"
    );
    for (mode, stats) in &by_mode {
        let j = Judgement::over(stats);
        let nodes = stats.iter().map(|s| s.nodes).sum::<usize>() as f64 / stats.len().max(1) as f64;
        println!(
            "{:<10} {:>5} {:>6.1} {:>6} {:>6} {:>6.3} {:>6.3} {:>7.1} {:>8.2} {:>8.2} {:>5} {:>7} {:>7} {:>5} {:>5} {:>6.2}",
            mode.as_str(),
            j.turns,
            nodes,
            j.fired,
            j.used,
            j.precision,
            j.recall,
            j.context_tokens,
            j.ms_median,
            j.ms_p99,
            j.calls,
            j.tokens_in,
            j.tokens_out,
            j.fallbacks,
            j.grown,
            0.0
        );
    }
    Ok(())
}
