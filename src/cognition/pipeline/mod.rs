//! The engine: one message from intake to committed reply (seed 001 phases A–D).
//!
//! The deterministic stages live in their own modules as pure functions; this module only
//! sequences them with the three kinds of I/O a turn needs (the database thread, model calls
//! and events). Every model call has a deterministic fallback, so a turn fails only when the
//! database does; each fallback that fired is named in the audit row.

pub mod act;
mod commit;
pub mod phases;
pub mod prompts;
mod report;

pub use phases::{
    Delivery, SILENCE_GAP_S, deliver, fallback_name, session_exchanges, shape_reply, triage_act_confirmed,
};
pub use report::{RouterReport, SessionReport, Timings, TopicReport, TriageReport, TurnReport};

use crate::cognition::act::skill::SkillContext;
use crate::cognition::boundary::BoundaryParams;
use crate::cognition::context::ContextSignals;
use crate::cognition::identity::declared_name;
use crate::cognition::intent::{
    IntentContext, TriageContext, TriageMode, TriageResult, TriageSource, classify_intent, heuristic_triage,
    sanity_check,
};
use crate::cognition::reply::{self, ReplySource, own::OwnMemory};
use crate::cognition::router::{
    DEFAULT_WEIGHTS_VERSION, Mode, RouterSignals, RouterWeights, parse_tiebreak_for, reroute_after_act, route,
    tiebreak_context,
};
use crate::cognition::signals;
use crate::cognition::social::social_match;
use crate::cognition::topic::ClassifierParams;
use crate::config::Role;
use crate::events::{EngineEvent, EventBus, NoticeLevel};
use crate::llm::{Llm, LlmError, Token};
use crate::store::{Db, StoreError, TurnCommit, TurnRepo, now_ts};
use prompts::GenerationInput;
use rusqlite::OptionalExtension;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("the database failed during the turn")]
    Store(#[from] StoreError),
}

/// What a CANCEL social exit says: deterministic, no model call.
pub const CANCEL_REPLY: &str = "Okay, dropped it.";

/// The cognition engine. Cheap to share behind an `Arc`; turns on different threads may run
/// concurrently (the database thread serialises their reads and writes).
pub struct Engine {
    db: Db,
    llm: Arc<Llm>,
    bus: EventBus,
    /// Triage and the tie-breaker ask the lightweight model.
    model_pre_routing: bool,
    triage_timeout: Duration,
    tiebreak_timeout: Duration,
    weights: RouterWeights,
    weights_version: u32,
    topic_params: ClassifierParams,
    boundary_params: BoundaryParams,
}

impl Engine {
    /// Load the router weights (the newest stored version; the defaults are stored as the
    /// first version on a fresh database) and resolve the pre-routing setting.
    pub async fn start(db: Db, llm: Arc<Llm>, bus: EventBus) -> Result<Engine, EngineError> {
        let (weights_version, weights, note) = db
            .call(|c| {
                let row: Option<(u32, String)> = c
                    .query_row("SELECT version, weights FROM router_weights ORDER BY version DESC LIMIT 1", [], |r| {
                        Ok((r.get(0)?, r.get(1)?))
                    })
                    .optional()?;
                let Some((version, text)) = row else {
                    let w = crate::cognition::router::overrides::store_defaults(c)?;
                    return Ok((DEFAULT_WEIGHTS_VERSION, w, None));
                };
                match serde_json::from_str::<RouterWeights>(&text).map_err(|e| e.to_string()).and_then(|w| {
                    w.validate()?;
                    Ok(w)
                }) {
                    Ok(w) => Ok((version, w, None)),
                    Err(e) => Ok((
                        DEFAULT_WEIGHTS_VERSION,
                        RouterWeights::default(),
                        Some(format!("router weights v{version} are unusable ({e}); routing with the defaults")),
                    )),
                }
            })
            .await?;
        if let Some(note) = note {
            bus.notice(NoticeLevel::Warn, note);
        }
        let settings = llm.settings().clone();
        let model_pre_routing = llm.pre_routing_uses_model();
        Ok(Engine {
            db,
            llm,
            bus,
            model_pre_routing,
            triage_timeout: Duration::from_millis(settings.triage_timeout_ms),
            tiebreak_timeout: Duration::from_millis(settings.tiebreak_timeout_ms),
            weights,
            weights_version,
            topic_params: ClassifierParams::default(),
            boundary_params: BoundaryParams::default(),
        })
    }

