//! The ACT loop with its I/O: the model planner (primary role, strict JSON, the selected
//! skill docs injected), the deterministic planner as its fallback, dispatch on the database
//! thread with a per-action timeout, one `cortex_iterations` row and one event per iteration.

use super::Engine;
pub use super::after_act::{AfterAct, NO_PLAN_REPLY, after_act};
use super::fallback::{Fallback, Stage};
use crate::cognition::act::critic;
use crate::cognition::act::dispatch::{
    ActionResult, PreAction, dispatch, pre_action, skill, unreliable_basis, with_warning,
};
use crate::cognition::act::plan::{ActLimits, Action, LoopState, Termination, parse_plan, plan_schema};
use crate::cognition::act::planner;
use crate::cognition::act::skill::SkillContext;
use crate::cognition::intent::PRIMITIVES;
use crate::config::Role;
use crate::events::{ActStep, EngineEvent};
use crate::llm::{ChatRequest, Message, ResponseFormat};
use crate::store::{CortexIterationsRepo, IterationRow, now_ts};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// How long one planning call may take (within the loop's 60 s).
pub const PLAN_TIMEOUT: Duration = Duration::from_secs(20);
/// The same for the built-in model, which seldom plans usefully.
pub const BUILTIN_PLAN_TIMEOUT: Duration = Duration::from_secs(6);

pub const ACT_PROMPT: &str = include_str!("../../../prompts/frontal-cortex-act.md");

/// A skill's doc line for the planner prompt.
pub fn skill_doc(name: &str) -> Option<&'static str> {
    skill(name).map(|s| s.doc)
}

/// The skills injected for this turn: the three primitives always, then up to three
/// contextual ones from triage and from the message's own keywords (`named`); only
/// implemented ones.
pub fn select_skills(triage_skills: &[String], named: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = PRIMITIVES.iter().map(|s| s.to_string()).collect();
    let contextual = triage_skills.iter().map(String::as_str).chain(named.iter().copied());
    for s in contextual {
        if out.len() >= PRIMITIVES.len() + 3 {
            break;
        }
        if skill(s).is_some() && !out.iter().any(|o| o == s) {
            out.push(s.to_string());
        }
    }
    out
}

/// The planner request: the skeleton with only the selected skill docs, the message, and the
/// results so far.
pub fn plan_request(text: &str, skills: &[String], history: &[ActionResult]) -> ChatRequest {
    plan_request_with_tools(text, skills, &[], history)
}

/// [`plan_request`] with the offered MCP tools' lines after the innate skills' docs.
pub fn plan_request_with_tools(
    text: &str,
    skills: &[String],
    tool_docs: &[String],
    history: &[ActionResult],
) -> ChatRequest {
    let docs: Vec<&str> =
        skills.iter().filter_map(|s| skill_doc(s)).chain(tool_docs.iter().map(String::as_str)).map(str::trim).collect();
    let system = ACT_PROMPT.trim().replace("{{skills}}", &docs.join("\n"));
    let mut user = format!("Message: {text}");
    if !history.is_empty() {
        user.push_str("\n\nResults so far:");
        for r in history {
            user.push_str(&format!("\n- {}: {}", r.kind, r.summary));
        }
    }
    let mut req = ChatRequest::new(vec![Message::system(system), Message::user(user)]);
    req.max_tokens = 256;
    req.temperature = 0.1;
    req.logprobs = false;
    req.format = ResponseFormat::JsonSchema { name: "act_plan".into(), schema: plan_schema() };
    req
}

/// One iteration as `ask --json` reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Iteration {
    pub iteration: u32,
    /// `model` or `deterministic`.
    pub planner: String,
    pub actions: Vec<Action>,
    pub results: Vec<ActionResult>,
    pub ms: f64,
    pub fatigue: f64,
    pub cost: f64,
}

