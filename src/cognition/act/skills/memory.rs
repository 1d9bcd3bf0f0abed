//! Two of the three primitives every ACT prompt gets: `memorize` and `recall` (`introspect` is
//! in `introspect.rs`).
//!
//! `recall` is the hybrid recall of [`crate::memory::recall`] across every layer, with
//! provenance (which layer, which row, when, which sources matched and why it ranked).

use crate::cognition::act::skill::{SkillContext, SkillError, SkillOutput, opt_str_param, str_param};
use crate::memory::recall::{RecallRequest, query_terms, recall_with};
use crate::store::{FactOrigin, FactsRepo, FokRepo, GIST_TTL_S, GistsRepo, NewGist, TurnRepo};
use crate::text::{is_content_word, normalize, words};
use rusqlite::Connection;
use serde_json::{Map, Value, json};

/// Facts live a day (docs/cognition.md §9.1).
pub const FACT_TTL_S: i64 = 86_400;
/// FOK lives five minutes.
pub const FOK_TTL_S: i64 = 300;

/// `memorize`: `facts[{key, value, confidence}]` into the topic's facts (24 h) — and, with
/// `durable: true` (an explicit "remember that …"), also as an explicit user trait that
/// outlives the topic; `gists[{content, type, confidence}]` into the topic's gists.
pub fn memorize(c: &Connection, p: &Map<String, Value>, ctx: &SkillContext) -> Result<SkillOutput, SkillError> {
    let now = ctx.now.timestamp();
    let durable = p.get("durable").and_then(Value::as_bool).unwrap_or(false);
    let mut stored = Vec::new();
    for f in p.get("facts").and_then(Value::as_array).into_iter().flatten() {
        let Some(obj) = f.as_object() else { continue };
        let Ok(value) = str_param(obj, "value") else { continue };
        let key =
            opt_str_param(obj, "key").map_or_else(|| slug(value), |k| if k == "note" { slug(value) } else { k.into() });
        let confidence = obj.get("confidence").and_then(Value::as_f64).unwrap_or(0.9).clamp(0.0, 1.0);
        let (id, changed) =
            FactsRepo(c).upsert(&ctx.topic, &key, value, confidence, now, now + FACT_TTL_S, FactOrigin::User)?;
        // Skills run on the database thread, with no embedder: a changed value drops the vector
        // of the old one rather than keep it under the new text.
        if changed {
            crate::store::VectorRepo(c).delete(crate::store::VecTable::Facts, id)?;
        }
        if durable {
            TurnRepo(c).set_explicit_trait(&format!("note:{key}"), value, "note")?;
        }
        stored.push(json!({"layer": "fact", "key": key, "value": value, "durable": durable}));
    }
    for g in p.get("gists").and_then(Value::as_array).into_iter().flatten() {
        let Some(obj) = g.as_object() else { continue };
        let Ok(content) = str_param(obj, "content") else { continue };
        let kind = opt_str_param(obj, "type").unwrap_or("fact");
        let confidence = obj.get("confidence").and_then(Value::as_f64).unwrap_or(7.0).clamp(0.0, 10.0);
        let gist = NewGist { topic: &ctx.topic, thread_id: Some(&ctx.thread_id), gist_type: kind, content, confidence };
        GistsRepo(c).insert(&gist, now, now + GIST_TTL_S)?;
        stored.push(json!({"layer": "gist", "type": kind, "content": content}));
    }
    if stored.is_empty() {
        return Err(SkillError::Param { name: "facts", problem: "nothing to store: give facts or gists".into() });
    }
    let what: Vec<String> =
        stored.iter().map(|s| s["value"].as_str().or(s["content"].as_str()).unwrap_or("").to_string()).collect();
    Ok(SkillOutput::new(format!("Remembered: {}.", what.join("; ")), json!({"stored": stored})))
}

