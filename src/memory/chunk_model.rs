//! The model path of the chunker: the request to the lightweight model, its strict JSON schema,
//! and the reading of a validated reply into an [`Extraction`]. Pure: no I/O, so tests check
//! exactly what is sent and what a reply becomes.
//!
//! The schema already bounds every number and enum; reading still clips lengths, folds keys to
//! snake_case and drops empty entries, because a schema-valid reply from a small model can still
//! carry a key like "Favorite Food!" or a blank value.

use super::extract::{Extraction, MAX_GIST_CHARS};
use super::patterns::snake;
use super::shortterm::{FACTS_PER_EXCHANGE, FactDraft, GIST_TYPES, GistDraft};
use super::style::{DIMENSIONS, Style};
use super::traits::{CATEGORIES, Source, TraitObservation};
use crate::llm::{ChatRequest, Message, ResponseFormat};
use serde_json::{Map, Value, json};

pub const PROMPT: &str = include_str!("../../prompts/memory/chunker.md");
/// The exchange is shown up to this many characters per side.
pub const MAX_INPUT_CHARS: usize = 1500;
/// Values are kept up to this many characters.
const MAX_VALUE_CHARS: usize = 200;

/// The reply's JSON schema (`additionalProperties: false` throughout).
pub fn schema() -> Value {
    let obj = |props: Value, required: &[&str]| json!({"type": "object", "additionalProperties": false, "required": required, "properties": props});
    let text = json!({"type": "string", "minLength": 1});
    let unit = json!({"type": "number", "minimum": 0, "maximum": 1});
    let gist = obj(
        json!({"type": {"enum": GIST_TYPES}, "content": text, "confidence": {"type": "number", "minimum": 0, "maximum": 10}}),
        &["type", "content", "confidence"],
    );
    let fact = obj(json!({"key": text, "value": text, "confidence": unit}), &["key", "value", "confidence"]);
    let trait_ = obj(
        json!({"key": text, "value": text, "category": {"enum": CATEGORIES}, "source": {"enum": ["explicit", "inferred"]},
               "is_literal": {"type": "boolean"}, "confidence": unit}),
        &["key", "value", "category", "source", "is_literal", "confidence"],
    );
    let dims: Map<String, Value> =
        DIMENSIONS.iter().map(|d| (d.to_string(), json!({"type": "number", "minimum": 1, "maximum": 10}))).collect();
    let style = obj(Value::Object(dims), &DIMENSIONS);
    obj(
        json!({
            "gists": {"type": "array", "maxItems": 12, "items": gist},
            "facts": {"type": "array", "maxItems": FACTS_PER_EXCHANGE, "items": fact},
            "traits": {"type": "array", "maxItems": 12, "items": trait_},
            "style": style,
        }),
        &["gists", "facts", "traits", "style"],
    )
}

/// Model output and the exchange are cut after trimming, so padding never spends the budget.
fn clip(s: &str, n: usize) -> String {
    crate::text::clip::clip(s.trim(), n)
}

/// The extraction request: the prompt, then the exchange as JSON.
pub fn request(user_text: &str, response: &str) -> ChatRequest {
    let input = json!({"user": clip(user_text, MAX_INPUT_CHARS), "assistant": clip(response, MAX_INPUT_CHARS)});
    let mut req = ChatRequest::new(vec![Message::system(PROMPT.trim()), Message::user(input.to_string())]);
    req.max_tokens = 700;
    req.temperature = 0.1;
    req.logprobs = false;
    req.format = ResponseFormat::JsonSchema { name: "memory_chunk".into(), schema: schema() };
    req
}

fn key_of(v: &Value) -> String {
    snake(&[v.as_str().unwrap_or("")])
}

