//! `--replay LOG --rerun`: the recorded messages through the current engine (see
//! [`crate::runtime::rerun::Rerun`]), one line per turn marking where routing now differs, or one
//! JSON object per turn with `--headless`, and a summary of how the model calls were answered.

use crate::cognition::router::RouterWeights;
use crate::config::Role;
use crate::config::{Config, Paths};
use crate::llm::Route;
use crate::memory::graph::GraphMode;
use crate::memory::graph::mode::Judgement;
use crate::runtime::rerun::{Rerun, RerunTurn};
use crate::session::SessionLog;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

/// Router weights version `version` of the database at `paths`, for `--weights-version`.
pub fn stored_weights(paths: &Paths, version: u32) -> anyhow::Result<(u32, RouterWeights)> {
    let conn = crate::store::open(&paths.db_file)?;
    let Some(v) = crate::store::RouterWeightsRepo(&conn).get(version)? else {
        anyhow::bail!("{} has no router weights version {version}", paths.db_file.display());
    };
    let w: RouterWeights = serde_json::from_str(&v.weights)?;
    w.validate().map_err(|e| anyhow::anyhow!("router weights v{version} are unusable: {e}"))?;
    Ok((version, w))
}

pub fn run(
    log: &SessionLog,
    config: Config,
    headless: bool,
    weights: Option<(u32, RouterWeights)>,
    graph: Option<(GraphMode, &Paths)>,
) -> anyhow::Result<ExitCode> {
    let runtime = super::tokio_runtime()?;
    let live = match graph {
        Some((GraphMode::V2, paths)) => Some(runtime.block_on(live_lightweight(&config, paths))?),
        _ => None,
    };
    let mut rerun = Rerun::prepare(log, config, &std::env::temp_dir())?;
    if let Some((mode, _)) = graph {
        rerun.use_graph(mode, live);
    }
    if let Some((version, w)) = weights
        && let Err(e) = rerun.use_weights(&w, &format!("--weights-version {version}"))
    {
        rerun.finish();
        return Err(e.into());
    }
    let color = !headless && std::io::stdout().is_terminal();
    if !headless {
        crate::outln!("{:>4}  {:<11}    {:<11}  message", "turn", "recorded", "now");
    }
    let result = runtime.block_on(rerun.run(|t| {
        // Each turn is printed as soon as it is ready: a long rerun shows progress.
        let mut out = std::io::stdout().lock();
        let written = if headless {
            serde_json::to_string(t)
                .map_err(std::io::Error::other)
                .and_then(|line| writeln!(out, "{}", crate::text::terminal::safe_json(&line)))
        } else {
            let row = row(t);
            if t.differs && color { writeln!(out, "\x1b[1;7m{row}\x1b[0m") } else { writeln!(out, "{row}") }
        };
        if let Err(e) = written.and_then(|()| out.flush()) {
            tracing::warn!("cannot print a rerun turn: {e}");
        }
    }));
    drop(runtime);
    let stats = rerun.stats();
    let (recorded, unused) = (rerun.recorded_calls(), rerun.unused_calls());
    rerun.finish();
    let turns = result?;
    if let Some((mode, _)) = graph {
        let j = Judgement::over(turns.iter().filter_map(|t| t.graph.as_ref()));
        crate::errln!(
            "graph {mode}: {} turn(s) ran it; precision {:.3} ({} of {} fired), recall {:.3} (of {} the replies named); \
             {:.1} context tokens a turn; {:.2} ms median, {:.2} ms p99; {} model call(s), {} tokens in, {} out; \
             {} fallback(s); {} node(s) grown",
            j.turns,
            j.precision,
            j.hits,
            j.fired,
            j.recall,
            j.used,
            j.context_tokens,
            j.ms_median,
            j.ms_p99,
            j.calls,
            j.tokens_in,
            j.tokens_out,
            j.fallbacks,
            j.grown
        );
    }
    let differ = turns.iter().filter(|t| t.differs).count();
    crate::errln!(
        "rerun: {} turn(s), {differ} with different routing; model calls answered from the log: {} by prompt, \
         {} by order, {} had no recording; {unused} of {recorded} recorded calls unused",
        turns.len(),
        stats.exact,
        stats.by_order,
        stats.missing
    );
    Ok(ExitCode::SUCCESS)
}

/// One table line: turn, recorded mode, a `≠` where the mode changed, the mode now, message,
/// and the regulator's decision when it is not `continue`.
fn row(t: &RerunTurn) -> String {
    let recorded = t.recorded_mode.map_or("-", |m| m.as_str());
    let mark = if t.differs { "≠" } else { " " };
    let regulator =
        if t.regulator.decision == "continue" { String::new() } else { format!("  [{}]", t.regulator.decision) };
    format!(
        "{:>4}  {recorded:<11} {mark}  {:<11}  {}{regulator}",
        t.turn,
        t.mode.as_str(),
        crate::text::terminal::safe(&crate::text::clip::clip(&t.text, 60))
    )
}

/// The configured lightweight model, live, for the v2 router of `--graph v2` (the built-in one
/// when the config names none).
async fn live_lightweight(config: &Config, paths: &Paths) -> anyhow::Result<Route> {
    let bus = crate::events::EventBus::new();
    let (llm, _) =
        crate::llm::resolve::build(config, &paths.models_dir, &crate::config::ProcessEnv, bus, false).await?;
    llm.route(Role::Lightweight)
        .cloned()
        .ok_or_else(|| anyhow::anyhow!("--graph v2 needs a lightweight model, and the config names none"))
}
