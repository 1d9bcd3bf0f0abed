//! The engine's model calls with their deterministic stand-ins: triage, the tie-breaker, the
//! reply stream, and memory's answer. Each returns what happened and, when a stand-in ran,
//! which [`Fallback`] it was.

use super::fallback::{Failure, Fallback, Stage};
use super::{Engine, EngineError, TriageReport, ms, prompts};
use crate::cognition::intent::{Analysis, TriageContext, TriageResult, heuristic_triage_for, sanity_check_for};
use crate::cognition::reply::{self, ReplySource, own::OwnMemory};
use crate::cognition::router::{Mode, RouterSignals, RoutingDecision, parse_tiebreak_for, tiebreak_context};
use crate::config::Role;
use crate::events::{EngineEvent, NoticeLevel};
use crate::llm::{LlmError, Token};
use crate::store::WmEntry;
use prompts::GenerationInput;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// A reply, however it was written.
#[derive(Debug, Default)]
pub(super) struct Generated {
    pub text: String,
    pub tokens_in: u32,
    pub tokens_out: u32,
    pub cancelled: bool,
    pub fallback: Option<Fallback>,
    pub failed: Option<String>,
    pub source: ReplySource,
}

impl Engine {
    /// Phase B step 2b–2c: the lightweight model's triage within its time box, the keyword
    /// fallback on any failure, then the deterministic sanity check over either.
    pub(super) async fn triage(
        &self,
        msg: &Analysis<'_>,
        rs: &RouterSignals,
        working_memory: &[WmEntry],
        ctx: &TriageContext,
        halted: bool,
        cancel: &CancellationToken,
    ) -> (TriageReport, Option<Fallback>) {
        let clock = Instant::now();
        let (raw, fallback) = if !self.model_pre_routing || halted {
            (heuristic_triage_for(msg, ctx), None)
        } else {
            let req = prompts::triage_request(msg.text, rs, working_memory, ctx);
            let schema = crate::cognition::intent::triage_schema();
            match self.llm.structured(Role::Lightweight, &req, &schema, self.triage_timeout, cancel).await {
                Ok(v) => match TriageResult::from_json(&v) {
                    Ok(r) => (r, None),
                    Err(_) => {
                        (heuristic_triage_for(msg, ctx), Some(Fallback::Model(Stage::Triage, Failure::InvalidOutput)))
                    }
                },
                Err(e) => (heuristic_triage_for(msg, ctx), Some(Fallback::model(Stage::Triage, &e))),
            }
        };
        let (result, rules) = sanity_check_for(raw, msg, ctx);
        let report = TriageReport {
            result,
            latency_ms: ms(clock),
            fallback: fallback.map(|f| f.to_string()),
            sanity_rules: rules.into_iter().map(str::to_string).collect(),
        };
        (report, fallback)
    }

    /// Resolve a pending tie-break: ask the lightweight model when pre-routing uses one,
    /// otherwise (or when it fails) the higher score stands.
    pub(super) async fn tiebreak(
        &self,
        decision: &mut RoutingDecision,
        text: &str,
        topic: &str,
        signals: &RouterSignals,
        halted: bool,
        cancel: &CancellationToken,
    ) -> Option<Fallback> {
        let (a_mode, b_mode) = decision.tiebreak.filter(|_| decision.tiebreak_pending())?;
        if !self.model_pre_routing || halted {
            decision.resolve_tiebreak(None);
            return None;
        }
        let context = tiebreak_context(text, topic, signals, a_mode, b_mode);
        let req = prompts::tiebreak_request(&context);
        let schema = crate::cognition::router::tiebreak_schema();
        match self.llm.structured(Role::Lightweight, &req, &schema, self.tiebreak_timeout, cancel).await {
            // The schema admits only A or B, so a valid reply always parses.
            Ok(v) => {
                decision.resolve_tiebreak(parse_tiebreak_for(&v.to_string(), a_mode, b_mode));
                None
            }
            Err(e) => {
                decision.resolve_tiebreak(None);
                Some(Fallback::model(Stage::Tiebreaker, &e))
            }
        }
    }

    /// The frontal cortex: stream the reply as `ReplyChunk` events. A failed or empty call
    /// becomes an honest system line; a cancelled or cut-off one keeps what was streamed.
    pub(super) async fn generate(
        &self,
        exchange_id: &str,
        input: &GenerationInput<'_>,
        cancel: &CancellationToken,
    ) -> Generated {
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
            Ok(c) => self.failed_reply(Fallback::GenerationEmpty, "the model returned an empty reply", c.tokens_in),
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
                    fallback: Some(Fallback::GenerationCutOff),
                    ..Generated::default()
                }
            }
            Err(e) => self.failed_reply(Fallback::model(Stage::Generation, &e), &crate::describe(&e), 0),
        }
    }

    /// Memory's answer (see [`reply::memory_answer`]); `any_recall` (the question) lets the
    /// best recalled memory answer a question that is not about the user.
    pub(super) async fn memory_answer(
        &self,
        question: Option<&reply::own::OwnQuestion>,
        hits: &[crate::memory::recall::Hit],
        any_recall: Option<&str>,
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
    pub(super) fn fixed_reply(&self, exchange_id: &str, text: String, source: ReplySource) -> Generated {
        self.bus.emit(EngineEvent::ReplyChunk { exchange_id: exchange_id.to_string(), text: text.clone() });
        Generated { text, source, ..Generated::default() }
    }

    fn failed_reply(&self, fallback: Fallback, why: &str, tokens_in: u32) -> Generated {
        let text = format!(
            "No reply this time: {why} (primary model: {}). Your message is saved; send it again, or check the \
             model settings with `chalie-tui --version`.",
            self.llm.describe(Role::Primary)
        );
        self.bus.notice(NoticeLevel::Error, format!("reply failed: {why}"));
        Generated { text, tokens_in, fallback: Some(fallback), failed: Some(why.to_string()), ..Generated::default() }
    }
}

/// Whether the primary role runs on the built-in model (which gets templates and memory's
/// answers where a larger model would write the reply).
pub(super) fn builtin_primary(engine: &Engine) -> bool {
    engine.llm.route(Role::Primary).is_none_or(|r| r.builtin)
}

/// The mode a reply is generated in, with the reply's notes (kept here so the prompt's
/// inputs are named in one place).
pub(super) fn generation_input<'a>(
    mode: Mode,
    msg: &'a Analysis<'a>,
    context: &'a super::turn::Context,
    topic: &'a super::turn::Topic,
    memories: &'a [String],
    notes: &'a [String],
) -> GenerationInput<'a> {
    GenerationInput {
        mode,
        user_text: msg.text,
        working_memory: &context.phase_a.conversation,
        traits: &context.phase_a.traits,
        topic: &topic.stage.context,
        memories,
        prompt_tokens: msg.signals.prompt_token_count,
        notes,
        style: &[],
    }
}