/// The whole loop.
#[derive(Debug, Clone, PartialEq)]
pub struct ActRun {
    pub iterations: Vec<Iteration>,
    pub termination: Termination,
    /// Why the model's plan was not used, when the deterministic planner stood in.
    pub planner_fallback: Option<Fallback>,
    /// The doubtful memory a consequential action would have relied on (then the loop
    /// stopped with `needs_confirmation` and the user is asked first).
    pub confirm: Option<String>,
    /// The critic's question when a consequential action it checked looks wrong (the loop
    /// stopped with `needs_confirmation`).
    pub critic_ask: Option<String>,
    /// The critic's model checks that were skipped, and why.
    pub critic_fallbacks: Vec<Fallback>,
    /// An MCP tool failed or hung and the turn went on without it.
    pub tool_fallback: Option<Fallback>,
}

impl ActRun {
    pub fn results(&self) -> impl Iterator<Item = &ActionResult> {
        self.iterations.iter().flat_map(|i| i.results.iter())
    }
}

impl Engine {
    /// Run the ACT loop for one message.
    pub(super) async fn act_loop(
        &self,
        ctx: &SkillContext,
        text: &str,
        skills: &[String],
        triage_skills: &[String],
        routing_id: &str,
        cancel: &CancellationToken,
    ) -> ActRun {
        let offered = self.mcp_offer(text, triage_skills).await;
        let tool_docs: Vec<String> = offered.iter().map(crate::cognition::act::mcp::planner_doc).collect();
        let allowed: Vec<String> = skills.iter().cloned().chain(offered.iter().map(|t| t.skill())).collect();
        let mut tool_fallback = None;
        let mut refused = false;
        let limits = ActLimits::default();
        let started = Instant::now();
        let mut state = LoopState::default();
        let mut iterations: Vec<Iteration> = Vec::new();
        let mut history: Vec<ActionResult> = Vec::new();
        let mut planner_fallback = None;
        let mut confirm = None;
        let mut critic_ask = None;
        let mut critic_fallbacks = Vec::new();
        let termination = loop {
            if cancel.is_cancelled() {
                break Termination::Cancelled;
            }
            let left = limits.cumulative_timeout.saturating_sub(started.elapsed());
            let (plan, planner, why) = self
                .plan(text, (allowed.as_slice(), tool_docs.as_slice()), &history, state.iteration, left, ctx, cancel)
                .await;
            if why.is_some() && planner_fallback.is_none() {
                planner_fallback = why;
            }
            state.elapsed = started.elapsed();
            if let Some(t) = state.check(&plan, &limits) {
                break t;
            }
            // The regulator's tool-loop break beside the seed's rules (which win when both
            // hold): the same skill ran five times in a row already, whatever its parameters.
            let skills_run: Vec<String> = state.executed.iter().map(|a| a.kind.clone()).collect();
            if crate::cognition::regulator::cost::tool_loop(&skills_run).is_some() {
                break Termination::RegulatorBreak;
            }

            let clock = Instant::now();
            let mut results = Vec::with_capacity(plan.len());
            // What ran, in order: the plan's actions and any corrections the critic made.
            let mut ran: Vec<Action> = Vec::with_capacity(plan.len());
            let mut passes = 0;
            for action in &plan {
                let check = pre_action(action, unreliable_basis(history.iter().chain(&results)));
                if let PreAction::AskFirst(basis) = check {
                    confirm = Some(basis);
                    break;
                }
                let previous = results.last().map(|r: &ActionResult| r.summary.clone());
                if let Some(tool) = offered.iter().find(|t| t.skill() == action.kind) {
                    let called = self.mcp_call(tool, action, previous.as_deref(), cancel).await;
                    if called.degraded {
                        tool_fallback = Some(Fallback::McpTool);
                    }
                    ran.push(action.clone());
                    results.push(called.result);
                    if called.refused {
                        refused = true;
                        break;
                    }
                    continue;
                }
                let (a, c) = (action.clone(), ctx.clone());
                let work = self.db.call(move |conn| Ok(dispatch(conn, &a, &c, previous.as_deref())));
                let r = match tokio::time::timeout(limits.per_action_timeout, work).await {
                    Ok(Ok(r)) => r,
                    Ok(Err(e)) => failed(action, &format!("the database failed: {}", crate::describe(&e))),
                    Err(_) => failed(action, &format!("timed out after {} s", limits.per_action_timeout.as_secs())),
                };
                let r = match &check {
                    PreAction::Warn { basis, confidence } => with_warning(r, basis, *confidence),
                    _ => r,
                };
                if !critic::has_effects(action, &r) {
                    ran.push(action.clone());
                    results.push(r);
                    continue;
                }
                let left = limits.cumulative_timeout.saturating_sub(started.elapsed());
                let checked = self.criticise(ctx, text, action, r, left, cancel).await;
                passes += checked.passes;
                critic_fallbacks.extend(checked.fallback);
                for (a, r) in checked.ran {
                    ran.push(a);
                    results.push(r);
                }
                if checked.ask.is_some() {
                    critic_ask = checked.ask;
                    break;
                }
            }
            let took = clock.elapsed();
            // Only what ran is accounted and logged; each critic pass adds its own cost.
            let plan = ran;
            let mut cost = state.record(&plan, took);
            let extra = f64::from(passes) * critic::CRITIC_PASS_COST;
            state.fatigue += extra;
            cost += extra;
            history.extend(results.iter().cloned());
            iterations.push(Iteration {
                iteration: state.iteration - 1,
                planner: planner.to_string(),
                actions: plan,
                results,
                ms: took.as_secs_f64() * 1000.0,
                fatigue: state.fatigue,
                cost,
            });
            if let Some(it) = iterations.last() {
                self.log_iteration(ctx, routing_id, it, None).await;
            }
            if confirm.is_some() || critic_ask.is_some() || refused {
                break Termination::NeedsConfirmation;
            }
            if planner == "deterministic" {
                break Termination::EmptyPlan;
            }
        };
        // The stop reason goes on the last iteration's row and event (or a row of its own
        // when nothing ran).
        let last = iterations.last().cloned().unwrap_or(Iteration {
            iteration: 0,
            planner: "model".into(),
            actions: Vec::new(),
            results: Vec::new(),
            ms: 0.0,
            fatigue: 0.0,
            cost: 0.0,
        });
        self.log_iteration(ctx, routing_id, &last, Some(termination)).await;
        ActRun { iterations, termination, planner_fallback, confirm, critic_ask, critic_fallbacks, tool_fallback }
    }

