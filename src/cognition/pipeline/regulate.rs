//! The regulator's part of a turn (docs/cognition.md §13): before anything runs, the new
//! message judges the last reply (feedback written to its audit row) and the regulator decides
//! whether this turn may spend at all and which past corrections its prompt carries; after the
//! reply, it reads the turn's model calls off the bus (by origin) and records its verdict.

use super::phases::PhaseARead;
use super::turn::Turn;
use super::{Engine, EngineError};
use crate::cognition::regulator::{self, Decision, Event, Exchange, Regulator, RegulatorState, Settings};
use crate::config::Role;
use crate::events::{EngineEvent, NoticeLevel, Stamped};
use crate::store::{ChatRepo, RegulatorStateRepo, RoutingRepo};
use crate::vocab::Mode;
use crate::vocab::regulator::RegulatorReport;
use std::collections::HashMap;
use tokio::sync::broadcast;

/// The one user of a terminal assistant.
pub const USER_ID: &str = "local";

/// The engine's regulator, made at the first turn; its state is read from the database each turn.
#[derive(Default)]
pub(super) struct Slot {
    reg: Option<Regulator>,
    /// The state the last turn's end exported and stored, while `reg` still holds exactly it:
    /// a turn that reads the same text back skips parsing it again. Taken at every start, so a
    /// turn that ends early (or a forget's redaction) makes the next one parse what is stored.
    exported: Option<String>,
}

/// What a turn's regulation holds between its start and its end.
#[derive(Default)]
pub(super) struct Regulation {
    /// The line the reply becomes when a break stopped the turn from spending.
    pub halt: Option<String>,
    /// Past corrections on this turn's cluster, for the generation prompt.
    pub prelude: Option<String>,
    rx: Option<broadcast::Receiver<Stamped>>,
    /// The message's embedding (from the topic phase), for the drift check's similarity.
    pub message_embedding: Option<Vec<f32>>,
    pub report: Option<RegulatorReport>,
}

