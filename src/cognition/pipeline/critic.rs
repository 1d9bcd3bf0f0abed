//! The critic's I/O (docs/cognition.md §16.1–16.3): read the store back after an action with
//! effects, ask the lightweight model when `[llm] critic` allows (never the built-in model),
//! then carry out what [`critic::resolve`] decided. Everything it did is written into the
//! action's result (`data.critic`), which the ACT pane, `ask --json` and the
//! `cortex_iterations` row all show.

use super::Engine;
use super::fallback::{Fallback, Stage};
use crate::cognition::act::critic::{self, CRITIC_TIMEOUT, Outcome, Verdict};
use crate::cognition::act::critic_answer::{self, Answer, PendingFix};
use crate::cognition::act::dispatch::{ActionResult, dispatch};
use crate::cognition::act::plan::Action;
use crate::cognition::act::skill::SkillContext;
use crate::config::Role;
use serde_json::{Value, json};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// What the critic made of one action.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Criticised {
    /// The action and any corrective actions, with the results in the same order.
    pub ran: Vec<(Action, ActionResult)>,
    /// The question for the user when a consequential action is in doubt.
    pub ask: Option<String>,
    pub fallback: Option<Fallback>,
    /// Model passes made (each adds `CRITIC_PASS_COST` to fatigue).
    pub passes: u32,
}

impl Engine {
    pub(super) async fn criticise(
        &self,
        ctx: &SkillContext,
        text: &str,
        action: &Action,
        mut result: ActionResult,
        left: Duration,
        cancel: &CancellationToken,
    ) -> Criticised {
        let now = ctx.now.timestamp();
        let det = self.read_back(action, &result, now).await;
        let (model, fallback, model_note) = self.ask_critic(text, action, &result, left, cancel).await;
        let outcome = critic::resolve(action, &result, &det, model.as_ref());
        let mut note = json!({
            "checked": match &det { Ok(s) => json!(s), Err(_) => Value::Null },
            "problem": det.as_ref().err(),
            "model": model_note,
            "severity": model.as_ref().filter(|v| !v.verified).map(|v| v.severity.clone()),
            "issue": model.as_ref().filter(|v| !v.verified).map(|v| v.issue.clone()),
        });
        let mut out = Criticised { ran: Vec::new(), ask: None, fallback, passes: u32::from(model_note != "off") };
        let mut fixes = Vec::new();
        match outcome {
            Outcome::Fine => note["outcome"] = json!("fine"),
            Outcome::Flag(problem) => {
                note["outcome"] = json!("flagged");
                if det.is_err() {
                    result.ok = false;
                    result.summary = format!("{} But checking it found: {problem}.", result.summary);
                } else {
                    result.summary = format!("{} (A check doubts this: {problem}.)", result.summary);
                }
            }
            Outcome::Ask(q) => {
                note["outcome"] = json!("asked");
                self.leave_decision(ctx, &q).await;
                let correction = model.as_ref().filter(|v| !v.verified).map(|v| v.correction.as_slice());
                let proposal = critic_answer::proposal(action, &result.data, correction.unwrap_or_default());
                self.leave_pending(ctx, &q, proposal, now).await;
                out.ask = Some(q);
            }
            Outcome::Correct(actions) => {
                note["outcome"] = json!("corrected");
                // The wrong result is kept for the audit but not shown as the reply.
                note["hidden"] = json!(true);
                tracing::info!(skill = %action.kind, issue = %note["issue"], "the critic corrected an action");
                fixes = actions;
            }
        }
        if let Some(obj) = result.data.as_object_mut() {
            obj.insert("critic".into(), note);
        }
        let issue = model.map(|v| v.issue).unwrap_or_default();
        let original = (action.clone(), result.clone());
        out.ran.push(original);
        for fix in fixes {
            let undo = fix.params.get("action").and_then(Value::as_str) == Some("remove");
            let (a, c) = (fix.clone(), ctx.clone());
            let r = self.db.call(move |conn| Ok(dispatch(conn, &a, &c, None))).await;
            let mut r = match r {
                Ok(r) => r,
                Err(e) => {
                    tracing::warn!("the critic's correction failed: {}", crate::describe(&e));
                    continue;
                }
            };
            let det = self.read_back(&fix, &r, now).await;
            let correction = json!({
                "outcome": "correction",
                "of": result.summary,
                "issue": issue,
                "checked": det.as_ref().ok(),
                "problem": det.as_ref().err(),
                // Taking back the wrong addition is bookkeeping, not news for the reply.
                "hidden": undo,
            });
            if let Some(obj) = r.data.as_object_mut() {
                obj.insert("critic".into(), correction);
            }
            out.ran.push((fix, r));
        }
        out
    }

