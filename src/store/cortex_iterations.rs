//! `cortex_iterations`: one row per ACT loop iteration (the audit reads them through
//! [`super::RoutingRepo::act_iterations`]).

use super::CachedSql;
use super::StoreError;
use rusqlite::{Connection, params};

/// One iteration as the ACT loop records it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IterationRow<'a> {
    pub exchange_id: &'a str,
    pub routing_decision_id: Option<&'a str>,
    pub iteration: i64,
    pub planner: &'a str,
    /// JSON.
    pub actions: &'a str,
    /// JSON.
    pub results: Option<&'a str>,
    pub execution_time_ms: f64,
    pub fatigue: f64,
    pub cost: f64,
    pub termination_reason: Option<&'a str>,
    pub created_at: i64,
}

pub struct CortexIterationsRepo<'c>(pub &'c Connection);

impl CortexIterationsRepo<'_> {
    /// Set why the loop stopped on an iteration already recorded. Returns whether one was.
    pub fn set_termination(&self, exchange_id: &str, iteration: i64, reason: &str) -> Result<bool, StoreError> {
        let n = self.0.exec(
            "UPDATE cortex_iterations SET termination_reason = ?3
             WHERE exchange_id = ?1 AND iteration_number = ?2",
            params![exchange_id, iteration, reason],
        )?;
        Ok(n > 0)
    }

    /// Record one ACT iteration of a turn: its exchange (and routing decision) own it.
    pub fn insert(&self, it: &IterationRow<'_>) -> Result<(), StoreError> {
        self.insert_owned((Some(it.exchange_id), it.routing_decision_id), None, it)
    }

    /// Record one iteration of a task step's ACT loop: the task and the step's position in its
    /// plan own it instead of an exchange (`it.exchange_id` is ignored; `routing_decision_id` too).
    pub fn insert_for_step(&self, task_id: i64, step_index: i64, it: &IterationRow<'_>) -> Result<(), StoreError> {
        self.insert_owned((None, None), Some((task_id, step_index)), it)
    }

    /// One row with exactly one owner: an exchange, or a task step (the table's CHECK).
    fn insert_owned(
        &self,
        (exchange_id, routing_decision_id): (Option<&str>, Option<&str>),
        step: Option<(i64, i64)>,
        it: &IterationRow<'_>,
    ) -> Result<(), StoreError> {
        self.0.exec(
            "INSERT INTO cortex_iterations (exchange_id, routing_decision_id, task_id, step_index,
                 iteration_number, planner, actions_executed, action_results, execution_time_ms, fatigue,
                 iteration_cost, mode, termination_reason, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, 'ACT', ?12, ?13)",
            params![
                exchange_id,
                routing_decision_id,
                step.map(|s| s.0),
                step.map(|s| s.1),
                it.iteration,
                it.planner,
                it.actions,
                it.results,
                it.execution_time_ms,
                it.fatigue,
                it.cost,
                it.termination_reason,
                it.created_at
            ],
        )?;
        Ok(())
    }

    /// `(skill, uses)` over every recorded action, most used first.
    pub fn skill_use(&self, limit: usize) -> Result<Vec<(Option<String>, i64)>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT json_extract(value, '$.type'), COUNT(*) FROM cortex_iterations, json_each(actions_executed)
             GROUP BY 1 ORDER BY 2 DESC LIMIT ?1",
        )?;
        let rows = stmt.query_map(params![limit as i64], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
