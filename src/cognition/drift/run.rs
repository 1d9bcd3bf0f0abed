//! One drift cycle with its I/O (docs/cognition.md §14): the deferred queue first, then the
//! snapshot read on the database thread, the pure stages ([`super::cycle`]), the thought (the
//! lightweight model, or the template), the action, and the writes in one transaction. The
//! cycle's report goes on the bus; the stored thought keeps it for the pane and `drift`.

use super::actions::{self, Action, Inputs, Kind};
use super::comm::{self, CommState};
use super::cycle::{self, Front, Ready};
use super::gate;
use super::schedule;
use super::seed::Strategy;
use super::synth::{self, Author, Thought};
use crate::SplitMix64;
use crate::config::Role;
use crate::events::{EngineEvent, EventBus};
use crate::llm::Llm;
use crate::store::{
    ChatRepo, ConceptsRepo, CuriosityRepo, Db, DriftItem, DriftRepo, GistsRepo, NewGist, NewThought, StoreError,
    TasksRepo,
};
use crate::vocab::drift::DriftCycle;
use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

const KV: (&str, &str) = ("drift", "state");
/// How long a REFLECT or self-reflection gist stays in its topic's context.
pub const GIST_TTL_S: i64 = 24 * 3600;
const SYNTH_TIMEOUT: Duration = Duration::from_secs(20);

/// What the engine remembers between cycles (`kv_state` drift/state).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct State {
    #[serde(default)]
    pub cooldowns: HashMap<i64, i64>,
    #[serde(default)]
    pub fatigue: Vec<(i64, f64)>,
    #[serde(default)]
    pub comm: CommState,
    #[serde(default)]
    pub last_insight_at: Option<i64>,
    #[serde(default)]
    pub last_plan_at: Option<i64>,
    #[serde(default)]
    pub last_reconcile_at: Option<i64>,
    #[serde(default)]
    pub total: u64,
    /// Tool → when SUGGEST last named it (its per-tool cooldown).
    #[serde(default)]
    pub tools_suggested: HashMap<String, i64>,
}

/// How a cycle is run.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub utc_offset_s: i64,
    pub quiet: (u8, u8),
    pub interval_s: u64,
    pub turn_in_flight: bool,
    /// Force the first draw's strategy.
    pub strategy: Option<Strategy>,
    /// The graph kept between cycles (the engine's cache, shared by the runtime; the default,
    /// a one-off cycle's, loads it).
    pub graph_cache: crate::memory::graph::GraphHandle,
    /// The MCP tools the hub lists: SUGGEST names one when it fits.
    pub tools: Vec<crate::mcp::ToolInfo>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            utc_offset_s: 0,
            quiet: (23, 8),
            interval_s: super::INTERVAL_S,
            turn_in_flight: false,
            strategy: None,
            graph_cache: Default::default(),
            tools: Vec::new(),
        }
    }
}

/// The thought: the lightweight model when memory work may ask it, else the template.
async fn think(llm: Option<&Llm>, r: &Ready, cancel: &CancellationToken) -> (Thought, Option<String>) {
    let names: Vec<String> = r.top.iter().map(|t| t.1.clone()).collect();
    let grounding = r.grounding.as_ref().map(|e| e.gist.as_str());
    let fallback = || synth::template(&r.seed_name, &r.for_template, r.energy, grounding);
    let Some(llm) = llm.filter(|l| l.memory_uses_model()) else { return (fallback(), None) };
    let req = synth::request(&r.seed_name, &names, grounding);
    match llm.structured(Role::Lightweight, &req, &synth::schema(), SYNTH_TIMEOUT, cancel).await {
        Ok(v) => match synth::parse(&v) {
            Some(t) => (t, None),
            None => (fallback(), Some("the model's thought was unusable".into())),
        },
        Err(e) => (fallback(), Some(crate::describe(&e))),
    }
}

/// Deliver the oldest deferred COMMUNICATE when the moment is right; expire old ones.
fn deliver_deferred(c: &Connection, now: i64, o: &Options, state: &mut State) -> Result<Option<DriftItem>, StoreError> {
    let drift = DriftRepo(c);
    drift.expire(now)?;
    if schedule::is_quiet(now, o.utc_offset_s, o.quiet.0, o.quiet.1) || state.comm.breaker_open(now) {
        return Ok(None);
    }
    let Some(d) = drift.next_deferred(now)? else { return Ok(None) };
    post(c, &d.content, d.topic.as_deref(), d.id)?;
    drift.mark_delivered(d.id, now)?;
    state.comm.record_sent(now);
    Ok(Some(DriftItem {
        id: d.id,
        kind: d.kind,
        content: d.content,
        topic: d.topic,
        action: Some("COMMUNICATE".into()),
        energy: None,
        created_at: now,
    }))
}

/// A gentle message in the latest thread's chat.
fn post(c: &Connection, content: &str, topic: Option<&str>, id: i64) -> Result<(), StoreError> {
    let chat = ChatRepo(c);
    if let Some(thread) = chat.latest_thread()? {
        chat.append(&thread, &format!("drift-{id}"), "assistant", content, None, topic)?;
    }
    Ok(())
}

