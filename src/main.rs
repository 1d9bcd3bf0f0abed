//! The binary edge: parse arguments, load config, dispatch, map errors to exit codes
//! (0 ok, 2 usage or config error, 1 anything else).

use anyhow::Context;
use chalie::cli::{AskArgs, AuditArgs, Cli, Command, MemoryAction, MemoryArgs, ModelsAction, ModelsArgs};
use chalie::config::{Config, ConfigError, Paths, ProcessEnv, Role};
use chalie::events::EventBus;
use chalie::llm::local::fetch;
use chalie::llm::resolve::{self, Selection};
use chalie::runtime::Runtime;
use chalie::store::{self, RoutingRepo};
use chalie::text::clip::clip;
use clap::Parser;
use std::io::Read;
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
        return replay(config, log, cli.rerun, cli.headless);
    }
    match cli.command {
        None => interactive(paths, config),
        Some(Command::Ask(args)) => ask(paths, config, args),
        Some(Command::Audit(args)) => audit(&paths, args),
        Some(Command::Memory(args)) => memory(&paths, args),
        Some(Command::Models(args)) => models(&paths, args),
    }
}

fn print_version(paths: &Paths) {
    let config = Config::load(paths, &ProcessEnv);
    let config_state = match (paths.config_file.exists(), &config) {
        (_, Err(e)) => format!("error: {e}"),
        (true, Ok(_)) => "merged over built-in defaults".into(),
        (false, Ok(_)) => "not present; built-in defaults".into(),
    };
    println!("chalie-tui {}", env!("CARGO_PKG_VERSION"));
    println!("config:   {} ({config_state})", paths.config_file.display());
    println!("data:     {}", paths.data_dir.display());
    println!("database: {}", paths.db_file.display());
    let missing = fetch::missing(&paths.models_dir).len();
    let state = if missing == 0 {
        "built-in models present".to_string()
    } else {
        format!("{missing} built-in model file(s) not fetched yet")
    };
    println!("models:   {} ({state})", paths.models_dir.display());
    println!("log:      {}", paths.log_file().display());
    println!("vectors:  {}", chalie::store::describe_vectors(&paths.db_file));
    let Ok(config) = config else { return };
    let built = tokio().and_then(|rt| {
        Ok(rt.block_on(resolve::build(&config, &paths.models_dir, &ProcessEnv, EventBus::new(), true))?)
    });
    match built {
        Ok((llm, selection)) => {
            let how = match selection {
                Selection::Configured => "as configured".to_string(),
                Selection::BuiltIn => {
                    "no endpoint configured and none answering at Ollama's address: built-in models".into()
                }
                Selection::DetectedOllama { base_url, model } => {
                    format!("found {model} at {base_url} (Ollama's default address)")
                }
            };
            println!("active:   {how}");
            for role in Role::ALL {
                println!("  {:<12}{}", role.as_str(), llm.describe(role));
            }
            let pre = if llm.pre_routing_uses_model() {
                "triage and tie-breaker ask the lightweight model"
            } else {
                "triage and tie-breaker are deterministic (no model call before routing)"
            };
            println!("routing:  {pre} (`[llm] triage = \"{}\"`)", chalie::wire_name(&config.llm.triage));
        }
        Err(e) => println!("active:   error: {e:#}"),
    }
}

