//! `chalie-tui router regulate [--dry-run] [--json]`: one cycle of the routing stability
//! regulator now, over the last 24 h of routing decisions (docs/cognition.md §15.3). A running
//! engine routes with a version written here from its next turn.

use crate::cli::{RouterAction, RouterArgs};
use crate::cognition::stability::routing::{describe, run_cycle};
use crate::config::{Config, Paths};
use crate::store;
use std::collections::BTreeSet;
use std::process::ExitCode;

pub fn run(paths: &Paths, config: &Config, args: RouterArgs) -> anyhow::Result<ExitCode> {
    let RouterAction::Regulate { dry_run, json } = args.action;
    let pinned: BTreeSet<String> = config.router_weights.keys().cloned().collect();
    let report = if dry_run {
        let conn = store::open(&paths.db_file)?;
        run_cycle(&conn, &pinned, store::now_ts(), true)?
    } else {
        // A cycle writes weights: the same claim on the database as a running engine.
        let _lock = store::InstanceLock::acquire(&paths.db_file)?;
        let conn = store::open(&paths.db_file)?;
        run_cycle(&conn, &pinned, store::now_ts(), false)?
    };
    if json {
        super::say_json(&serde_json::to_value(&report)?.to_string());
    } else {
        super::say(&describe(&report));
    }
    Ok(ExitCode::SUCCESS)
}
