//! Shell integration that needs no config or database: completion scripts and the man page,
//! both generated from the one clap definition in [`crate::cli`] so they never drift from it.

use crate::cli::Cli;
use clap::CommandFactory;
use std::process::ExitCode;

/// `chalie-tui completions SHELL`: the completion script on stdout.
pub fn completions(shell: clap_complete::Shell) -> anyhow::Result<ExitCode> {
    // Rendered first: clap_complete panics when the stream it writes to fails, and a closed
    // reader (`completions bash | true`) is not an error of ours.
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "chalie-tui", &mut out);
    super::print::out_bytes(&out);
    Ok(ExitCode::SUCCESS)
}

/// `chalie-tui man`: the man page in roff on stdout.
pub fn man() -> anyhow::Result<ExitCode> {
    let mut out = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut out)?;
    super::print::out_bytes(&out);
    Ok(ExitCode::SUCCESS)
}
