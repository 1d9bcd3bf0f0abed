//! `persistent_tasks`: a task, its plan and its progress checkpoint (docs/cognition.md §17).
//! The plan and the checkpoint are JSON in the task's row, so a cycle's outcome is one
//! UPDATE: a crash leaves the previous checkpoint whole, never half of the next.

use super::CachedSql;
use super::StoreError;
use crate::vocab::tasks::{Task, TaskPlan, TaskProgress, TaskState};
use rusqlite::{Connection, OptionalExtension, Row, params};

/// A task as a chat turn or the command line asks for it.
#[derive(Debug, Clone, PartialEq)]
pub struct NewTask<'a> {
    pub goal: &'a str,
    pub state: TaskState,
    pub priority: i64,
    pub thread_id: Option<&'a str>,
    /// What proposed the task when the user did not (stored in `scope`).
    pub origin: Option<&'a str>,
    pub created_at: i64,
    pub expires_at: i64,
}

/// What one cycle leaves behind: written in one statement.
#[derive(Debug, Clone, PartialEq)]
pub struct CycleOutcome<'a> {
    pub plan: &'a TaskPlan,
    pub progress: &'a TaskProgress,
    pub coverage: f64,
    pub state: TaskState,
    pub iterations: i64,
    pub fatigue: f64,
    pub at: i64,
    pub next_run_at: Option<i64>,
}

pub struct TasksRepo<'c>(pub &'c Connection);

const COLUMNS: &str = "id, goal, state, priority, plan, progress, coverage, cycles, iterations, fatigue, created_at, \
                       updated_at, expires_at, last_run_at, next_run_at, thread_id, scope";

fn task(r: &Row<'_>) -> rusqlite::Result<(Task, Option<String>, Option<String>)> {
    let state: String = r.get(2)?;
    let t = Task {
        id: r.get(0)?,
        goal: r.get(1)?,
        state: TaskState::parse(&state).unwrap_or(TaskState::Paused),
        priority: r.get(3)?,
        plan: None,
        progress: TaskProgress::default(),
        coverage: r.get(6)?,
        cycles: r.get(7)?,
        iterations: r.get(8)?,
        fatigue: r.get(9)?,
        created_at: r.get(10)?,
        updated_at: r.get(11)?,
        expires_at: r.get(12)?,
        last_run_at: r.get(13)?,
        next_run_at: r.get(14)?,
        thread_id: r.get(15)?,
        origin: r.get(16)?,
    };
    Ok((t, r.get(4)?, r.get(5)?))
}

/// The JSON columns read back; a damaged document reads as absent rather than hiding the task.
fn with_json((mut t, plan, progress): (Task, Option<String>, Option<String>)) -> Task {
    t.plan = plan.and_then(|p| serde_json::from_str(&p).ok());
    t.progress = progress.and_then(|p| serde_json::from_str(&p).ok()).unwrap_or_default();
    t
}

