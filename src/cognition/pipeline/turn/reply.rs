//! The turn's second half before the commit: memory's answer and the ACT loop, then the
//! reply in the mode [`decide`] settles once their outcome is known.

use super::{Context, Delivered, Topic, Turn, Understanding};
use crate::cognition::act::skill::SkillContext;
use crate::cognition::adaptive;
use crate::cognition::pipeline::act::{self, ActRun};
use crate::cognition::pipeline::model::{Generated, builtin_primary, generation_input};
use crate::cognition::pipeline::{CANCEL_REPLY, EngineError, TriageReport, ms, prompts, shape_reply};
use crate::cognition::reply::{self, ReplySource, own::OwnAnswer};
use crate::cognition::router::{ActSequel, Decision, Evidence, Mode, Sequel, decide, reroute_after_act};
use crate::cognition::social::SocialExit;
use crate::events::EngineEvent;
use crate::memory::uncertainty::ingest;
use std::time::Instant;

/// What ran before the reply: memory's answer, or the ACT loop.
#[derive(Debug)]
pub(in crate::cognition::pipeline) struct Acted {
    /// Lines for the reply's system prompt so far.
    pub notes: Vec<String>,
    pub builtin_primary: bool,
    pub memory_answer: Option<OwnAnswer>,
    pub run: Option<ActRun>,
}

/// The reply and the modes it was settled with.
#[derive(Debug)]
pub(in crate::cognition::pipeline) struct Replied {
    /// The final decision: the delivered mode and the reply's.
    pub settled: Decision,
    pub generated: Generated,
    pub memory_answer: Option<OwnAnswer>,
    pub run: Option<ActRun>,
}

