//! `chalie-tui ask`: messages through the full pipeline without the TUI, one reply (or one
//! JSON turn report) per message. Exit code 1 when any turn failed.

use crate::cli::AskArgs;
use crate::config::{Config, Paths};
use crate::runtime::{ENCODE_WAIT, Runtime};
use crate::store::JobState;
use anyhow::Context;
use std::io::{IsTerminal, Read};
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
        let mut log_told = None;
        for text in messages {
            tell_log_state(&rt, &mut log_told);
            let report = rt.converse(&engine, thread.clone(), text, &cancel).await?;
            failed |= report.failed.is_some();
            if args.json {
                super::say_json(&serde_json::to_string(&report)?);
            } else if report.response.is_empty() {
                crate::outln!("({} — no reply needed)", report.mode);
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
        tell_log_state(&rt, &mut log_told);
        memory.cancel();
        anyhow::Ok(failed)
    });
    drop(runtime);
    rt.finish();
    Ok(if result? { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// Say on stderr when the session log pauses (the turn goes on without it) and when it is
/// written again; `told` is what was said last.
fn tell_log_state(rt: &Runtime, told: &mut Option<String>) {
    let now = rt.session_log_paused();
    if now == *told {
        return;
    }
    match &now {
        Some(why) => crate::errln!("chalie-tui: {}", crate::text::terminal::safe(why)),
        None => crate::errln!("chalie-tui: the session log is written again"),
    }
    *told = now;
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
        // Piped input goes under the question, as `git diff | chalie-tui ask "review this"`
        // reads; a terminal on stdin means nothing was piped, so nothing is waited for.
        (None, Some(m)) if !std::io::stdin().is_terminal() => vec![with_piped(m, &read_stdin()?)],
        (None, Some(m)) => vec![m.clone()],
        (None, None) => anyhow::bail!("give a MESSAGE or --batch FILE"),
    })
}

/// The most stdin may carry. A 1 MiB log paste is a supported message; past this the text
/// would not fit any model's context and only slows the embedding and the store.
pub const STDIN_LIMIT: u64 = 4 << 20;

fn read_stdin() -> anyhow::Result<String> {
    read_bounded(&mut std::io::stdin().lock(), STDIN_LIMIT)
}

/// All of `input` as text, refused (as a usage error) past `limit` bytes or when not UTF-8.
fn read_bounded(input: &mut dyn Read, limit: u64) -> anyhow::Result<String> {
    let mut bytes = Vec::new();
    input.take(limit + 1).read_to_end(&mut bytes).context("cannot read stdin")?;
    if bytes.len() as u64 > limit {
        return Err(super::UsageError(format!(
            "stdin holds more than {} MiB; send a smaller part (e.g. `head -c 1M`)",
            limit >> 20
        ))
        .into());
    }
    String::from_utf8(bytes).map_err(|_| super::UsageError("stdin is not UTF-8 text".to_string()).into())
}

/// The message with piped text under it; no piped text (or only blanks) leaves it as typed.
fn with_piped(message: &str, piped: &str) -> String {
    let piped = piped.trim_end();
    if piped.trim().is_empty() { message.to_string() } else { format!("{message}\n\n{piped}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn piped_text_goes_under_the_question() {
        assert_eq!(with_piped("review this", "diff --git a b\n+x\n\n"), "review this\n\ndiff --git a b\n+x");
        assert_eq!(with_piped("hello", " \n"), "hello");
    }

    #[test]
    fn stdin_past_the_limit_or_not_text_is_a_usage_error() {
        let ok = read_bounded(&mut &b"12345"[..], 5).unwrap();
        assert_eq!(ok, "12345");
        let err = read_bounded(&mut &b"123456"[..], 5).unwrap_err();
        assert!(err.downcast_ref::<super::super::UsageError>().is_some(), "{err}");
        let err = read_bounded(&mut &[0xff, 0xfe][..], 5).unwrap_err();
        assert!(err.to_string().contains("UTF-8"), "{err}");
    }
}
