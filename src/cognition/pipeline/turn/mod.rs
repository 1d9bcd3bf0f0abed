//! One turn as a value: [`Turn`] holds what every phase shares (the message read once, the
//! clock, the fallbacks so far) and has one method per phase, each returning what it decided.
//! The decisions themselves are free functions ([`understand`], [`router_report`],
//! [`finish::commit_rows`]) so a phase can be tested without a database or a model.

mod finish;
mod preview;
mod reply;

pub use finish::Header;
pub(in crate::cognition::pipeline) use reply::Replied;

use super::fallback::{Failure, Fallback, Stage};
use super::phases::{self, PhaseA, TopicStage};
use super::{Engine, EngineError, RouterReport, Timings, TriageReport, ms};
use crate::cognition::context::ContextSignals;
use crate::cognition::intent::{Analysis, IntentContext, IntentResult, TriageContext, TriageResult, TriageSource};
use crate::cognition::router::{Decision, Evidence, RouterSignals, RoutingDecision, Sequel, decide, route as score};
use crate::cognition::signals::reference::referent_support;
use crate::events::{EngineEvent, NoticeLevel};
use crate::memory::identity::declared_name;
use crate::memory::recall::Hit;
use crate::memory::uncertainty::ingest::{self, Applied, UncertaintyReport};
use crate::store::now_ts;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// The spawned uncertainty check of a turn.
type UncertaintyCheck = tokio::task::JoinHandle<Result<Applied, crate::store::StoreError>>;

/// The state one turn collects while its phases run.
pub(super) struct Turn<'t> {
    pub(in crate::cognition::pipeline) engine: &'t Engine,
    pub(in crate::cognition::pipeline) thread_id: &'t str,
    pub(in crate::cognition::pipeline) exchange_id: &'t str,
    pub(in crate::cognition::pipeline) msg: &'t Analysis<'t>,
    cancel: &'t CancellationToken,
    pub(in crate::cognition::pipeline) now: i64,
    /// The id of this turn's audit row, which the ACT loop's iteration rows point at.
    pub(in crate::cognition::pipeline) routing_id: String,
    started: Instant,
    timings: Timings,
    /// Every fallback that fired, in order.
    fallbacks: Vec<Fallback>,
    /// The uncertainty check racing the reply (docs/cognition.md §10.4), from when it started.
    uncertainty_check: Option<(Instant, UncertaintyCheck)>,
    /// The check when it ran past its time box: still running, and still writing.
    uncertainty_late: Option<UncertaintyCheck>,
    /// What it and surfacing did this turn.
    uncertainty: UncertaintyReport,
    /// The regulator's hold on this turn: a break's line, the correction prelude, its verdict.
    pub(in crate::cognition::pipeline) regulation: super::regulate::Regulation,
    /// The slot values the check found the message replaced (the built-in path says so).
    changes: Vec<crate::memory::uncertainty::ingest::Change>,
    /// How long Phase A's reads took on the database thread (they ride with the regulator's).
    pub(in crate::cognition::pipeline) phase_a_ms: f64,
    /// The adaptive layer's plan for the reply, and the lines the model was sent (docs/cognition.md §18).
    pub(in crate::cognition::pipeline) adaptive: crate::cognition::adaptive::Applied,
    pub(in crate::cognition::pipeline) adaptive_sent: Option<Vec<String>>,
    /// The adaptive layer's state as planning the reply advanced it, stored by the commit.
    adaptive_state: Option<crate::cognition::adaptive::state::AdaptiveState>,
    /// The router weights and version this turn routes with, read once at its start.
    pub(in crate::cognition::pipeline) weights: (u32, crate::cognition::router::RouterWeights),
    /// The reply to a yes or no to the critic's question (docs/cognition.md §16.5).
    pub(in crate::cognition::pipeline) critic_reply: Option<String>,
    /// The strings of a forget the commit carried out (in memory only): nothing of this turn
    /// is learned, and what is written after the commit is written without them.
    pub(in crate::cognition::pipeline) forgotten: Option<Vec<String>>,
}

