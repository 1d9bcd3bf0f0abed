//! ACT plans: the strict JSON contract a planner must meet, its validation, and the loop's
//! pure bookkeeping (fatigue, termination).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::time::Duration;

/// One action: a skill name and its parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Action {
    #[serde(rename = "type")]
    pub kind: String,
    pub params: Map<String, Value>,
}

impl Action {
    pub fn new(kind: &str, params: Value) -> Action {
        let params = match params {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        Action { kind: kind.to_string(), params }
    }
}

/// The legacy skill names of the seed, mapped to the current ones.
pub fn canonical_skill(name: &str) -> &str {
    match name {
        "memory_query" | "internal_reasoning" | "semantic_query" => "recall",
        "memory_write" => "memorize",
        "world_state_read" => "introspect",
        other => other,
    }
}

/// The JSON schema of a plan (`{"actions": [{"type": …, "params": {…}}]}`); a reply may also
/// put parameters next to `type`, which [`parse_plan`] accepts.
pub fn plan_schema() -> Value {
    json!({
        "type": "object",
        "required": ["actions"],
        "properties": {
            "actions": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["type"],
                    "properties": {"type": {"type": "string"}, "params": {"type": "object"}}
                }
            }
        }
    })
}

/// Read a plan object: each action's `type` mapped through [`canonical_skill`] and checked
/// against `allowed`; parameters taken from `params` or from the action's other keys. An
/// action with an unknown or disallowed skill makes the plan invalid (the caller falls back).
pub fn parse_plan(v: &Value, allowed: &[String]) -> Result<Vec<Action>, String> {
    let actions = v.get("actions").and_then(Value::as_array).ok_or("the plan has no `actions` array")?;
    let mut out = Vec::with_capacity(actions.len());
    for (i, a) in actions.iter().enumerate() {
        let obj = a.as_object().ok_or_else(|| format!("action {i} is not an object"))?;
        let kind = obj.get("type").and_then(Value::as_str).ok_or_else(|| format!("action {i} has no `type`"))?;
        let kind = canonical_skill(kind.trim());
        if !allowed.iter().any(|s| s == kind) {
            return Err(format!("action {i}: skill `{kind}` is not available (allowed: {})", allowed.join(", ")));
        }
        let params = match obj.get("params") {
            Some(Value::Object(p)) => p.clone(),
            _ => obj.iter().filter(|(k, _)| k.as_str() != "type").map(|(k, v)| (k.clone(), v.clone())).collect(),
        };
        out.push(Action { kind: kind.to_string(), params });
    }
    Ok(out)
}

/// The loop's limits (docs/cognition.md §7.1, design defaults).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ActLimits {
    pub max_iterations: u32,
    pub cumulative_timeout: Duration,
    pub per_action_timeout: Duration,
    pub fatigue_budget: f64,
}

impl Default for ActLimits {
    fn default() -> ActLimits {
        ActLimits {
            max_iterations: 5,
            cumulative_timeout: Duration::from_secs(60),
            per_action_timeout: Duration::from_secs(10),
            fatigue_budget: 10.0,
        }
    }
}

/// Base fatigue cost of one action of `skill`.
pub fn base_cost(skill: &str) -> f64 {
    match skill {
        "introspect" => 0.5,
        "memorize" => 0.8,
        _ => 1.0,
    }
}

/// `cost = Σ base_cost · (1 + 0.3·iteration)`: later iterations cost more.
pub fn iteration_cost(actions: &[Action], iteration: u32) -> f64 {
    actions.iter().map(|a| base_cost(&a.kind)).sum::<f64>() * (1.0 + 0.3 * f64::from(iteration))
}

/// Why the loop stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Termination {
    /// The planner had nothing (more) to do.
    EmptyPlan,
    MaxIterations,
    Timeout,
    FatigueExhausted,
    /// The same action three times in a row.
    RepeatedAction,
    Cancelled,
    /// A consequential action relied on a memory marked uncertain or contradicted: the user
    /// is asked to confirm first (docs/cognition.md §10, pre-action check).
    NeedsConfirmation,
    /// The regulator broke the loop: the same skill five times in a row, whatever its
    /// parameters (docs/cognition.md §13.4). Fatigue is the skills' budget; this is the
    /// regulator's stop beside it.
    RegulatorBreak,
}

impl Termination {
    pub fn as_str(self) -> &'static str {
        match self {
            Termination::EmptyPlan => "empty_plan",
            Termination::MaxIterations => "max_iterations",
            Termination::Timeout => "timeout",
            Termination::FatigueExhausted => "fatigue_exhausted",
            Termination::RepeatedAction => "repeated_action",
            Termination::Cancelled => "cancelled",
            Termination::NeedsConfirmation => "needs_confirmation",
            Termination::RegulatorBreak => "regulator_break",
        }
    }
}