    pub fn llm(&self) -> &Llm {
        &self.llm
    }

    /// Whether triage and the tie-breaker call the lightweight model.
    pub fn model_pre_routing(&self) -> bool {
        self.model_pre_routing
    }

    /// Run one message (already stored by `Runtime::intake`) through phases A–D.
    pub async fn turn(
        &self,
        thread_id: &str,
        exchange_id: &str,
        text: &str,
        cancel: &CancellationToken,
    ) -> Result<TurnReport, EngineError> {
        let started = Instant::now();
        let mut t = Timings::default();
        let mut fallbacks: Vec<String> = Vec::new();
        let now = now_ts();

        // ── Phase A: identity hook, working memory, traits, session tracking.
        let clock = Instant::now();
        let name = declared_name(text);
        let a = {
            let (thread, xid, name) = (thread_id.to_string(), exchange_id.to_string(), name.clone());
            self.db.call(move |c| phases::phase_a(c, &thread, &xid, name.as_deref(), now)).await?
        };
        if let Some(n) = &name {
            self.bus.emit(EngineEvent::IdentityLearned { name: n.clone() });
        }
        t.context = ms(clock);

        // ── Topic: embed, classify with the boundary detector, read the topic's context.
        let clock = Instant::now();
        let embedding = if crate::text::words(&crate::text::normalize(text)).is_empty() {
            None
        } else {
            match self.llm.embed(&[text.to_string()]).await {
                Ok(mut v) if !v.is_empty() => Some(v.swap_remove(0)),
                Ok(_) => {
                    fallbacks.push("embedding_invalid_output".into());
                    None
                }
                Err(e) => {
                    self.bus.notice(NoticeLevel::Warn, format!("embedding failed, topic kept: {e}"));
                    fallbacks.push(fallback_name("embedding", &e));
                    None
                }
            }
        };
        t.embedding = ms(clock);
        let clock = Instant::now();
        let (topic, memories) = {
            let (thread, body) = (thread_id.to_string(), text.to_string());
            let params = (self.topic_params.clone(), self.boundary_params.clone());
            self.db
                .call(move |c| {
                    let topic =
                        phases::topic_stage(c, &thread, &body, embedding.as_deref(), now, (&params.0, &params.1))?;
                    // Episodes and concepts the message brings back (traits, facts and gists
                    // are already in context); skipped for messages with nothing to search for.
                    let memories = if topic.report.contentless || embedding.is_none() {
                        Vec::new()
                    } else {
                        phases::recalled_for_context(c, &body, embedding.as_deref(), now)?
                    };
                    Ok((topic, memories))
                })
                .await?
        };
        t.topic = ms(clock);

        // ── Phase B: signals, intent, social filter, triage.
        let clock = Instant::now();
        let social = social_match(text);
        let ctx = ContextSignals {
            working_memory_turns: a.working_memory.len(),
            gist_count: topic.context.real_gist_count(),
            fact_count: topic.context.facts.len(),
            world_state_present: !topic.context.world_state.is_empty(),
            fok_score: topic.context.fok,
            topic_confidence: f64::from(topic.report.confidence),
            is_new_topic: topic.report.is_new_topic,
            session_exchange_count: a.session_exchanges,
            self_constraint: 0.0,
            focus_distraction: phases::is_distraction(topic.focus_on.as_deref(), &topic.report, social.is_some()),
            referent_support: Some(signals::reference::referent_support(
                &crate::text::words(&crate::text::normalize(text)),
                &a.working_memory.iter().map(|e| e.content.as_str()).collect::<Vec<_>>(),
                topic.report.is_new_topic,
            )),
        };
        let text_signals = signals::extract(text);
        let intent = classify_intent(
            text,
            &text_signals,
            &IntentContext {
                warmth: ctx.warmth(),
                memory_confidence: ctx.memory_confidence(),
                working_memory_turns: ctx.working_memory_turns,
            },
        );
        let router_signals = RouterSignals::new(&text_signals, &intent, &ctx);
        t.intent = ms(clock);

        let clock = Instant::now();
        let triage_ctx = TriageContext {
            tools_available: Vec::new(),
            previous_mode: topic.router_state.previous_mode,
            previous_tools: Vec::new(),
        };
        let triage = match social {
            Some(s) => {
                let mode = match s.exit {
                    crate::cognition::social::SocialExit::Acknowledge => TriageMode::Acknowledge,
                    crate::cognition::social::SocialExit::Cancel => TriageMode::Cancel,
                    crate::cognition::social::SocialExit::Ignore => TriageMode::Ignore,
                };
                let result = TriageResult::new(mode, TriageSource::Social, format!("social filter: {}", s.reason));
                TriageReport { result, latency_ms: 0.0, fallback: None, sanity_rules: Vec::new() }
            }
            None => self.triage(text, &text_signals, &router_signals, &a, &triage_ctx, cancel).await,
        };
        if let Some(f) = &triage.fallback {
            fallbacks.push(f.clone());
        }
        t.triage = ms(clock);

        // ── Phase C: route, tie-break, deliver.
        let clock = Instant::now();
        let mut decision = route(&router_signals, &self.weights, &topic.router_state, social.is_none());
        t.routing = ms(clock);
        let routing_time_ms = t.routing;
        let clock = Instant::now();
        if let Some((a_mode, b_mode)) = decision.tiebreak.filter(|_| decision.tiebreak_pending()) {
            if self.model_pre_routing {
                let context = tiebreak_context(text, &topic.report.name, &router_signals, a_mode, b_mode);
                let req = prompts::tiebreak_request(&context);
                let schema = crate::cognition::router::tiebreak_schema();
                match self.llm.structured(Role::Lightweight, &req, &schema, self.tiebreak_timeout, cancel).await {
                    // The schema admits only A or B, so a valid reply always parses.
                    Ok(v) => {
                        decision.resolve_tiebreak(parse_tiebreak_for(&v.to_string(), a_mode, b_mode));
                    }
                    Err(e) => {
                        fallbacks.push(fallback_name("tiebreaker", &e));
                        decision.resolve_tiebreak(None);
                    }
                }
            } else {
                decision.resolve_tiebreak(None);
            }
        }
        t.tiebreak = ms(clock);
        let delivery = deliver(social, &triage.result, text, &decision, name.is_some());
        decision.mode = delivery.mode;

        let router = RouterReport {
            scores: decision.scores,
            confidence: decision.router_confidence,
            margin: decision.margin,
            effective_margin: decision.effective_margin,
            tiebreaker_used: decision.tiebreaker_used,
            tiebreaker_candidates: decision.tiebreak.map(|(a, b)| [a, b]),
            routing_time_ms,
            scored_mode: decision.scored_mode(),
            pre_routed: delivery.pre_routed,
            reason: delivery.reason.clone(),
            previous_mode: decision.previous_mode,
            signals: decision.signal_snapshot.clone(),
        };
        self.bus.emit(EngineEvent::Routed {
            thread_id: thread_id.to_string(),
            exchange_id: exchange_id.to_string(),
            mode: delivery.mode,
            router: Box::new(router.clone()),
            topic: topic.report.clone(),
            triage: Box::new(triage.clone()),
            fallbacks: fallbacks.clone(),
        });

        // ── Generation (the frontal cortex), by mode.
        let clock = Instant::now();
        let mut notes = Vec::new();
        if let Some(n) = &name {
            notes.push(format!("The user just told you their name: {n}. Greet them by it."));
        }
        if let (true, Some(on)) = (ctx.focus_distraction, &topic.focus_on) {
            notes.push(format!(
                "The user is in a focus session on {on} and this message is off that focus: help briefly, then \
                 gently remind them of it."
            ));
        }
        let routing_id = uuid::Uuid::now_v7().to_string();
        let builtin_primary = self.llm.route(Role::Primary).is_none_or(|r| r.builtin);
        // The built-in model invents answers about the user: a question about their own
        // traits is answered from memory before any action or generation.
        let own_question = reply::own::parse(text);
        let mut memory_answer = if builtin_primary && social.is_none() && own_question.is_some() {
            self.memory_answer(own_question.as_ref(), &memories, false, now).await?
        } else {
            None
        };
        let act_run = if delivery.mode == Mode::Act && memory_answer.is_none() {
            let ctx = SkillContext {
                thread_id: thread_id.to_string(),
                exchange_id: exchange_id.to_string(),
                topic: topic.report.name.clone(),
                now: chrono::Local::now(),
            };
            let skills = act::select_skills(&triage.result.skills, text);
            let run = self.act_loop(&ctx, text, &skills, &routing_id, cancel).await;
            if let Some(f) = &run.planner_fallback {
                fallbacks.push(f.clone());
            }
            Some(run)
        } else {
            None
        };
        // No usable plan, but memory may hold the answer ("what is my current address?").
        if act_run.as_ref().is_some_and(|r| r.results().next().is_none() && r.confirm.is_none()) {
            memory_answer = self.memory_answer(own_question.as_ref(), &memories, true, now).await?;
        }
        t.act = ms(clock);
        let clock = Instant::now();
        let mut cards: Vec<String> = Vec::new();
        let reply_mode = match &act_run {
            _ if memory_answer.is_some() => Mode::Respond,
            Some(run) => {
                let after = act::after_act(run, builtin_primary);
                cards = after.cards;
                notes.extend(after.notes);
                fallbacks.extend(after.fallback.map(str::to_string));
                after.mode.unwrap_or_else(|| {
                    reroute_after_act(&router_signals, &self.weights, &topic.router_state, after.outcome).mode
                })
            }
            None => delivery.mode,
        };
        let template = (builtin_primary && memory_answer.is_none())
            .then(|| reply::template_reply(text, reply_mode, social.map(|s| s.reason), name.as_deref()))
            .flatten();
        let generated = match (reply_mode, social.map(|s| s.exit)) {
            _ if memory_answer.is_some() => {
                let a = memory_answer.as_ref().map(|a| a.text.clone()).unwrap_or_default();
                self.fixed_reply(exchange_id, a, ReplySource::Memory)
            }
            // Every action produced a card, or a skill asked which of several things was meant:
            // the cards are the reply, no text is generated.
            (Mode::Ignore | Mode::Clarify, _) if !cards.is_empty() => {
                self.fixed_reply(exchange_id, cards.join("\n"), ReplySource::Template)
            }
            (Mode::Ignore, _) => Generated { source: ReplySource::Template, ..Generated::default() },
            (_, Some(crate::cognition::social::SocialExit::Cancel)) => {
                self.fixed_reply(exchange_id, CANCEL_REPLY.into(), ReplySource::Template)
            }
            _ if template.is_some() => {
                self.fixed_reply(exchange_id, template.clone().unwrap_or_default(), ReplySource::Template)
            }
            (mode, _) => {
                let input = GenerationInput {
                    mode,
                    user_text: text,
                    working_memory: &a.working_memory,
                    traits: &a.traits,
                    topic: &topic.context,
                    memories: &memories.iter().map(prompts::memory_line).collect::<Vec<_>>(),
                    prompt_tokens: text_signals.prompt_token_count,
                    notes: &notes,
                };
                let mut g = self.generate(exchange_id, &input, cancel).await;
                if g.failed.is_none() && !g.cancelled {
                    let (shaped, fallback) = shape_reply(mode, &g.text, text_signals.vague_reference);
                    g.text = shaped;
                    g.fallback = g.fallback.or(fallback.map(str::to_string));
                }
                g
            }
        };
        if let Some(f) = &generated.fallback {
            fallbacks.push(f.clone());
        }
        t.generation = ms(clock);

        // ── Phase D: commit everything in one transaction, queue the encode job.
        let clock = Instant::now();
        let mut state = topic.router_state.clone();
        state.record(&decision);
        let record = commit::routing_record(
            routing_id,
            thread_id,
            exchange_id,
            &topic.report.name,
            &delivery,
            &decision,
            self.weights_version,
            routing_time_ms,
            &fallbacks,
            now,
        );
        let triage_row = commit::triage_row(&triage);
        let response = generated.text.clone();
        let interaction = json!({
            "mode": delivery.mode,
            "reply_mode": reply_mode,
            "confidence": decision.router_confidence,
            "generation_ms": t.generation,
            "tokens_in": generated.tokens_in,
            "tokens_out": generated.tokens_out,
            "cancelled": generated.cancelled,
            "reply_source": generated.source,
            "fallbacks": fallbacks,
            "topic": topic.report,
        });
        let encode = (!text.trim().is_empty()).then(|| {
            json!({
                "thread_id": thread_id, "exchange_id": exchange_id, "topic": topic.report.name,
                "user_text": text, "response": response, "mode": delivery.mode, "created_at": now,
            })
        });
        let commit = TurnCommit {
            thread_id: thread_id.to_string(),
            exchange_id: exchange_id.to_string(),
            topic: topic.report.name.clone(),
            user_text: text.to_string(),
            reply: (!response.is_empty()).then(|| response.clone()),
            reply_role: if generated.failed.is_some() { "system" } else { "assistant" },
            mode: delivery.mode.as_str().to_string(),
            routing: record,
            triage: triage_row,
            router_state: Some((
                phases::router_state_key(thread_id, &topic.report.name),
                serde_json::to_value(&state).unwrap_or(Value::Null),
            )),
            interaction,
            encode,
        };
        self.db.call(move |c| TurnRepo(c).commit(&commit)).await?;
        t.commit = ms(clock);
        t.total = ms(started);

        self.bus.emit(EngineEvent::ReplyDone {
            thread_id: thread_id.to_string(),
            exchange_id: exchange_id.to_string(),
            mode: delivery.mode,
            text: response.clone(),
            cancelled: generated.cancelled,
            failed: generated.failed.clone(),
            timings_ms: Some(t),
            reply_source: Some(generated.source),
        });
        Ok(TurnReport {
            thread_id: thread_id.to_string(),
            exchange_id: exchange_id.to_string(),
            response,
            mode: delivery.mode,
            reply_mode,
            reply_source: generated.source,
            answered_from: memory_answer.map(|a| a.sources).unwrap_or_default(),
            router,
            topic: topic.report,
            session: SessionReport {
                exchanges: a.session_exchanges,
                silence_gap_s: a.silence_gap_s,
                focus: topic.focus,
                focus_on: topic.focus_on.clone(),
                distraction: ctx.focus_distraction,
            },
            intent,
            triage,
            social: social.map(|s| s.reason.to_string()),
            identity: name,
            memories: memories.iter().filter_map(|m| serde_json::to_value(m).ok()).collect(),
            act_iterations: act_run
                .as_ref()
                .map(|r| r.iterations.iter().filter_map(|i| serde_json::to_value(i).ok()).collect())
                .unwrap_or_default(),
            act_termination: act_run.as_ref().map(|r| r.termination),
            regulator: Vec::new(),
            fallbacks,
            cancelled: generated.cancelled,
            failed: generated.failed,
            tokens_in: generated.tokens_in,
            tokens_out: generated.tokens_out,
            timings_ms: t,
        })
    }

