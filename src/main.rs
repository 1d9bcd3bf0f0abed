//! The binary edge: parse arguments, load config, dispatch, map errors to exit codes
//! (0 ok, 2 usage or config error, 1 anything else).

use anyhow::Context;
use chalie::cli::{AskArgs, AuditArgs, Cli, Command, MemoryArgs};
use chalie::config::{Config, ConfigError, Paths, ProcessEnv};
use chalie::runtime::Runtime;
use chalie::store::{self, RoutingRepo};
use clap::Parser;
use std::io::Read;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("chalie-tui: {e:#}");
            if e.downcast_ref::<ConfigError>().is_some() { ExitCode::from(2) } else { ExitCode::from(1) }
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let paths = Paths::resolve(&ProcessEnv, cli.config.as_deref(), cli.db.as_deref());
    if cli.version {
        print_version(&paths);
        return Ok(ExitCode::SUCCESS);
    }
    let config = Config::load(&paths, &ProcessEnv)?;
    let _log_guard = chalie::logging::init(&paths.log_file())
        .with_context(|| format!("cannot open the log file {}", paths.log_file().display()))?;
    tracing::info!(version = env!("CARGO_PKG_VERSION"), config_digest = %config.digest(), "starting");

    if let Some(log) = &cli.replay {
        let log = chalie::session::read_log(log)?;
        for w in &log.warnings {
            eprintln!("warning: {w}");
        }
        anyhow::bail!(
            "read {} events of session {}; playback is not part of this build yet",
            log.entries.len(),
            log.header.session_id
        );
    }
    match cli.command {
        None => interactive(paths, config),
        Some(Command::Ask(args)) => ask(paths, config, args),
        Some(Command::Audit(args)) => audit(&paths, args),
        Some(Command::Memory(args)) => memory(&paths, args),
    }
}

fn print_version(paths: &Paths) {
    let config_state = match (paths.config_file.exists(), Config::load(paths, &ProcessEnv)) {
        (_, Err(e)) => format!("error: {e}"),
        (true, Ok(_)) => "merged over built-in defaults".into(),
        (false, Ok(_)) => "not present; built-in defaults".into(),
    };
    println!("chalie-tui {}", env!("CARGO_PKG_VERSION"));
    println!("config:   {} ({config_state})", paths.config_file.display());
    println!("data:     {}", paths.data_dir.display());
    println!("database: {}", paths.db_file.display());
    println!("models:   {}", paths.models_dir.display());
    println!("log:      {}", paths.log_file().display());
}

fn tokio() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread().enable_all().build()?)
}

fn interactive(paths: Paths, config: Config) -> anyhow::Result<ExitCode> {
    let rt = Runtime::start(paths, config)?;
    let runtime = tokio()?;
    let result = runtime.block_on(chalie::tui::run(&rt));
    drop(runtime); // ends background tasks and their bus handles
    eprintln!("Session log: {}\nDiagnostics: {}", rt.session_log.display(), rt.paths.log_file().display());
    rt.finish();
    result?;
    Ok(ExitCode::SUCCESS)
}

fn ask(paths: Paths, config: Config, args: AskArgs) -> anyhow::Result<ExitCode> {
    let message = if args.message == "-" {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s).context("cannot read the message from stdin")?;
        s.trim_end().to_string()
    } else {
        args.message
    };
    let rt = Runtime::start(paths, config)?;
    let (thread, exchange) = tokio()?.block_on(rt.intake(args.thread, message))?;
    let db = rt.paths.db_file.clone();
    rt.finish();
    anyhow::bail!(
        "message stored (thread {thread}, exchange {exchange}) in {}, but this build has no cognition pipeline to answer it yet",
        db.display()
    )
}

fn audit(paths: &Paths, args: AuditArgs) -> anyhow::Result<ExitCode> {
    let conn = store::open(&paths.db_file)?;
    let rows = RoutingRepo(&conn).recent(args.limit, args.mode.as_deref())?;
    if args.json {
        for r in &rows {
            println!("{}", serde_json::to_string(r)?);
        }
        return Ok(ExitCode::SUCCESS);
    }
    if rows.is_empty() {
        println!("No routing decisions recorded yet in {}.", paths.db_file.display());
        return Ok(ExitCode::SUCCESS);
    }
    println!("{:<20} {:<24} {:<12} {:>6} {:<4} {:>8}", "time", "topic", "mode", "conf", "tie", "ms");
    for r in rows {
        let time = chrono::DateTime::from_timestamp(r.created_at, 0)
            .map(|t| t.with_timezone(&chrono::Local).format("%Y-%m-%d %H:%M:%S").to_string())
            .unwrap_or_default();
        println!(
            "{:<20} {:<24} {:<12} {:>6} {:<4} {:>8}",
            time,
            truncate(&r.topic, 24),
            r.selected_mode,
            r.router_confidence.map_or("-".into(), |c| format!("{c:.2}")),
            if r.tiebreaker_used { "yes" } else { "no" },
            r.routing_time_ms.map_or("-".into(), |m| format!("{m:.3}")),
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn memory(paths: &Paths, args: MemoryArgs) -> anyhow::Result<ExitCode> {
    let conn = store::open(&paths.db_file)?;
    let rows = store::list_layer(&conn, args.kind, args.limit)?;
    if args.json {
        for r in &rows {
            println!("{}", serde_json::to_string(r)?);
        }
    } else if rows.is_empty() {
        println!("Nothing stored in this layer yet.");
    } else {
        for r in rows {
            let line: Vec<String> = r.iter().map(|(k, v)| format!("{k}={}", v.to_string().trim_matches('"'))).collect();
            println!("{}", line.join("  "));
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n { s.to_string() } else { s.chars().take(n - 1).chain(['…']).collect() }
}