/// One full cycle at `now`. Returns the report (also emitted on the bus) and the stored
/// thought, if any.
pub async fn run_cycle(
    db: &Db,
    llm: Option<&Llm>,
    bus: &EventBus,
    now: i64,
    seed: u64,
    o: &Options,
    cancel: &CancellationToken,
) -> Result<DriftCycle, StoreError> {
    let opts = o.clone();
    let (snap, mut state, delivered, last_user) = db
        .call(move |c| {
            let (snap, mut state) = snapshot(c, now, &opts)?;
            let last_user = DriftRepo(c).last_user_message_at()?;
            state.comm.settle(last_user, now);
            let delivered = if opts.turn_in_flight { None } else { deliver_deferred(c, now, &opts, &mut state)? };
            save_state(c, &state, now)?;
            Ok((snap, state, delivered, last_user))
        })
        .await?;
    if let Some(d) = delivered {
        bus.emit(EngineEvent::DriftThought { thought: d });
    }
    let mut rng = SplitMix64(seed);
    let front = cycle::front(&snap, now, &mut rng, o.strategy);
    let mut report = cycle::report(&front, now);
    let ready = match front {
        Front::Skipped(_) => {
            bus.emit(EngineEvent::DriftCycle { cycle: Box::new(report.clone()) });
            return Ok(report);
        }
        Front::SelfReflection(text) => {
            report.kind = Some(Kind::Reflection.name().into());
            report.thought = Some(text);
            report.author = Some(Author::Template.name().into());
            report.action = Some(Action::Reflect.name().into());
            report.effect = Some("self-reflection gist stored".into());
            let r = report.clone();
            let item = db.call(move |c| store(c, &r, None, Action::Reflect, "kept", None, now)).await?;
            report.thought_id = Some(item.id);
            bus.emit(EngineEvent::DriftThought { thought: item });
            bus.emit(EngineEvent::DriftCycle { cycle: Box::new(report.clone()) });
            return Ok(report);
        }
        Front::Ready(r) => r,
    };
    let (thought, why) = think(llm, &ready, cancel).await;
    if let Some(why) = why {
        tracing::info!("drift synthesis used the template: {why}");
    }
    report.kind = Some(thought.kind.name().into());
    report.thought = Some(thought.content.clone());
    report.author = Some(thought.author.name().into());
    let seed_id = ready.pick.concept;
    let (recent, reflected, thread_open, active_tasks) = db
        .call({
            let kind = thought.kind.name();
            move |c| {
                let d = DriftRepo(c);
                let open_tasks = TasksRepo(c).list(false)?.len();
                Ok((
                    d.recent_contents(20)?,
                    d.reflected_since(kind, now - 86_400)?,
                    CuriosityRepo(c).open_on(seed_id)?,
                    open_tasks,
                ))
            }
        })
        .await?;
    let hint = super::suggest::hint(&ready.top.iter().map(|t| t.1.clone()).collect::<Vec<_>>(), &o.tools);
    let inputs = Inputs {
        now,
        kind: thought.kind,
        energy: ready.energy,
        relevance: actions::relevance(
            ready.grounding.as_ref().map(|e| e.salience),
            ready.grounding.as_ref().map(|e| now - e.created_at),
        ),
        novelty: actions::novelty(&thought.content, &recent),
        idle_s: last_user.map(|t| now - t),
        comm: state.comm.clone(),
        strong_signals: ready.top.iter().filter(|t| t.2 >= 0.5).count(),
        active_tasks,
        last_plan_at: state.last_plan_at,
        tool_suggested_at: hint.as_ref().and_then(|t| state.tools_suggested.get(t).copied()),
        tool_hint: hint.clone(),
        thread_open,
        same_kind_reflected: reflected,
        fatigue_fraction: gate::fatigue_spent(&state.fatigue, now) / super::FATIGUE_BUDGET,
        last_reconcile_at: state.last_reconcile_at,
    };
    let (action, scores) = actions::route(&inputs);
    report.action = Some(action.name().into());
    report.scores = scores;
    for s in report.scores.iter().filter(|s| s.rejected_by.is_some()) {
        tracing::debug!(action = %s.action, gate = ?s.rejected_by, "drift action rejected");
    }
    // Bookkeeping: cooldowns, fatigue, the last-run stamps.
    for id in std::iter::once(seed_id).chain(ready.top.iter().map(|t| t.0)) {
        state.cooldowns.insert(id, now + super::COOLDOWN_S);
    }
    state.fatigue.push((now, ready.energy));
    state.total += 1;
    if ready.pick.strategy == Strategy::Insight {
        state.last_insight_at = Some(now);
    }
    if action == Action::Suggest
        && let Some(t) = hint.clone()
    {
        state.tools_suggested.retain(|_, at| now - *at < actions::TOOL_COOLDOWN_S);
        state.tools_suggested.insert(t, now);
    }
    let rescue = ready.pick.strategy == Strategy::Decaying;
    let quiet = schedule::is_quiet(now, o.utc_offset_s, o.quiet.0, o.quiet.1);
    let topic = ready.grounding.as_ref().and_then(|e| e.topic.clone());
    let mut r = report.clone();
    let item = db
        .call(move |c| {
            let tx = c.unchecked_transaction()?;
            let (row_state, effect) = apply(&tx, action, &r, topic.as_deref(), quiet, now, &mut state)?;
            r.effect = Some(match (action, &hint) {
                (Action::Suggest, Some(t)) => format!("{effect}: {t}"),
                _ => effect,
            });
            let item = store(&tx, &r, topic.as_deref(), action, row_state, Some(seed_id), now)?;
            if action == Action::Plan {
                // The thought's id is the task's origin, so the task follows the stored thought.
                let (effect, _) = super::propose::propose(&tx, r.thought.as_deref().unwrap_or(""), item.id, now)?;
                r.effect = Some(effect);
            }
            if rescue {
                // Seed 000: thinking about a fading concept keeps it a little longer.
                ConceptsRepo(&tx).strengthen(seed_id, super::DECAYING_RESCUE, now)?;
            }
            if action == Action::SeedThread {
                let q = r.thought.as_deref().unwrap_or("");
                CuriosityRepo(&tx).open(q, Some(seed_id), topic.as_deref(), Some(item.id), now)?;
            }
            if action == Action::Communicate && row_state == "delivered" {
                post(&tx, r.thought.as_deref().unwrap_or(""), topic.as_deref(), item.id)?;
            }
            save_state(&tx, &state, now)?;
            tx.commit()?;
            Ok((item, r.effect))
        })
        .await?;
    let (item, effect) = item;
    report.effect = effect;
    report.thought_id = Some(item.id);
    bus.emit(EngineEvent::DriftThought { thought: item });
    bus.emit(EngineEvent::DriftCycle { cycle: Box::new(report.clone()) });
    Ok(report)
}