    /// Phase B step 2b–2c: the lightweight model's triage within its time box, the keyword
    /// fallback on any failure, then the deterministic sanity check over either.
    async fn triage(
        &self,
        text: &str,
        ts: &signals::TextSignals,
        rs: &RouterSignals,
        a: &phases::PhaseA,
        ctx: &TriageContext,
        cancel: &CancellationToken,
    ) -> TriageReport {
        let clock = Instant::now();
        let (raw, fallback) = if !self.model_pre_routing {
            (heuristic_triage(text, ts, ctx), None)
        } else {
            let req = prompts::triage_request(text, rs, &a.working_memory, ctx);
            let schema = crate::cognition::intent::triage_schema();
            match self.llm.structured(Role::Lightweight, &req, &schema, self.triage_timeout, cancel).await {
                Ok(v) => match TriageResult::from_json(&v) {
                    Ok(r) => (r, None),
                    Err(_) => (heuristic_triage(text, ts, ctx), Some("triage_invalid_output".to_string())),
                },
                Err(e) => (heuristic_triage(text, ts, ctx), Some(fallback_name("triage", &e))),
            }
        };
        let (result, rules) = sanity_check(raw, text, ts, ctx);
        TriageReport {
            result,
            latency_ms: ms(clock),
            fallback,
            sanity_rules: rules.into_iter().map(str::to_string).collect(),
        }
    }

