//! The one SQLite file (WAL, sqlite-vec loaded) and the repositories over it.
//!
//! Repositories are small types borrowing a `&Connection`, so they are plain
//! synchronous code that tests call directly. Async code reaches the database through
//! [`Db`], which owns the connection on a dedicated thread: SQLite calls never block a
//! tokio worker.
//!
//! Every SQL statement of the crate is in this module (a test, `sql_boundary`, fails on one
//! outside it). Each table has one repository that owns its statements; callers elsewhere
//! name operations, never tables. [`TurnRepo`] is what one turn reads and commits, made of
//! these repositories' calls in one transaction. Table → file → repository:
//!
//! - `user_traits` → `traits.rs` → [`TraitsRepo`]
//! - `gists` → `gists.rs` → [`GistsRepo`]
//! - `facts` → `facts.rs` → [`FactsRepo`]
//! - `fok` → `fok.rs` → [`FokRepo`]
//! - `world_state` → `world_state.rs` → [`WorldStateRepo`]
//! - `working_memory` → `working_memory.rs` → [`WorkingMemoryRepo`]
//! - `kv_state` → `kv_state.rs` → [`KvStateRepo`]
//! - `episodes` → `episodes.rs` → [`EpisodesRepo`]
//! - `semantic_concepts` → `concepts.rs` → [`ConceptsRepo`]
//! - `semantic_relationships` → `relationships.rs` → [`RelationshipsRepo`]
//! - `reminders` → `reminders.rs` → [`RemindersRepo`]
//! - `focus_sessions` → `focus_sessions.rs` → [`FocusSessionsRepo`]
//! - `router_weights` → `router_weights.rs` → [`RouterWeightsRepo`]
//! - `routing_decisions` → `routing.rs` → [`RoutingRepo`]
//! - `routing_adjustments` → `routing_adjustments.rs` → [`RoutingAdjustmentsRepo`]
//! - `topic_params` → `topic_params.rs` → [`TopicParamsRepo`]
//! - `topic_adjustments` → `topic_adjustments.rs` → [`TopicAdjustmentsRepo`]
//! - `cortex_iterations` → `cortex_iterations.rs` → [`CortexIterationsRepo`] (the audit's read: [`RoutingRepo::act_iterations`])
//! - `interaction_log` → `interaction_log.rs` → [`InteractionLogRepo`]
//! - `threads`, `chat_history` → `chat.rs` → [`ChatRepo`]
//! - `topics`, `triage_calibration` → `turn.rs` → [`TurnRepo`]; `boundary_state`, `boundary_recent` →
//!   `boundary.rs` → [`TurnRepo`]; `topic_stamps` → `topic_cache.rs` (the topics' in-process copy)
//!   and [`TurnRepo::boundary_stamp`]
//! - `jobs` → `jobs.rs` → [`JobsRepo`]
//! - `lists`, `list_items`, `list_history` → `lists.rs` → [`ListsRepo`]
//! - `episode_vec`, `concept_vec`, `trait_vec`, `fact_vec` (int8, one row a vector) → `vectors.rs` → [`VectorRepo`];
//!   `vector_codes`, `vector_code_state` → `vector_codes.rs`
//! - `embedding_space`, `reembed_pending` → `embedding_space.rs` (functions)
//! - `uncertainties` → `uncertainties.rs` → [`UncertaintiesRepo`] (closing on forget: `forget.rs`; the
//!   UI's startup read: `ui.rs`)
//! - `identity_vectors` → `identity.rs` → [`IdentityRepo`]
//! - `persistent_tasks` → `tasks.rs` → [`TasksRepo`]
//! - `memory_deletions` → `forget.rs` (the block list of forgotten exchanges: `purge.rs`); `drift_thoughts` (UI reads) → `ui.rs`
//!
//! Three read models and one write span tables on purpose, because their callers rank or show layers side
//! by side: the memory browser ([`list_layer`], [`get_row`] in `browse.rs`), hybrid recall
//! ([`RecallRepo`] in `recall.rs`), the decay pass's expiry of the short-lived tables
//! ([`expired_rows`] in `expiry.rs`), and one write: the forget purge ([`purge::purge`] in
//! `purge.rs`), which must reach every table a user's words were copied to. `export.rs` copies
//! every table (read from the schema) to one JSON document and back.

