//! `--replay LOG --rerun`: the recorded user messages through the current engine, offline.
//!
//! The engine runs over a scratch data directory (a fresh database, removed afterwards), with
//! every role answered by [`ReplayProvider`] from the log's recorded outputs, and the memory
//! workers running as they did live, each turn waiting for its encoding like `ask` does, so
//! the memory the next turn routes on is built the same way. Routing uses the current config's
//! `[router.weights]` over the built-in weights: a changed weight shows as differing turns.

use super::{ENCODE_WAIT, Runtime, WeightsError};
use crate::cognition::pipeline::Engine;
use crate::cognition::router::overrides;
use crate::cognition::router::{Mode, ModeScores, RouterWeights};
use crate::config::{Config, Paths, ProviderKind, Role};
use crate::events::EngineEvent;
use crate::llm::replay::{ReplayBook, ReplayProvider, ReplayStats};
use crate::llm::{Llm, Route};
use crate::memory::graph::{GraphMode, GraphTurnStats};
use crate::session::{LogEntry, RecordedTurn, SessionLog, recorded_turns};
use crate::store::JobState;
use serde::Serialize;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

#[derive(Debug, thiserror::Error)]
pub enum RerunError {
    #[error("cannot start a scratch engine in {dir}: {reason}")]
    Start { dir: PathBuf, reason: String },
    #[error("cannot apply [router.weights]")]
    Weights(#[from] overrides::OverrideError),
    #[error("the database failed during the rerun")]
    Store(#[from] crate::store::StoreError),
    #[error("the engine failed on turn {turn}")]
    Engine { turn: usize, source: crate::cognition::pipeline::EngineError },
}

impl From<WeightsError> for RerunError {
    fn from(e: WeightsError) -> Self {
        match e {
            WeightsError::Apply(e) => RerunError::Weights(e),
            WeightsError::Store(e) => RerunError::Store(e),
        }
    }
}

/// One turn rerun: what the log recorded beside what the engine decides now.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RerunTurn {
    pub turn: usize,
    pub text: String,
    pub recorded_mode: Option<Mode>,
    pub mode: Mode,
    /// The delivered mode changed (a turn the log never routed does not count).
    pub differs: bool,
    pub scores: ModeScores,
    pub confidence: f64,
    pub recorded_scores: Option<ModeScores>,
    pub reply: String,
    /// How this turn's model calls were answered from the log.
    pub calls: ReplayStats,
    /// The regulator's verdict on the turn as the current engine sees it.
    pub regulator: crate::vocab::regulator::RegulatorReport,
    /// What the concept graph did, with `--graph MODE` (docs/cognition.md §9.4.10).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graph: Option<GraphTurnStats>,
}

/// A prepared rerun: the scratch runtime and the recorded calls.
pub struct Rerun {
    rt: Runtime,
    scratch: PathBuf,
    book: Arc<ReplayBook>,
    builtin: HashMap<Role, bool>,
    turns: Vec<RecordedTurn>,
    /// `--graph MODE`, and the live model the v2 router asks.
    graph: Option<(GraphMode, Option<Route>)>,
}

impl Rerun {
    /// Open the scratch database under `scratch_root` and store the config's weight overrides
    /// there. Synchronous, like [`Runtime::start`]: call before entering the async world.
    pub fn prepare(log: &SessionLog, config: Config, scratch_root: &std::path::Path) -> Result<Rerun, RerunError> {
        let scratch = scratch_root.join(format!("chalie-rerun-{}", uuid::Uuid::now_v7()));
        let mut paths = Paths::in_dir(&scratch, &scratch.join("models"));
        if let Some(source) = &config.source {
            paths.config_file = source.clone();
        }
        let start_err = |reason: String| RerunError::Start { dir: scratch.clone(), reason };
        let builtin = recorded_builtin(log, &config);
        let rt = Runtime::start(paths, config).map_err(|e| start_err(format!("{e:#}")))?;
        let applied = rt.apply_router_weights();
        let rerun = Rerun {
            book: Arc::new(ReplayBook::from_events(events(log))),
            turns: recorded_turns(log),
            rt,
            scratch,
            builtin,
            graph: None,
        };
        match applied {
            Ok(_) => Ok(rerun),
            Err(e) => {
                rerun.finish();
                Err(e.into())
            }
        }
    }

    /// Route with `weights` instead of the built-in weights and the config's overrides: they
    /// are stored in the scratch database as its newest version (author `rerun`).
    pub fn use_weights(&self, weights: &RouterWeights, why: &str) -> Result<(), RerunError> {
        let (w, why) = (*weights, why.to_string());
        self.rt.db.call_blocking(move |c| {
            let repo = crate::store::RouterWeightsRepo(c);
            if repo.latest()?.is_none() {
                overrides::store_defaults(c)?;
            }
            let version = repo.latest()?.map_or(1, |v| v.version + 1);
            let mut stored = w;
            stored.version = version;
            repo.insert(version, &serde_json::to_string(&stored)?, "rerun", &why, crate::store::now_ts())
        })?;
        Ok(())
    }