    /// A plan for this iteration, with the planner that made it and, when the deterministic
    /// planner stood in, why. The model plans first, except on the built-in model, where an
    /// unambiguous command goes straight to the deterministic planner: 135M parameters
    /// rarely produce a usable plan, and trying costs seconds. The deterministic planner is
    /// one-shot: once it planned, the loop ends after its plan.
    #[allow(clippy::too_many_arguments)]
    async fn plan(
        &self,
        text: &str,
        (skills, tool_docs): (&[String], &[String]),
        history: &[ActionResult],
        iteration: u32,
        left: Duration,
        ctx: &SkillContext,
        cancel: &CancellationToken,
    ) -> (Vec<Action>, &'static str, Option<Fallback>) {
        if iteration == 0
            && let Some(plan) = planner::forget_plan(planner::split_material(text).0)
        {
            return (plan, "deterministic", None);
        }
        let builtin = self.llm.route(Role::Primary).is_none_or(|r| r.builtin);
        if iteration == 0
            && builtin
            && let Some(plan) = planner::plan(text, ctx.now)
        {
            return (plan, "deterministic", Some(Fallback::ActPlanBuiltinModel));
        }
        let req = plan_request_with_tools(text, skills, tool_docs, history);
        let cap = if builtin { BUILTIN_PLAN_TIMEOUT } else { PLAN_TIMEOUT };
        let timeout = left.min(cap).min(Duration::from_millis(self.llm.settings().request_timeout_ms));
        let model = match self.llm.structured(Role::Primary, &req, &plan_schema(), timeout, cancel).await {
            Ok(v) => parse_plan(&v, skills).map_err(|_| Fallback::ActPlanInvalid),
            Err(e) => Err(Fallback::model(Stage::ActPlan, &e)),
        };
        match model {
            Ok(plan) if !plan.is_empty() => (plan, "model", None),
            outcome if iteration == 0 => {
                let why = match outcome {
                    Ok(_) => Fallback::ActPlanEmpty,
                    Err(e) => e,
                };
                match planner::plan(text, ctx.now) {
                    Some(plan) => (plan, "deterministic", Some(why)),
                    None => (Vec::new(), "model", Some(why)),
                }
            }
            _ => (Vec::new(), "model", None),
        }
    }