mod batch;
mod boundary;
mod browse;
mod chat;
mod concepts;
mod cortex_iterations;
mod db;
mod drift;
mod embedding_space;
mod episodes;
mod expiry;
pub mod export;
mod facts;
#[cfg(test)]
pub(crate) mod fixtures;
mod focus_sessions;
mod fok;
mod forget;
mod gists;
mod graph_log;
mod identity;
mod instance;
mod interaction_log;
mod introspection;
mod jobs;
mod kv_state;
mod lists;
mod migrate;
mod profile;
pub mod purge;
mod recall;
mod regulator;
mod relationships;
mod reminders;
mod router_weights;
mod routing;
mod routing_adjustments;
mod self_state;
#[cfg(test)]
mod sql_boundary;
mod stamped;
mod tasks;
mod topic_adjustments;
mod topic_cache;
mod topic_params;
mod traits;
mod turn;
mod ui;
mod uncertainties;
pub mod vector_codes;
mod vectors;
pub mod wal;
mod working_memory;
mod world_state;

pub use batch::{in_read, in_savepoint, rolled_back};
#[cfg(test)]
pub(crate) use boundary::window_rows as boundary_window_rows;
pub use boundary::{BoundaryRow, BoundaryWindow};
pub use browse::{
    BadMemoryId, MemoryId, MemoryLayer, MemoryRow, get_row, list_layer, memory_text, replaced_by, row_object,
};
pub use chat::{ChatMessage, ChatRepo, Conversation};
pub use concepts::{ConceptFields, ConceptStrength, ConceptsRepo, DecayingConcept, GraphNodeRow, Probationer};
pub use cortex_iterations::{CortexIterationsRepo, IterationRow};
pub use db::Db;
pub use drift::{ConceptRow, CuriosityRepo, Deferred, DriftRepo, EpisodeRow, NewThought, ReconcileRow};
pub use embedding_space::{
    EmbeddingSpace, MAX_EMBEDDING_DIM, PendingVector, Switch, describe_vectors, embedding_dim, embedding_space,
    pending_count, pending_vectors, switch_model, take_pending, vec_table_ddl,
};
pub use episodes::{DecayingEpisode, EpisodesRepo, NewEpisode, PendingEpisode};
pub use expiry::{ShortLived, delete_expired, expired_rows};
pub use facts::{FactOrigin, FactsRepo, LiveFact};
pub use focus_sessions::{FocusSessionsRepo, OpenSession};
pub use fok::FokRepo;
pub use forget::{ForgetError, Forgotten, close_uncertainties, forget, record_deletion};
pub use gists::{GistsRepo, LiveGist, NewGist};
pub use graph_log::{GraphChange, GraphLogRepo, GraphMark};
pub use identity::IdentityRepo;
pub use instance::InstanceLock;
pub use interaction_log::{InteractionLogRepo, LogOrigin};
pub use introspection::{Activity, RECALLS_CONSIDERED, RecallOutcomes, recall_outcomes, recent_activity};
pub use jobs::{DONE_KEPT, Job, JobKind, JobState, JobsRepo, QueueActivity, wait_for_exchange_job};
pub use kv_state::KvStateRepo;
pub use lists::{ListChange, ListEntry, ListsRepo};
pub use migrate::{MIGRATIONS, latest_version, migrate};
pub use profile::{FactRow, ProfileRepo};
pub use purge::{
    FORGOTTEN_LINE, Purge, PurgeCounts, Purged, exchange_forgotten, mask_secrets, purge, thread_lines, user_lines,
};
pub use recall::{KeywordLayer, RecallRepo, RecallRow, TRIGRAM};
pub use regulator::RegulatorStateRepo;
pub use relationships::{EdgeRow, NamedEdge, NewEdge, RelationshipsRepo, WEIGHT_BOUND};
pub use reminders::{NewReminder, ReminderRow, RemindersRepo};
pub use router_weights::{RouterWeightsRepo, WeightsVersion};
pub use routing::{ActIteration, RoutingRecord, RoutingRepo, Unjudged};
pub use routing_adjustments::{AdjustmentLog, AdjustmentRow, RoutingAdjustmentsRepo};
pub use self_state::{DURABLE_COUNT_CAP, FALLBACK_WINDOW_TURNS, FATIGUE_RECENT_S, SelfReadings, self_readings};
pub(crate) use stamped::StampedCopies;
pub use tasks::{CycleOutcome, NewTask, TasksRepo};
pub use topic_adjustments::TopicAdjustmentsRepo;
#[cfg(test)]
pub(crate) use topic_cache::holds as topics_kept;
pub use topic_params::{TopicParamsRepo, TopicParamsVersion};
pub use traits::{DecayingTrait, ExplicitWrite, StoredTrait, TraitWrite, TraitsRepo};
pub use turn::*;
pub use ui::*;
pub use uncertainties::{NewUncertainty, UncertaintiesRepo};
pub use vectors::{DEFAULT_EMBEDDING_DIM, EMBEDDING_DIM, StartedSearch, VecTable, VectorRepo};
pub use working_memory::WorkingMemoryRepo;
pub use world_state::{WorldStateRepo, world_key};

