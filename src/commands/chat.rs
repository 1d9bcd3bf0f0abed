//! `chalie-tui` with no subcommand: the interactive TUI over the full runtime, with the
//! background workers running for as long as it is open.

use crate::config::{Config, Paths};
use crate::runtime::Runtime;
use crate::store::{self, StoreError};
use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;

pub fn run(paths: Paths, config: Config, thread: Option<String>) -> anyhow::Result<ExitCode> {
    // The startup bench's knob (README "Speed"): every start step, one frame, then a normal exit.
    let until = match std::env::var_os("CHALIE_EXIT_AFTER_FIRST_FRAME") {
        Some(v) if v == "1" => crate::tui::Until::FirstFrame,
        _ => crate::tui::Until::Quit,
    };
    if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
        offer_fresh_database(&paths.db_file, &mut std::io::stdin().lock(), &mut std::io::stderr())?;
    }
    let rt = Runtime::start(paths, config)?;
    rt.apply_router_weights()?;
    let runtime = super::tokio_runtime()?;
    let result = runtime.block_on(async {
        let background = rt.start_background();
        let result = crate::tui::run(&rt, thread, until).await;
        background.cancel();
        result
    });
    drop(runtime); // ends background tasks and their bus handles
    crate::errln!("Session log: {}\nDiagnostics: {}", rt.session_log.display(), rt.paths.log_file().display());
    rt.finish();
    result?;
    Ok(ExitCode::SUCCESS)
}

/// A damaged database stops the TUI before it starts: say so and offer to move the file aside
/// (never over anything) so a new one can be created. Declining leaves it untouched and exits
/// with the same message `ask` gives.
fn offer_fresh_database(db: &Path, input: &mut dyn BufRead, out: &mut dyn Write) -> anyhow::Result<()> {
    let err = match store::open(db) {
        Err(e @ StoreError::Corrupt { .. }) => e,
        _ => return Ok(()),
    };
    write!(out, "{err}\nMove it aside now and start with a new database? [y/N] ")?;
    out.flush()?;
    let mut answer = String::new();
    input.read_line(&mut answer)?;
    if !matches!(answer.trim(), "y" | "Y" | "yes") {
        return Err(err.into());
    }
    let aside = store::move_aside(db)?;
    writeln!(out, "Moved to {}; a new database will be created.", aside.display())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_damaged_database_is_moved_aside_only_when_the_person_says_yes() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("chalie.db");
        let junk = b"not a database at all, but a file someone cares about".repeat(200);
        std::fs::write(&db, &junk).unwrap();
        std::fs::write(dir.path().join("chalie.db.damaged-1"), b"an earlier one").unwrap();

        let mut out = Vec::new();
        let err = offer_fresh_database(&db, &mut &b"n\n"[..], &mut out).unwrap_err();
        assert!(err.to_string().contains("mv '"), "{err}");
        assert_eq!(std::fs::read(&db).unwrap(), junk, "declining leaves the file as it was");

        let mut out = Vec::new();
        offer_fresh_database(&db, &mut &b"y\n"[..], &mut out).unwrap();
        assert!(String::from_utf8_lossy(&out).contains("chalie.db.damaged-2"), "{}", String::from_utf8_lossy(&out));
        assert_eq!(std::fs::read(dir.path().join("chalie.db.damaged-2")).unwrap(), junk);
        assert_eq!(std::fs::read(dir.path().join("chalie.db.damaged-1")).unwrap(), b"an earlier one");
        assert!(!db.exists());
        // Nothing to offer for a healthy (here: new) database.
        offer_fresh_database(&db, &mut &b""[..], &mut Vec::new()).unwrap();
        assert!(store::open(&db).is_ok());
    }
}