/// The loop's running totals; [`LoopState::check`] is the termination test before an
/// iteration's actions run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoopState {
    pub iteration: u32,
    pub fatigue: f64,
    pub elapsed: Duration,
    /// Every action executed so far, in order.
    pub executed: Vec<Action>,
}

impl LoopState {
    /// Whether the loop must stop before running `plan` as iteration `self.iteration`.
    pub fn check(&self, plan: &[Action], limits: &ActLimits) -> Option<Termination> {
        if plan.is_empty() {
            return Some(Termination::EmptyPlan);
        }
        if self.iteration >= limits.max_iterations {
            return Some(Termination::MaxIterations);
        }
        if self.elapsed >= limits.cumulative_timeout {
            return Some(Termination::Timeout);
        }
        if self.fatigue + iteration_cost(plan, self.iteration) > limits.fatigue_budget {
            return Some(Termination::FatigueExhausted);
        }
        // The same action (skill and parameters) a third time in a row.
        let mut run = 0;
        let mut last: Option<&Action> = None;
        for a in self.executed.iter().chain(plan) {
            run = if last == Some(a) { run + 1 } else { 1 };
            if run >= 3 {
                return Some(Termination::RepeatedAction);
            }
            last = Some(a);
        }
        None
    }

    /// Account for an executed iteration.
    pub fn record(&mut self, plan: &[Action], took: Duration) -> f64 {
        let cost = iteration_cost(plan, self.iteration);
        self.fatigue += cost;
        self.elapsed += took;
        self.iteration += 1;
        self.executed.extend(plan.iter().cloned());
        cost
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed() -> Vec<String> {
        ["recall", "memorize", "introspect", "list"].map(String::from).to_vec()
    }

    #[test]
    fn plans_parse_with_params_nested_or_flat_and_legacy_names() {
        let v = json!({"actions": [
            {"type": "list", "params": {"action": "add", "items": ["eggs"]}},
            {"type": "memory_query", "query": "dentist"}
        ]});
        let plan = parse_plan(&v, &allowed()).unwrap();
        assert_eq!(plan[0].kind, "list");
        assert_eq!(plan[0].params["items"], json!(["eggs"]));
        assert_eq!(plan[1].kind, "recall");
        assert_eq!(plan[1].params["query"], "dentist");
    }

    #[test]
    fn invalid_plans_are_refused() {
        assert!(parse_plan(&json!({"response": "hi"}), &allowed()).is_err());
        assert!(parse_plan(&json!({"actions": [{"type": "schedule"}]}), &allowed()).unwrap_err().contains("schedule"));
        assert!(parse_plan(&json!({"actions": ["list"]}), &allowed()).is_err());
        assert_eq!(parse_plan(&json!({"actions": []}), &allowed()).unwrap(), vec![]);
    }

    #[test]
    fn fatigue_grows_per_iteration() {
        let plan = vec![Action::new("recall", json!({})), Action::new("introspect", json!({}))];
        assert!((iteration_cost(&plan, 0) - 1.5).abs() < 1e-9);
        assert!((iteration_cost(&plan, 2) - 1.5 * 1.6).abs() < 1e-9);
    }

    #[test]
    fn every_termination_reason() {
        let l = ActLimits::default();
        let a = |q: &str| Action::new("recall", json!({"query": q}));
        let s = LoopState::default();
        assert_eq!(s.check(&[], &l), Some(Termination::EmptyPlan));
        assert_eq!(s.check(&[a("x")], &l), None);
        let s = LoopState { iteration: 5, ..LoopState::default() };
        assert_eq!(s.check(&[a("x")], &l), Some(Termination::MaxIterations));
        let s = LoopState { elapsed: Duration::from_secs(60), ..LoopState::default() };
        assert_eq!(s.check(&[a("x")], &l), Some(Termination::Timeout));
        let s = LoopState { fatigue: 9.5, iteration: 1, ..LoopState::default() };
        assert_eq!(s.check(&[a("x")], &l), Some(Termination::FatigueExhausted));
        let s = LoopState { executed: vec![a("x"), a("x")], iteration: 2, ..LoopState::default() };
        assert_eq!(s.check(&[a("x")], &l), Some(Termination::RepeatedAction));
        assert_eq!(s.check(&[a("y")], &l), None, "a different query is not a repeat");
    }

    #[test]
    fn the_budget_runs_out_within_the_iteration_cap() {
        // Three recalls per iteration: 3, 3.9, 4.8 … exceeds 10 at the third iteration.
        let l = ActLimits::default();
        let mut s = LoopState::default();
        let mut n = 0;
        loop {
            let plan: Vec<Action> = (0..3).map(|k| Action::new("recall", json!({"q": n * 3 + k}))).collect();
            if let Some(t) = s.check(&plan, &l) {
                assert_eq!(t, Termination::FatigueExhausted);
                break;
            }
            s.record(&plan, Duration::from_millis(5));
            n += 1;
        }
        assert_eq!(s.iteration, 2);
    }
}
