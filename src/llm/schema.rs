//! Validation of model JSON against the subset of JSON Schema our contracts use:
//! `type`, `properties`, `required`, `additionalProperties: false`, `enum`, `items`,
//! `minItems`/`maxItems`, `minimum`/`maximum`, `minLength`. Small on purpose: every
//! structured call in the seeds has a flat, known shape, and a precise error message
//! ("$.mode: \"RUN\" is not one of ...") is what the repair prompt feeds back.

use serde_json::Value;

/// Check `v` against `schema`; the error names the JSON path and the problem.
pub fn validate(v: &Value, schema: &Value) -> Result<(), String> {
    check(v, schema, "$")
}

fn type_ok(v: &Value, t: &str) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        _ => true,
    }
}

fn check(v: &Value, schema: &Value, path: &str) -> Result<(), String> {
    let Some(s) = schema.as_object() else { return Ok(()) };
    match s.get("type") {
        Some(Value::String(t)) if !type_ok(v, t) => return Err(format!("{path}: expected {t}, got {}", brief(v))),
        Some(Value::Array(ts)) if !ts.iter().filter_map(Value::as_str).any(|t| type_ok(v, t)) => {
            return Err(format!("{path}: {} has none of the allowed types", brief(v)));
        }
        _ => {}
    }
    if let Some(Value::Array(allowed)) = s.get("enum")
        && !allowed.contains(v)
    {
        let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
        return Err(format!("{path}: {} is not one of {}", brief(v), list.join(", ")));
    }
    if let Some(n) = v.as_f64() {
        if let Some(min) = s.get("minimum").and_then(Value::as_f64)
            && n < min
        {
            return Err(format!("{path}: {n} is below the minimum {min}"));
        }
        if let Some(max) = s.get("maximum").and_then(Value::as_f64)
            && n > max
        {
            return Err(format!("{path}: {n} is above the maximum {max}"));
        }
    }
    if let (Some(text), Some(min)) = (v.as_str(), s.get("minLength").and_then(Value::as_u64))
        && (text.chars().count() as u64) < min
    {
        return Err(format!("{path}: shorter than {min} characters"));
    }
    if let Some(obj) = v.as_object() {
        let props = s.get("properties").and_then(Value::as_object);
        if let Some(Value::Array(req)) = s.get("required") {
            for key in req.iter().filter_map(Value::as_str) {
                if !obj.contains_key(key) {
                    return Err(format!("{path}: missing required field `{key}`"));
                }
            }
        }
        for (key, value) in obj {
            match props.and_then(|p| p.get(key)) {
                Some(sub) => check(value, sub, &format!("{path}.{key}"))?,
                None if s.get("additionalProperties") == Some(&Value::Bool(false)) => {
                    return Err(format!("{path}: unexpected field `{key}`"));
                }
                None => {}
            }
        }
    }
    if let Some(items) = v.as_array() {
        let len = items.len() as u64;
        if let Some(min) = s.get("minItems").and_then(Value::as_u64)
            && len < min
        {
            return Err(format!("{path}: needs at least {min} items, has {len}"));
        }
        if let Some(max) = s.get("maxItems").and_then(Value::as_u64)
            && len > max
        {
            return Err(format!("{path}: allows at most {max} items, has {len}"));
        }
        if let Some(item_schema) = s.get("items") {
            for (i, item) in items.iter().enumerate() {
                check(item, item_schema, &format!("{path}[{i}]"))?;
            }
        }
    }
    Ok(())
}

fn brief(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 { format!("{}…", s.chars().take(40).collect::<String>()) } else { s }
}

/// Pull the JSON object out of a model reply: tolerate code fences and chatter
/// around the outermost braces (small models add both).
pub fn extract_json(text: &str) -> Result<Value, String> {
    let start = text.find('{').ok_or("no JSON object in the reply")?;
    let end = text.rfind('}').filter(|e| *e > start).ok_or("the JSON object is not closed")?;
    serde_json::from_str(&text[start..=end]).map_err(|e| format!("not valid JSON: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn triage_schema() -> Value {
        json!({
            "type": "object",
            "required": ["mode", "skills", "confidence"],
            "additionalProperties": false,
            "properties": {
                "mode": {"type": "string", "enum": ["RESPOND", "CLARIFY", "ACT"]},
                "skills": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
                "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                "note": {"type": ["string", "null"]}
            }
        })
    }

    #[test]
    fn accepts_a_valid_object() {
        let v = json!({"mode": "ACT", "skills": ["list"], "confidence": 0.8, "note": null});
        validate(&v, &triage_schema()).unwrap();
    }

    #[test]
    fn names_the_path_of_each_problem() {
        let s = triage_schema();
        let cases = [
            (json!({"skills": [], "confidence": 1}), "$: missing required field `mode`"),
            (json!({"mode": "RUN", "skills": [], "confidence": 1}), "$.mode: \"RUN\" is not one of"),
            (json!({"mode": "ACT", "skills": [1], "confidence": 1}), "$.skills[0]: expected string"),
            (json!({"mode": "ACT", "skills": ["a", "b", "c", "d"], "confidence": 1}), "at most 3 items"),
            (json!({"mode": "ACT", "skills": [], "confidence": 1.5}), "above the maximum 1"),
            (json!({"mode": "ACT", "skills": [], "confidence": 1, "x": 1}), "unexpected field `x`"),
            (json!({"mode": "ACT", "skills": [], "confidence": 1, "note": 3}), "$.note"),
            (json!([1]), "$: expected object"),
        ];
        for (v, want) in cases {
            let err = validate(&v, &s).unwrap_err();
            assert!(err.contains(want), "{err} should contain {want}");
        }
    }

    #[test]
    fn extracts_json_from_fenced_and_chatty_replies() {
        assert_eq!(extract_json("```json\n{\"a\": 1}\n```").unwrap(), json!({"a": 1}));
        assert_eq!(extract_json("Sure! {\"a\": {\"b\": 2}} Hope that helps.").unwrap(), json!({"a": {"b": 2}}));
        assert!(extract_json("no json here").is_err());
        assert!(extract_json("{\"a\": ").is_err());
        assert!(extract_json("} {").is_err());
    }
}
