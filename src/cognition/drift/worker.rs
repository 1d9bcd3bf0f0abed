//! The drift engine as a background task (`WorkerId::Drift`): a cycle every interval with
//! the seed's jitter and occasional long gap. It watches the bus's turn state: while a user
//! turn is in flight it does not start, and a message arriving mid-cycle drops the cycle at once.

use super::run::{Options, run_cycle};
use super::schedule;
use crate::SplitMix64;
use crate::background::worker::PeriodicTask;
use crate::config::DriftSettings;
use crate::events::{EventBus, TurnWatch};
use crate::llm::Llm;
use crate::store::{Db, StoreError};
use async_trait::async_trait;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

pub struct DriftTask {
    pub llm: Arc<Llm>,
    pub bus: EventBus,
    pub settings: DriftSettings,
    turns: TurnWatch,
    rng: SplitMix64,
    next: Duration,
    /// Where cycles read the graph: the runtime hands in the engine's cache; by default the
    /// task keeps its own.
    pub graph: crate::memory::graph::GraphHandle,
    /// The MCP servers whose tools SUGGEST may name.
    pub mcp: Option<Arc<crate::mcp::Hub>>,
}

impl DriftTask {
    pub fn new(llm: Arc<Llm>, bus: EventBus, settings: DriftSettings, seed: u64) -> DriftTask {
        let turns = bus.turns();
        let mut rng = SplitMix64(seed);
        let next = Duration::from_secs(schedule::next_wait_s(settings.interval_s, &mut rng));
        DriftTask {
            llm,
            bus,
            settings,
            turns,
            rng,
            next,
            graph: crate::memory::graph::GraphHandle::new(Arc::default()),
            mcp: None,
        }
    }
}

impl DriftTask {
    /// Every listed tool; a server that cannot list them offers none this cycle.
    async fn tools(&self) -> Vec<crate::mcp::ToolInfo> {
        let Some(hub) = &self.mcp else { return Vec::new() };
        let mut out = Vec::new();
        for name in hub.names() {
            match hub.tools(&name).await {
                Ok(t) => out.extend(t),
                Err(e) => tracing::debug!("drift: {e}"),
            }
        }
        out
    }
}

/// The local clock's offset east of UTC, in seconds.
pub fn local_offset_s() -> i64 {
    i64::from(chrono::Local::now().offset().local_minus_utc())
}

#[async_trait]
impl PeriodicTask for DriftTask {
    async fn first_wait(&mut self, _db: &Db, _now: i64) -> Result<Duration, StoreError> {
        Ok(self.next)
    }

    fn every(&self) -> Duration {
        self.next
    }

    async fn run(&mut self, db: &Db, now: i64) -> Result<(), StoreError> {
        self.next = Duration::from_secs(schedule::next_wait_s(self.settings.interval_s, &mut self.rng));
        if !self.settings.enabled || self.turns.in_flight() {
            return Ok(());
        }
        let o = Options {
            utc_offset_s: local_offset_s(),
            quiet: (self.settings.quiet_start, self.settings.quiet_end),
            interval_s: self.settings.interval_s,
            turn_in_flight: false,
            strategy: None,
            graph_cache: self.graph.clone(),
            tools: self.tools().await,
        };
        let seed = self.rng.next_u64();
        let cancel = CancellationToken::new();
        let cycle = run_cycle(db, Some(&self.llm), &self.bus, now, seed, &o, &cancel);
        let mut turns = self.turns.clone();
        tokio::select! {
            r = cycle => r.map(|_| ()),
            () = turns.turn_started() => {
                // The user is back: drop the cycle (its model call with it).
                cancel.cancel();
                tracing::debug!("drift cycle yielded to a user turn");
                Ok(())
            }
        }
    }
}