/// A schema-valid reply as an [`Extraction`]; entries that clean up to nothing are dropped.
pub fn parse(v: &Value) -> Extraction {
    let items = |name: &str| v[name].as_array().cloned().unwrap_or_default();
    let gists = items("gists")
        .iter()
        .filter_map(|g| {
            let content = clip(g["content"].as_str()?, MAX_GIST_CHARS);
            let kind = g["type"].as_str().filter(|k| GIST_TYPES.contains(k))?;
            let confidence = g["confidence"].as_f64()?.clamp(0.0, 10.0);
            (!content.is_empty()).then(|| GistDraft { gist_type: kind.into(), content, confidence })
        })
        .collect();
    let facts = items("facts")
        .iter()
        .filter_map(|f| {
            let (key, value) = (key_of(&f["key"]), clip(f["value"].as_str()?, MAX_VALUE_CHARS));
            let confidence = f["confidence"].as_f64()?.clamp(0.0, 1.0);
            (!key.is_empty() && !value.is_empty()).then_some(FactDraft { key, value, confidence })
        })
        .take(FACTS_PER_EXCHANGE)
        .collect();
    let traits = items("traits")
        .iter()
        .filter_map(|t| {
            let (key, value) = (key_of(&t["key"]), clip(t["value"].as_str()?, MAX_VALUE_CHARS));
            let category = t["category"].as_str().filter(|c| CATEGORIES.contains(c)).unwrap_or("general");
            let source = if t["source"] == "explicit" { Source::Explicit } else { Source::Inferred };
            let confidence = t["confidence"].as_f64()?.clamp(0.0, 1.0);
            let is_literal = t["is_literal"].as_bool().unwrap_or(true);
            (!key.is_empty() && !value.is_empty()).then(|| TraitObservation {
                key,
                value,
                category: category.into(),
                source,
                is_literal,
                confidence,
            })
        })
        .collect();
    Extraction { gists, facts, traits, style: Style::from_json(&v["style"]) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::schema::validate;

    fn reply() -> Value {
        json!({
            "gists": [{"type": "decision", "content": "The user chose the Berlin job.", "confidence": 8}],
            "facts": [{"key": "Start Date!", "value": " June 1 ", "confidence": 0.9}],
            "traits": [{"key": "occupation", "value": "engineer", "category": "core", "source": "explicit",
                        "is_literal": true, "confidence": 0.9}],
            "style": {"verbosity": 3, "directness": 8, "formality": 4, "abstraction_level": 2, "emotional_valence": 6,
                      "certainty_level": 9, "challenge_appetite": 5, "depth_preference": 4, "pacing": 3},
        })
    }

    #[test]
    fn the_schema_accepts_a_good_reply_and_names_what_is_wrong_with_a_bad_one() {
        assert_eq!(validate(&reply(), &schema()), Ok(()));
        let mut bad = reply();
        bad["traits"][0]["category"] = json!("hobby");
        assert!(validate(&bad, &schema()).unwrap_err().contains("$.traits[0].category"));
        let mut bad = reply();
        bad["style"].as_object_mut().unwrap().remove("pacing");
        assert!(validate(&bad, &schema()).unwrap_err().contains("pacing"));
        let mut bad = reply();
        bad["facts"] =
            json!((0..6).map(|i| json!({"key": format!("k{i}"), "value": "v", "confidence": 1})).collect::<Vec<_>>());
        assert!(validate(&bad, &schema()).is_err(), "at most five facts");
    }

    #[test]
    fn parse_cleans_keys_and_values() {
        let e = parse(&reply());
        assert_eq!(e.gists[0].gist_type, "decision");
        assert_eq!(e.facts, [FactDraft { key: "start_date".into(), value: "June 1".into(), confidence: 0.9 }]);
        assert_eq!((e.traits[0].key.as_str(), e.traits[0].source), ("occupation", Source::Explicit));
        assert_eq!(e.style.unwrap().get("certainty_level"), Some(9.0));
        let mut blank = reply();
        blank["facts"][0]["key"] = json!("!!!");
        assert!(parse(&blank).facts.is_empty());
    }

    #[test]
    fn the_request_is_strict_json_with_the_exchange() {
        let req = request("I got the Berlin job", "Congratulations!");
        assert!(matches!(&req.format, ResponseFormat::JsonSchema { name, .. } if name == "memory_chunk"));
        let input: Value = serde_json::from_str(&req.messages[1].content).unwrap();
        assert_eq!(input, json!({"user": "I got the Berlin job", "assistant": "Congratulations!"}));
        assert!(req.messages[0].content.starts_with("You read one exchange"));
    }
}