use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::sync::Once;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error")]
    Sqlite(#[from] rusqlite::Error),
    #[error("cannot create the data directory {path}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("migration {name} failed")]
    Migration { name: &'static str, source: rusqlite::Error },
    #[error(
        "the database is at schema version {found}, newer than this program understands ({supported}); upgrade chalie-tui"
    )]
    TooNew { found: u32, supported: u32 },
    #[error("stored JSON is malformed")]
    Json(#[from] serde_json::Error),
    #[error("embedding has {got} dimensions, the vector tables hold {expected}")]
    Dimension { expected: usize, got: usize },
    #[error("the database thread has stopped")]
    Closed,
    /// The file is damaged or not a database at all. It is never written to: the person
    /// decides (see [`move_aside`]).
    #[error(
        "{shown} is not a readable chalie-tui database (it is damaged, or another kind of file); it was left as it \
         is. Move it aside and start with a new one: mv '{shown}' '{shown}.damaged' (or open another with --db FILE)",
        shown = .path.display()
    )]
    Corrupt { path: PathBuf },
    /// Another process runs the engine on this database ([`InstanceLock`]).
    #[error(
        "another chalie-tui ({holder}) is already using {shown}; close it first, or give this one its own database \
         with --db FILE",
        shown = .path.display(),
        holder = if .holder.is_empty() { "process" } else { .holder.as_str() }
    )]
    InUse { path: PathBuf, holder: String },
}

impl StoreError {
    /// SQLite found no room (SQLITE_FULL: the disk, or the page cap of [`MAX_PAGES_ENV`]; on
    /// a full file system the WAL's write or its index's growth fails first, as an I/O
    /// error): nothing of the failed statement was written, so the caller may keep what it
    /// was storing and try again once there is room.
    pub fn is_disk_full(&self) -> bool {
        match self {
            StoreError::Sqlite(e) | StoreError::Migration { source: e, .. } => match e {
                rusqlite::Error::SqliteFailure(f, _) => {
                    f.code == rusqlite::ErrorCode::DiskFull
                        || [rusqlite::ffi::SQLITE_IOERR_WRITE, rusqlite::ffi::SQLITE_IOERR_SHMSIZE]
                            .contains(&f.extended_code)
                }
                _ => false,
            },
            StoreError::Io { source, .. } => source.kind() == std::io::ErrorKind::StorageFull,
            _ => false,
        }
    }
}

/// An upper bound on the database's pages (`PRAGMA max_page_count`), read at [`open`]: past
/// it every write fails with SQLITE_FULL exactly as on a full disk. It lets a test, or a
/// person who wants the store capped, reach that path without filling a file system.
pub const MAX_PAGES_ENV: &str = "CHALIE_DB_MAX_PAGES";

static VEC_EXTENSION: Once = Once::new();

/// Register sqlite-vec for every connection this process opens.
fn register_sqlite_vec() {
    VEC_EXTENSION.call_once(|| {
        // SAFETY: sqlite3_vec_init has the signature SQLite expects of an extension
        // entry point; auto_extension only stores the pointer and calls it on open.
        unsafe {
            let init: unsafe extern "C" fn(
                *mut rusqlite::ffi::sqlite3,
                *mut *mut std::os::raw::c_char,
                *const rusqlite::ffi::sqlite3_api_routines,
            ) -> std::os::raw::c_int = std::mem::transmute(sqlite_vec::sqlite3_vec_init as *const ());
            rusqlite::ffi::sqlite3_auto_extension(Some(init));
        }
    });
}

/// Open (creating if needed) the database at `path`, configure it and apply migrations.
pub fn open(path: &Path) -> Result<Connection, StoreError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        crate::files::create_private_dir(dir).map_err(|source| StoreError::Io { path: dir.to_path_buf(), source })?;
    }
    crate::files::ensure_private_file(path).map_err(|source| StoreError::Io { path: path.to_path_buf(), source })?;
    register_sqlite_vec();
    let damaged = |e: &rusqlite::Error| {
        matches!(e.sqlite_error_code(), Some(rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt))
    };
    let mut conn = Connection::open(path)?;
    // Reading the schema is the first thing that looks inside the file.
    let looked = configure(&conn).and_then(|()| cap_pages(&conn)).and_then(|()| {
        conn.query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| r.get::<_, i64>(0)).map_err(StoreError::from)
    });
    match looked {
        Err(StoreError::Sqlite(e)) if damaged(&e) => return Err(StoreError::Corrupt { path: path.to_path_buf() }),
        other => other?,
    };
    match migrate(&mut conn) {
        Err(StoreError::Sqlite(e) | StoreError::Migration { source: e, .. }) if damaged(&e) => {
            Err(StoreError::Corrupt { path: path.to_path_buf() })
        }
        other => other.map(|_| conn),
    }
}

