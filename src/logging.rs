//! Diagnostics go to a file: the TUI owns stdout and stderr.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use tracing_appender::non_blocking::{NonBlocking, WorkerGuard};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;

/// The diagnostics log this process writes, once [`init`] ran: a forget rewrites it.
static LOG_FILE: OnceLock<PathBuf> = OnceLock::new();

/// Every diagnostics line goes through [`crate::text::privacy::mask`] before it reaches the
/// file: a password or card number a warning happened to quote is never written.
#[derive(Clone)]
struct Masking(NonBlocking);

impl<'a> MakeWriter<'a> for Masking {
    type Writer = MaskingWriter;
    fn make_writer(&'a self) -> MaskingWriter {
        MaskingWriter(self.0.clone())
    }
}

struct MaskingWriter(NonBlocking);

impl Write for MaskingWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        let masked = crate::text::privacy::mask(&text);
        self.0.write_all(masked.as_bytes())?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// Remove `needles` from the diagnostics log: rewritten in place (same file, so the
/// appender's handle keeps appending to it). Returns whether it changed.
pub fn scrub(file: &Path, needles: &[String]) -> std::io::Result<bool> {
    let text = match std::fs::read(file) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    let Some(clean) = crate::text::privacy::replace_all_ci(&text, needles, "[forgotten]") else { return Ok(false) };
    let mut f = std::fs::OpenOptions::new().write(true).truncate(true).open(file)?;
    f.write_all(clean.as_bytes())?;
    f.sync_all()?;
    Ok(true)
}

/// [`scrub`] of this process's diagnostics log, if it has one.
pub fn scrub_current(needles: &[String]) -> std::io::Result<bool> {
    match LOG_FILE.get() {
        Some(f) => scrub(f, needles),
        None => Ok(false),
    }
}

/// Log to `file` at the level in `CHALIE_LOG` (default `info`; any `EnvFilter`
/// directive works, e.g. `chalie=debug`). Keep the guard alive until exit so the
/// last lines are flushed.
pub fn init(file: &Path) -> std::io::Result<WorkerGuard> {
    let dir = file.parent().unwrap_or(Path::new("."));
    crate::files::create_private_dir(dir)?;
    let name = file.file_name().unwrap_or("chalie-tui.log".as_ref());
    crate::files::ensure_private_file(&dir.join(name))?;
    // The builder, not `rolling::never`, which panics where the file cannot be opened (a
    // read-only data dir): that is an error to report, not a crash.
    let appender = tracing_appender::rolling::RollingFileAppender::builder()
        .rotation(tracing_appender::rolling::Rotation::NEVER)
        .filename_prefix(name.to_string_lossy())
        .build(dir)
        .map_err(std::io::Error::other)?;
    let (writer, guard) = tracing_appender::non_blocking(appender);
    let filter = EnvFilter::try_from_env("CHALIE_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    // A second init (tests, embedding) keeps the first subscriber; that is fine.
    let _ = LOG_FILE.set(file.to_path_buf());
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(Masking(writer)).with_ansi(false).try_init();
    Ok(guard)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forget_rewrites_the_diagnostics_log_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("chalie-tui.log");
        std::fs::write(&f, "INFO turn topic=ex-jordan-texts\nINFO other\n").unwrap();
        let mut appender = std::fs::OpenOptions::new().append(true).open(&f).unwrap();
        assert!(scrub(&f, &["jordan".into()]).unwrap());
        // The appender's handle still appends to the same file.
        appender.write_all(b"INFO after\n").unwrap();
        assert_eq!(
            std::fs::read_to_string(&f).unwrap(),
            "INFO turn topic=ex-[forgotten]-texts\nINFO other\nINFO after\n"
        );
        assert!(!scrub(&f, &["jordan".into()]).unwrap());
    }

    #[test]
    fn lines_are_masked_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let (w, _guard) = tracing_appender::non_blocking(std::fs::File::create(dir.path().join("l")).unwrap());
        let mut m = Masking(w).make_writer();
        m.write_all(b"WARN parse failed on 'my pin is 4921'\n").unwrap();
        drop(m);
        drop(_guard);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("l")).unwrap(),
            "WARN parse failed on 'my pin is [secret]'\n"
        );
    }
}
