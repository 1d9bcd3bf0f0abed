//! Plan decomposition by the model (docs/cognition.md §17.2): one strict-JSON call when a
//! task is first run, its answer through the gates of [`super::plan::validate`], and the
//! honest single step when the model is missing, fails or plans badly.

use super::plan::{fallback, validate};
use crate::config::Role;
use crate::llm::{ChatRequest, Llm, Message, ResponseFormat};
use crate::vocab::tasks::TaskPlan;
use serde_json::{Value, json};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

pub const PROMPT: &str = include_str!("../../../prompts/plan-decomposition.md");
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// The skills a plan may name: every one a task step can run (the registry's, so a name the
/// planner sees always runs), less those that only make sense in a conversation.
pub fn plan_skills() -> Vec<&'static str> {
    crate::cognition::act::dispatch::SKILLS.iter().map(|s| s.name).filter(|n| !NOT_FOR_STEPS.contains(n)).collect()
}

/// Skills a background step must not use: they act on the user's request in the chat.
pub const NOT_FOR_STEPS: &[&str] = &["forget", "focus", "persistent_task"];

pub fn schema() -> Value {
    json!({
        "type": "object",
        "required": ["steps", "decomposition_confidence"],
        "properties": {
            "steps": {"type": "array", "items": {
                "type": "object",
                "required": ["id", "description"],
                "properties": {
                    "id": {"type": "string"},
                    "description": {"type": "string"},
                    "depends_on": {"type": "array", "items": {"type": "string"}},
                    "tools_needed": {"type": "array", "items": {"type": "string"}}
                }
            }},
            "decomposition_confidence": {"type": "number"}
        }
    })
}

pub fn request(goal: &str) -> ChatRequest {
    let system = PROMPT.trim().replace("{{skills}}", &plan_skills().join(", "));
    let mut req = ChatRequest::new(vec![Message::system(system), Message::user(format!("Goal: {goal}"))]);
    req.max_tokens = 600;
    req.temperature = 0.2;
    req.logprobs = false;
    req.format = ResponseFormat::JsonSchema { name: "task_plan".into(), schema: schema() };
    req
}

/// The plan for `goal`: the model's when it passes every gate, else the single honest step
/// with the reason recorded in `rejected`.
pub async fn decompose(llm: Option<&Llm>, goal: &str, cancel: &CancellationToken) -> TaskPlan {
    let Some(llm) = llm else {
        return fallback(goal, "no model to plan with");
    };
    match llm.structured(Role::Primary, &request(goal), &schema(), TIMEOUT, cancel).await {
        Ok(v) => validate(&v, &plan_skills()).unwrap_or_else(|why| fallback(goal, &why)),
        Err(e) => fallback(goal, &format!("the model did not plan: {}", crate::describe(&e))),
    }
}