impl TasksRepo<'_> {
    pub fn insert(&self, t: &NewTask<'_>) -> Result<i64, StoreError> {
        self.0.exec(
            "INSERT INTO persistent_tasks (goal, state, priority, created_at, updated_at, expires_at, thread_id, scope)
             VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?6, ?7)",
            params![
                t.goal,
                t.state.as_str(),
                t.priority.clamp(1, 10),
                t.created_at,
                t.expires_at,
                t.thread_id,
                t.origin
            ],
        )?;
        Ok(self.0.last_insert_rowid())
    }

    pub fn get(&self, id: i64) -> Result<Option<Task>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM persistent_tasks WHERE id = ?1");
        Ok(self.0.row(&sql, params![id], task).optional()?.map(with_json))
    }

    /// Every task, open ones first, then newest first; finished ones only with `all`.
    pub fn list(&self, all: bool) -> Result<Vec<Task>, StoreError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM persistent_tasks
             WHERE ?1 OR state NOT IN ('completed', 'expired', 'cancelled')
             ORDER BY state IN ('completed', 'expired', 'cancelled'), priority DESC, created_at DESC, id DESC"
        );
        let mut stmt = self.0.prepare_cached(&sql)?;
        let rows = stmt.query_map(params![all], task)?;
        Ok(rows.map(|r| r.map(with_json)).collect::<Result<_, _>>()?)
    }

    /// Move a task to `to` if it is in one of `from`. Returns whether it moved.
    pub fn transition(&self, id: i64, from: &[TaskState], to: TaskState, now: i64) -> Result<bool, StoreError> {
        let from: Vec<&str> = from.iter().map(|s| s.as_str()).collect();
        let n = self.0.exec(
            "UPDATE persistent_tasks SET state = ?2, updated_at = ?3
             WHERE id = ?1 AND state IN (SELECT value FROM json_each(?4))",
            params![id, to.as_str(), now, serde_json::to_string(&from)?],
        )?;
        Ok(n > 0)
    }

    /// Open tasks past their expiry become `expired`. Returns how many.
    pub fn expire(&self, now: i64) -> Result<usize, StoreError> {
        Ok(self.0.exec(
            "UPDATE persistent_tasks SET state = 'expired', updated_at = ?1
             WHERE expires_at <= ?1 AND state NOT IN ('completed', 'expired', 'cancelled')",
            params![now],
        )?)
    }

    /// The task the worker runs next: confirmed, due, highest priority, first in first out.
    pub fn next_due(&self, now: i64) -> Result<Option<Task>, StoreError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM persistent_tasks
             WHERE state IN ('pending', 'running') AND (next_run_at IS NULL OR next_run_at <= ?1)
             ORDER BY priority DESC, created_at, id LIMIT 1"
        );
        Ok(self.0.row(&sql, params![now], task).optional()?.map(with_json))
    }

    /// Every confirmed task waiting for its next run is due now (`tasks run --now`).
    pub fn make_due(&self, now: i64) -> Result<usize, StoreError> {
        Ok(self.0.exec(
            "UPDATE persistent_tasks SET next_run_at = ?1
             WHERE state IN ('pending', 'running') AND next_run_at > ?1",
            params![now],
        )?)
    }

    pub fn set_plan(&self, id: i64, plan: &TaskPlan, now: i64) -> Result<(), StoreError> {
        self.0.exec(
            "UPDATE persistent_tasks SET plan = ?2, updated_at = ?3 WHERE id = ?1",
            params![id, serde_json::to_string(plan)?, now],
        )?;
        Ok(())
    }

    /// The progress alone (a deferred message delivered).
    pub fn set_progress(&self, id: i64, progress: &TaskProgress, now: i64) -> Result<(), StoreError> {
        self.0.exec(
            "UPDATE persistent_tasks SET progress = ?2, updated_at = ?3 WHERE id = ?1",
            params![id, serde_json::to_string(progress)?, now],
        )?;
        Ok(())
    }

    /// The atomic checkpoint after a cycle: plan, progress, coverage and state together. A task
    /// cancelled while the cycle ran stays cancelled (its work is dropped).
    pub fn checkpoint(&self, id: i64, o: &CycleOutcome<'_>) -> Result<bool, StoreError> {
        let n = self.0.exec(
            "UPDATE persistent_tasks SET plan = ?2, progress = ?3, coverage = ?4, state = ?5, cycles = cycles + 1,
                 iterations = iterations + ?6, fatigue = ?7, last_run_at = ?8, updated_at = ?8, next_run_at = ?9
             WHERE id = ?1 AND state IN ('pending', 'running')",
            params![
                id,
                serde_json::to_string(o.plan)?,
                serde_json::to_string(o.progress)?,
                o.coverage,
                o.state.as_str(),
                o.iterations,
                o.fatigue,
                o.at,
                o.next_run_at
            ],
        )?;
        Ok(n > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::tasks::{PlanStep, StepState};

    fn conn() -> Connection {
        super::super::open_in_memory().unwrap()
    }

    fn new(goal: &str, state: TaskState, priority: i64, at: i64) -> NewTask<'_> {
        NewTask { goal, state, priority, thread_id: Some("t1"), origin: None, created_at: at, expires_at: at + 100 }
    }

    #[test]
    fn confirmed_tasks_run_by_priority_then_age_and_expire() {
        let c = conn();
        let r = TasksRepo(&c);
        let a = r.insert(&new("older, normal", TaskState::Pending, 5, 10)).unwrap();
        let b = r.insert(&new("newer, urgent", TaskState::Pending, 8, 20)).unwrap();
        let w = r.insert(&new("not yet confirmed", TaskState::AwaitingConfirmation, 10, 5)).unwrap();
        assert_eq!(r.next_due(30).unwrap().unwrap().id, b);
        assert!(r.transition(b, &[TaskState::Pending, TaskState::Running], TaskState::Cancelled, 31).unwrap());
        assert_eq!(r.next_due(30).unwrap().unwrap().id, a);
        assert!(!r.transition(b, &[TaskState::Pending], TaskState::Running, 32).unwrap(), "cancelled stays");
        assert_eq!(r.expire(111).unwrap(), 2, "the open ones past expiry");
        assert_eq!(r.get(w).unwrap().unwrap().state, TaskState::Expired);
        assert_eq!(r.list(false).unwrap().len(), 0);
        assert_eq!(r.list(true).unwrap().len(), 3);
    }

    #[test]
    fn a_checkpoint_writes_plan_and_progress_together_unless_cancelled_meanwhile() {
        let c = conn();
        let r = TasksRepo(&c);
        let id = r.insert(&new("watch flights to Lisbon", TaskState::Pending, 5, 10)).unwrap();
        let step = |id: &str| PlanStep {
            id: id.into(),
            description: "look it up".into(),
            depends_on: vec![],
            tools_needed: vec![],
            state: StepState::Done,
            result: Some("found".into()),
        };
        let plan =
            TaskPlan { steps: vec![step("s1")], decomposition_confidence: 0.9, source: "model".into(), rejected: None };
        let progress = TaskProgress { last_summary: "did s1".into(), ..TaskProgress::default() };
        let o = CycleOutcome {
            plan: &plan,
            progress: &progress,
            coverage: 1.0,
            state: TaskState::Completed,
            iterations: 2,
            fatigue: 1.5,
            at: 50,
            next_run_at: None,
        };
        assert!(r.checkpoint(id, &o).unwrap());
        let t = r.get(id).unwrap().unwrap();
        assert_eq!((t.plan.as_ref(), t.progress.last_summary.as_str(), t.cycles), (Some(&plan), "did s1", 1));
        assert_eq!(t.state, TaskState::Completed);
        assert!(!r.checkpoint(id, &o).unwrap(), "a finished task takes no more checkpoints");
        let later = r.insert(&new("another", TaskState::Pending, 5, 10)).unwrap();
        let o = CycleOutcome { state: TaskState::Running, next_run_at: Some(1000), ..o };
        assert!(r.checkpoint(later, &o).unwrap());
        assert!(r.next_due(60).unwrap().is_none(), "waits for its next run");
        assert_eq!(r.make_due(60).unwrap(), 1);
        assert_eq!(r.next_due(60).unwrap().map(|t| t.id), Some(later));
    }

    #[test]
    fn an_iteration_may_belong_to_a_task_step_instead_of_an_exchange() {
        let c = conn();
        let n = c
            .execute(
                "INSERT INTO cortex_iterations (exchange_id, task_id, step_index, iteration_number, planner,
                     actions_executed, execution_time_ms, fatigue, iteration_cost, mode, created_at)
                 VALUES (NULL, 1, 0, 0, 'model', '[]', 1.0, 0.0, 0.0, 'ACT', 1)",
                [],
            )
            .unwrap();
        assert_eq!(n, 1);
        let orphan = c.execute(
            "INSERT INTO cortex_iterations (iteration_number, planner, actions_executed, execution_time_ms, fatigue,
                 iteration_cost, mode, created_at) VALUES (0, 'model', '[]', 1.0, 0.0, 0.0, 'ACT', 1)",
            [],
        );
        assert!(orphan.is_err(), "an iteration needs an owner");
    }

    /// The DDL of a table as migration 1 created it.
    fn shipped_ddl(table: &str) -> String {
        let sql = include_str!("../../migrations/0001_init.sql");
        let start = sql.find(&format!("CREATE TABLE {table} (")).unwrap();
        let end = start + sql[start..].find(");").unwrap() + 2;
        sql[start..end].to_string()
    }

    #[test]
    fn migration_14_keeps_the_rows_of_both_rebuilt_tables() {
        let mut c = super::super::open_in_memory().unwrap();
        let old = format!(
            "DROP TABLE persistent_tasks; DROP TABLE cortex_iterations; {} {}
             INSERT INTO persistent_tasks (goal, state, created_at, updated_at, expires_at) VALUES ('g', 'paused', 1, 1, 9);
             INSERT INTO cortex_iterations (exchange_id, iteration_number, planner, actions_executed, execution_time_ms,
                 fatigue, iteration_cost, mode, created_at) VALUES ('x1', 0, 'model', '[]', 1.0, 0.5, 1.0, 'ACT', 1);
             PRAGMA user_version = 13;",
            shipped_ddl("persistent_tasks"),
            shipped_ddl("cortex_iterations")
        );
        c.execute_batch(super::super::migrate::BEFORE_RERUN).unwrap();
        c.execute_batch(&old).unwrap();
        assert_eq!(super::super::migrate(&mut c).unwrap(), super::super::latest_version() as usize - 13);
        let t = TasksRepo(&c).get(1).unwrap().unwrap();
        assert_eq!((t.goal.as_str(), t.state, t.thread_id), ("g", TaskState::Paused, None));
        let x: (String, f64) = c
            .query_row("SELECT exchange_id, fatigue FROM cortex_iterations", [], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap();
        assert_eq!(x, ("x1".to_string(), 0.5));
        assert!(TasksRepo(&c).transition(1, &[TaskState::Paused], TaskState::AwaitingConfirmation, 2).unwrap());
    }
}
