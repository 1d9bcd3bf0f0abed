//! Shell integration that needs no config or database: completion scripts and the man page,
//! both generated from the one clap definition in [`crate::cli`] so they never drift from it.

use crate::cli::Cli;
use clap::CommandFactory;
use std::process::ExitCode;

/// `chalie-tui completions SHELL`: the completion script on stdout.
pub fn completions(shell: clap_complete::Shell) -> anyhow::Result<ExitCode> {
    let mut cmd = Cli::command();
    clap_complete::generate(shell, &mut cmd, "chalie-tui", &mut std::io::stdout());
    Ok(ExitCode::SUCCESS)
}

/// `chalie-tui man`: the man page in roff on stdout.
pub fn man() -> anyhow::Result<ExitCode> {
    let mut out = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut out)?;
    std::io::Write::write_all(&mut std::io::stdout().lock(), &out)?;
    Ok(ExitCode::SUCCESS)
}