/// The chosen action's effect. Returns the thought's row state and what was done.
fn apply(
    c: &Connection,
    action: Action,
    r: &DriftCycle,
    topic: Option<&str>,
    quiet: bool,
    now: i64,
    state: &mut State,
) -> Result<(&'static str, String), StoreError> {
    let thought = r.thought.as_deref().unwrap_or("");
    Ok(match action {
        Action::Communicate if quiet => ("deferred", "deferred through quiet hours (kept 48 h)".into()),
        Action::Communicate => {
            state.comm.record_sent(now);
            ("delivered", "posted in the chat".into())
        }
        Action::Reflect => {
            let kind = r.kind.as_deref().unwrap_or("reflection");
            let content = format!("[{kind}] {thought}");
            let g = NewGist {
                topic: topic.unwrap_or("drift"),
                thread_id: None,
                gist_type: "drift",
                content: &content,
                confidence: 8.0,
            };
            GistsRepo(c).insert(&g, now, now + GIST_TTL_S)?;
            ("kept", format!("drift gist on {}", topic.unwrap_or("drift")))
        }
        Action::Plan => {
            state.last_plan_at = Some(now);
            ("kept", "proposed as a persistent task (the cycle report names it)".into())
        }
        Action::SeedThread => ("kept", "curiosity thread opened".into()),
        Action::Suggest => ("kept", "tool suggestion recorded".into()),
        Action::Nurture => ("kept", "engagement nudge recorded".into()),
        Action::Reconcile => {
            state.last_reconcile_at = Some(now);
            let n = super::reconcile::sweep(c, now)?;
            ("kept", format!("reconcile sweep: {n} new records"))
        }
        Action::Nothing => ("kept", "nothing".into()),
    })
}

fn store(
    c: &Connection,
    r: &DriftCycle,
    topic: Option<&str>,
    action: Action,
    state: &str,
    seed: Option<i64>,
    now: i64,
) -> Result<DriftItem, StoreError> {
    let kind = r.kind.clone().unwrap_or_else(|| "reflection".into());
    let content = r.thought.clone().unwrap_or_default();
    let topic = if r.strategy.as_deref() == Some("self-reflection") { Some("self-reflection") } else { topic };
    if r.strategy.as_deref() == Some("self-reflection") {
        let g = NewGist {
            topic: "self-reflection",
            thread_id: None,
            gist_type: "drift",
            content: &content,
            confidence: 8.0,
        };
        GistsRepo(c).insert(&g, now, now + GIST_TTL_S)?;
    }
    let t = NewThought {
        kind: &kind,
        content: &content,
        seed_concept_id: seed,
        seed_strategy: r.strategy.as_deref(),
        energy: r.energy,
        action: action.name(),
        topic,
        author: r.author.as_deref().unwrap_or("template"),
        state,
        expires_at: (state == "deferred").then_some(now + comm::DEFER_TTL_S),
        cycle: r,
    };
    let id = DriftRepo(c).insert(&t, now)?;
    Ok(DriftItem {
        id,
        kind,
        content,
        topic: topic.map(str::to_string),
        action: Some(action.name().into()),
        energy: r.energy,
        created_at: now,
    })
}

mod read;

use read::save_state;
pub use read::snapshot;

#[cfg(test)]
mod tests;
