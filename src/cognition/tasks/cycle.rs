//! One task cycle (docs/cognition.md §17.3): expire what is past its time, pick the due task
//! (highest priority, first in first out), plan it on its first run, run up to
//! [`STEPS_PER_CYCLE`] ready steps through the bounded ACT loop, then checkpoint plan,
//! coverage and progress in one statement and, when worth it, tell the user in the chat.

use super::decompose::{NOT_FOR_STEPS, decompose};
use super::{ITERATIONS_PER_STEP, STEPS_PER_CYCLE, plan, should_surface};
use crate::cognition::act::dispatch::{ActionResult, dispatch};
use crate::cognition::act::plan::{ActLimits, Action, LoopState, Termination, parse_plan, plan_schema};
use crate::cognition::act::skill::SkillContext;
use crate::cognition::intent::PRIMITIVES;
use crate::cognition::pipeline::act::plan_request;
use crate::config::Role;
use crate::events::{EngineEvent, EventBus};
use crate::llm::Llm;
use crate::store::{ChatRepo, CortexIterationsRepo, CycleOutcome, Db, IterationRow, StoreError, TasksRepo};
use crate::vocab::tasks::{Checkpoint, PlanStep, StepState, Task, TaskPlan, TaskState};
use serde::Serialize;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// A step's bounded loop: fewer iterations than a turn's, the seed's task fatigue budget.
pub fn step_limits() -> ActLimits {
    ActLimits {
        max_iterations: ITERATIONS_PER_STEP,
        cumulative_timeout: Duration::from_secs(120),
        fatigue_budget: 15.0,
        ..ActLimits::default()
    }
}

/// Whether the cycle may speak now (no turn in flight, not quiet hours): decided by the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Moment {
    pub may_speak: bool,
}

/// What one cycle did, for `tasks run --now` and the logs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CycleReport {
    pub task_id: i64,
    pub goal: String,
    pub cycle: i64,
    pub planned: Option<String>,
    pub steps: Vec<String>,
    pub coverage: f64,
    pub state: TaskState,
    pub surfaced: Option<String>,
}

/// What a step's loop came to.
struct StepRun {
    state: StepState,
    result: String,
    iterations: i64,
    fatigue: f64,
}

/// One cycle at `now`; `None` when no task was due. `next_run_at` is when the task may run again.
pub async fn run_cycle(
    db: &Db,
    llm: Option<&Llm>,
    bus: &EventBus,
    now: i64,
    next_run_at: i64,
    moment: Moment,
    cancel: &CancellationToken,
) -> Result<Option<CycleReport>, StoreError> {
    let due = db
        .call(move |c| {
            let r = TasksRepo(c);
            let expired = r.expire(now)?;
            if expired > 0 {
                tracing::info!(expired, "persistent tasks expired");
            }
            r.next_due(now)
        })
        .await?;
    if moment.may_speak {
        deliver_deferred(db, bus, now).await?;
    }
    let Some(task) = due else { return Ok(None) };
    let id = task.id;
    db.call(move |c| TasksRepo(c).transition(id, &[TaskState::Pending], TaskState::Running, now)).await?;
    let mut planned = None;
    let mut task_plan = match task.plan.clone() {
        Some(p) => p,
        None => {
            let p = decompose(llm, &task.goal, cancel).await;
            planned = Some(match &p.rejected {
                None => format!("{} steps from the model", p.steps.len()),
                Some(why) => format!("one step (the model's plan was not used: {why})"),
            });
            let stored = p.clone();
            db.call(move |c| TasksRepo(c).set_plan(id, &stored, now)).await?;
            p
        }
    };
    let before = plan::coverage(&task_plan);
    let (mut iterations, mut fatigue, mut ran) = (0i64, task.fatigue, Vec::new());
    for _ in 0..STEPS_PER_CYCLE {
        let Some(&i) = plan::ready(&task_plan).first() else { break };
        if cancel.is_cancelled() {
            break;
        }
        let earlier = earlier_results(&task_plan);
        let out = run_step(db, llm, &task, i, &task_plan.steps[i], &earlier, cancel).await;
        iterations += out.iterations;
        fatigue += out.fatigue;
        let step = &mut task_plan.steps[i];
        step.state = out.state;
        step.result = Some(out.result);
        ran.push(step.id.clone());
    }
    let coverage = plan::coverage(&task_plan);
    let completed = coverage >= 1.0;
    let cycle = task.cycles + 1;
    let mut progress = task.progress.clone();
    let summary = ran
        .iter()
        .filter_map(|sid| task_plan.steps.iter().find(|s| &s.id == sid))
        .map(|s| format!("{}: {}", s.id, s.result.as_deref().unwrap_or("")))
        .collect::<Vec<_>>()
        .join("; ");
    progress.last_summary = crate::text::clip::clip(&summary, 600);
    progress.checkpoints.push(Checkpoint { cycle: cycle as u32, at: now, coverage, steps: ran.clone(), summary });
    let keep = progress.checkpoints.len().saturating_sub(20);
    progress.checkpoints.drain(..keep);
    if should_surface(cycle, before, coverage, completed) {
        progress.surface_pending = true;
    }
    let state = if completed { TaskState::Completed } else { TaskState::Running };
    let message = progress.surface_pending.then(|| progress_message(&task, &task_plan, coverage, completed));
    let speak = moment.may_speak && message.is_some();
    if speak {
        progress.surface_pending = false;
        progress.surfaced_coverage = coverage;
    }
    let o = (task_plan.clone(), progress, coverage, state, iterations, fatigue);
    let next = (!completed).then_some(next_run_at);
    let kept = db
        .call(move |c| {
            let (plan, progress, coverage, state, iterations, fatigue) = &o;
            TasksRepo(c).checkpoint(
                id,
                &CycleOutcome {
                    plan,
                    progress,
                    coverage: *coverage,
                    state: *state,
                    iterations: *iterations,
                    fatigue: *fatigue,
                    at: now,
                    next_run_at: next,
                },
            )
        })
        .await?;
    let surfaced = match (kept && speak, message) {
        (true, Some(m)) => {
            post(db, bus, &task, cycle, &m).await?;
            Some(m)
        }
        _ => None,
    };
    let state = if kept { state } else { TaskState::Cancelled };
    Ok(Some(CycleReport { task_id: id, goal: task.goal, cycle, planned, steps: ran, coverage, state, surfaced }))
}

