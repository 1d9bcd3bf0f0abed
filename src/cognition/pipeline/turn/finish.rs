//! Phase D and the report: every row the turn leaves, written in one transaction, the
//! `ReplyDone` event once they are, and the [`TurnReport`].

use super::{Context, Delivered, Replied, Topic, Turn, Understanding};
use crate::cognition::pipeline::fallback::{Fallback, wire_names};
use crate::cognition::pipeline::phases::{self, TopicStage};
use crate::cognition::pipeline::{EngineError, SessionReport, Timings, TriageReport, TurnReport, commit, ms};
use crate::events::EngineEvent;
use crate::store::{TurnCommit, TurnRepo};
use serde_json::{Value, json};
use std::time::Instant;

/// What identifies a turn's rows.
#[derive(Debug, Clone, Copy)]
pub struct Header<'a> {
    pub thread_id: &'a str,
    pub exchange_id: &'a str,
    /// The `routing_decisions` row's id.
    pub routing_id: &'a str,
    pub user_text: &'a str,
    pub now: i64,
    pub weights_version: u32,
}

impl Turn<'_> {
    fn header(&self) -> Header<'_> {
        Header {
            thread_id: self.thread_id,
            exchange_id: self.exchange_id,
            routing_id: &self.routing_id,
            user_text: self.msg.text,
            now: self.now,
            weights_version: self.weights.0,
        }
    }

    /// Phase D: commit everything in one transaction (the encode job included).
    pub(in crate::cognition::pipeline) async fn commit(
        &mut self,
        topic: &Topic,
        triage: &TriageReport,
        delivered: &Delivered,
        replied: &Replied,
    ) -> Result<(), EngineError> {
        let clock = Instant::now();
        let mut rows =
            commit_rows(&self.header(), &self.timings, &topic.stage, triage, delivered, replied, &self.fallbacks);
        // The directives the model was sent go into the decision's audit row (docs/cognition.md §18).
        rows.adaptive = self.adaptive_sent.as_ref().map(|sent| {
            let mut v = serde_json::to_value(&self.adaptive).unwrap_or(Value::Null);
            if let Some(o) = v.as_object_mut() {
                o.insert("sent".into(), json!(sent));
            }
            v
        });
        let plan = crate::cognition::act::skills::forget::take_pending(self.exchange_id);
        if plan.is_some()
            && let Some(late) = self.uncertainty_late.take()
        {
            // A check still running could store the words being forgotten after the purge.
            // Stopped here, it makes no further call; what it already queued on the database
            // (the same lane, in order) runs before the commit, whose purge then covers it.
            late.abort();
            let _ = late.await;
        }
        rows.forget = plan.as_ref().map(|plan| forget_purge(self.exchange_id, plan));
        // The words go on disk until the logs are rewritten without them (`session::journal`).
        let journal = plan.as_ref().and_then(|p| crate::session::journal::write(&p.needles));
        let onboarding = self.onboarding(delivered, replied);
        // The adaptive layer's state, advanced when the reply was planned, is stored with the turn.
        let adaptive = self.adaptive_state.take();
        let also = move |c: &rusqlite::Connection| {
            onboarding(c)?;
            adaptive.map_or(Ok(()), |s| crate::cognition::adaptive::state::save_state(c, &s))
        };
        let purged = self.engine.db.call(move |c| Ok(TurnRepo(c).commit_with(&rows, also)?.0)).await;
        if let (Err(_), Some(journal)) = (&purged, &journal) {
            crate::session::journal::discard(journal);
        }
        let purged = purged?;
        if let (Some(plan), Some(purged)) = (plan, purged) {
            // The files follow the database: the session-log writer rewrites the logs when
            // the `forgotten` event reaches it, with the strings handed over here.
            crate::text::privacy::hand_over(&plan.needles);
            self.engine.bus.emit(EngineEvent::Forgotten { exchanges: purged.lines, rows: purged.rows.values().sum() });
            self.forgotten = Some(plan.needles);
        }
        self.timings.commit = ms(clock);
        self.timings.total = ms(self.started);
        Ok(())
    }

    /// Phase D's onboarding step (docs/cognition.md §4.9): count the exchange, note the skills
    /// it used and the capability its reply introduced. Read and written on the database
    /// thread, in the commit's transaction, which serialises it with every other turn.
    fn onboarding(
        &self,
        delivered: &Delivered,
        replied: &Replied,
    ) -> impl FnOnce(&rusqlite::Connection) -> Result<(), crate::store::StoreError> + Send + 'static {
        use crate::cognition::onboarding::{KEY, NAMESPACE, advance, intro, mentions};
        let mode = delivered.settled.mode;
        let model_wrote = !crate::cognition::pipeline::model::builtin_primary(self.engine)
            && replied.generated.source == crate::cognition::reply::ReplySource::Model
            && replied.generated.failed.is_none();
        let mut used: Vec<String> =
            replied.run.iter().flat_map(|r| r.results()).filter(|r| r.ok).map(|r| r.kind.clone()).collect();
        used.dedup();
        let now = self.now;
        let sent = replied.generated.text.clone();
        move |c| {
            let before = phases::spark_state(c)?;
            let introduced = intro(&before, mode, model_wrote).filter(|cap| mentions(cap, &sent));
            let after = advance(before, now, &used, introduced);
            TurnRepo(c).kv_set(NAMESPACE, KEY, &serde_json::to_value(&after).unwrap_or(Value::Null))
        }
    }

    /// Announce the finished reply. Called once the commit has stored it: from here on the
    /// person has their answer, and what the turn still does (the regulator's verdict, graph
    /// learning) is its own bookkeeping, which no one waits for in the UI.
    pub(in crate::cognition::pipeline) fn announce(&self, replied: &Replied) {
        let g = &replied.generated;
        self.engine.bus.emit(EngineEvent::ReplyDone {
            thread_id: self.thread_id.to_string(),
            exchange_id: self.exchange_id.to_string(),
            mode: replied.settled.mode,
            text: g.text.clone(),
            cancelled: g.cancelled,
            failed: g.failed.clone(),
            timings_ms: Some(self.timings),
            reply_source: Some(g.source),
        });
    }

    /// Report the whole turn.
    pub(in crate::cognition::pipeline) fn finish(
        self,
        context: Context,
        topic: Topic,
        understood: Understanding,
        triage: TriageReport,
        delivered: Delivered,
        replied: Replied,
    ) -> TurnReport {
        let g = &replied.generated;
        let session = SessionReport {
            exchanges: context.phase_a.session_exchanges,
            silence_gap_s: context.phase_a.silence_gap_s,
            focus: topic.stage.focus,
            focus_on: topic.stage.focus_on.clone(),
            distraction: understood.ctx.focus_distraction,
        };
        TurnReport {
            thread_id: self.thread_id.to_string(),
            exchange_id: self.exchange_id.to_string(),
            response: g.text.clone(),
            mode: replied.settled.mode,
            reply_mode: replied.settled.reply_mode,
            reply_source: g.source,
            answered_from: replied.memory_answer.map(|a| a.sources).unwrap_or_default(),
            router: delivered.report,
            topic: topic.stage.report,
            session,
            intent: understood.intent,
            triage,
            social: self.msg.social.map(|s| s.reason.to_string()),
            identity: context.name,
            memories: topic.memories.clone(),
            act_iterations: replied.run.as_ref().map(|r| r.iterations.clone()).unwrap_or_default(),
            act_termination: replied.run.as_ref().map(|r| r.termination),
            regulator: self.regulation.report.clone().unwrap_or_else(crate::vocab::regulator::RegulatorReport::idle),
            fallbacks: wire_names(&self.fallbacks),
            cancelled: g.cancelled,
            failed: g.failed.clone(),
            tokens_in: g.tokens_in,
            tokens_out: g.tokens_out,
            timings_ms: self.timings,
            uncertainty: self.uncertainty,
            graph: topic.graph_stats,
        }
    }
}

