//! The contract every innate skill implements: a synchronous, non-LLM operation over the
//! database, given its parameters and the turn's context. The dispatcher runs it on the
//! database thread with a per-action timeout, so a skill never blocks a tokio worker.

use crate::store::StoreError;
use chrono::{DateTime, Local};
use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What a skill knows about the turn that called it.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillContext {
    pub thread_id: String,
    pub exchange_id: String,
    pub topic: String,
    /// The user's local wall clock (natural times like "tomorrow at 9am" resolve against it).
    pub now: DateTime<Local>,
    /// The engine's concept graph between turns, so `associate` does not read every concept
    /// and edge per call; the default loads it each time.
    pub graph: crate::memory::graph::GraphHandle,
}

impl SkillContext {
    /// A context that loads the concept graph on each call (no shared cache): what a one-off
    /// caller such as the task worker or a test wants. The engine sets `graph` to its cache.
    pub fn new(
        thread_id: impl Into<String>,
        exchange_id: impl Into<String>,
        topic: impl Into<String>,
        now: DateTime<Local>,
    ) -> SkillContext {
        SkillContext {
            thread_id: thread_id.into(),
            exchange_id: exchange_id.into(),
            topic: topic.into(),
            now,
            graph: Default::default(),
        }
    }
}

/// A skill's result: a short summary for the planner, the reply and the ACT pane, and the
/// structured data for `ask --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillOutput {
    pub summary: String,
    pub data: Value,
    /// Set when the request named something that fits several stored things: the skill
    /// changed nothing, `summary` asks which, and the turn is delivered as CLARIFY.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
}

impl SkillOutput {
    pub fn new(summary: impl Into<String>, data: Value) -> SkillOutput {
        SkillOutput { summary: summary.into(), data, choices: Vec::new() }
    }

    /// Nothing done; ask the user to pick one of `choices`.
    pub fn clarify(question: impl Into<String>, choices: Vec<String>, mut data: Value) -> SkillOutput {
        if let Value::Object(m) = &mut data {
            m.insert("choices".into(), Value::from(choices.clone()));
        }
        SkillOutput { summary: question.into(), data, choices }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SkillError {
    /// A parameter is missing or malformed; the message says which and how.
    #[error("parameter `{name}`: {problem}")]
    Param { name: &'static str, problem: String },
    /// The thing the action refers to does not exist ("no list named groceries").
    #[error("{0}")]
    NotFound(String),
    #[error("the database failed")]
    Store(#[from] StoreError),
}

impl From<rusqlite::Error> for SkillError {
    fn from(e: rusqlite::Error) -> SkillError {
        SkillError::Store(StoreError::Sqlite(e))
    }
}

/// The signature of every skill.
pub type SkillFn = fn(&Connection, &Map<String, Value>, &SkillContext) -> Result<SkillOutput, SkillError>;

/// A required string parameter.
pub fn str_param<'a>(p: &'a Map<String, Value>, name: &'static str) -> Result<&'a str, SkillError> {
    p.get(name)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| SkillError::Param { name, problem: "missing or not a non-empty string".into() })
}

/// An optional string parameter (absent, null or blank → `None`).
pub fn opt_str_param<'a>(p: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    p.get(name).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty())
}

/// A list of strings: a JSON array of strings, or one string.
pub fn strings_param(p: &Map<String, Value>, name: &'static str) -> Vec<String> {
    match p.get(name) {
        Some(Value::Array(a)) => {
            a.iter().filter_map(Value::as_str).map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect()
        }
        Some(Value::String(s)) if !s.trim().is_empty() => vec![s.trim().to_string()],
        _ => Vec::new(),
    }
}
