//! The lightweight model's contradiction classifier (docs/cognition.md §10.4): the request for one
//! pair, its strict JSON schema, and the reading of a reply into a [`Verdict`]. Pure: the
//! layer's `structured` call does the bounded repairs; a reply below
//! [`ACCEPT_CONFIDENCE`] or unreadable falls back to the rules' verdict (or none).

use super::{Class, Verdict, recommended};
use crate::llm::{ChatRequest, Message, ResponseFormat};
use serde_json::{Value, json};

pub const PROMPT: &str = include_str!("../../../prompts/memory/contradiction.md");
/// A model verdict is used only from this confidence.
pub const ACCEPT_CONFIDENCE: f64 = 0.80;
/// Conversation context shown, in characters.
pub const MAX_CONTEXT_CHARS: usize = 300;

const CLASSES: [&str; 5] = ["temporal_change", "true_contradiction", "context_dependent", "figurative", "compatible"];
const RESOLUTIONS: [&str; 4] = ["auto_supersede", "flag_response", "background_queue", "ignore"];

/// One memory as the classifier sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Side<'a> {
    pub text: &'a str,
    /// incoming | trait | fact | concept | episode
    pub kind: &'a str,
    pub age_days: f64,
    /// A trait reinforced ≥ 3 times or a concept with confidence ≥ 0.8 (never an incoming one).
    pub established: bool,
}

pub fn schema() -> Value {
    json!({
        "type": "object", "additionalProperties": false,
        "required": ["classification", "confidence", "temporal_signal", "reasoning", "surface_context", "recommended_resolution"],
        "properties": {
            "classification": {"enum": CLASSES},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "temporal_signal": {"type": "boolean"},
            "reasoning": {"type": "string", "minLength": 1, "maxLength": 300},
            "surface_context": {"type": ["string", "null"]},
            "recommended_resolution": {"enum": RESOLUTIONS},
        }
    })
}

pub fn request(incoming: &Side<'_>, stored: &Side<'_>, conversation: &str) -> ChatRequest {
    let side = |s: &Side<'_>| {
        json!({"text": crate::text::clip::clip(s.text, 500), "type": s.kind,
               "age_days": (s.age_days * 10.0).round() / 10.0, "established": s.established && s.kind != "incoming"})
    };
    let input = json!({"incoming": side(incoming), "stored": side(stored),
                       "conversation": crate::text::clip::clip(conversation, MAX_CONTEXT_CHARS)});
    let mut req = ChatRequest::new(vec![Message::system(PROMPT.trim()), Message::user(input.to_string())]);
    req.max_tokens = 200;
    req.temperature = 0.0;
    req.logprobs = false;
    req.format = ResponseFormat::JsonSchema { name: "contradiction".into(), schema: schema() };
    req
}

/// A schema-valid reply as a verdict; `None` when it is not one or not confident enough.
pub fn parse(v: &Value) -> Option<Verdict> {
    let class = match v["classification"].as_str()? {
        "temporal_change" => Class::TemporalChange,
        "true_contradiction" => Class::TrueContradiction,
        "context_dependent" => Class::ContextDependent,
        "figurative" => Class::Figurative,
        "compatible" => Class::Compatible,
        _ => return None,
    };
    let confidence = v["confidence"].as_f64().filter(|c| c.is_finite())?.clamp(0.0, 1.0);
    if confidence < ACCEPT_CONFIDENCE {
        return None;
    }
    let reasoning = crate::text::clip::clip(v["reasoning"].as_str().unwrap_or("").trim(), 300);
    let mut out = Verdict::new(class, confidence, v["temporal_signal"].as_bool().unwrap_or(false), reasoning);
    // The resolution follows the class, whatever the model recommended.
    out.recommended_resolution = recommended(class);
    if let Some(s) = v["surface_context"].as_str().filter(|s| !s.trim().is_empty()) {
        out = out.with_surface(crate::text::clip::clip(s.trim(), 120));
    }
    Some(out)
}
