//! `chalie-tui drift [--json] [--now]`: the drift engine's recent cycles (those that stored
//! a thought), or one cycle run now and printed, skipped or not.

use crate::cli::DriftArgs;
use crate::cognition::drift::run::{Options, run_cycle};
use crate::cognition::drift::worker::local_offset_s;
use crate::config::{Config, Paths};
use crate::events::EventBus;
use crate::store::{self, Db, DriftRepo};
use crate::vocab::drift::DriftCycle;
use std::process::ExitCode;
use tokio_util::sync::CancellationToken;

pub fn run(paths: &Paths, config: &Config, args: DriftArgs) -> anyhow::Result<ExitCode> {
    let cycles: Vec<DriftCycle> = if args.now {
        let _lock = store::InstanceLock::acquire(&paths.db_file)?;
        let db = Db::open(&paths.db_file)?;
        let o = Options {
            utc_offset_s: local_offset_s(),
            quiet: (config.drift.quiet_start, config.drift.quiet_end),
            interval_s: config.drift.interval_s,
            ..Options::default()
        };
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let now = store::now_ts();
        let seed = now as u64 ^ u64::from(std::process::id());
        vec![rt.block_on(run_cycle(&db, None, &EventBus::new(), now, seed, &o, &CancellationToken::new()))?]
    } else {
        let conn = store::open(&paths.db_file)?;
        DriftRepo(&conn).recent_cycles(args.limit)?.into_iter().map(|(_, c)| c).collect()
    };
    if args.json {
        for c in &cycles {
            super::say_json(&serde_json::to_value(c)?.to_string());
        }
    } else if cycles.is_empty() {
        crate::outln!("No drift cycles recorded yet in {}.", paths.db_file.display());
    } else {
        let lines: Vec<String> = cycles.iter().map(describe).collect();
        super::say(&lines.join("\n"));
    }
    Ok(ExitCode::SUCCESS)
}

/// One cycle in a few lines.
pub fn describe(c: &DriftCycle) -> String {
    let at = chrono::DateTime::from_timestamp(c.at, 0)
        .map(|t| t.with_timezone(&chrono::Local).format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_default();
    if let Some(why) = &c.skipped {
        return format!("{at}  skipped: {why}");
    }
    let fired: Vec<String> = c.fired.iter().map(|f| format!("{} {:.2}", f.name, f.energy)).collect();
    let scores: Vec<String> = c
        .scores
        .iter()
        .map(|s| match &s.rejected_by {
            None => format!("{} {:.2}", s.action, s.score),
            Some(g) => format!("{} ✗ {g}", s.action),
        })
        .collect();
    format!(
        "{at}  seed {} ({}), energy {:.2} vs gate {:.2}\n  fired: {}\n  {} by {}: {}\n  → {} ({})\n  scores: {}",
        c.seed.as_deref().unwrap_or("-"),
        c.strategy.as_deref().unwrap_or("-"),
        c.energy.unwrap_or(0.0),
        c.gate,
        if fired.is_empty() { "-".into() } else { fired.join(", ") },
        c.kind.as_deref().unwrap_or("thought"),
        c.author.as_deref().unwrap_or("-"),
        c.thought.as_deref().unwrap_or(""),
        c.action.as_deref().unwrap_or("-"),
        c.effect.as_deref().unwrap_or(""),
        scores.join("; "),
    )
}