    /// The deterministic check; a store that cannot be read counts as nothing to say.
    async fn read_back(&self, action: &Action, result: &ActionResult, now: i64) -> Result<String, String> {
        let (a, r) = (action.clone(), result.clone());
        let seen = self.db.call(move |c| critic::observe(c, &r)).await;
        match seen {
            Ok(seen) => critic::check(&a, result, &seen, now),
            Err(e) => {
                tracing::warn!("the critic cannot read the store back: {}", crate::describe(&e));
                Ok(String::new())
            }
        }
    }

    /// The model's verdict when it is asked and answers usably; otherwise why not.
    async fn ask_critic(
        &self,
        text: &str,
        action: &Action,
        result: &ActionResult,
        left: Duration,
        cancel: &CancellationToken,
    ) -> (Option<Verdict>, Option<Fallback>, String) {
        if !self.llm.critic_uses_model() {
            return (None, None, "off".into());
        }
        let timeout = left.min(CRITIC_TIMEOUT).min(Duration::from_millis(self.llm.settings().request_timeout_ms));
        let req = critic::request(text, action, result);
        match self.llm.structured(Role::Lightweight, &req, &critic::schema(), timeout, cancel).await {
            Ok(v) => match critic::parse(&v, action) {
                Ok(verdict) => {
                    let note = if verdict.verified { "verified".to_string() } else { "doubted".to_string() };
                    (Some(verdict), None, note)
                }
                Err(why) => {
                    let f = Fallback::Model(Stage::Critic, super::fallback::Failure::InvalidOutput);
                    (None, Some(f), format!("skipped: {why}"))
                }
            },
            Err(e) => {
                let f = Fallback::model(Stage::Critic, &e);
                (None, Some(f), format!("skipped: {f}"))
            }
        }
    }

    /// The proposal a yes would carry out waits for the thread's next message (§16.5).
    async fn leave_pending(&self, ctx: &SkillContext, question: &str, actions: Vec<Action>, now: i64) {
        let pending = PendingFix { question: question.to_string(), actions, asked_at: now };
        let Ok(text) = serde_json::to_string(&pending) else { return };
        let thread = ctx.thread_id.clone();
        let written = self
            .db
            .call(move |c| crate::store::KvStateRepo(c).set_text(critic_answer::NAMESPACE, &thread, &text, now))
            .await;
        if let Err(e) = written {
            tracing::warn!("the critic's proposal not kept: {}", crate::describe(&e));
        }
    }

    /// Takes the thread's waiting proposal, if any (every next message ends its wait), and
    /// when `text` is a plain yes or no to it, carries it out or drops it; the reply to give,
    /// or None to plan the message as usual.
    pub(super) async fn critic_answer(
        &self,
        thread_id: &str,
        exchange_id: &str,
        topic: &super::turn::Topic,
        text: &str,
    ) -> Option<String> {
        let thread = thread_id.to_string();
        let taken =
            self.db.call(move |c| crate::store::KvStateRepo(c).take_text(critic_answer::NAMESPACE, &thread)).await;
        let pending: PendingFix = serde_json::from_str(&taken.ok().flatten()?).ok()?;
        let ctx = SkillContext {
            thread_id: thread_id.to_string(),
            exchange_id: exchange_id.to_string(),
            topic: topic.stage.report.name.clone(),
            now: chrono::Local::now(),
            graph: self.graph_handle(),
        };
        let answer = critic_answer::decide(&pending, text, ctx.now.timestamp());
        let mut done = Vec::new();
        if let Answer::Apply(actions) = &answer {
            for a in actions {
                let (a, c) = (a.clone(), ctx.clone());
                match self.db.call(move |conn| Ok(dispatch(conn, &a, &c, None))).await {
                    Ok(r) if r.ok => done.push(r.summary),
                    Ok(r) => tracing::warn!(summary = %r.summary, "the critic's proposal did not apply"),
                    Err(e) => tracing::warn!("the critic's proposal failed: {}", crate::describe(&e)),
                }
            }
        }
        let outcome = match &answer {
            Answer::Apply(_) => "applied",
            Answer::Drop => "dropped",
            Answer::Lapse => "lapsed",
        };
        tracing::info!(outcome, question = %pending.question, applied = done.len(), "the critic's question was answered");
        critic_answer::reply(&answer, &done)
    }

    /// The question waits in the topic's world state like any pending decision (§4.7).
    async fn leave_decision(&self, ctx: &SkillContext, question: &str) {
        use crate::cognition::world::{DECISION_TTL_S, VALUE_MAX_CHARS};
        let now = ctx.now.timestamp();
        let value =
            crate::text::clip::clip(&format!("waiting for a confirmation (critic): {question}"), VALUE_MAX_CHARS);
        let topic = ctx.topic.clone();
        let written = self
            .db
            .call(move |c| crate::store::WorldStateRepo(c).set(&topic, "decision", &value, now, now + DECISION_TTL_S))
            .await;
        if let Err(e) = written {
            tracing::warn!("world state not written: {}", crate::describe(&e));
        }
    }
}