impl Turn<'_> {
    /// A question about the user answered from memory (built-in model only), else the ACT
    /// loop when ACT was delivered; an ACT with no workable plan may still be answered from
    /// memory ("what is my current address?").
    pub(in crate::cognition::pipeline) async fn act(
        &mut self,
        context: &Context,
        topic: &Topic,
        u: &Understanding,
        triage: &TriageReport,
        delivered: &Delivered,
    ) -> Result<Acted, EngineError> {
        let clock = Instant::now();
        let mut notes = Vec::new();
        let builtin = builtin_primary(self.engine);
        // A plain yes or no to the critic's question is its answer: nothing else to plan.
        if context.phase_a.critic_pending
            && let Some(answered) =
                self.engine.critic_answer(self.thread_id, self.exchange_id, topic, self.msg.text).await
        {
            self.critic_reply = Some(answered);
            return Ok(Acted { notes, builtin_primary: builtin, memory_answer: None, run: None });
        }
        if let Some(n) = &context.name {
            notes.push(format!("The user just told you their name: {n}. Greet them by it."));
        }
        if let (true, Some(on)) = (u.ctx.focus_distraction, &topic.stage.focus_on) {
            notes.push(format!(
                "The user is in a focus session on {on} and this message is off that focus: help briefly, then \
                 gently remind them of it."
            ));
        }
        notes.extend(self.uncertainty_checked().await);
        notes.extend(self.regulation.prelude.clone());
        let builtin_primary = builtin_primary(self.engine);
        let spark = &context.phase_a.spark;
        if let Some(c) = crate::cognition::onboarding::intro(spark, delivered.settled.mode, !builtin_primary) {
            notes.push(crate::cognition::onboarding::note(c));
        }
        // The built-in model invents answers about the user: a question about their own
        // traits is answered from memory before any action or generation.
        let own_question = reply::own::parse(self.msg.text);
        let mut memory_answer = if builtin_primary && self.msg.social.is_none() && own_question.is_some() {
            self.engine.memory_answer(own_question.as_ref(), &topic.memories, None, self.now).await?
        } else {
            None
        };
        let run = if delivered.settled.mode == Mode::Act && memory_answer.is_none() && !self.halted() {
            let ctx = SkillContext {
                thread_id: self.thread_id.to_string(),
                exchange_id: self.exchange_id.to_string(),
                topic: topic.stage.report.name.clone(),
                now: chrono::Local::now(),
                graph: self.engine.graph_handle(),
            };
            let skills = act::select_skills(&triage.result.skills, &self.msg.skills);
            let run = self
                .engine
                .act_loop(&ctx, self.msg.text, &skills, &triage.result.skills, &self.routing_id, self.cancel)
                .await;
            self.fallbacks.extend(run.planner_fallback);
            self.fallbacks.extend(run.tool_fallback);
            self.fallbacks.extend(run.critic_fallbacks.iter().copied());
            Some(run)
        } else {
            None
        };
        // Only a question can be answered by quoting a memory: a statement that found no action
        // ("I switched gyms, I go to Iron Works now") must not get an old line read back.
        if u.signals.text.is_question()
            && run.as_ref().is_some_and(|r| r.results().next().is_none() && r.confirm.is_none())
        {
            memory_answer = self
                .engine
                .memory_answer(own_question.as_ref(), &topic.memories, Some(self.msg.text), self.now)
                .await?;
        }
        let answers = delivered.settled.mode == Mode::Respond && memory_answer.is_none() && self.msg.social.is_none();
        let surfacing = (answers && self.uncertainty.detected.is_empty()).then(|| topic.stage.report.name.clone());
        notes.extend(self.adapt_and_surface(context, answers, surfacing).await);
        self.timings.act = ms(clock);
        Ok(Acted { notes, builtin_primary, memory_answer, run })
    }

    /// The adaptive layer's directives for this reply (docs/cognition.md §18), and with a
    /// `surfacing` topic one open record on it, raised in this reply (docs/cognition.md §10.6),
    /// in one trip to the database thread. A store failure costs the reply its style or its
    /// question, never the turn. Returns the record's note.
    async fn adapt_and_surface(
        &mut self,
        context: &Context,
        answers: bool,
        surfacing: Option<String>,
    ) -> Option<String> {
        let last_reply_words = context.phase_a.last_reply_words();
        let (text, now) = (self.msg.text.to_string(), self.now);
        let read = self
            .engine
            .db
            .call(move |c| {
                let t = crate::cognition::adaptive::state::TurnInput { text: &text, last_reply_words, answers, now };
                let adaptive = crate::cognition::adaptive::state::prepare_unsaved(c, &t);
                Ok((adaptive, surfacing.map(|topic| ingest::surface_in(c, &topic, &text, now))))
            })
            .await;
        let (adaptive, surfaced) = match read {
            Ok(read) => read,
            Err(e) => (Err(e), None),
        };
        (self.adaptive, self.adaptive_state) = match adaptive {
            Ok((applied, state)) => (applied, Some(state)),
            Err(e) => {
                tracing::warn!("adaptive layer skipped: {}", crate::describe(&e));
                Default::default()
            }
        };
        match surfaced? {
            Ok(Some((item, note))) => {
                self.engine.bus.emit(EngineEvent::UncertaintyChanged { item: item.clone() });
                self.uncertainty.surfaced.push(item);
                Some(note)
            }
            Ok(None) => None,
            Err(e) => {
                tracing::warn!("uncertainty surfacing failed: {}", crate::describe(&e));
                None
            }
        }
    }

    /// The uncertainty check's result if it finished within its time box (its notes go to
    /// the reply); a later one keeps running and its records wait for surfacing and drift.
    async fn uncertainty_checked(&mut self) -> Vec<String> {
        let Some((started, mut handle)) = self.uncertainty_check.take() else { return Vec::new() };
        let left = ingest::TIME_BOX.saturating_sub(started.elapsed());
        match tokio::time::timeout(left, &mut handle).await {
            Ok(Ok(Ok(applied))) => {
                for item in applied.report.detected.iter().chain(&applied.report.resolved) {
                    self.engine.bus.emit(EngineEvent::UncertaintyChanged { item: item.clone() });
                }
                self.uncertainty = applied.report;
                self.changes = applied.changes;
                applied.notes
            }
            Ok(Ok(Err(e))) => {
                tracing::warn!("uncertainty check failed: {}", crate::describe(&e));
                Vec::new()
            }
            Ok(Err(e)) => {
                tracing::warn!("uncertainty check stopped: {e}");
                Vec::new()
            }
            Err(_) => {
                tracing::info!("uncertainty check ran past its time box; its records wait for drift");
                self.uncertainty_late = Some(handle);
                Vec::new()
            }
        }
    }

    /// Settle the reply's mode from what happened, then write the reply: memory's answer,
    /// the ACT cards, the cancel line or a template when they apply, else the model.
    pub(in crate::cognition::pipeline) async fn reply(
        &mut self,
        context: &Context,
        topic: &Topic,
        u: &Understanding,
        triage: &TriageReport,
        delivered: &Delivered,
        acted: Acted,
    ) -> Replied {
        let clock = Instant::now();
        let Acted { mut notes, builtin_primary, memory_answer, run } = acted;
        let mut cards: Vec<String> = Vec::new();
        let mut act_sequel = None;
        if let (Some(run), None) = (&run, &memory_answer) {
            let after = act::after_act(run, builtin_primary);
            let state = &topic.stage.router_state;
            let rerouted = reroute_after_act(&u.signals, &self.weights.1, state, after.outcome).mode;
            act_sequel = Some(ActSequel { forced: after.mode, rerouted });
            cards = after.cards;
            notes.extend(after.notes);
            self.fallbacks.extend(after.fallback);
            if run.termination == crate::cognition::act::plan::Termination::RegulatorBreak {
                let names: Vec<String> =
                    run.iterations.iter().flat_map(|i| i.actions.iter()).map(|a| a.kind.clone()).collect();
                let (tool, count) = crate::cognition::regulator::cost::tool_loop(&names).unwrap_or_default();
                let b = crate::cognition::regulator::Break::ToolLoop { tool, count };
                self.halt(b.message());
            }
        }
        let settled = decide(&Evidence {
            routed: &delivered.routing,
            social: self.msg.social,
            triage: &triage.result,
            named_skills: &self.msg.skills,
            identity_stored: context.name.is_some(),
            sequel: Sequel { memory_answered: memory_answer.is_some(), act: act_sequel },
        });
        debug_assert_eq!(settled.mode, delivered.settled.mode, "the sequel never moves the delivered mode");
        let generated =
            self.write(context, topic, &settled, &cards, &notes, memory_answer.as_ref(), builtin_primary).await;
        self.fallbacks.extend(generated.fallback);
        self.timings.generation = ms(clock);
        Replied { settled, generated, memory_answer, run }
    }

    #[allow(clippy::too_many_arguments)]
    async fn write(
        &mut self,
        context: &Context,
        topic: &Topic,
        settled: &Decision,
        cards: &[String],
        notes: &[String],
        memory_answer: Option<&OwnAnswer>,
        builtin_primary: bool,
    ) -> Generated {
        let (engine, xid, msg) = (self.engine, self.exchange_id, self.msg);
        let social = msg.social;
        if let Some(a) = memory_answer {
            return engine.fixed_reply(xid, a.text.clone(), ReplySource::Memory);
        }
        if let Some(text) = self.critic_reply.clone() {
            return engine.fixed_reply(xid, text, ReplySource::Template);
        }
        // A regulator break: no model call, the reply says why (after any ACT cards).
        if let Some(line) = self.regulation.halt.clone() {
            let text = cards.iter().cloned().chain([line]).collect::<Vec<_>>().join("\n");
            return engine.fixed_reply(xid, text, ReplySource::Template);
        }
        let mode = settled.reply_mode;
        // A stated change ("I switched gyms, I go to Iron Works now") finds no action; on the
        // built-in model it is acknowledged from the values the check replaced, never with
        // the no-plan line nor left to the small model.
        let no_plan = cards.is_empty() || cards.iter().all(|c| c == act::NO_PLAN_REPLY);
        if builtin_primary && no_plan && social.is_none() && !self.changes.is_empty() {
            return engine.fixed_reply(xid, reply::templates::noted_changes(&self.changes), ReplySource::Template);
        }
        let template = builtin_primary
            .then(|| reply::template_reply(msg.text, mode, social.map(|s| s.reason), context.name.as_deref()))
            .flatten();
        match (mode, social.map(|s| s.exit)) {
            // Every action produced a card, or a skill asked which of several things was meant:
            // the cards are the reply, no text is generated.
            (Mode::Ignore | Mode::Clarify, _) if !cards.is_empty() => {
                engine.fixed_reply(xid, cards.join("\n"), ReplySource::Template)
            }
            (Mode::Ignore, _) => Generated { source: ReplySource::Template, ..Generated::default() },
            (_, Some(SocialExit::Cancel)) => engine.fixed_reply(xid, CANCEL_REPLY.into(), ReplySource::Template),
            _ if template.is_some() => engine.fixed_reply(xid, template.unwrap_or_default(), ReplySource::Template),
            (mode, _) => {
                let mut memories: Vec<String> = topic.memories.iter().map(prompts::memory_line).collect();
                // Concepts the graph fired, beside recall, within the graph's own token budget.
                memories
                    .extend(topic.graph.iter().flat_map(|g| g.lines.iter().map(|l| format!("Associated: {}", l.text))));
                let limit = if builtin_primary { adaptive::BUILTIN_MAX_DIRECTIVES } else { usize::MAX };
                let style = self.adaptive.lines_for(matches!(mode, Mode::Respond | Mode::Act), limit);
                let mut input = generation_input(mode, msg, context, topic, &memories, notes);
                input.style = &style;
                let mut g = engine.generate(xid, &input, self.cancel).await;
                self.adaptive_sent = Some(style.clone());
                if g.failed.is_none() && !g.cancelled {
                    let (shaped, fallback) = shape_reply(mode, &g.text, msg.signals.vague_reference);
                    g.text = shaped;
                    g.fallback = g.fallback.or(fallback);
                }
                g
            }
        }
    }
}