fn settings(engine: &Engine) -> Settings {
    let s = engine.llm.settings();
    let r = &s.regulator;
    Settings {
        token_cap: s.regulator_token_cap,
        drift_threshold: r.drift_threshold.0,
        similarity_threshold: r.similarity_threshold.0,
        implicit_window_ms: (r.implicit_window_ms > 0).then_some(r.implicit_window_ms),
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// What the turn's first trip to the database thread brings back.
struct StartRead {
    weights: (u32, crate::cognition::router::RouterWeights, Option<String>),
    stored: Option<String>,
    judged: Option<Judged>,
    phase_a: PhaseARead,
    phase_a_ms: f64,
}

/// The last reply's verdict, stored, with the graph's lesson from it.
struct Judged {
    feedback: regulator::Feedback,
    mode: Mode,
    exchange_id: Option<String>,
    /// `None` when the reply had no exchange to learn over; the graph's failure is a notice,
    /// not the turn's end.
    learned: Option<Result<Option<crate::memory::graph::turn::Learned>, crate::store::StoreError>>,
}

/// Judge the last reply (`prev`) by the message `next`, store the verdict (the triage's outcome
/// too, docs/cognition.md §15.1: whether the turn it pre-routed was a misroute) and teach the
/// graph over what fired for that reply (docs/cognition.md §9.4.4), as one commit.
fn judge(
    c: &rusqlite::Connection,
    cache: &crate::memory::graph::GraphCache,
    prev: crate::store::Unjudged,
    recent: &[crate::store::ChatMessage],
    next: &str,
    now: i64,
) -> Result<Judged, crate::store::StoreError> {
    let mode = prev.selected_mode.parse::<Mode>().unwrap_or(Mode::Respond);
    let user = recent
        .iter()
        .rev()
        .find(|m| m.role == "user" && prev.exchange_id.as_deref() == Some(m.exchange_id.as_str()))
        .map_or("", |m| m.content.as_str());
    let feedback = regulator::detect_feedback(Exchange { user, mode, next });
    let value = serde_json::to_value(&feedback).unwrap_or_default();
    let quality = feedback.quality;
    let learned = crate::store::in_savepoint(c, || {
        RoutingRepo(c).set_feedback(&prev.id, &value)?;
        if let Some(x) = &prev.exchange_id {
            crate::store::TurnRepo(c).set_triage_outcome(x, &value)?;
        }
        Ok(prev.exchange_id.as_deref().map(|x| crate::memory::graph::turn::after_feedback(c, cache, x, quality, now)))
    })?;
    Ok(Judged { feedback, mode, exchange_id: prev.exchange_id, learned })
}

impl Turn<'_> {
    /// Judge the last reply by this message, then start the regulator's turn and act on its
    /// decision before any model is asked. Phase A's database work rides on the same trip to
    /// the database thread (after the verdict's writes, as when it had its own); what it read
    /// comes back for [`Turn::context`], which adds the break decided here.
    pub(super) async fn regulate_start(&mut self, name: Option<String>) -> Result<PhaseARead, EngineError> {
        let engine = self.engine;
        self.regulation.rx = Some(engine.bus.subscribe());
        let (thread, xid, next) = (self.thread_id.to_string(), self.exchange_id.to_string(), self.msg.text.to_string());
        let current = self.weights.0;
        let (cache, now) = (engine.graph_cache.clone(), self.now);
        let read = engine
            .db
            .call(move |c| {
                // The last exchange's message comes from the history, so the repeat check works
                // on the first message after a restart too.
                let (weights, prev, stored, recent) = crate::store::in_read(c, || {
                    Ok((
                        super::load_weights(c, Some(current))?,
                        RoutingRepo(c).latest_unjudged_in_thread(&thread)?,
                        RegulatorStateRepo(c).load(USER_ID)?,
                        ChatRepo(c).recent(&thread, 8)?,
                    ))
                })?;
                let judged = match prev {
                    Some(prev) => Some(judge(c, &cache, prev, &recent, &next, now)?),
                    None => None,
                };
                let clock = std::time::Instant::now();
                let phase_a = super::phases::phase_a_read(c, &thread, &xid, name.as_deref(), now)?;
                Ok(StartRead { weights, stored, judged, phase_a, phase_a_ms: super::ms(clock) })
            })
            .await?;
        engine.take_weights(current, read.weights);
        self.weights = engine.weights();
        // Read every turn: a forget rewrites the stored state, and the copy in memory must not
        // write the forgotten words back.
        let mut slot = engine.regulator.lock().await;
        let Slot { reg, exported } = &mut *slot;
        let exported = exported.take();
        let unchanged = reg.is_some() && exported.is_some() && exported == read.stored;
        let reg = reg.get_or_insert_with(|| Regulator::new(settings(engine), RegulatorState::default()));
        if !unchanged {
            let state = read
                .stored
                .and_then(|s| {
                    serde_json::from_str::<RegulatorState>(&s)
                        .map_err(|e| tracing::warn!("regulator state unreadable, starting afresh: {e}"))
                        .ok()
                })
                .unwrap_or_else(|| RegulatorState::for_user(USER_ID));
            reg.set_state(state);
        }
        if let Some(j) = read.judged {
            reg.on_feedback(&j.feedback, self.msg.text, self.now);
            // Logged once the verdict is stored: the live misroute rate and a replay read it.
            if let Some(exchange_id) = j.exchange_id {
                let fb = &j.feedback;
                engine.bus.emit(EngineEvent::RouteJudged {
                    exchange_id,
                    mode: j.mode,
                    by_exchange_id: self.exchange_id.to_string(),
                    label: fb.label.as_str().to_string(),
                    cue: fb.cue.clone(),
                    quality: fb.quality,
                    misroute: crate::cognition::router::stats::MISROUTE_LABELS.contains(&fb.label.as_str()),
                });
            }
            if let Some(Err(e)) = j.learned {
                engine.bus.notice(NoticeLevel::Warn, format!("the concept graph could not learn from feedback: {e}"));
            }
        }
        reg.on_event(Event::TurnStart { user_message: self.msg.text.to_string(), at_ms: now_ms() });
        match reg.decide() {
            Decision::CircuitBreak(b) => self.regulation.halt = Some(b.message()),
            Decision::ProceduralWarning { .. } => self.regulation.prelude = reg.prelude(),
            _ => {}
        }
        self.phase_a_ms = read.phase_a_ms;
        Ok(read.phase_a)
    }

    /// Whether a break stopped this turn from calling models.
    pub(super) fn halted(&self) -> bool {
        self.regulation.halt.is_some()
    }

    /// Stop the turn's spending from here on (the ACT loop broke), with the line the reply says.
    pub(super) fn halt(&mut self, line: String) {
        self.regulation.halt.get_or_insert(line);
    }

    /// Feed the turn's model calls, tools and reply to the regulator, record its verdict (the
    /// audit row, the stored state, the `regulated` event) and close its turn.
    pub(super) async fn regulate_end(
        &mut self,
        reply: &str,
        failed: bool,
        cut_off: bool,
        tools: Vec<String>,
    ) -> Result<RegulatorReport, EngineError> {
        let engine = self.engine;
        let origin = crate::llm::exchange_origin(self.exchange_id);
        let mut calls: HashMap<String, Role> = HashMap::new();
        let mut tokens: Vec<(String, String, Option<f64>)> = Vec::new();
        let mut events = Vec::new();
        if let Some(mut rx) = self.regulation.rx.take() {
            loop {
                match rx.try_recv() {
                    Ok(s) => match s.event {
                        EngineEvent::LlmStart { call_id, role, origin: Some(o), .. } if o == origin => {
                            calls.insert(call_id, role);
                        }
                        EngineEvent::LlmToken { call_id, text, logprob } if calls.contains_key(&call_id) => {
                            tokens.push((call_id, text, logprob));
                        }
                        EngineEvent::LlmCost { call_id, tokens_in, tokens_out, wall_ms, .. } => {
                            if let Some(role) = calls.get(&call_id) {
                                events.push(Event::Cost { role: role.as_str().into(), tokens_in, tokens_out, wall_ms });
                            }
                        }
                        _ => {}
                    },
                    Err(broadcast::error::TryRecvError::Lagged(n)) => {
                        tracing::warn!("regulator missed {n} events of the turn");
                    }
                    Err(_) => break,
                }
            }
        }
        // The reply's tokens are the last primary call's that streamed.
        let reply_call =
            tokens.iter().rev().find(|(id, _, _)| calls.get(id) == Some(&Role::Primary)).map(|t| t.0.clone());
        let mut slot = engine.regulator.lock().await;
        let Some(reg) = slot.reg.as_mut() else { return Ok(RegulatorReport::idle()) };
        for (_, text, logprob) in tokens.into_iter().filter(|(id, _, _)| Some(id) == reply_call.as_ref()) {
            reg.on_event(Event::Token { text, logprob });
        }
        for e in events {
            reg.on_event(e);
        }
        for name in tools {
            reg.on_event(Event::ToolCall { name });
        }
        reg.on_event(Event::TurnComplete { response: reply.to_string(), at_ms: now_ms() });
        if failed || cut_off {
            reg.on_event(Event::ReplyFailed { cut_off });
        }
        // Only a keyword drift candidate costs the extra embed call (§13.2).
        if let Some(request) = self.regulation.message_embedding.as_deref()
            && !failed
            && reg.drift_candidate().is_some()
        {
            match engine.llm.embed(&[reply.to_string()]).await {
                Ok(v) => {
                    if let Some(cosine) = v.first().and_then(|r| regulator::scope::cosine(request, r)) {
                        reg.on_event(Event::ReplySimilarity { cosine });
                    }
                }
                Err(e) => tracing::warn!("reply not embedded for the drift check: {e}"),
            }
        }
        let (decision, mut report) = reg.report();
        // A break that stopped the turn at its start is the verdict, whatever the reply shows.
        if self.regulation.halt.is_some() && report.breaks.is_empty() {
            report.decision = "circuit_break".into();
        }
        reg.finish_turn(&decision);
        let mut state = serde_json::to_string(reg.export()).unwrap_or_default();
        // What the next turn will read back when the save below lands and nothing else writes.
        slot.exported = self.forgotten.is_none().then(|| state.clone());
        drop(slot);
        // This turn's commit carried out a forget: the state loaded before it still holds the
        // words (the next turn reloads the purged one), and the report may quote them.
        if let Some(needles) = &self.forgotten {
            use crate::{store::purge::FORGOTTEN_WORDS, text::needles};
            state = needles::redact_text(&state, needles, FORGOTTEN_WORDS).unwrap_or(state);
            let mut v = serde_json::to_value(&report).unwrap_or_default();
            if needles::redact_json(&mut v, needles, FORGOTTEN_WORDS) {
                report = serde_json::from_value(v).unwrap_or(report);
            }
        }
        if let Some(d) = &report.scope_drift {
            engine.bus.notice(
                NoticeLevel::Info,
                format!("This reply strays from what you asked (drift {:.2}: {}).", d.score, d.terms.join(", ")),
            );
        }
        let (id, value) = (self.routing_id.clone(), serde_json::to_value(&report).unwrap_or_default());
        engine
            .db
            .call(move |c| {
                crate::store::in_savepoint(c, || {
                    RegulatorStateRepo(c).save(USER_ID, &state)?;
                    RoutingRepo(c).set_regulator(&id, &value)?;
                    Ok(())
                })
            })
            .await?;
        engine.bus.emit(EngineEvent::Regulated { exchange_id: self.exchange_id.to_string(), report: report.clone() });
        self.regulation.report = Some(report.clone());
        Ok(report)
    }

    /// [`Turn::regulate_end`] over what the reply phase returned.
    pub(super) async fn regulated(&mut self, replied: &super::turn::Replied) -> Result<(), EngineError> {
        let g = &replied.generated;
        let tools: Vec<String> = replied
            .run
            .iter()
            .flat_map(|r| r.iterations.iter())
            .flat_map(|i| i.actions.iter())
            .map(|a| a.kind.clone())
            .collect();
        let cut_off = matches!(g.fallback, Some(super::Fallback::GenerationCutOff));
        self.regulate_end(&g.text, g.failed.is_some(), cut_off, tools).await.map(|_| ())
    }
}