/// The results of the steps already finished, for the next step's planner.
fn earlier_results(p: &TaskPlan) -> Vec<ActionResult> {
    p.steps
        .iter()
        .filter(|s| s.state != StepState::Pending)
        .map(|s| ActionResult {
            kind: format!("step {}", s.id),
            ok: s.state == StepState::Done,
            summary: s.result.clone().unwrap_or_default(),
            data: serde_json::Value::Null,
            ms: 0.0,
            card: false,
            choices: Vec::new(),
        })
        .collect()
}

/// The progress message: where the task stands and what the latest steps found.
pub fn progress_message(task: &Task, p: &TaskPlan, coverage: f64, completed: bool) -> String {
    let done = p.steps.iter().filter(|s| s.state != StepState::Pending).count();
    let head = if completed {
        format!("Background task #{} is finished: \"{}\".", task.id, task.goal)
    } else {
        format!(
            "Progress on background task #{} (\"{}\"): {done} of {} steps, {:.0} %.",
            task.id,
            task.goal,
            p.steps.len(),
            coverage * 100.0
        )
    };
    let found: Vec<String> = p
        .steps
        .iter()
        .filter(|s| s.state != StepState::Pending)
        .rev()
        .take(3)
        .map(|s| format!("- {}: {}", s.description, crate::text::clip::clip(s.result.as_deref().unwrap_or(""), 200)))
        .collect();
    format!("{head}\n{}", found.join("\n"))
}

/// A message into the task's thread (or the latest one), and on the bus for an open chat.
async fn post(db: &Db, bus: &EventBus, task: &Task, cycle: i64, message: &str) -> Result<(), StoreError> {
    let (thread, m, id) = (task.thread_id.clone(), message.to_string(), task.id);
    let thread_id = db
        .call(move |c| {
            let chat = ChatRepo(c);
            let thread = match thread {
                Some(t) => Some(t),
                None => chat.latest_thread()?,
            };
            if let Some(t) = &thread {
                chat.append(t, &format!("task-{id}-{cycle}"), "assistant", &m, None, Some("tasks"))?;
            }
            Ok(thread)
        })
        .await?;
    bus.emit(EngineEvent::TaskMessage { task_id: id, thread_id, text: message.to_string() });
    Ok(())
}

/// Messages held back for a better moment, now delivered.
async fn deliver_deferred(db: &Db, bus: &EventBus, now: i64) -> Result<(), StoreError> {
    let waiting: Vec<Task> =
        db.call(|c| Ok(TasksRepo(c).list(true)?.into_iter().filter(|t| t.progress.surface_pending).collect())).await?;
    for t in waiting {
        let Some(p) = &t.plan else { continue };
        let m = progress_message(&t, p, t.coverage, t.state == TaskState::Completed);
        let mut progress = t.progress.clone();
        progress.surface_pending = false;
        progress.surfaced_coverage = t.coverage;
        let id = t.id;
        db.call(move |c| TasksRepo(c).set_progress(id, &progress, now)).await?;
        post(db, bus, &t, t.cycles, &m).await?;
    }
    Ok(())
}

/// The skills one step may use: the primitives, then the step's own tools this build runs.
pub fn step_skills(step: &PlanStep) -> Vec<String> {
    let mut out: Vec<String> = PRIMITIVES.iter().map(|s| s.to_string()).collect();
    for t in &step.tools_needed {
        let runs = crate::cognition::act::dispatch::skill(t).is_some() && !NOT_FOR_STEPS.contains(&t.as_str());
        if runs && !out.contains(t) {
            out.push(t.clone());
        }
    }
    out
}