    async fn log_iteration(&self, ctx: &SkillContext, routing_id: &str, it: &Iteration, end: Option<Termination>) {
        self.bus.emit(EngineEvent::ActIteration {
            exchange_id: ctx.exchange_id.clone(),
            iteration: it.iteration + 1,
            actions: it
                .actions
                .iter()
                .zip(&it.results)
                .map(|(a, r)| ActStep {
                    skill: a.kind.clone(),
                    params: super::prompts::clip(&Value::Object(a.params.clone()).to_string(), 80),
                    result: super::prompts::clip(&r.summary, 120),
                    ok: r.ok,
                    ms: r.ms,
                })
                .collect(),
            elapsed_ms: it.ms,
            fatigue: it.fatigue,
            budget: ActLimits::default().fatigue_budget,
            termination: end.map(|t| t.as_str().to_string()),
        });
        let (xid, rid, it, end) = (ctx.exchange_id.clone(), routing_id.to_string(), it.clone(), end);
        let write = self
            .db
            .call(move |c| {
                let reason = end.map(Termination::as_str);
                let repo = CortexIterationsRepo(c);
                let updated = match reason {
                    Some(r) => repo.set_termination(&xid, i64::from(it.iteration), r)?,
                    None => false,
                };
                if !updated {
                    let (actions, results) = (serde_json::to_string(&it.actions)?, serde_json::to_string(&it.results)?);
                    repo.insert(&IterationRow {
                        exchange_id: &xid,
                        routing_decision_id: Some(&rid),
                        iteration: i64::from(it.iteration),
                        planner: &it.planner,
                        actions: &actions,
                        results: Some(&results),
                        execution_time_ms: it.ms,
                        fatigue: it.fatigue,
                        cost: it.cost,
                        termination_reason: reason,
                        created_at: now_ts(),
                    })?;
                }
                Ok(())
            })
            .await;
        if let Err(e) = write {
            tracing::warn!("cannot log an ACT iteration: {}", crate::describe(&e));
        }
    }
}

fn failed(action: &Action, why: &str) -> ActionResult {
    ActionResult {
        kind: action.kind.clone(),
        ok: false,
        summary: format!("Could not {}: {why}", action.kind),
        data: json!({"error": why}),
        ms: 0.0,
        card: false,
        choices: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cognition::intent::detect_skills;

    #[test]
    fn skills_are_primitives_plus_three_contextual_implemented_ones() {
        let text = "remind me tomorrow and add milk to my list";
        let s = select_skills(&["list".into(), "document".into(), "persistent_task".into()], &detect_skills(text));
        assert_eq!(&s[..3], &["recall", "memorize", "introspect"]);
        assert!(s.contains(&"list".to_string()));
        assert!(s.contains(&"persistent_task".to_string()), "implemented now: offered");
        assert!(!s.contains(&"document".to_string()), "not implemented: never offered");
        assert!(s.len() <= 6);
    }
    #[test]
    fn the_planner_prompt_has_only_the_selected_docs() {
        let skills = select_skills(&["list".into()], &detect_skills("add milk to my list"));
        let req = plan_request("add milk to my list", &skills, &[]);
        let system = &req.messages[0].content;
        assert!(system.contains("- list: named lists"));
        assert!(system.contains("- recall:"));
        assert!(!system.contains("- focus:"));
        assert!(!system.contains("{{skills}}"));
    }
}
