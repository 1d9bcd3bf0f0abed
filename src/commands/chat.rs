//! `chalie-tui` with no subcommand: the interactive TUI over the full runtime, with the
//! background workers running for as long as it is open.

use crate::config::{Config, Paths};
use crate::runtime::Runtime;
use std::process::ExitCode;

pub fn run(paths: Paths, config: Config) -> anyhow::Result<ExitCode> {
    let rt = Runtime::start(paths, config)?;
    rt.apply_router_weights()?;
    let runtime = super::tokio_runtime()?;
    let result = runtime.block_on(async {
        let background = rt.start_background();
        let result = crate::tui::run(&rt).await;
        background.cancel();
        result
    });
    drop(runtime); // ends background tasks and their bus handles
    eprintln!("Session log: {}\nDiagnostics: {}", rt.session_log.display(), rt.paths.log_file().display());
    rt.finish();
    result?;
    Ok(ExitCode::SUCCESS)
}
