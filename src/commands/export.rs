//! `chalie-tui export FILE` and `import FILE [--merge]`: everything the assistant keeps, as
//! one versioned JSON document ([`crate::store::export`]), and back into a database.

use crate::config::Paths;
use crate::store::{self, export};
use anyhow::Context;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

pub fn export(paths: &Paths, file: &Path) -> anyhow::Result<ExitCode> {
    let conn = store::open(&paths.db_file)?;
    let doc = export::export(&conn)?;
    let rows: usize = doc.tables.values().map(|t| t.rows.len()).sum();
    let json = serde_json::to_vec(&doc)?;
    if file.as_os_str() == "-" {
        std::io::stdout().lock().write_all(&json)?;
    } else {
        // Written beside the target and renamed, so an interrupted export never leaves half a file.
        let tmp = file.with_extension("partial");
        std::fs::write(&tmp, &json).with_context(|| format!("cannot write {}", tmp.display()))?;
        std::fs::rename(&tmp, file).with_context(|| format!("cannot write {}", file.display()))?;
        crate::errln!("Exported {rows} rows from {} tables to {}.", doc.tables.len(), file.display());
    }
    Ok(ExitCode::SUCCESS)
}

pub fn import(paths: &Paths, file: &Path, merge: bool) -> anyhow::Result<ExitCode> {
    let text = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    let doc: export::ExportDoc = serde_json::from_slice(&text)
        .map_err(|e| super::UsageError(format!("{} is not a chalie-tui export: {e}", file.display())))?;
    // Nobody else may be writing while the rows go in.
    let _lock = store::InstanceLock::acquire(&paths.db_file)?;
    let mut conn = store::open(&paths.db_file)?;
    let fresh = export::row_counts(&store::open_in_memory()?)?;
    let report = export::import(&mut conn, &doc, &fresh, merge).map_err(|e| match e {
        e @ (export::ExportError::NotEmpty { .. }
        | export::ExportError::NotAnExport(_)
        | export::ExportError::SchemaMismatch { .. }) => anyhow::Error::new(super::UsageError(e.to_string())),
        e => anyhow::Error::new(e),
    })?;
    let inserted: u64 = report.inserted.values().sum();
    let skipped: u64 = report.skipped.values().sum();
    crate::errln!(
        "Imported {inserted} rows into {}{}{}.",
        paths.db_file.display(),
        if skipped > 0 { format!(" ({skipped} already there, kept as they were)") } else { String::new() },
        match report.renumbered {
            0 => String::new(),
            n => format!(" ({n} under new ids: theirs were taken)"),
        }
    );
    Ok(ExitCode::SUCCESS)
}
