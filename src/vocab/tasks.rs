//! A persistent task as every layer sees it: the store keeps it, the task worker advances it,
//! `chalie-tui tasks` and the Tasks view (F7) show it (docs/cognition.md §17).

use serde::{Deserialize, Serialize};

/// Where a task is in its life. `AwaitingConfirmation` is the step between a chat request and
/// the work: nothing runs in the background until the user says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    AwaitingConfirmation,
    Pending,
    Running,
    Completed,
    Expired,
    Paused,
    Cancelled,
}

impl TaskState {
    pub const ALL: [TaskState; 7] = [
        TaskState::AwaitingConfirmation,
        TaskState::Pending,
        TaskState::Running,
        TaskState::Completed,
        TaskState::Expired,
        TaskState::Paused,
        TaskState::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::AwaitingConfirmation => "awaiting_confirmation",
            TaskState::Pending => "pending",
            TaskState::Running => "running",
            TaskState::Completed => "completed",
            TaskState::Expired => "expired",
            TaskState::Paused => "paused",
            TaskState::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<TaskState> {
        TaskState::ALL.into_iter().find(|t| t.as_str() == s)
    }

    /// Counts against the limit of active tasks: not finished one way or another.
    pub fn is_open(self) -> bool {
        !matches!(self, TaskState::Completed | TaskState::Expired | TaskState::Cancelled)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepState {
    #[default]
    Pending,
    Done,
    /// Nothing this build can do moved the step forward; said so in its result.
    Skipped,
}

/// One step of a plan: the model's `{id, description, depends_on, tools_needed}` plus what
/// the worker made of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanStep {
    pub id: String,
    pub description: String,
    #[serde(default)]
    pub depends_on: Vec<String>,
    #[serde(default)]
    pub tools_needed: Vec<String>,
    #[serde(default)]
    pub state: StepState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
}

/// A task's plan: a DAG of steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskPlan {
    pub steps: Vec<PlanStep>,
    pub decomposition_confidence: f64,
    /// `model`, or `fallback` (the one honest step used when the model's plan failed a gate).
    pub source: String,
    /// Why the model's plan was not used, when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejected: Option<String>,
}

/// What one cycle did, kept in the task's progress.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub cycle: u32,
    pub at: i64,
    pub coverage: f64,
    pub steps: Vec<String>,
    pub summary: String,
}

/// The progress checkpoint: written whole, with the plan, after each cycle.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskProgress {
    #[serde(default)]
    pub last_summary: String,
    /// Coverage when the user was last told about the task.
    #[serde(default)]
    pub surfaced_coverage: f64,
    /// A progress message is waiting for a good moment (quiet hours, a turn in flight).
    #[serde(default)]
    pub surface_pending: bool,
    #[serde(default)]
    pub checkpoints: Vec<Checkpoint>,
}

/// One task, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    pub id: i64,
    pub goal: String,
    pub state: TaskState,
    /// 1–10, higher runs first.
    pub priority: i64,
    pub plan: Option<TaskPlan>,
    pub progress: TaskProgress,
    /// 0–1: the share of the plan's steps that are done or skipped.
    pub coverage: f64,
    pub cycles: i64,
    pub iterations: i64,
    pub fatigue: f64,
    pub created_at: i64,
    pub updated_at: i64,
    pub expires_at: i64,
    pub last_run_at: Option<i64>,
    pub next_run_at: Option<i64>,
    pub thread_id: Option<String>,
    /// What proposed the task when the user did not, e.g. `drift thought #12`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
}
