//! `chalie-tui topics regulate [--dry-run] [--json]`: one cycle of the topic stability
//! regulator now, over the last three days of messages (docs/cognition.md §5.6). A running
//! engine classifies with a version written here from its next turn.

use crate::cli::{TopicsAction, TopicsArgs};
use crate::cognition::stability::topics_cycle::{describe, run_cycle};
use crate::config::Paths;
use crate::store;
use std::collections::BTreeSet;
use std::process::ExitCode;

pub fn run(paths: &Paths, args: TopicsArgs) -> anyhow::Result<ExitCode> {
    let TopicsAction::Regulate { dry_run, json } = args.action;
    let report = if dry_run {
        let conn = store::open(&paths.db_file)?;
        run_cycle(&conn, &BTreeSet::new(), store::now_ts(), true)?
    } else {
        // A cycle writes parameters: the same claim on the database as a running engine.
        let _lock = store::InstanceLock::acquire(&paths.db_file)?;
        let conn = store::open(&paths.db_file)?;
        run_cycle(&conn, &BTreeSet::new(), store::now_ts(), false)?
    };
    if json {
        super::say_json(&serde_json::to_value(&report)?.to_string());
    } else {
        super::say(&describe(&report));
    }
    Ok(ExitCode::SUCCESS)
}
