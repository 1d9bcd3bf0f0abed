//! `introspect` (docs/cognition.md §7.6): what the assistant can truthfully say about itself,
//! from stored data only: warmth and its inputs, the feeling-of-knowing and partial matches,
//! the recall failure rate, recent modes with the router's reasons, skill use, the topic's
//! world state, the self-model, onboarding, and what it did on its own. `about` narrows the
//! summary to "why did you answer like that?" (`last_answer`) or "what have you been doing?"
//! (`activity`); the data always carries everything.

use crate::cognition::act::skill::{SkillContext, SkillError, SkillOutput, opt_str_param};
use crate::store::{CortexIterationsRepo, RemindersRepo, RoutingRecord, RoutingRepo, TurnRepo};
use rusqlite::Connection;
use serde_json::{Map, Value, json};

/// "What have you been doing?" looks back this far.
pub const ACTIVITY_WINDOW_S: i64 = 86_400;
pub const ACTIVITY_LIMIT: usize = 10;
/// Routing decisions shown.
pub const RECENT_DECISIONS: usize = 5;

pub fn introspect(c: &Connection, p: &Map<String, Value>, ctx: &SkillContext) -> Result<SkillOutput, SkillError> {
    let now = ctx.now.timestamp();
    let repo = TurnRepo(c);
    let wm = repo.working_memory(&ctx.thread_id, now)?.len();
    let topic = repo.topic_context(&ctx.topic, now)?;
    let warmth = crate::memory::warmth::warmth(wm, topic.real_gist_count(), !topic.world_state.is_empty());
    // This turn's own decision is not committed yet: the first row is the previous answer.
    let decisions = RoutingRepo(c).recent(RECENT_DECISIONS, None)?;
    let routing: Vec<Value> = decisions.iter().map(decision_json).collect();
    let skills: Vec<Value> = CortexIterationsRepo(c)
        .skill_use(10)?
        .into_iter()
        .map(|(skill, uses)| json!({"skill": skill, "uses": uses}))
        .collect();
    let recalls = crate::store::recall_outcomes(c)?;
    let pending = RemindersRepo(c).pending_count()?;
    // The previous answer's regulator verdict: a break that stopped it is a self-model item.
    let last_break = decisions
        .first()
        .and_then(|d| d.regulator.clone())
        .and_then(|v| serde_json::from_value::<crate::vocab::regulator::RegulatorReport>(v).ok())
        .and_then(|r| r.break_line().map(str::to_string));
    let self_items = crate::cognition::self_model::assess(
        &crate::store::self_readings(c, now)?,
        last_break.as_deref(),
        crate::cognition::act::plan::ActLimits::default().fatigue_budget,
    );
    let constraint = crate::cognition::self_model::self_constraint(&self_items);
    let activity = crate::store::recent_activity(c, now - ACTIVITY_WINDOW_S, ACTIVITY_LIMIT)?;
    let spark = crate::cognition::pipeline::phases::spark_state(c)?;

    let about = opt_str_param(p, "about").unwrap_or("state").to_ascii_lowercase();
    let summary = match about.as_str() {
        "last_answer" | "why" => match decisions.first() {
            Some(d) => explain(d),
            None => "I have not answered anything yet, so there is no decision to explain.".to_string(),
        },
        "activity" | "doing" => {
            if activity.is_empty() {
                "In the last day I have done nothing on my own: no reminders fired, no idle thoughts, no \
                 memories written or lapsed."
                    .to_string()
            } else {
                let lines: Vec<String> = activity.iter().map(|a| format!("{} ({})", a.what, when(a.at, now))).collect();
                format!("In the last day, on my own: {}.", lines.join("; "))
            }
        }
        _ => {
            let mut s = format!(
                "Warmth {warmth:.2} (working memory {wm}/4, {} gists, {} facts, world state {}); FOK {} from partial \
                 matches; recall failure rate {}; last modes: {}; {pending} pending reminder(s).",
                topic.real_gist_count(),
                topic.facts.len(),
                if topic.world_state.is_empty() { "empty".to_string() } else { world_line(&topic.world_state) },
                topic.fok,
                recalls.failure_rate().map_or("n/a (no recalls yet)".to_string(), |r| format!(
                    "{:.0}% of {}",
                    r * 100.0,
                    recalls.recalls
                )),
                decisions.iter().map(|d| d.selected_mode.as_str()).collect::<Vec<_>>().join(", "),
            );
            if !self_items.is_empty() {
                let notes: Vec<String> =
                    self_items.iter().map(|i| format!("{} ({:.1})", i.detail, i.severity)).collect();
                s.push_str(&format!(" About myself: {}.", notes.join("; ")));
            }
            s
        }
    };
    Ok(SkillOutput::new(
        summary,
        json!({
            "warmth": warmth, "working_memory": wm, "gists": topic.real_gist_count(), "facts": topic.facts.len(),
            "world_state": topic.world_state.iter().map(|(k, v)| json!({"slot": k, "value": v})).collect::<Vec<_>>(),
            "fok": topic.fok, "recall": {
                "recalls": recalls.recalls, "failed": recalls.failed, "partial_matches": recalls.partial_matches,
                "failure_rate": recalls.failure_rate(),
            },
            "recent_routing": routing, "skill_use": skills, "pending_reminders": pending,
            "self_model": self_items, "self_constraint": constraint, "onboarding": spark,
            "recent_activity": activity,
        }),
    ))
}

