//! Plan decomposition's gates (docs/cognition.md §17.2): the model's JSON plan is accepted only
//! when it is a usable DAG; otherwise the task gets one honest step, the goal itself. Pure.

use super::{jaccard, word_set};
use crate::vocab::tasks::{PlanStep, StepState, TaskPlan};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

pub const MIN_STEPS: usize = 2;
pub const MAX_STEPS: usize = 8;
pub const MIN_STEP_WORDS: usize = 4;
pub const MAX_STEP_WORDS: usize = 30;
/// Two steps this alike (Jaccard of their word sets, strictly above) are one step twice.
pub const DUPLICATE_STEP_JACCARD: f64 = 0.7;
/// The model's own confidence in its decomposition must be strictly above this.
pub const MIN_CONFIDENCE: f64 = 0.5;

/// Read and check a model's plan against every gate. `skills` are the names this build can
/// run: a step's `tools_needed` keeps only those, so the worker never promises a tool it lacks.
pub fn validate(v: &Value, skills: &[&str]) -> Result<TaskPlan, String> {
    let confidence = v.get("decomposition_confidence").and_then(Value::as_f64).unwrap_or(0.0);
    if confidence.is_nan() || confidence <= MIN_CONFIDENCE {
        return Err(format!("decomposition confidence {confidence:.2} ≤ {MIN_CONFIDENCE}"));
    }
    let raw = v.get("steps").and_then(Value::as_array).ok_or("the plan has no `steps` array")?;
    if !(MIN_STEPS..=MAX_STEPS).contains(&raw.len()) {
        return Err(format!("{} steps, not {MIN_STEPS}–{MAX_STEPS}", raw.len()));
    }
    let mut steps = Vec::with_capacity(raw.len());
    for (i, s) in raw.iter().enumerate() {
        let text = |k: &str| s.get(k).and_then(Value::as_str).map(str::trim).unwrap_or("").to_string();
        let list = |k: &str| -> Vec<String> {
            s.get(k)
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).map(|x| x.trim().to_string()).collect())
                .unwrap_or_default()
        };
        let (id, description) = (text("id"), text("description"));
        if id.is_empty() {
            return Err(format!("step {} has no id", i + 1));
        }
        let n = crate::text::words(&crate::text::normalize(&description)).len();
        if !(MIN_STEP_WORDS..=MAX_STEP_WORDS).contains(&n) {
            return Err(format!("step {id} has {n} words, not {MIN_STEP_WORDS}–{MAX_STEP_WORDS}"));
        }
        let tools_needed = list("tools_needed").into_iter().filter(|t| skills.contains(&t.as_str())).collect();
        steps.push(PlanStep {
            id,
            description,
            depends_on: list("depends_on"),
            tools_needed,
            state: StepState::Pending,
            result: None,
        });
    }
    check_graph(&steps)?;
    for (i, a) in steps.iter().enumerate() {
        let wa = word_set(&a.description);
        for b in &steps[i + 1..] {
            let j = jaccard(&wa, &word_set(&b.description));
            if j > DUPLICATE_STEP_JACCARD {
                return Err(format!("steps {} and {} are near duplicates (Jaccard {j:.2})", a.id, b.id));
            }
        }
    }
    Ok(TaskPlan { steps, decomposition_confidence: confidence, source: "model".into(), rejected: None })
}

/// Unique ids, every dependency a step of the plan (not itself), at least one root, no cycle.
fn check_graph(steps: &[PlanStep]) -> Result<(), String> {
    let ids: BTreeSet<&str> = steps.iter().map(|s| s.id.as_str()).collect();
    if ids.len() != steps.len() {
        return Err("two steps share an id".into());
    }
    for s in steps {
        if let Some(d) = s.depends_on.iter().find(|d| !ids.contains(d.as_str()) || **d == s.id) {
            return Err(format!("step {} depends on `{d}`, not another step of the plan", s.id));
        }
    }
    if !steps.iter().any(|s| s.depends_on.is_empty()) {
        return Err("no step can start: every step depends on another".into());
    }
    depths(steps).map(|_| ()).ok_or_else(|| "the steps' dependencies form a cycle".into())
}

/// Each step's depth (a root is 0; otherwise one more than its deepest dependency), by Kahn's
/// algorithm; `None` when the dependencies have a cycle (or name no step of the plan).
pub fn depths(steps: &[PlanStep]) -> Option<BTreeMap<String, usize>> {
    let mut indegree: BTreeMap<&str, usize> = steps.iter().map(|s| (s.id.as_str(), s.depends_on.len())).collect();
    let mut depth: BTreeMap<String, usize> = BTreeMap::new();
    let mut ready: Vec<&str> = indegree.iter().filter(|(_, n)| **n == 0).map(|(id, _)| *id).collect();
    while let Some(id) = ready.pop() {
        let d = steps
            .iter()
            .find(|s| s.id == id)
            .map(|s| s.depends_on.iter().filter_map(|p| depth.get(p)).map(|d| d + 1).max().unwrap_or(0))
            .unwrap_or(0);
        depth.insert(id.to_string(), d);
        for s in steps.iter().filter(|s| s.depends_on.iter().any(|p| p == id)) {
            if let Some(n) = indegree.get_mut(s.id.as_str()) {
                *n -= 1;
                if *n == 0 {
                    ready.push(s.id.as_str());
                }
            }
        }
    }
    (depth.len() == steps.len()).then_some(depth)
}

/// The plan for a goal the model could not decompose: the goal as its only step, saying why.
pub fn fallback(goal: &str, why: &str) -> TaskPlan {
    TaskPlan {
        steps: vec![PlanStep {
            id: "s1".into(),
            description: goal.trim().to_string(),
            depends_on: Vec::new(),
            tools_needed: Vec::new(),
            state: StepState::Pending,
            result: None,
        }],
        decomposition_confidence: 0.0,
        source: "fallback".into(),
        rejected: Some(why.to_string()),
    }
}

/// Indexes of the steps that may run now (pending, every dependency finished), in the seed's
/// order: shallower first (breadth-first), then those needing no tools, then the shorter
/// description, then the id.
pub fn ready(plan: &TaskPlan) -> Vec<usize> {
    let finished = |id: &str| plan.steps.iter().any(|s| s.id == id && s.state != StepState::Pending);
    let depth = depths(&plan.steps).unwrap_or_default();
    let mut out: Vec<usize> = (0..plan.steps.len())
        .filter(|&i| {
            let s = &plan.steps[i];
            s.state == StepState::Pending && s.depends_on.iter().all(|d| finished(d))
        })
        .collect();
    out.sort_by_key(|&i| {
        let s = &plan.steps[i];
        let words = crate::text::words(&crate::text::normalize(&s.description)).len();
        (depth.get(&s.id).copied().unwrap_or(usize::MAX), !s.tools_needed.is_empty(), words, s.id.clone())
    });
    out
}

/// The share of steps finished (done or skipped), 0–1.
pub fn coverage(plan: &TaskPlan) -> f64 {
    if plan.steps.is_empty() {
        return 0.0;
    }
    plan.steps.iter().filter(|s| s.state != StepState::Pending).count() as f64 / plan.steps.len() as f64
}