/// Phase A: the identity hook's name, working memory, traits and session.
#[derive(Debug, Clone)]
pub struct Context {
    pub name: Option<String>,
    pub phase_a: PhaseA,
}

/// The topic stage, with the episodes and concepts the message brings back.
#[derive(Debug, Clone)]
pub struct Topic {
    pub stage: TopicStage,
    pub memories: Vec<Hit>,
    /// What the concept graph fired for the message (docs/cognition.md §9.4.3).
    pub graph: Option<crate::memory::graph::turn::TurnGraph>,
    /// What the graph did and cost, for the replay judgement (docs/cognition.md §9.4.10).
    pub graph_stats: Option<crate::memory::graph::GraphTurnStats>,
}

/// Phase B step 1: the context signals, the intent and the router's inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct Understanding {
    pub ctx: ContextSignals,
    pub intent: IntentResult,
    pub signals: RouterSignals,
}

/// Phase C: the scorer's decision (tie-break resolved) and the delivered mode.
#[derive(Debug, Clone)]
pub struct Delivered {
    /// The scorer's decision, its `mode` set to the delivered one (what the router state
    /// records and the audit row stores).
    pub routing: RoutingDecision,
    pub settled: Decision,
    pub report: RouterReport,
}

impl<'t> Turn<'t> {
    pub(super) fn new(
        engine: &'t Engine,
        thread_id: &'t str,
        exchange_id: &'t str,
        msg: &'t Analysis<'t>,
        cancel: &'t CancellationToken,
    ) -> Turn<'t> {
        Turn {
            engine,
            thread_id,
            exchange_id,
            msg,
            cancel,
            now: now_ts(),
            routing_id: uuid::Uuid::now_v7().to_string(),
            started: Instant::now(),
            timings: Timings::default(),
            fallbacks: Vec::new(),
            uncertainty_check: None,
            uncertainty_late: None,
            uncertainty: UncertaintyReport::default(),
            regulation: Default::default(),
            changes: Vec::new(),
            phase_a_ms: 0.0,
            adaptive: Default::default(),
            adaptive_sent: None,
            adaptive_state: None,
            weights: engine.weights(),
            critic_reply: None,
            forgotten: None,
        }
    }

    /// The regulator's start ([`Turn::regulate_start`]) with Phase A's database work on the
    /// same trip to the database thread, then Phase A: the identity hook, working memory,
    /// traits, session tracking, and the self-model with the break the regulator decided.
    pub(super) async fn start(&mut self) -> Result<Context, EngineError> {
        let name = declared_name(self.msg.text);
        let read = self.regulate_start(name.clone()).await?;
        let clock = Instant::now();
        let phase_a = read.assess(self.regulation.halt.as_deref());
        if let Some(n) = &name {
            self.engine.bus.emit(EngineEvent::IdentityLearned { name: n.clone() });
        }
        // Its reads' time on the database thread, and the assessment here.
        self.timings.context = self.phase_a_ms + ms(clock);
        Ok(Context { name, phase_a })
    }

    /// The topic stage: embed, classify with the boundary detector, read the topic's context
    /// and what the message recalls.
    pub(super) async fn topic(&mut self) -> Result<Topic, EngineError> {
        let clock = Instant::now();
        let embedding = if self.msg.words.is_empty() { None } else { self.embed().await };
        self.timings.embedding = ms(clock);
        self.regulation.message_embedding = embedding.clone();
        if self.msg.social.is_none() && !self.msg.words.is_empty() {
            let (db, llm) = (self.engine.db.clone(), self.engine.llm.clone());
            let check = ingest::run(db, llm, self.msg.text.to_string(), embedding.clone(), self.now);
            // A spawned task does not inherit the turn's origin; its model calls are the turn's.
            let check = crate::llm::ORIGIN.scope(crate::llm::exchange_origin(self.exchange_id), check);
            self.uncertainty_check = Some((Instant::now(), tokio::spawn(check)));
        }
        let clock = Instant::now();
        let (thread, body, now) = (self.thread_id.to_string(), self.msg.text.to_string(), self.now);
        let params = (self.engine.topic_params.clone(), self.engine.boundary_params.clone());
        let social = self.msg.social.is_some();
        // A mode that does not grow treats every message as one that never grows a node.
        let no_growth = social || !self.engine.graph_mode.grows();
        let cache = self.engine.graph_cache.clone();
        // With the v2 router on, the activation runs here, between two database calls, because
        // its steps wait on the model.
        let routed = self.engine.graph_router.is_some();
        let emb = embedding.clone();
        let mut topic = self
            .engine
            .db
            .call(move |c| {
                use crate::memory::graph::turn as graph_turn;
                // Traits, facts and gists are already in context; recall adds episodes and concepts.
                let (decided, memories) =
                    phases::decide_and_recall(c, &thread, &body, emb.as_deref(), now, (&params.0, &params.1))?;
                let graph_clock = Instant::now();
                let contentless = decided.report().contentless;
                // The graph's reads and its activation come before any write: its concept search,
                // like recall's, reads outside a transaction (`vector_codes::nearest`).
                let (activated, prepared) = match emb.as_deref() {
                    Some(e) if !contentless && routed => (None, graph_turn::prepare(c, &cache, e)?),
                    Some(e) if !contentless => (Some(graph_turn::activate_for(c, &cache, e)?), None),
                    _ => (None, None),
                };
                let mut graph_ms = ms(graph_clock);
                let finish =
                    |activated: Option<crate::memory::graph::Activated>| -> Result<_, crate::store::StoreError> {
                        let clock = Instant::now();
                        let e = emb.as_deref().unwrap_or_default();
                        let graph = match activated {
                            Some(a) => graph_turn::finish(c, a, Default::default(), &body, e, no_growth, now)?,
                            None => graph_turn::TurnGraph::default(),
                        };
                        Ok((graph, ms(clock)))
                    };
                let (stage, graph) = match activated {
                    // The topic row and the detector's state, the context read's writes and the
                    // activation's, as one commit; it opens with the topic's write, so it holds
                    // the write lock from its first statement.
                    Some(a) if decided.writes() => crate::store::in_savepoint(c, || {
                        let stage = decided.persist(c)?;
                        let (graph, ms) = finish(a)?;
                        graph_ms += ms;
                        Ok((stage, Some(graph)))
                    })?,
                    activated => {
                        let stage = if decided.writes() {
                            crate::store::in_savepoint(c, || decided.persist(c))?
                        } else {
                            decided.persist(c)?
                        };
                        let graph = match activated {
                            Some(a) => {
                                let (graph, ms) = finish(a)?;
                                graph_ms += ms;
                                Some(graph)
                            }
                            None => None,
                        };
                        (stage, graph)
                    }
                };
                Ok((Topic { stage, memories, graph, graph_stats: None }, prepared, graph_ms))
            })
            .await?;
        let mut graph_ms = topic.2;
        if let (Some((graph, seeds)), Some(e)) = (topic.1.take(), embedding) {
            let graph_clock = Instant::now();
            topic.0.graph = self.route_graph(graph, seeds, e, no_growth).await?;
            graph_ms += ms(graph_clock);
        }
        let mode = self.engine.graph_mode;
        topic.0.graph_stats =
            topic.0.graph.as_ref().map(|g| crate::memory::graph::GraphTurnStats::of(mode, g, graph_ms));
        self.timings.topic = ms(clock);
        Ok(topic.0)
    }

    /// The v2 router's activation (docs/cognition.md §9.4.9), then the same persistence and
    /// growth as the mechanical path.
    async fn route_graph(
        &self,
        graph: std::sync::Arc<crate::memory::graph::Graph>,
        seeds: Vec<crate::memory::graph::Seed>,
        embedding: Vec<f32>,
        no_growth: bool,
    ) -> Result<Option<crate::memory::graph::turn::TurnGraph>, EngineError> {
        use crate::memory::graph::{Activated, Params, routed};
        let Some(timeout) = self.engine.graph_router else { return Ok(None) };
        let enabled = self.engine.graph_breaker.lock().unwrap_or_else(std::sync::PoisonError::into_inner).begin_turn();
        let call = routed::RouterCall {
            llm: self.engine.graph_llm.as_deref().unwrap_or(&self.engine.llm),
            timeout,
            breaker: &self.engine.graph_breaker,
            cancel: self.cancel,
        };
        let mut r = routed::activate_routed(&call, enabled, &graph, &seeds, &Params::default(), self.msg.text).await;
        let activated = Activated { graph, seeds, activation: std::mem::take(&mut r.activation) };
        let (body, now, social) = (self.msg.text.to_string(), self.now, no_growth);
        let t = self
            .engine
            .db
            .call(move |c| crate::memory::graph::turn::finish(c, activated, r, &body, &embedding, social, now))
            .await?;
        Ok(Some(t))
    }

    /// After the commit and the regulator's verdict: the graph learns from which fired
    /// concepts the reply used, with the verdict's quality as the outcome
    /// ([`crate::memory::graph::learn::regulator_quality`]), and keeps what fired for the
    /// feedback the next message brings ([`crate::memory::graph::turn::after_feedback`]).
    pub(super) async fn learn_graph(&self, graph: Option<crate::memory::graph::turn::TurnGraph>, reply: &str) {
        use crate::memory::graph::learn;
        let Some(graph) = graph.filter(|g| !g.activated.activation.fired.is_empty() && !reply.is_empty()) else {
            return;
        };
        let (reply, xid, now) = (reply.to_string(), self.exchange_id.to_string(), self.now);
        let y = learn::outcome(None, self.regulation.report.as_ref().map(learn::regulator_quality));
        let learned = self
            .engine
            .db
            .call(move |c| crate::memory::graph::turn::after_reply(c, &graph, &xid, &reply, y, now))
            .await;
        if let Err(e) = learned {
            self.engine.bus.notice(NoticeLevel::Warn, format!("the concept graph could not learn from this turn: {e}"));
        }
    }

    async fn embed(&mut self) -> Option<Vec<f32>> {
        match self.engine.llm.embed(&[self.msg.text.to_string()]).await {
            Ok(mut v) if !v.is_empty() => Some(v.swap_remove(0)),
            Ok(_) => {
                self.fallbacks.push(Fallback::Model(Stage::Embedding, Failure::InvalidOutput));
                None
            }
            Err(e) => {
                self.engine.bus.notice(NoticeLevel::Warn, format!("embedding failed, topic kept: {e}"));
                self.fallbacks.push(Fallback::model(Stage::Embedding, &e));
                None
            }
        }
    }

    /// Phase B step 1 (see [`understand`]).
    pub(super) fn understand(&mut self, context: &Context, topic: &Topic) -> Understanding {
        let clock = Instant::now();
        let u = understand(self.msg, &context.phase_a, &topic.stage);
        self.timings.intent = ms(clock);
        u
    }

    /// Phase B step 2: a social exit skips triage; otherwise the model (or its keyword
    /// stand-in) triages and the sanity check corrects it.
    pub(super) async fn triage(&mut self, context: &Context, topic: &Topic, u: &Understanding) -> TriageReport {
        let clock = Instant::now();
        let report = match self.msg.social {
            Some(s) => {
                let result =
                    TriageResult::new(s.exit.into(), TriageSource::Social, format!("social filter: {}", s.reason));
                TriageReport { result, latency_ms: 0.0, fallback: None, sanity_rules: Vec::new() }
            }
            None => {
                let ctx = TriageContext {
                    tools_available: Vec::new(),
                    previous_mode: topic.stage.router_state.previous_mode,
                    previous_tools: Vec::new(),
                    named_tools: self.engine.mcp_named(self.msg.text).await,
                };
                let wm = &context.phase_a.working_memory();
                let halted = self.halted();
                let (report, fallback) = self.engine.triage(self.msg, &u.signals, wm, &ctx, halted, self.cancel).await;
                self.fallbacks.extend(fallback);
                report
            }
        };
        self.timings.triage = ms(clock);
        report
    }

    /// Phase C step 1: score the modes, then resolve a close call with the tie-breaker.
    pub(super) async fn route(&mut self, topic: &Topic, u: &Understanding) -> RoutingDecision {
        let clock = Instant::now();
        let state = &topic.stage.router_state;
        let mut decision = score(&u.signals, &self.weights.1, state, self.msg.social.is_none());
        self.timings.routing = ms(clock);
        let clock = Instant::now();
        let topic_name = &topic.stage.report.name;
        let halted = self.halted();
        let fallback =
            self.engine.tiebreak(&mut decision, self.msg.text, topic_name, &u.signals, halted, self.cancel).await;
        self.fallbacks.extend(fallback);
        self.timings.tiebreak = ms(clock);
        decision
    }

    /// Phase C step 2: settle the delivered mode ([`decide`]) and announce it.
    pub(super) fn deliver(
        &mut self,
        context: &Context,
        topic: &Topic,
        triage: &TriageReport,
        mut routing: RoutingDecision,
    ) -> Delivered {
        let settled = decide(&Evidence {
            routed: &routing,
            social: self.msg.social,
            triage: &triage.result,
            named_skills: &self.msg.skills,
            identity_stored: context.name.is_some(),
            sequel: Sequel::default(),
        });
        routing.mode = settled.mode;
        // The audit row's snapshots are written out on the search thread, idle by now, while the
        // reply is planned and streamed; the commit then finds their text ready.
        let (signals, weights) = (routing.signal_snapshot.clone(), routing.weight_snapshot.clone());
        crate::store::vector_codes::aside::run(move || {
            signals.text();
            weights.text();
        });
        let report = router_report(&routing, &settled, self.timings.routing);
        self.engine.bus.emit(EngineEvent::Routed {
            thread_id: self.thread_id.to_string(),
            exchange_id: self.exchange_id.to_string(),
            mode: settled.mode,
            router: Box::new(report.clone()),
            topic: topic.stage.report.clone(),
            triage: Box::new(triage.clone()),
            fallbacks: super::fallback::wire_names(&self.fallbacks),
            graph: topic.graph.as_ref().map(|g| Box::new(g.report())),
        });
        Delivered { routing, settled, report }
    }
}