/// Move a damaged database (and its -wal and -shm files) aside to `<name>.damaged-<n>`,
/// never replacing an existing file; returns where it went. A hard link then an unlink,
/// because a rename would silently overwrite a file of that name.
pub fn move_aside(path: &Path) -> std::io::Result<PathBuf> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "chalie.db".into());
    for n in 1..1000 {
        let target = path.with_file_name(format!("{name}.damaged-{n}"));
        match std::fs::hard_link(path, &target) {
            Ok(()) => {
                std::fs::remove_file(path)?;
                for ext in ["-wal", "-shm"] {
                    let side = path.with_file_name(format!("{name}{ext}"));
                    if side.exists() {
                        let _ = std::fs::hard_link(&side, target.with_file_name(format!("{name}.damaged-{n}{ext}")))
                            .and_then(|()| std::fs::remove_file(&side));
                    }
                }
                return Ok(target);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("too many damaged databases set aside already"))
}

/// An in-memory database with the full schema, for tests and benches.
pub fn open_in_memory() -> Result<Connection, StoreError> {
    register_sqlite_vec();
    let mut conn = Connection::open_in_memory()?;
    configure(&conn)?;
    migrate(&mut conn)?;
    Ok(conn)
}

/// `execute` and `query_row` through the connection's statement cache. rusqlite's own
/// `Connection::execute` and `query_row` prepare (parse and plan) the SQL on every call; the
/// statements a turn runs every time go through these instead (see `configure`).
pub(crate) trait CachedSql {
    fn exec<P: rusqlite::Params>(&self, sql: &str, params: P) -> rusqlite::Result<usize>;
    fn row<T, P: rusqlite::Params, F: FnOnce(&rusqlite::Row<'_>) -> rusqlite::Result<T>>(
        &self,
        sql: &str,
        params: P,
        f: F,
    ) -> rusqlite::Result<T>;
}

impl CachedSql for Connection {
    fn exec<P: rusqlite::Params>(&self, sql: &str, params: P) -> rusqlite::Result<usize> {
        self.prepare_cached(sql)?.execute(params)
    }

    fn row<T, P: rusqlite::Params, F: FnOnce(&rusqlite::Row<'_>) -> rusqlite::Result<T>>(
        &self,
        sql: &str,
        params: P,
        f: F,
    ) -> rusqlite::Result<T> {
        self.prepare_cached(sql)?.query_row(params, f)
    }
}

/// See `configure`: SQLite's compiled ceiling (`SQLITE_MAX_MMAP_SIZE`, 0x7fff0000 bytes, just
/// under 2 GiB); a larger request is silently cut to it, so asking for more only misstates it.
/// Above the 1M-memory store's file size.
pub(crate) const MMAP_BYTES: i64 = 0x7fff_0000;
/// See `configure`.
const STATEMENT_CACHE: usize = 256;

fn configure(conn: &Connection) -> Result<(), StoreError> {
    // WAL lets readers proceed while a turn commits; NORMAL is durable at each
    // checkpoint and crash-consistent, which is what a chat history needs.
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    // A forget must not leave the words in freed pages: deleted cells and pages are zeroed.
    conn.pragma_update(None, "secure_delete", "ON")?;
    // Pages read through a memory map instead of a pread copy each: a turn at 100k+ memories
    // touches a few hundred pages (recall's re-scoring rows, the graph, the thread), and the
    // copies were half its time (docs/architecture.md §9). Address space only; the OS shares it.
    conn.pragma_update(None, "mmap_size", MMAP_BYTES)?;
    // A turn runs a few dozen distinct statements; rusqlite's default cache of 16 evicted them
    // in turn, so every turn parsed them all again (14 % of a turn at 100k memories).
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    // A kept statement is planned once. Without the planner's stability guarantee SQLite
    // re-plans a statement each time a parameter it might plan by is bound anew: any `LIKE ?`
    // (recall's keyword search), and, once ANALYZE has run (`PRAGMA optimize`), every equality on
    // an indexed column, FTS5's own lookups included. At 100k memories those re-preparations were
    // ~18 % of a turn (docs/architecture.md §9). None of the store's plans needs the values.
    conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    Ok(())
}

/// Apply [`MAX_PAGES_ENV`] when it holds a page count (anything else is ignored).
fn cap_pages(conn: &Connection) -> Result<(), StoreError> {
    if let Some(pages) = std::env::var(MAX_PAGES_ENV).ok().and_then(|v| v.trim().parse::<i64>().ok()) {
        conn.pragma_update(None, "max_page_count", pages)?;
    }
    Ok(())
}

/// Seconds since the Unix epoch: the time unit of every table.
pub fn now_ts() -> i64 {
    chrono::Utc::now().timestamp()
}

#[cfg(test)]
mod tests;