    /// Run the graph in `mode` (the replay judgement, docs/cognition.md §9.4.10) and report
    /// what it did per turn. The log has no answers for the v2 router's calls (or answers
    /// from a different graph), so in `v2` they go to `live`, a real lightweight model; without
    /// one they fail as unrecorded and every step is routed mechanically.
    pub fn use_graph(&mut self, mode: GraphMode, live: Option<Route>) {
        self.graph = Some((mode, live));
    }

    pub fn turns(&self) -> &[RecordedTurn] {
        &self.turns
    }

    /// Rerun every recorded turn in order, handing each result to `on_turn` as it is ready.
    pub async fn run(&self, mut on_turn: impl FnMut(&RerunTurn)) -> Result<Vec<RerunTurn>, RerunError> {
        let models = self.book.models();
        let routes = Role::ALL.map(|role| {
            let route = Route {
                provider: Arc::new(ReplayProvider::new(role, self.book.clone())),
                model: models.get(&role).cloned().unwrap_or_else(|| role.as_str().to_string()),
                builtin: self.builtin.get(&role).copied().unwrap_or(false),
            };
            (role, route)
        });
        let llm = Arc::new(Llm::new(self.rt.bus.clone(), self.rt.config.llm.clone(), routes));
        let mut engine = Engine::start(self.rt.db.clone(), llm.clone(), self.rt.bus.clone())
            .await
            .map_err(|source| RerunError::Engine { turn: 0, source })?;
        if let Some((mode, live)) = &self.graph {
            let router = live.clone().map(|route| {
                Arc::new(Llm::new(self.rt.bus.clone(), self.rt.config.llm.clone(), [(Role::Lightweight, route)]))
            });
            engine = engine.with_graph_mode(*mode, router);
        }
        self.rt.provide_llm(llm);
        let memory = self.rt.start_memory_workers();
        let cancel = CancellationToken::new();
        let mut out = Vec::with_capacity(self.turns.len());
        let result = async {
            for t in &self.turns {
                self.book.begin_turn(t.turn);
                let before = self.book.stats();
                let (thread_id, exchange_id) = self.rt.intake(Some(t.thread_id.clone()), t.text.clone()).await?;
                let report = engine
                    .turn(&thread_id, &exchange_id, &t.text, &cancel)
                    .await
                    .map_err(|source| RerunError::Engine { turn: t.turn, source })?;
                if let Some(state) = self.rt.wait_for_encoding(&exchange_id, ENCODE_WAIT).await?
                    && state != JobState::Done
                {
                    tracing::warn!(turn = t.turn, %state, "rerun: memory encoding not finished");
                }
                if self.graph.is_some() {
                    self.rt.wait_for_consolidation(ENCODE_WAIT).await?;
                }
                let turn = RerunTurn {
                    turn: t.turn,
                    text: t.text.clone(),
                    recorded_mode: t.mode,
                    mode: report.mode,
                    differs: t.mode.is_some_and(|m| m != report.mode),
                    scores: report.router.scores,
                    confidence: report.router.confidence,
                    recorded_scores: t.scores,
                    reply: report.response,
                    calls: self.book.stats().since(&before),
                    regulator: report.regulator,
                    graph: report.graph.filter(|_| self.graph.is_some()),
                };
                on_turn(&turn);
                out.push(turn);
            }
            Ok::<_, RerunError>(())
        }
        .await;
        memory.cancel();
        result.map(|()| out)
    }

    /// All calls answered so far, by kind.
    pub fn stats(&self) -> ReplayStats {
        self.book.stats()
    }

    /// How many recorded model calls the log holds.
    pub fn recorded_calls(&self) -> usize {
        self.book.len()
    }

    /// Recorded calls the rerun never made.
    pub fn unused_calls(&self) -> usize {
        self.book.unused()
    }

    /// Let the scratch runtime go and remove its directory.
    pub fn finish(self) {
        let Rerun { rt, scratch, .. } = self;
        rt.finish();
        if let Err(e) = std::fs::remove_dir_all(&scratch) {
            tracing::warn!(dir = %scratch.display(), "cannot remove the rerun's scratch directory: {e}");
        }
    }
}

fn events(log: &SessionLog) -> impl Iterator<Item = &EngineEvent> {
    log.entries.iter().filter_map(|e| match e {
        LogEntry::Event(s) => Some(&s.event),
        LogEntry::Unknown(_) => None,
    })
}

/// Which roles were the built-in models when the session was recorded (it decides whether
/// `triage = "auto"` asked a model): the log's own word when the TUI logged it, otherwise the
/// current config's.
fn recorded_builtin(log: &SessionLog, config: &Config) -> HashMap<Role, bool> {
    let logged = events(log).find_map(|e| match e {
        EngineEvent::ModelsResolved { roles, .. } => Some(roles.iter().map(|m| (m.role, m.builtin)).collect()),
        _ => None,
    });
    logged.unwrap_or_else(|| {
        Role::ALL
            .into_iter()
            .map(|role| {
                let provider = &config.models.get(role).provider;
                (role, config.providers.get(provider).is_some_and(|p| p.kind == ProviderKind::Local))
            })
            .collect()
    })
}
