//! The binary edge: parse arguments, load config, dispatch to [`chalie::commands`], map
//! errors to exit codes (0 ok, 2 usage or config error, 1 anything else; README "Exit codes").

use anyhow::Context;
use chalie::cli::{Cli, Command};
use chalie::commands::{self, UsageError};
use chalie::config::{ConfigError, Paths, ProcessEnv};
use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    // candle re-reads /proc/cpuinfo before every matmul unless rayon's thread count is
    // set (~1.4 ms per embedding). Set it before any thread exists, where it is sound.
    if std::env::var_os("RAYON_NUM_THREADS").is_none() {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get());
        // SAFETY: no other thread has been started yet.
        unsafe { std::env::set_var("RAYON_NUM_THREADS", n.to_string()) };
    }
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            chalie::errln!("chalie-tui: {}", chalie::text::terminal::safe(&format!("{e:#}")));
            let full = |c: &(dyn std::error::Error + 'static)| {
                c.downcast_ref::<chalie::store::StoreError>().is_some_and(|s| s.is_disk_full())
            };
            if e.chain().any(full) {
                chalie::errln!(
                    "chalie-tui: the disk is full (or cannot be written), so nothing was saved; free some space and \
                     try again"
                );
            }
            if commands::read_only(&e) {
                chalie::errln!(
                    "chalie-tui: the data directory or database is read-only, so nothing was written; make it \
                     writable, or point CHALIE_DATA_DIR (or --db FILE) at a writable place"
                );
                return ExitCode::from(2);
            }
            let usage = e.downcast_ref::<ConfigError>().is_some() || e.downcast_ref::<UsageError>().is_some();
            if usage { ExitCode::from(2) } else { ExitCode::from(1) }
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let paths = Paths::resolve(&ProcessEnv, cli.config.as_deref(), cli.db.as_deref());
    if cli.version {
        commands::version::run(&paths);
        return Ok(ExitCode::SUCCESS);
    }
    // Shell integration needs no config: it must work before one exists, or with a broken one.
    match &cli.command {
        Some(Command::Completions { shell }) => return commands::shell::completions(*shell),
        Some(Command::Man) => return commands::shell::man(),
        _ => {}
    }
    let config = commands::load_config(&paths, &ProcessEnv)?;
    let _log_guard = chalie::logging::init(&paths.log_file())
        .with_context(|| format!("cannot open the log file {}", paths.log_file().display()))?;
    tracing::info!(version = env!("CARGO_PKG_VERSION"), config_digest = %config.digest(), "starting");

    if let Some(log) = &cli.replay {
        return commands::replay::run(&paths, config, log, cli.rerun, cli.headless, cli.weights_version, cli.graph);
    }
    match cli.command {
        None => commands::chat::run(paths, config, cli.thread),
        Some(Command::Ask(args)) => commands::ask::run(paths, config, args),
        Some(Command::Audit(args)) => commands::audit::run(&paths, &config, args),
        Some(Command::Memory(args)) => commands::memory::run(&paths, args),
        Some(Command::Graph(args)) => commands::graph::run(&paths, args),
        Some(Command::Models(args)) => commands::models::run(&paths, &config, args),
        Some(Command::Status) => commands::status::run(&paths),
        Some(Command::Drift(args)) => commands::drift::run(&paths, &config, args),
        Some(Command::Conversations(args)) => commands::conversations::run(&paths, args),
        Some(Command::Export { file }) => commands::export::export(&paths, &file),
        Some(Command::Import { file, merge }) => commands::export::import(&paths, &file, merge),
        Some(Command::Mcp { action }) => commands::mcp::run(&paths, &config, action),
        Some(Command::Completions { .. } | Command::Man) => Ok(ExitCode::SUCCESS),
        Some(Command::Tasks(args)) => commands::tasks::run(paths, config, args),
        Some(Command::Router(args)) => commands::router::run(&paths, &config, args),
        Some(Command::Topics(args)) => commands::topics::run(&paths, args),
    }
}