/// Phase D's rows, pure: the audit row, the triage row, the topic's router state, the
/// interaction log line, the reply and the encode job.
pub(in crate::cognition::pipeline) fn commit_rows(
    h: &Header,
    timings: &Timings,
    topic: &TopicStage,
    triage: &TriageReport,
    delivered: &Delivered,
    replied: &Replied,
    fallbacks: &[Fallback],
) -> TurnCommit {
    let (settled, g) = (&replied.settled, &replied.generated);
    let mut recorded = delivered.routing.clone();
    recorded.mode = settled.mode;
    let mut state = topic.router_state.clone();
    state.record(&recorded);
    let names = wire_names(fallbacks);
    let record = commit::routing_record(h, &topic.report.name, settled, &recorded, timings.routing, &names);
    let interaction = json!({
        "mode": settled.mode,
        "reply_mode": settled.reply_mode,
        "confidence": recorded.router_confidence,
        "generation_ms": timings.generation,
        "tokens_in": g.tokens_in,
        "tokens_out": g.tokens_out,
        "cancelled": g.cancelled,
        "reply_source": g.source,
        "fallbacks": names,
        "topic": topic.report,
    });
    let encode = (!h.user_text.trim().is_empty()).then(|| {
        json!({
            "thread_id": h.thread_id, "exchange_id": h.exchange_id, "topic": topic.report.name,
            "user_text": h.user_text, "response": g.text, "mode": settled.mode, "created_at": h.now,
        })
    });
    TurnCommit {
        thread_id: h.thread_id.to_string(),
        exchange_id: h.exchange_id.to_string(),
        topic: topic.report.name.clone(),
        user_text: h.user_text.to_string(),
        reply: (!g.text.is_empty()).then(|| g.text.clone()),
        reply_role: if g.failed.is_some() { "system" } else { "assistant" },
        mode: settled.mode.as_str().to_string(),
        routing: record,
        triage: commit::triage_row(triage),
        router_state: Some((
            phases::router_state_key(h.thread_id, &topic.report.name),
            serde_json::to_value(&state).unwrap_or(Value::Null),
        )),
        interaction,
        encode,
        adaptive: None,
        forget: None,
    }
}

/// What a forget the `forget` skill resolved during `exchange_id` takes: the plan's exchanges
/// and strings, and the request itself, which is never learned from.
fn forget_purge(exchange_id: &str, plan: &crate::memory::forget::Plan) -> crate::store::Purge {
    crate::store::Purge {
        needles: plan.needles.clone(),
        exchanges: plan.exchanges.clone(),
        kind: "statement".into(),
        row: None,
        block_only: vec![exchange_id.to_string()],
        trait_slots: plan.slots.clone(),
    }
}
