//! Wiring: the pieces every front-end (TUI, `ask`, `audit`) shares.

pub mod keep;
pub mod rerun;

use crate::background::{Registry, WorkerBoard, WorkerId};
use crate::cognition::pipeline::{Engine, TurnReport};
use crate::cognition::router::overrides::{self, OverrideError};
use crate::config::{Config, Paths, ProcessEnv, Role};
use crate::events::{ActiveModel, EngineEvent, EventBus, NoticeLevel};
use crate::llm::local::fetch::{self, ModelFile};
use crate::llm::local::{CHAT_MODEL, EMBED_MODEL};
use crate::llm::{Llm, resolve};
use crate::session::{Header, LogStatus, SessionWriter, WriterHandle, spawn_writer};
use crate::store::{ChatRepo, Db, JobState, JobsRepo, StoreError};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// How long `ask` waits for its turn's memory encoding before exiting anyway.
pub const ENCODE_WAIT: Duration = Duration::from_secs(10);

/// How long the session log's writer may make no progress at exit before the program ends
/// without it (a forget's rewrite of long logs takes a few seconds; progress resets this).
const WRITER_STALL: Duration = Duration::from_secs(10);

/// Why the config's `[router.weights]` could not be stored.
#[derive(Debug, thiserror::Error)]
pub enum WeightsError {
    #[error("cannot apply [router.weights] from the config")]
    Apply(#[from] OverrideError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A started program: configuration, database thread, event bus and session log.
/// Cloning is cheap: the database and bus are shared handles.
#[derive(Clone)]
pub struct Runtime {
    pub paths: Paths,
    pub config: Config,
    pub db: Db,
    pub bus: EventBus,
    pub session_log: PathBuf,
    writer: Arc<Mutex<Option<WriterHandle>>>,
    /// Whether the session log is paused (no room to write it): the front-ends say so.
    log_status: Arc<LogStatus>,
    /// The engine's models once one has started: the memory workers wait for them.
    engine_llm: Arc<watch::Sender<Option<Arc<Llm>>>>,
    /// What every background task last did (the F1 popup and `status` read it).
    pub workers: WorkerBoard,
    /// The configured MCP servers, shared by the engine's ACT loop and drift's SUGGEST.
    pub mcp: Arc<crate::mcp::Hub>,
    /// The concept graph between turns, shared by the engine and drift (one copy per process).
    pub graph: Arc<crate::memory::graph::GraphCache>,
    /// This process's claim on the database: one engine per file.
    _instance: Arc<crate::store::InstanceLock>,
}

impl Runtime {
    /// Open (and migrate) the database, resume interrupted work and start the
    /// session log. Synchronous: call before entering the async world, or from
    /// `spawn_blocking`.
    pub fn start(paths: Paths, config: Config) -> anyhow::Result<Runtime> {
        // Before anything is written: a refused second process leaves no trace.
        let instance = Arc::new(crate::store::InstanceLock::acquire(&paths.db_file)?);
        let db = Db::open(&paths.db_file)?;
        // Secrets a previous session kept in its chat lines leave now if it ended without
        // masking them (a crash); before this session's log is opened, so logs can be rewritten.
        let masked = db.call_blocking(crate::store::mask_secrets)?;
        if !masked.is_empty() {
            scrub_files(&paths, &masked);
            tracing::info!("secrets masked in the history of an earlier session");
        }
        // A forget whose commit a kill interrupted before its logs were rewritten.
        for (journal, needles) in crate::session::journal::pending(&paths.data_dir) {
            scrub_files(&paths, &needles);
            crate::session::journal::discard(&journal);
            tracing::info!("the logs were rewritten for a forget an earlier session did not finish");
        }
        crate::session::journal::set_dir(&paths.data_dir);
        let bus = EventBus::new();
        let header = Header::new(&config.digest());
        // A log that cannot be written pauses; it is no reason to refuse the session.
        let writer = SessionWriter::create_or_pause(&paths.sessions_dir(), &header)?.with_bus(bus.downgrade());
        let session_log = writer.path().to_path_buf();
        let log_status = writer.status();
        let writer = Arc::new(Mutex::new(Some(spawn_writer(writer, &bus))));
        tracing::info!(db = %paths.db_file.display(), session_log = %session_log.display(), "runtime started");

        let resumed = db.call_blocking(|c| JobsRepo(c).recover_interrupted())?;
        if resumed > 0 {
            bus.notice(NoticeLevel::Info, format!("resumed {resumed} memory job(s) interrupted last time"));
        }
        let retired = db.call_blocking(|c| JobsRepo(c).retire_unclaimable())?;
        if retired > 0 {
            tracing::info!(retired, "closed jobs left on queues no worker claims");
        }
        let engine_llm = Arc::new(watch::Sender::new(None));
        let mcp = Arc::new(crate::mcp::Hub::from_process_env(config.mcp.clone()));
        Ok(Runtime {
            paths,
            config,
            db,
            bus,
            session_log,
            writer,
            log_status,
            engine_llm,
            workers: WorkerBoard::new(),
            mcp,
            graph: Arc::default(),
            _instance: instance,
        })
    }

    /// Why the session log is paused (it cannot be written, e.g. for a full disk), while it is.
    pub fn session_log_paused(&self) -> Option<String> {
        self.log_status.paused()
    }

    /// Store the config's `[router.weights]` as the weights version the engine will load, or
    /// take a removed override back out. The engine reads the newest version when it starts,
    /// so call this before [`Runtime::start_engine`]. Returns the version stored, if any.
    pub fn apply_router_weights(&self) -> Result<Option<u32>, WeightsError> {
        let weights: BTreeMap<String, f64> =
            self.config.router_weights.iter().map(|(k, v)| (k.clone(), v.value.0)).collect();
        let stored = self.db.call_blocking(move |c| Ok(overrides::apply(c, &weights)))??;
        if let Some(version) = stored {
            tracing::info!(version, "router weights from the config stored");
        }
        Ok(stored)
    }

    /// Say on the bus what each role calls and which built-in model files those roles still
    /// lack: the TUI's setup line reads it, and the session log keeps it so a rerun knows
    /// which roles were the built-in models (that decides `auto` settings).
    pub fn announce_models(&self, llm: &Llm) {
        let roles: Vec<ActiveModel> = Role::ALL
            .into_iter()
            .filter_map(|role| {
                llm.route(role).map(|r| ActiveModel {
                    role,
                    model: format!("{}/{}", r.provider.name(), r.model),
                    builtin: r.builtin,
                })
            })
            .collect();
        let missing = missing_model_files(&self.paths.models_dir, Some(&builtin_models(llm)));
        let mut names: Vec<String> = Vec::new();
        for f in &missing {
            let name = display_name(f.model);
            if !names.contains(&name) {
                names.push(name);
            }
        }
        self.bus.emit(EngineEvent::ModelsResolved {
            roles,
            missing_builtin: names,
            missing_builtin_bytes: missing.iter().map(|f| f.size).sum(),
        });
    }

    /// A message as the program may keep it: with `[privacy] keep_secrets_in_history = false`
    /// its secrets are masked before it is stored, logged or shown to a model.
    pub fn admit(&self, text: String) -> String {
        if self.config.privacy.keep_secrets_in_history {
            return text;
        }
        crate::text::privacy::mask(&text).into_owned()
    }

    /// Take in a user message: it is stored and announced before any processing, so
    /// nothing that happens later can lose it. Returns `(thread_id, exchange_id)`.
    pub async fn intake(&self, thread: Option<String>, text: String) -> Result<(String, String), StoreError> {
        let exchange_id = uuid::Uuid::now_v7().to_string();
        let xid = exchange_id.clone();
        let body = text.clone();
        let thread_id = self
            .db
            .call(move |c| {
                let repo = ChatRepo(c);
                let thread_id = match thread {
                    Some(t) => t,
                    None => repo.latest_thread()?.unwrap_or_else(|| uuid::Uuid::now_v7().to_string()),
                };
                repo.append(&thread_id, &xid, "user", &body, None, None)?;
                Ok(thread_id)
            })
            .await?;
        self.bus.emit(EngineEvent::UserMessage {
            thread_id: thread_id.clone(),
            exchange_id: exchange_id.clone(),
            text,
        });
        Ok((thread_id, exchange_id))
    }

    /// Resolve the models (probing Ollama's address when no roles are configured) and start
    /// the cognition engine over this runtime's database and bus.
    pub async fn start_engine(&self) -> anyhow::Result<Arc<Engine>> {
        let (llm, selection) =
            resolve::build(&self.config, &self.paths.models_dir, &ProcessEnv, self.bus.clone(), true).await?;
        tracing::info!(?selection, primary = %llm.describe(Role::Primary), "models resolved");
        let llm = Arc::new(llm);
        let engine = Engine::start(self.db.clone(), llm.clone(), self.bus.clone()).await?;
        let engine = Arc::new(engine.with_mcp(self.mcp.clone()).with_graph_cache(self.graph.clone()));
        self.engine_llm.send_replace(Some(llm));
        Ok(engine)
    }

    /// Load every vector table's in-process copy on the background lane, one table a call, so
    /// that no message waits for a table's first load and a turn can go between the tables
    /// (`VectorRepo::warm`). The interactive front-end calls it once its engine is up.
    pub fn warm_vectors(&self) {
        use crate::store::{VecTable, VectorRepo};
        let db = self.db.background();
        tokio::spawn(async move {
            for table in VecTable::ALL {
                if let Err(e) = db.call(move |c| VectorRepo(c).warm(table)).await {
                    tracing::warn!("the {} vectors were not loaded ahead: {e}", table.name());
                }
            }
        });
    }

    /// Hand the memory workers the models to use (as `start_engine` does with the engine's),
    /// for front-ends that build their engine themselves.
    pub fn provide_llm(&self, llm: Arc<Llm>) {
        self.engine_llm.send_replace(Some(llm));
    }

    /// Start the memory workers (the episodic worker over the `encode` queue). They wait for
    /// the engine's models (`start_engine` or [`Runtime::provide_llm`]) and share them, so no
    /// model is loaded twice. Must be called inside the tokio runtime; cancel the token to stop.
    pub fn start_memory_workers(&self) -> CancellationToken {
        let shutdown = CancellationToken::new();
        self.spawn_memory_workers(shutdown.clone());
        shutdown
    }

    fn spawn_memory_workers(&self, stop: CancellationToken) {
        let (db, bus, board) = (self.db.clone(), self.bus.clone(), self.workers.clone());
        self.once_models_ready(stop, move |llm, stop| async move {
            if let Err(e) = crate::memory::workers::run_memory_group(db, llm, bus, stop, board).await {
                tracing::error!("memory workers not started: {e}");
            }
        });
    }

    /// Run `start` on a task of its own once the engine's models are known (every background
    /// engine thinks with them); never, if `stop` comes first or the runtime is dropped.
    fn once_models_ready<F, Fut>(&self, stop: CancellationToken, start: F)
    where
        F: FnOnce(Arc<Llm>, CancellationToken) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = ()> + Send,
    {
        let mut ready = self.engine_llm.subscribe();
        tokio::spawn(async move {
            let llm = tokio::select! {
                r = ready.wait_for(Option::is_some) => match r.ok().and_then(|v| v.clone()) {
                    Some(llm) => llm,
                    None => return,
                },
                _ = stop.cancelled() => return,
            };
            start(llm, stop).await;
        });
    }

    /// Wait until `exchange_id`'s memory work (the episode, then the chunker's gists, facts
    /// and traits) is committed or failed, at most `cap` in all. Returns the encode job's
    /// last state; `None` when the exchange had nothing to encode.
    pub async fn wait_for_encoding(&self, exchange_id: &str, cap: Duration) -> Result<Option<JobState>, StoreError> {
        let start = tokio::time::Instant::now();
        let encoded = crate::memory::episodic::wait_for_encoding(&self.db, exchange_id, cap).await?;
        // The chunker's gists, facts and traits are that turn's memory too.
        let left = cap.saturating_sub(start.elapsed());
        crate::memory::chunker::wait_for_chunk(&self.db, exchange_id, left).await?;
        Ok(encoded)
    }

    /// Wait until no semantic consolidation job is queued or running, at most `cap`: a replay
    /// that judges the concept graph (`--graph`) needs each turn to see the concepts every
    /// earlier turn's consolidation made, whatever the worker's timing.
    pub async fn wait_for_consolidation(&self, cap: Duration) -> Result<(), StoreError> {
        let start = tokio::time::Instant::now();
        while self.db.call(|c| JobsRepo(c).is_live(crate::store::JobKind::Semantic)).await? {
            if start.elapsed() >= cap {
                tracing::warn!("semantic consolidation still running after {cap:?}");
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(())
    }

    /// Start the background tasks (the reminder scheduler, catching up first on reminders due
    /// while the app was closed, and the memory workers, once an engine has started). Must be
    /// called inside the tokio runtime; cancel the token to stop them.
    pub fn start_background(&self) -> CancellationToken {
        let shutdown = CancellationToken::new();
        self.spawn_memory_workers(shutdown.clone());
        // Let the front-end subscribe to the bus first, so a reminder caught up at start is
        // shown, not only logged.
        let scheduler =
            crate::background::scheduler::SchedulerTask { bus: self.bus.clone(), delay: Duration::from_millis(500) };
        let router = crate::cognition::stability::worker::RoutingRegulatorTask {
            bus: self.bus.clone(),
            pinned: self.config.router_weights.keys().cloned().collect(),
        };
        let topics = crate::cognition::stability::worker::TopicRegulatorTask { bus: self.bus.clone() };
        let timers = Registry::new(self.workers.clone())
            .periodic(WorkerId::Scheduler, scheduler)
            .periodic(WorkerId::Router, router)
            .periodic(WorkerId::Topics, topics)
            .periodic(WorkerId::Checkpoint, crate::background::checkpoint::CheckpointTask::new(&self.bus));
        if let Err(e) = timers.start(&self.db, &self.bus, &shutdown) {
            tracing::error!("background tasks not started: {e}");
        }
        self.spawn_drift(shutdown.clone());
        self.spawn_tasks(shutdown.clone());
        self.spawn_reflection(shutdown.clone());
        shutdown
    }

    /// Routing reflection, once the engine's models are known; on the built-in strong model it
    /// does not start and leaves the reason for `status` (docs/cognition.md §15.6).
    fn spawn_reflection(&self, stop: CancellationToken) {
        use crate::cognition::stability::worker::{ReflectionTask, note_off, reflection_off};
        let (db, bus, board) = (self.db.clone(), self.bus.clone(), self.workers.clone());
        self.once_models_ready(stop, move |llm, stop| async move {
            let off = reflection_off(&llm);
            match db.call(move |c| note_off(c, off, crate::store::now_ts())).await {
                Ok(true) => return,
                Ok(false) => {}
                Err(e) => tracing::warn!("routing reflection: {e}"),
            }
            let seed = crate::store::now_ts() as u64 ^ u64::from(std::process::id()).rotate_left(29);
            let task = ReflectionTask::new(llm, &bus, seed);
            match Registry::new(board).periodic(WorkerId::Reflection, task).start(&db, &bus, &stop) {
                Ok(running) => running.join().await,
                Err(e) => tracing::error!("routing reflection not started: {e}"),
            }
        });
    }

    /// The drift engine, once the engine's models are known (it thinks with the lightweight one).
    fn spawn_drift(&self, stop: CancellationToken) {
        let (db, bus) = (self.db.clone(), self.bus.clone());
        let (board, settings, hub) = (self.workers.clone(), self.config.drift, self.mcp.clone());
        let graph = crate::memory::graph::GraphHandle::new(self.graph.clone());
        self.once_models_ready(stop, move |llm, stop| async move {
            let seed = crate::store::now_ts() as u64 ^ u64::from(std::process::id());
            let mut task = crate::cognition::drift::worker::DriftTask::new(llm, bus.clone(), settings, seed);
            task.mcp = (!hub.is_empty()).then_some(hub);
            task.graph = graph;
            match Registry::new(board).periodic(WorkerId::Drift, task).start(&db, &bus, &stop) {
                Ok(running) => running.join().await,
                Err(e) => tracing::error!("drift not started: {e}"),
            }
        });
    }

    /// The persistent-task worker, once the engine's models are known (steps plan with the primary one).
    fn spawn_tasks(&self, stop: CancellationToken) {
        let (db, bus) = (self.db.clone(), self.bus.clone());
        let (board, settings, quiet) = (self.workers.clone(), self.config.tasks, self.config.drift);
        self.once_models_ready(stop, move |llm, stop| async move {
            let seed = crate::store::now_ts() as u64 ^ u64::from(std::process::id()).rotate_left(17);
            let task = crate::cognition::tasks::worker::TaskWorker::new(llm, bus.clone(), settings, quiet, seed);
            match Registry::new(board).periodic(WorkerId::Tasks, task).start(&db, &bus, &stop) {
                Ok(running) => running.join().await,
                Err(e) => tracing::error!("task worker not started: {e}"),
            }
        });
    }

    /// One message end to end: stored first (so nothing can lose it), then the turn.
    pub async fn converse(
        &self,
        engine: &Engine,
        thread: Option<String>,
        text: String,
        cancel: &CancellationToken,
    ) -> anyhow::Result<TurnReport> {
        let text = self.admit(text);
        let (thread_id, exchange_id) = self.intake_kept(thread, text.clone(), Some(keep::ASK_TRIES)).await?;
        Ok(engine.turn(&thread_id, &exchange_id, &text, cancel).await?)
    }

    /// Close this handle's end of the bus and wait for the session log to write everything
    /// already emitted (a forget's rewrite of the logs included). Call last, after every other
    /// clone is gone.
    pub fn finish(self) {
        let Runtime { bus, writer, engine_llm, db, paths, .. } = self;
        // The models hold a bus handle too: let go of them, or the log never sees the bus close.
        engine_llm.send_replace(None);
        drop(engine_llm);
        let sent = bus.sent();
        drop(bus);
        let handle = writer.lock().ok().and_then(|mut w| w.take());
        if let Some(handle) = handle
            && !handle.settle(sent, WRITER_STALL)
        {
            tracing::warn!(
                "the session log's writer made no progress for {WRITER_STALL:?} at exit; its last events are missing"
            );
        }
        // The session ends: the secrets its chat lines kept for it are masked, and their
        // copies purged, the session logs included now that the writer is done.
        match db.call_blocking(crate::store::mask_secrets) {
            Ok(found) => scrub_files(&paths, &found),
            Err(e) => tracing::warn!("secrets could not be masked at the end of the session: {}", crate::describe(&e)),
        }
    }
}

/// Remove `needles` from the session logs and the diagnostics log (nothing is writing them).
fn scrub_files(paths: &Paths, needles: &[String]) {
    if needles.is_empty() {
        return;
    }
    if let Err(e) = crate::session::scrub::scrub_logs(&paths.sessions_dir(), needles) {
        tracing::warn!("session logs could not be rewritten: {}", crate::describe(&e));
    }
    if let Err(e) = crate::logging::scrub(&paths.log_file(), needles) {
        tracing::warn!("the diagnostics log could not be rewritten: {e}");
    }
}

/// The built-in model names the routed roles use, each once.
pub fn builtin_models(llm: &Llm) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for role in Role::ALL {
        if let Some(r) = llm.route(role).filter(|r| r.builtin)
            && !out.contains(&r.model)
        {
            out.push(r.model.clone());
        }
    }
    out
}

/// Missing files of the `needed` models (all built-in models when unknown).
pub fn missing_model_files(dir: &Path, needed: Option<&[String]>) -> Vec<ModelFile> {
    fetch::missing(dir).into_iter().filter(|f| needed.is_none_or(|n| n.iter().any(|m| m == f.model))).copied().collect()
}

/// What a person reads for a built-in model: its published name and its job.
fn display_name(model: &str) -> String {
    match model {
        CHAT_MODEL => "SmolLM2-135M-Instruct (chat)".into(),
        EMBED_MODEL => "all-MiniLM-L6-v2 (embeddings)".into(),
        other => other.to_string(),
    }
}
