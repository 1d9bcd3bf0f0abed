//! `chalie-tui status`: every background worker with its state, last run, queue depth and
//! last error, read from the database (the same report the F1 popup shows live).

use crate::config::Paths;
use crate::store;
use std::process::ExitCode;

pub fn run(paths: &Paths) -> anyhow::Result<ExitCode> {
    let conn = store::open(&paths.db_file)?;
    let report = crate::memory::workers::status_report(&conn, None, store::now_ts())?;
    crate::out!("{}", crate::text::terminal::safe(&report.to_string()));
    Ok(ExitCode::SUCCESS)
}