fn models(paths: &Paths, args: ModelsArgs) -> anyhow::Result<ExitCode> {
    match args.action {
        Some(ModelsAction::Fetch) => {
            let mut last = String::new();
            fetch::Fetcher::default().fetch(&paths.models_dir, &mut |p| {
                let line = chalie::llm::local::progress_line(&p);
                if line != last {
                    eprintln!("{line}");
                    last = line;
                }
            })?;
            println!("Built-in models ready in {}", paths.models_dir.display());
        }
        None => {
            let missing = fetch::missing(&paths.models_dir);
            for f in fetch::FILES {
                let state = if missing.iter().any(|m| m.file_name == f.file_name && m.model == f.model) {
                    "missing"
                } else {
                    "ok"
                };
                println!("{:<8}{}", state, fetch::model_dir(&paths.models_dir, f.model).join(f.file_name).display());
            }
            if !missing.is_empty() {
                println!("Run `chalie-tui models fetch` to download them (~190 MB).");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn tokio() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread().enable_all().build()?)
}

fn interactive(paths: Paths, config: Config) -> anyhow::Result<ExitCode> {
    let rt = Runtime::start(paths, config)?;
    apply_router_weights(&rt)?;
    let runtime = tokio()?;
    let result = runtime.block_on(async {
        let background = rt.start_background();
        let result = chalie::tui::run(&rt).await;
        background.cancel();
        result
    });
    drop(runtime); // ends background tasks and their bus handles
    eprintln!("Session log: {}\nDiagnostics: {}", rt.session_log.display(), rt.paths.log_file().display());
    rt.finish();
    result?;
    Ok(ExitCode::SUCCESS)
}

fn ask(paths: Paths, config: Config, args: AskArgs) -> anyhow::Result<ExitCode> {
    let messages: Vec<String> = match (&args.batch, &args.message) {
        (Some(file), _) => {
            let text = if file.as_os_str() == "-" {
                read_stdin()?
            } else {
                std::fs::read_to_string(file)
                    .with_context(|| format!("cannot read the batch file {}", file.display()))?
            };
            text.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_string).collect()
        }
        (None, Some(m)) if m == "-" => vec![read_stdin()?.trim_end().to_string()],
        (None, Some(m)) => vec![m.clone()],
        (None, None) => anyhow::bail!("give a MESSAGE or --batch FILE"),
    };
    let thread = match (&args.thread, &args.batch) {
        (Some(t), _) => Some(t.clone()),
        (None, Some(_)) => Some(uuid::Uuid::now_v7().to_string()),
        (None, None) => None,
    };
    let rt = Runtime::start(paths, config)?;
    apply_router_weights(&rt)?;
    let runtime = tokio()?;
    let result = runtime.block_on(async {
        let engine = rt.start_engine().await?;
        announce_models(&rt, engine.llm());
        let memory = rt.start_memory_workers();
        let cancel = tokio_util::sync::CancellationToken::new();
        let mut failed = false;
        for text in messages {
            let report = rt.converse(&engine, thread.clone(), text, &cancel).await?;
            failed |= report.failed.is_some();
            if args.json {
                println!("{}", serde_json::to_string(&report)?);
            } else if report.response.is_empty() {
                println!("({} — no reply needed)", report.mode);
            } else {
                println!("{}", report.response);
            }
            // The turn is only over once its memory encoding is committed (or has failed).
            if let Some(state) = rt.wait_for_encoding(&report.exchange_id, chalie::runtime::ENCODE_WAIT).await?
                && state != "done"
            {
                tracing::warn!(exchange_id = %report.exchange_id, %state, "memory encoding not finished at exit");
            }
        }
        memory.cancel();
        anyhow::Ok(failed)
    });
    drop(runtime);
    rt.finish();
    Ok(if result? { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

fn read_stdin() -> anyhow::Result<String> {
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).context("cannot read stdin")?;
    Ok(s)
}

fn audit(paths: &Paths, args: AuditArgs) -> anyhow::Result<ExitCode> {
    let conn = store::open(&paths.db_file)?;
    let repo = RoutingRepo(&conn);
    let rows = repo.recent(args.limit, args.mode.as_deref())?;
    let act_of = |r: &chalie::store::RoutingRecord| -> anyhow::Result<Vec<serde_json::Value>> {
        Ok(match &r.exchange_id {
            Some(x) if r.selected_mode == "ACT" => repo.act_iterations(x)?,
            _ => Vec::new(),
        })
    };
    if args.json {
        for r in &rows {
            let mut v = serde_json::to_value(r)?;
            v["act_iterations"] = serde_json::Value::Array(act_of(r)?);
            println!("{v}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    if rows.is_empty() {
        println!("No routing decisions recorded yet in {}.", paths.db_file.display());
        return Ok(ExitCode::SUCCESS);
    }
    println!("{:<20} {:<24} {:<12} {:>6} {:<4} {:>8}  why", "time", "topic", "mode", "conf", "tie", "ms");
    for r in rows {
        let time = chrono::DateTime::from_timestamp(r.created_at, 0)
            .map(|t| t.with_timezone(&chrono::Local).format("%Y-%m-%d %H:%M:%S").to_string())
            .unwrap_or_default();
        let planners: Vec<String> = act_of(&r)?
            .iter()
            .filter(|i| i["actions"].as_array().is_some_and(|a| !a.is_empty()))
            .map(|i| {
                format!(
                    "{} plan: {}",
                    i["planner"].as_str().unwrap_or("?"),
                    i["actions"].as_array().map_or(0, Vec::len)
                )
            })
            .collect();
        let reasoning = match (&r.reasoning, planners.is_empty()) {
            (Some(reason), false) => Some(format!("{reason}; {}", planners.join(", "))),
            (reason, _) => reason.clone(),
        };
        let why = match (&reasoning, &r.fallback) {
            (Some(reason), Some(f)) => format!("{reason} [fallback: {f}]"),
            (Some(reason), None) => reason.clone(),
            (None, Some(f)) => format!("[fallback: {f}]"),
            (None, None) => String::new(),
        };
        println!(
            "{:<20} {:<24} {:<12} {:>6} {:<4} {:>8}  {}",
            time,
            clip(&r.topic, 24),
            r.selected_mode,
            r.router_confidence.map_or("-".into(), |c| format!("{c:.2}")),
            if r.tiebreaker_used { "yes" } else { "no" },
            r.routing_time_ms.map_or("-".into(), |m| format!("{m:.3}")),
            why,
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn memory(paths: &Paths, args: MemoryArgs) -> anyhow::Result<ExitCode> {
    let mut conn = store::open(&paths.db_file)?;
    if let Some(MemoryAction::Forget { id, json }) = args.action {
        let id: store::MemoryId = id.parse()?;
        let f = store::forget(&mut conn, id)?;
        if json {
            println!("{}", serde_json::to_string(&f)?);
        } else {
            let what = ["gist", "trait_value", "name", "content", "value", "message"]
                .iter()
                .find_map(|k| f.snapshot.get(*k).and_then(|v| v.as_str()))
                .unwrap_or_default();
            println!("Forgot {} ({}); recorded as deletion #{}.", f.id, clip(what, 60), f.deletion_id);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let Some(kind) = args.kind else { anyhow::bail!("name a layer to list, or `memory forget ID`") };
    let rows = store::list_layer(&conn, kind, args.search.as_deref(), args.limit)?;
    if args.json {
        println!("{}", serde_json::to_string(&rows)?);
    } else if rows.is_empty() {
        match &args.search {
            Some(q) => println!("No {} mention \"{q}\".", kind.title().to_lowercase()),
            None => println!("Nothing stored in this layer yet."),
        }
    } else {
        use std::io::IsTerminal;
        let width = if std::io::stdout().is_terminal() {
            crossterm::terminal::size().map_or(120, |(w, _)| usize::from(w))
        } else {
            usize::MAX
        };
        println!("{}", chalie::cli::memory_table(&rows, *chrono::Local::now().offset(), width));
    }
    Ok(ExitCode::SUCCESS)
}

/// `--replay LOG [--rerun] [--headless]`. Whatever of the log can be read is replayed; what
/// cannot is reported once on stderr.
fn replay(config: Config, path: &std::path::Path, rerun: bool, headless: bool) -> anyhow::Result<ExitCode> {
    let log = chalie::session::read_log(path)?;
    const SHOWN: usize = 10;
    for w in log.warnings.iter().take(SHOWN) {
        eprintln!("warning: {}: {w}", path.display());
    }
    if log.warnings.len() > SHOWN {
        eprintln!(
            "warning: {}: {} more lines were skipped or not understood",
            path.display(),
            log.warnings.len() - SHOWN
        );
    }
    if rerun {
        return rerun_log(&log, config, headless);
    }
    if headless {
        for t in chalie::session::recorded_turns(&log) {
            let line = serde_json::json!({
                "turn": t.turn, "text": t.text, "recorded_mode": t.mode, "scores": t.scores, "reply": t.reply,
            });
            println!("{line}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let overrides: std::collections::BTreeMap<String, Vec<String>> =
        config.keys.iter().map(|(k, v)| (k.clone(), v.value.clone())).collect();
    let runtime = tokio()?;
    runtime.block_on(chalie::tui::replay::run(log, &path.display().to_string(), &overrides))?;
    Ok(ExitCode::SUCCESS)
}

fn rerun_log(log: &chalie::session::SessionLog, config: Config, headless: bool) -> anyhow::Result<ExitCode> {
    use std::io::{IsTerminal, Write};
    let rerun = chalie::session::Rerun::prepare(log, config, &std::env::temp_dir())?;
    let color = !headless && std::io::stdout().is_terminal();
    if !headless {
        println!("{:>4}  {:<11}    {:<11}  message", "turn", "recorded", "now");
    }
    let runtime = tokio()?;
    let result = runtime.block_on(rerun.run(|t| {
        let mut out = std::io::stdout().lock();
        let written = if headless {
            serde_json::to_string(t).map_err(std::io::Error::other).and_then(|line| writeln!(out, "{line}"))
        } else {
            let recorded = t.recorded_mode.map_or("-", |m| m.as_str());
            let mark = if t.differs { "≠" } else { " " };
            let row = format!("{:>4}  {recorded:<11} {mark}  {:<11}  {}", t.turn, t.mode.as_str(), clip(&t.text, 60));
            if t.differs && color { writeln!(out, "\x1b[1;7m{row}\x1b[0m") } else { writeln!(out, "{row}") }
        };
        if let Err(e) = written.and_then(|()| out.flush()) {
            tracing::warn!("cannot print a rerun turn: {e}");
        }
    }));
    drop(runtime);
    let stats = rerun.stats();
    let (recorded, unused) = (rerun.recorded_calls(), rerun.unused_calls());
    rerun.finish();
    let turns = result?;
    let differ = turns.iter().filter(|t| t.differs).count();
    eprintln!(
        "rerun: {} turn(s), {differ} with different routing; model calls answered from the log: {} by prompt, \
         {} by order, {} had no recording; {unused} of {recorded} recorded calls unused",
        turns.len(),
        stats.exact,
        stats.by_order,
        stats.missing
    );
    Ok(ExitCode::SUCCESS)
}

/// Store the config's `[router.weights]` as the weights version the engine will load (or take
/// a removed override back out), before any engine starts.
fn apply_router_weights(rt: &Runtime) -> anyhow::Result<()> {
    let weights: std::collections::BTreeMap<String, f64> =
        rt.config.router_weights.iter().map(|(k, v)| (k.clone(), v.value.0)).collect();
    let applied = rt.db.call_blocking(move |c| Ok(chalie::cognition::router::overrides::apply(c, &weights)))?;
    if let Some(version) = applied.context("cannot apply [router.weights] from the config")? {
        tracing::info!(version, "router weights from the config stored");
    }
    Ok(())
}

/// Log what each role calls, as the TUI does when its engine starts, so a rerun of this
/// session knows which roles were the built-in models (that decides `auto` settings).
fn announce_models(rt: &Runtime, llm: &chalie::llm::Llm) {
    let roles: Vec<chalie::events::ActiveModel> = Role::ALL
        .into_iter()
        .filter_map(|role| {
            llm.route(role).map(|r| chalie::events::ActiveModel {
                role,
                model: format!("{}/{}", r.provider.name(), r.model),
                builtin: r.builtin,
            })
        })
        .collect();
    let used =
        |model: &str| Role::ALL.iter().any(|&role| llm.route(role).is_some_and(|r| r.builtin && r.model == model));
    let missing: Vec<_> = fetch::missing(&rt.paths.models_dir).into_iter().filter(|f| used(f.model)).collect();
    let mut names: Vec<String> = missing.iter().map(|f| f.model.to_string()).collect();
    names.dedup();
    rt.bus.emit(chalie::events::EngineEvent::ModelsResolved {
        roles,
        missing_builtin: names,
        missing_builtin_bytes: missing.iter().map(|f| f.size).sum(),
    });
}
