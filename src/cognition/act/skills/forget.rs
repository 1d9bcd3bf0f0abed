//! The `forget` skill: the user asked to forget something they said. The request is resolved
//! against their own chat lines (every thread) by the pure resolver in `memory::forget`; a
//! clear-cut match is handed to the engine, which purges it once the turn is committed (so
//! the turn's own audit rows, written at commit, are purged too); an unclear one asks which,
//! as CLARIFY, and forgets nothing. The summary never repeats what is forgotten.

use crate::cognition::act::skill::{SkillContext, SkillError, SkillOutput, opt_str_param};
use crate::memory::forget::{Line, Resolution, Target, resolve};
use rusqlite::Connection;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

/// How many of the user's newest lines a request is resolved against.
pub const CANDIDATE_LINES: usize = 2000;

/// Plans resolved by the skill, waiting for their turn's commit (keyed by exchange id). In
/// memory only: a plan holds the very strings being forgotten, so it must not be written
/// anywhere on its way to the purge.
static PENDING: LazyLock<Mutex<HashMap<String, crate::memory::forget::Plan>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// The plan the `forget` skill resolved during `exchange_id`'s turn, if any (taken once).
pub fn take_pending(exchange_id: &str) -> Option<crate::memory::forget::Plan> {
    PENDING.lock().ok().and_then(|mut m| m.remove(exchange_id))
}

pub fn run(c: &Connection, p: &Map<String, Value>, ctx: &SkillContext) -> Result<SkillOutput, SkillError> {
    let target = match (opt_str_param(p, "target"), opt_str_param(p, "about")) {
        (_, Some(about)) => {
            Target::About { subject: about.to_string(), all: p.get("all").and_then(Value::as_bool).unwrap_or(false) }
        }
        (Some(t), None) if t.eq_ignore_ascii_case("last") => Target::Last,
        _ => return Err(SkillError::Param { name: "about", problem: "say what to forget, or target \"last\"".into() }),
    };
    let lines: Vec<Line> = crate::store::user_lines(c, CANDIDATE_LINES)?
        .into_iter()
        // Earlier forget requests are not things the user told: "forget about my sister" is
        // no statement about the sister.
        .filter(|(x, _, text)| *x != ctx.exchange_id && !crate::memory::forget::is_forget_request(text))
        .map(|(exchange_id, thread_id, text)| Line { exchange_id, thread_id, text })
        .collect();
    let resolution = resolve(&target, &lines, &ctx.thread_id);
    // Whatever comes of it, a forget request itself is never learned from: the engine blocks
    // its exchange once the turn is committed (an empty plan does only that).
    if !matches!(resolution, Resolution::Forget(_))
        && let Ok(mut m) = PENDING.lock()
    {
        m.insert(ctx.exchange_id.clone(), crate::memory::forget::Plan::default());
    }
    match resolution {
        Resolution::Forget(plan) => {
            let n = plan.exchanges.len();
            if let Ok(mut m) = PENDING.lock() {
                m.insert(ctx.exchange_id.clone(), plan);
            }
            let what = if n == 1 { "1 message".to_string() } else { format!("{n} messages") };
            Ok(SkillOutput::new(
                format!(
                    "Forgotten: {what} and everything I kept from {}. It is gone from my memory.",
                    if n == 1 { "it" } else { "them" }
                ),
                json!({"forgotten_messages": n}),
            ))
        }
        Resolution::Clarify(choices) => {
            let question = format!(
                "I found more than one thing that could be. Which should I forget: {}? (Say \"forget all of it\" for every one.)",
                choices.iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(" or ")
            );
            Ok(SkillOutput::clarify(question, choices, json!({"forgotten_messages": 0})))
        }
        Resolution::Nothing => Ok(SkillOutput::new(
            "I couldn't find anything you told me about that, so there is nothing to forget.",
            json!({"forgotten_messages": 0}),
        )),
    }
}
