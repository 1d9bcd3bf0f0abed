//! One module per `chalie-tui` subcommand. The binary parses the arguments and hands each
//! command here; the steps several commands share (opening the database, storing the
//! router weights, starting the engine) live on [`crate::runtime::Runtime`].
//!
//! Commands are front-ends like the TUI: they print, and return `anyhow::Result` so the
//! binary can map a [`crate::config::ConfigError`] to exit code 2 and anything else to 1.

pub mod ask;
pub mod audit;
pub mod audit_costs;
pub mod chat;
pub mod conversations;
pub mod drift;
pub mod export;
pub mod graph;
pub mod mcp;
pub mod memory;
pub mod models;
pub mod print;
pub mod replay;
pub mod rerun;
pub mod router;
pub mod shell;
pub mod status;
pub mod tasks;
pub mod topics;
pub mod version;

use crate::config::{Config, ConfigError, Env, Paths};

/// The owners' checks of the config's raw values: key bindings by the TUI's key map, router
/// weights by the router (config sits below both and cannot tell their names from typos).
pub const CONFIG_CHECKS: &[crate::config::Check] =
    &[crate::tui::keymap::check_config, crate::cognition::router::config_check::check_config];

/// The effective config, with every owner's check passed: what every command runs on.
pub fn load_config(paths: &Paths, env: &dyn Env) -> Result<Config, ConfigError> {
    Config::load(paths, env).and_then(|c| c.checked(CONFIG_CHECKS))
}

/// A request the command cannot act on as given (input too large, wrong kind of file): the
/// binary exits 2 for it, as for a clap usage error, so scripts can tell it from a failed turn.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Whether `e` comes from a place the program cannot write (a read-only file system, or a
/// database SQLite opened read-only): the binary then says so plainly and exits 2, since
/// it is the setup that is wrong, not a turn, and nothing was written.
pub fn read_only(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::ReadOnlyFilesystem)
            || c.downcast_ref::<rusqlite::Error>()
                .is_some_and(|s| s.sqlite_error_code() == Some(rusqlite::ErrorCode::ReadOnly))
            || c.downcast_ref::<crate::store::StoreError>().is_some_and(|s| match s {
                crate::store::StoreError::Sqlite(s) | crate::store::StoreError::Migration { source: s, .. } => {
                    s.sqlite_error_code() == Some(rusqlite::ErrorCode::ReadOnly)
                }
                crate::store::StoreError::Io { source, .. } => source.kind() == std::io::ErrorKind::ReadOnlyFilesystem,
                _ => false,
            })
    })
}

/// The async runtime a command runs its engine on. Built per command, after the
/// synchronous setup, so nothing async exists before it is needed.
fn tokio_runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread().enable_all().build()?)
}

/// Print text we did not write (a reply, a memory, a recorded message) as a line on stdout,
/// with every control character made visible ([`crate::text::terminal::safe`]).
fn say(text: &str) {
    crate::outln!("{}", crate::text::terminal::safe(text));
}

/// Print one serialised JSON value as a line on stdout, with the control characters that
/// serde_json leaves raw escaped ([`crate::text::terminal::safe_json`]).
fn say_json(line: &str) {
    crate::outln!("{}", crate::text::terminal::safe_json(line));
}
