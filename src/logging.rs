//! Diagnostics go to a file: the TUI owns stdout and stderr.

use std::path::Path;
use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::EnvFilter;

/// Log to `file` at the level in `CHALIE_LOG` (default `info`; any `EnvFilter`
/// directive works, e.g. `chalie=debug`). Keep the guard alive until exit so the
/// last lines are flushed.
pub fn init(file: &Path) -> std::io::Result<WorkerGuard> {
    let dir = file.parent().unwrap_or(Path::new("."));
    crate::files::create_private_dir(dir)?;
    let name = file.file_name().unwrap_or("chalie-tui.log".as_ref());
    crate::files::ensure_private_file(&dir.join(name))?;
    let appender = tracing_appender::rolling::never(dir, name);
    let (writer, guard) = tracing_appender::non_blocking(appender);
    let filter = EnvFilter::try_from_env("CHALIE_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    // A second init (tests, embedding) keeps the first subscriber; that is fine.
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(writer).with_ansi(false).try_init();
    Ok(guard)
}