    /// The frontal cortex: stream the reply as `ReplyChunk` events. A failed or empty call
    /// becomes an honest system line; a cancelled or cut-off one keeps what was streamed.
    async fn generate(&self, exchange_id: &str, input: &GenerationInput<'_>, cancel: &CancellationToken) -> Generated {
        let req = prompts::generation_request(input);
        let mut streamed = String::new();
        let bus = self.bus.clone();
        let xid = exchange_id.to_string();
        let mut on_token = |tok: &Token| {
            streamed.push_str(&tok.text);
            bus.emit(EngineEvent::ReplyChunk { exchange_id: xid.clone(), text: tok.text.clone() });
        };
        let result = self.llm.chat(Role::Primary, &req, &mut on_token, cancel).await;
        match result {
            Ok(c) if !c.text.trim().is_empty() => Generated {
                text: c.text.trim().to_string(),
                tokens_in: c.tokens_in,
                tokens_out: c.tokens_out,
                ..Generated::default()
            },
            Ok(c) => self.failed_reply("generation_empty", "the model returned an empty reply", c.tokens_in),
            Err(LlmError::Cancelled) => {
                Generated { text: streamed.trim().to_string(), cancelled: true, ..Generated::default() }
            }
            Err(_) if cancel.is_cancelled() => {
                Generated { text: streamed.trim().to_string(), cancelled: true, ..Generated::default() }
            }
            // The user already read this much: keep it, and say why it stops there (a
            // deadline or a dropped stream mid-reply is never retried once tokens showed).
            Err(e) if !streamed.trim().is_empty() => {
                let why = crate::describe(&e);
                self.bus.notice(NoticeLevel::Warn, format!("the reply was cut off: {why}"));
                Generated {
                    text: streamed.trim().to_string(),
                    fallback: Some(GENERATION_CUT_OFF.to_string()),
                    ..Generated::default()
                }
            }
            Err(e) => self.failed_reply(&fallback_name("generation", &e), &crate::describe(&e), 0),
        }
    }