fn decision_json(d: &RoutingRecord) -> Value {
    json!({
        "mode": d.selected_mode, "why": d.reasoning.clone().unwrap_or_default(), "topic": d.topic,
        "confidence": d.router_confidence, "margin": d.margin, "scores": d.scores,
        "tiebreaker_used": d.tiebreaker_used, "fallback": d.fallback, "at": d.created_at,
    })
}

/// The router's own account of a decision, with the numbers behind it.
fn explain(d: &RoutingRecord) -> String {
    let mut scores: Vec<(String, f64)> = d
        .scores
        .as_object()
        .map(|m| m.iter().filter_map(|(k, v)| Some((k.clone(), v.as_f64()?))).collect())
        .unwrap_or_default();
    scores.sort_by(|a, b| b.1.total_cmp(&a.1));
    let top: Vec<String> = scores.iter().take(2).map(|(m, s)| format!("{m} {s:.2}")).collect();
    let sig = |k: &str| d.signal_snapshot.get(k).and_then(Value::as_f64);
    let mut s = format!(
        "I answered your last message in {} mode because {}.",
        d.selected_mode,
        d.reasoning.as_deref().filter(|r| !r.is_empty()).unwrap_or("it scored highest")
    );
    if !top.is_empty() {
        s.push_str(&format!(" Scores: {}", top.join(" vs ")));
        if let Some(c) = d.router_confidence {
            s.push_str(&format!(", confidence {c:.2}"));
        }
        s.push('.');
    }
    if let (Some(w), Some(m)) = (sig("context_warmth"), sig("memory_confidence")) {
        s.push_str(&format!(" Context warmth was {w:.2} and memory confidence {m:.2}."));
    }
    if d.tiebreaker_used {
        s.push_str(" It was a close call, settled by the tie-breaker.");
    }
    if let Some(f) = &d.fallback {
        s.push_str(&format!(" A fallback fired: {f}."));
    }
    s
}

fn world_line(ws: &[(String, String)]) -> String {
    ws.iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>().join("; ")
}

fn when(at: i64, now: i64) -> String {
    let mins = (now - at).max(0) / 60;
    match mins {
        0 => "just now".into(),
        m if m < 60 => format!("{m} min ago"),
        m => format!("{} h ago", m / 60),
    }
}

#[cfg(test)]
mod tests;