/// A short key from a value: its first three content words.
fn slug(value: &str) -> String {
    let lower = normalize(value);
    let ws: Vec<&str> = words(&lower).into_iter().filter(|w| is_content_word(w)).take(3).collect();
    if ws.is_empty() { "note".into() } else { ws.join("_") }
}

/// `recall`: `query`, optional `layers` and `limit` (default 3), through
/// [`crate::memory::recall`]'s hybrid recall (full text and keywords here: skills run on the
/// database thread, with no embedding). Sets the topic's FOK to the number of partial matches
/// (confidence < 0.5), as the seed's FOK signal expects.
pub fn recall(c: &Connection, p: &Map<String, Value>, ctx: &SkillContext) -> Result<SkillOutput, SkillError> {
    let query = str_param(p, "query")?;
    let limit = p.get("limit").and_then(Value::as_u64).unwrap_or(3).clamp(1, 20) as usize;
    let layers: Vec<String> = match p.get("layers").and_then(Value::as_array) {
        Some(a) => a.iter().filter_map(Value::as_str).map(str::to_string).collect(),
        None => Vec::new(),
    };
    if query_terms(query).is_empty() {
        return Err(SkillError::Param { name: "query", problem: "has no content words to search for".into() });
    }
    let now = ctx.now.timestamp();
    let hits = recall_with(c, &RecallRequest { query, embedding: None, layers: &layers, limit, now })?;
    let partial = hits.iter().filter(|h| h.confidence < 0.5).count().min(5) as i64;
    FokRepo(c).set(&ctx.topic, partial, now + FOK_TTL_S)?;
    let summary = if hits.is_empty() {
        format!("Nothing remembered about \"{query}\".")
    } else {
        hits.iter().map(|h| format!("[{}] {}", h.layer, h.text)).collect::<Vec<_>>().join("; ")
    };
    Ok(SkillOutput::new(summary, json!({"query": query, "hits": hits, "partial_matches": partial})))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Local;

    fn ctx() -> SkillContext {
        SkillContext::new("t", "x", "family", Local::now())
    }

    fn call(f: crate::cognition::act::skill::SkillFn, c: &Connection, v: Value) -> Result<SkillOutput, SkillError> {
        f(c, v.as_object().unwrap(), &ctx())
    }

    #[test]
    fn memorize_then_recall_with_provenance() {
        let c = crate::store::open_in_memory().unwrap();
        call(memorize, &c, json!({"facts": [{"key": "note", "value": "my sister lives in Porto"}], "durable": true}))
            .unwrap();
        let out = call(recall, &c, json!({"query": "where does my sister live"})).unwrap();
        let hits = out.data["hits"].as_array().unwrap();
        assert_eq!(hits[0]["layer"], "trait", "the durable copy ranks first: {hits:?}");
        assert!(hits[0]["text"].as_str().unwrap().contains("Porto"));
        assert!(hits.iter().any(|h| h["layer"] == "fact"));
        assert!(hits[0]["why"].as_str().unwrap().contains("sister"));
        let out = call(recall, &c, json!({"query": "quantum chromodynamics"})).unwrap();
        assert!(out.summary.starts_with("Nothing remembered"));
    }

    #[test]
    fn recall_sets_fok_and_filters_layers() {
        let c = crate::store::open_in_memory().unwrap();
        call(memorize, &c, json!({"gists": [{"content": "planning a trip to Lisbon in May", "type": "intent"}]}))
            .unwrap();
        let out = call(recall, &c, json!({"query": "Lisbon hotels", "layers": ["gists"]})).unwrap();
        assert_eq!(out.data["hits"].as_array().unwrap().len(), 1);
        assert_eq!(out.data["partial_matches"], 0, "1 of 2 words = 0.5 is not partial");
        let fok: i64 = crate::store::fixtures::Fixture(&c).value("fok", "score", "topic = 'family'", []);
        assert_eq!(fok, 0);
        assert!(call(recall, &c, json!({"query": "the"})).is_err());
        assert!(call(memorize, &c, json!({})).is_err());
    }
}
