//! The thought (docs/cognition.md §14.5): the lightweight model writes it as strict JSON, or,
//! on the built-in model or when the model fails, a deterministic template builds it from the
//! activated concepts and the grounding episode. The cycle report says which.

use super::actions::Kind;
use super::seed::Episode;
use crate::llm::{ChatRequest, Message, ResponseFormat};
use serde_json::{Value, json};

pub const TEMPERATURE: f32 = 0.8;
pub const MIN_CHARS: usize = 5;
const MAX_CHARS: usize = 400;

/// Who wrote a thought.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Author {
    Model,
    Template,
}

impl Author {
    pub const fn name(self) -> &'static str {
        match self {
            Author::Model => "model",
            Author::Template => "template",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Thought {
    pub kind: Kind,
    pub content: String,
    pub author: Author,
}

/// The grounding episode: the first of `episodes` (newest first) whose gist names one of the
/// top three concepts, else the newest episode any of them was consolidated from.
pub fn ground<'a>(episodes: &'a [Episode], top: &[(i64, String, Vec<i64>)]) -> Option<&'a Episode> {
    let names: Vec<String> = top.iter().take(3).map(|(_, n, _)| crate::text::normalize(n)).collect();
    episodes
        .iter()
        .find(|e| {
            let g = crate::text::normalize(&e.gist);
            names.iter().any(|n| !n.is_empty() && g.contains(n.as_str()))
        })
        .or_else(|| episodes.iter().find(|e| top.iter().take(3).any(|(_, _, src)| src.contains(&e.id))))
}

pub fn schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["type", "content"],
        "properties": {
            "type": {"enum": ["reflection", "question", "hypothesis", "insight"]},
            "content": {"type": "string", "minLength": MIN_CHARS}
        }
    })
}

pub fn request(seed: &str, concepts: &[String], grounding: Option<&str>) -> ChatRequest {
    let system = "You are the idle mind of a personal assistant. From the concepts that came to mind and \
                  one past moment, write one short thought: a reflection, a question to ask the user \
                  later, a hypothesis, or an insight. Reply with only a JSON object \
                  {\"type\": \"reflection\"|\"question\"|\"hypothesis\"|\"insight\", \"content\": \"...\"}.";
    let input = json!({"seed": seed, "concepts": concepts, "moment": grounding});
    let mut req = ChatRequest::new(vec![Message::system(system), Message::user(input.to_string())]);
    req.max_tokens = 200;
    req.temperature = TEMPERATURE;
    req.logprobs = false;
    req.format = ResponseFormat::JsonSchema { name: "drift_thought".into(), schema: schema() };
    req
}

/// Strip reasoning tags a model may wrap around its answer.
fn strip_reasoning(s: &str) -> &str {
    match s.rfind("</think>") {
        Some(i) => &s[i + "</think>".len()..],
        None => s,
    }
}

/// A schema-valid reply as a thought; `None` when it is not one.
pub fn parse(v: &Value) -> Option<Thought> {
    let kind = Kind::parse(v.get("type")?.as_str()?)?;
    let content = strip_reasoning(v.get("content")?.as_str()?).trim();
    if content.chars().count() < MIN_CHARS {
        return None;
    }
    Some(Thought { kind, content: crate::text::clip::clip(content, MAX_CHARS), author: Author::Model })
}

/// The deterministic thought: a question when there is a grounding moment to ask about, a
/// hypothesis when the link is strong, otherwise a reflection.
pub fn template(seed: &str, concepts: &[String], energy: f64, grounding: Option<&str>) -> Thought {
    let others = concepts.iter().take(2).cloned().collect::<Vec<_>>().join(" and ");
    let (kind, content) = match (grounding, others.is_empty()) {
        (_, true) => (Kind::Reflection, format!("{seed} has been on my mind.")),
        (Some(g), false) => {
            let g = crate::text::clip::clip(g.trim().trim_end_matches('.'), 120);
            (Kind::Question, format!("Thinking about {seed}, {others} came to mind (from \"{g}\"). How is that going?"))
        }
        (None, false) if energy >= 0.6 => {
            (Kind::Hypothesis, format!("{seed} and {others} may be closely linked for you."))
        }
        (None, false) => (Kind::Reflection, format!("{seed} brings {others} to mind.")),
    };
    Thought { kind, content, author: Author::Template }
}