    /// Memory's answer (see [`reply::memory_answer`]); `any_recall` lets the best recalled
    /// memory answer a question that is not about the user.
    async fn memory_answer(
        &self,
        question: Option<&reply::own::OwnQuestion>,
        hits: &[crate::memory::recall::Hit],
        any_recall: bool,
        now: i64,
    ) -> Result<Option<reply::own::OwnAnswer>, EngineError> {
        let mem = self
            .db
            .call(move |c| {
                let repo = crate::store::ProfileRepo(c);
                Ok(OwnMemory { traits: repo.traits()?, facts: repo.facts(now)? })
            })
            .await?;
        Ok(reply::memory_answer(question, &mem, hits, any_recall))
    }

    /// A reply written without the model, sent to the chat as one chunk.
    fn fixed_reply(&self, exchange_id: &str, text: String, source: ReplySource) -> Generated {
        self.bus.emit(EngineEvent::ReplyChunk { exchange_id: exchange_id.to_string(), text: text.clone() });
        Generated { text, source, ..Generated::default() }
    }

    fn failed_reply(&self, fallback: &str, why: &str, tokens_in: u32) -> Generated {
        let text = format!(
            "No reply this time: {why} (primary model: {}). Your message is saved; send it again, or check the \
             model settings with `chalie-tui --version`.",
            self.llm.describe(Role::Primary)
        );
        self.bus.notice(NoticeLevel::Error, format!("reply failed: {why}"));
        Generated {
            text,
            tokens_in,
            fallback: Some(fallback.to_string()),
            failed: Some(why.to_string()),
            ..Generated::default()
        }
    }
}

/// The fallback named when a reply stopped part-way (deadline or dropped stream) and what
/// had streamed is kept as the reply.
pub const GENERATION_CUT_OFF: &str = "generation_cut_off";

#[derive(Debug, Default)]
struct Generated {
    text: String,
    tokens_in: u32,
    tokens_out: u32,
    cancelled: bool,
    fallback: Option<String>,
    failed: Option<String>,
    source: ReplySource,
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}
