//! `chalie-tui --replay LOG [--rerun] [--headless]`: play a recorded session back in the
//! TUI, print its turns as JSON, or rerun it through today's engine ([`super::rerun`]).
//! Whatever of the log can be read is replayed; what cannot is reported once on stderr.

use crate::config::{Config, Paths};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

/// At most this many unreadable lines are named; the rest are counted.
const SHOWN: usize = 10;

pub fn run(
    paths: &Paths,
    config: Config,
    path: &Path,
    rerun: bool,
    headless: bool,
    weights_version: Option<u32>,
    graph: Option<crate::memory::graph::GraphMode>,
) -> anyhow::Result<ExitCode> {
    if !rerun && !headless {
        // Playback parses each event as it plays it: a long log opens at once.
        let log = crate::session::LogIndex::read(path)?;
        warn(path, &log.warnings);
        let overrides: BTreeMap<String, Vec<String>> =
            config.keys.iter().map(|(k, v)| (k.clone(), v.value.clone())).collect();
        let runtime = super::tokio_runtime()?;
        runtime.block_on(crate::tui::replay::run(log, &path.display().to_string(), &overrides))?;
        return Ok(ExitCode::SUCCESS);
    }
    let log = crate::session::read_log(path)?;
    warn(path, &log.warnings);
    if rerun {
        let weights = match weights_version {
            Some(v) => Some(super::rerun::stored_weights(paths, v)?),
            None => None,
        };
        return super::rerun::run(&log, config, headless, weights, graph.map(|g| (g, paths)));
    }
    // Headless: the turns as JSON.
    for t in crate::session::recorded_turns(&log) {
        let line = serde_json::json!({
            "turn": t.turn, "text": t.text, "recorded_mode": t.mode, "scores": t.scores, "reply": t.reply,
        });
        super::say_json(&line.to_string());
    }
    Ok(ExitCode::SUCCESS)
}

/// Name the first [`SHOWN`] unreadable lines on stderr and count the rest.
fn warn(path: &Path, warnings: &[String]) {
    for w in warnings.iter().take(SHOWN) {
        crate::errln!("warning: {}: {}", path.display(), crate::text::terminal::safe(w));
    }
    if warnings.len() > SHOWN {
        crate::errln!(
            "warning: {}: {} more lines were skipped or not understood",
            path.display(),
            warnings.len() - SHOWN
        );
    }
}
