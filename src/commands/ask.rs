//! `chalie-tui ask`: messages through the full pipeline without the TUI, one reply (or one
//! JSON turn report) per message. Exit code 1 when any turn failed.

use crate::cli::AskArgs;
use crate::config::{Config, Paths};
use crate::runtime::{ENCODE_WAIT, Runtime};
use crate::store::JobState;
use anyhow::Context;
use std::io::Read;
use std::process::ExitCode;

pub fn run(paths: Paths, config: Config, args: AskArgs) -> anyhow::Result<ExitCode> {
    let messages = messages(&args)?;
    let thread = match (&args.thread, &args.batch) {
        (Some(t), _) => Some(t.clone()),
        // A batch is one conversation of its own, not a continuation of the last one.
        (None, Some(_)) => Some(uuid::Uuid::now_v7().to_string()),
        (None, None) => None,
    };
    let rt = Runtime::start(paths, config)?;
    rt.apply_router_weights()?;
    let runtime = super::tokio_runtime()?;
    let result = runtime.block_on(async {
        let engine = rt.start_engine().await?;
        rt.announce_models(engine.llm());
        let memory = rt.start_memory_workers();
        let cancel = tokio_util::sync::CancellationToken::new();
        let mut failed = false;
        for text in messages {
            let report = rt.converse(&engine, thread.clone(), text, &cancel).await?;
            failed |= report.failed.is_some();
            if args.json {
                super::say_json(&serde_json::to_string(&report)?);
            } else if report.response.is_empty() {
                println!("({} — no reply needed)", report.mode);
            } else {
                super::say(&report.response);
            }
            // The turn is only over once its memory encoding is committed (or has failed).
            if let Some(state) = rt.wait_for_encoding(&report.exchange_id, ENCODE_WAIT).await?
                && state != JobState::Done
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

/// The messages to send: every non-blank line of the batch, or the one message.
fn messages(args: &AskArgs) -> anyhow::Result<Vec<String>> {
    Ok(match (&args.batch, &args.message) {
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
    })
}

fn read_stdin() -> anyhow::Result<String> {
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).context("cannot read stdin")?;
    Ok(s)
}