/// The bounded ACT loop for one step, each iteration recorded against the task and step.
async fn run_step(
    db: &Db,
    llm: Option<&Llm>,
    task: &Task,
    index: usize,
    step: &PlanStep,
    earlier: &[ActionResult],
    cancel: &CancellationToken,
) -> StepRun {
    let Some(llm) = llm else {
        return StepRun {
            state: StepState::Skipped,
            result: "no model to work on it".into(),
            iterations: 0,
            fatigue: 0.0,
        };
    };
    let limits = step_limits();
    let skills = step_skills(step);
    let text = format!("Background task: {}\nThis step: {}", task.goal, step.description);
    let ctx = SkillContext::new(
        task.thread_id.clone().unwrap_or_else(|| "tasks".into()),
        format!("task-{}", task.id),
        "tasks",
        chrono::Local::now(),
    );
    let started = Instant::now();
    let (mut state, mut history) = (LoopState::default(), earlier.to_vec());
    let mut ours: Vec<ActionResult> = Vec::new();
    let mut why = None;
    let termination = loop {
        if cancel.is_cancelled() {
            break Termination::Cancelled;
        }
        let req = plan_request(&text, &skills, &history);
        let left = limits.cumulative_timeout.saturating_sub(started.elapsed()).max(Duration::from_secs(1));
        let actions: Vec<Action> = match llm.structured(Role::Primary, &req, &plan_schema(), left, cancel).await {
            Ok(v) => parse_plan(&v, &skills).unwrap_or_else(|e| {
                why = Some(format!("the plan was unusable: {e}"));
                Vec::new()
            }),
            Err(e) => {
                why = Some(format!("the model did not answer: {}", crate::describe(&e)));
                Vec::new()
            }
        };
        state.elapsed = started.elapsed();
        if let Some(t) = state.check(&actions, &limits) {
            break t;
        }
        let clock = Instant::now();
        let mut results = Vec::with_capacity(actions.len());
        for a in &actions {
            let previous = results.last().map(|r: &ActionResult| r.summary.clone());
            let (owned, c) = (a.clone(), ctx.clone());
            let work = db.call(move |conn| Ok(dispatch(conn, &owned, &c, previous.as_deref())));
            results.push(match tokio::time::timeout(limits.per_action_timeout, work).await {
                Ok(Ok(r)) => r,
                _ => ActionResult {
                    kind: a.kind.clone(),
                    ok: false,
                    summary: format!("Could not {}: it did not finish", a.kind),
                    data: serde_json::Value::Null,
                    ms: 0.0,
                    card: false,
                    choices: Vec::new(),
                },
            });
        }
        let took = clock.elapsed();
        let cost = state.record(&actions, took);
        log_iteration(db, task.id, index, &state, &actions, &results, took, cost).await;
        history.extend(results.iter().cloned());
        ours.extend(results);
    };
    let ok: Vec<&str> = ours.iter().filter(|r| r.ok).map(|r| r.summary.as_str()).collect();
    let (step_state, result) = if !ok.is_empty() {
        (StepState::Done, crate::text::clip::clip(&ok.join(" "), 600))
    } else if !ours.is_empty() {
        let failed: Vec<&str> = ours.iter().map(|r| r.summary.as_str()).collect();
        (StepState::Skipped, crate::text::clip::clip(&format!("nothing worked: {}", failed.join(" ")), 600))
    } else {
        let why = why.unwrap_or_else(|| format!("no skill of mine applies ({})", termination.as_str()));
        (StepState::Skipped, why)
    };
    StepRun { state: step_state, result, iterations: i64::from(state.iteration), fatigue: state.fatigue }
}

#[allow(clippy::too_many_arguments)]
async fn log_iteration(
    db: &Db,
    task_id: i64,
    index: usize,
    state: &LoopState,
    actions: &[Action],
    results: &[ActionResult],
    took: Duration,
    cost: f64,
) {
    let (actions, results) = match (serde_json::to_string(actions), serde_json::to_string(results)) {
        (Ok(a), Ok(r)) => (a, r),
        _ => return,
    };
    let (iteration, fatigue) = (i64::from(state.iteration) - 1, state.fatigue);
    let write = db
        .call(move |c| {
            CortexIterationsRepo(c).insert_for_step(
                task_id,
                index as i64,
                &IterationRow {
                    exchange_id: "",
                    routing_decision_id: None,
                    iteration,
                    planner: "model",
                    actions: &actions,
                    results: Some(&results),
                    execution_time_ms: took.as_secs_f64() * 1000.0,
                    fatigue,
                    cost,
                    termination_reason: None,
                    created_at: crate::store::now_ts(),
                },
            )
        })
        .await;
    if let Err(e) = write {
        tracing::warn!("cannot log a task step's iteration: {}", crate::describe(&e));
    }
}