/// Phase B step 1, pure: the context signals Phase A and the topic stage measured, the
/// intent, and the router's inputs, all over the one reading of the message.
pub fn understand(msg: &Analysis, a: &PhaseA, topic: &TopicStage) -> Understanding {
    let ctx = ContextSignals {
        working_memory_turns: a.working_memory().len(),
        gist_count: topic.context.real_gist_count(),
        fact_count: topic.context.facts.len(),
        world_state_present: !topic.context.world_state.is_empty(),
        fok_score: topic.context.fok,
        topic_confidence: f64::from(topic.report.confidence),
        is_new_topic: topic.report.is_new_topic,
        session_exchange_count: a.session_exchanges,
        self_constraint: crate::cognition::self_model::self_constraint(&a.self_items),
        focus_distraction: phases::is_distraction(topic.focus_on.as_deref(), &topic.report, msg.social.is_some()),
        referent_support: Some(referent_support(
            &msg.words,
            &a.working_memory().iter().map(|e| e.content.as_str()).collect::<Vec<_>>(),
            topic.report.is_new_topic,
        )),
    };
    let intent = crate::cognition::intent::classify(
        msg,
        &IntentContext {
            warmth: ctx.warmth(),
            memory_confidence: ctx.memory_confidence(),
            working_memory_turns: ctx.working_memory_turns,
        },
    );
    let signals = RouterSignals::new(&msg.signals, &intent, &ctx);
    Understanding { ctx, intent, signals }
}

/// The router's part of the report: the scorer's figures and how the delivered mode came
/// about.
pub fn router_report(routing: &RoutingDecision, settled: &Decision, routing_time_ms: f64) -> RouterReport {
    RouterReport {
        scores: routing.scores,
        confidence: routing.router_confidence,
        margin: routing.margin,
        effective_margin: routing.effective_margin,
        tiebreaker_used: routing.tiebreaker_used,
        tiebreaker_candidates: routing.tiebreak.map(|(a, b)| [a, b]),
        routing_time_ms,
        scored_mode: routing.scored_mode(),
        pre_routed: settled.pre_routed,
        reason: settled.why.to_string(),
        previous_mode: routing.previous_mode,
        signals: routing.signal_snapshot.clone(),
    }
}

#[cfg(test)]
mod tests;
