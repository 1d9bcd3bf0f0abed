//! The `focus` skill: one focus session at a time (set, check, clear). An open session
//! raises the topic boundary detector's bound (explicit focus), so a stray remark does not
//! end the topic, and `check` reports how long is left.

use crate::cognition::act::skill::{SkillContext, SkillError, SkillOutput, opt_str_param, str_param};
use crate::store::{FocusSessionsRepo, OpenSession};
use rusqlite::Connection;
use serde_json::{Map, Value, json};

/// A session with no length given lasts this long.
pub const DEFAULT_MINUTES: i64 = 25;

pub fn run(c: &Connection, p: &Map<String, Value>, ctx: &SkillContext) -> Result<SkillOutput, SkillError> {
    let now = ctx.now.timestamp();
    let action = opt_str_param(p, "action").unwrap_or("check").to_ascii_lowercase();
    match action.as_str() {
        "set" | "start" => {
            let description = str_param(p, "description")?;
            let minutes = p.get("minutes").and_then(Value::as_i64).unwrap_or(DEFAULT_MINUTES);
            if !(1..=24 * 60).contains(&minutes) {
                return Err(SkillError::Param { name: "minutes", problem: "must be between 1 and 1440".into() });
            }
            // A new session replaces the open one.
            let ends = now + minutes * 60;
            FocusSessionsRepo(c).start(description, &ctx.thread_id, now, ends)?;
            let until = chrono::DateTime::from_timestamp(ends, 0)
                .map(|t| t.with_timezone(&chrono::Local).format("%H:%M").to_string())
                .unwrap_or_default();
            Ok(SkillOutput::new(
                format!("Focus session on {description} for {minutes} min (until {until})."),
                json!({"description": description, "minutes": minutes, "ends_at": ends}),
            ))
        }
        "check" => match active(c, now)? {
            Some((id, description, started, ends)) => {
                let left = ends.map(|e| (e - now).max(0) / 60);
                let summary = match left {
                    Some(l) => format!("Focused on {description}: {} min in, {l} min left.", (now - started) / 60),
                    None => format!("Focused on {description} for {} min.", (now - started) / 60),
                };
                Ok(SkillOutput::new(summary, json!({"id": id, "description": description, "minutes_left": left})))
            }
            None => Ok(SkillOutput::new("No focus session is running.", json!({"active": false}))),
        },
        "clear" | "end" | "stop" => match active(c, now)? {
            Some((id, description, started, _)) => {
                FocusSessionsRepo(c).clear(id, now)?;
                Ok(SkillOutput::new(
                    format!("Ended the focus session on {description} after {} min.", (now - started) / 60),
                    json!({"id": id, "cleared": true}),
                ))
            }
            None => Ok(SkillOutput::new("No focus session was running.", json!({"cleared": false}))),
        },
        other => {
            Err(SkillError::Param { name: "action", problem: format!("`{other}` is not one of set, check, clear") })
        }
    }
}

fn active(c: &Connection, now: i64) -> Result<Option<OpenSession>, SkillError> {
    Ok(FocusSessionsRepo(c).active(now)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{Duration, Local};

    fn ctx(offset_min: i64) -> SkillContext {
        SkillContext::new("t", "x", "t", Local::now() + Duration::minutes(offset_min))
    }

    fn call(c: &Connection, v: Value, at: i64) -> Result<SkillOutput, SkillError> {
        run(c, v.as_object().unwrap(), &ctx(at))
    }

    #[test]
    fn set_check_clear() {
        let c = crate::store::open_in_memory().unwrap();
        assert_eq!(call(&c, json!({"action": "check"}), 0).unwrap().summary, "No focus session is running.");
        call(&c, json!({"action": "set", "description": "the report", "minutes": 45}), 0).unwrap();
        let out = call(&c, json!({"action": "check"}), 10).unwrap();
        assert!(out.summary.starts_with("Focused on the report: 10 min in, 35 min left"), "{}", out.summary);
        assert_eq!(call(&c, json!({"action": "check"}), 50).unwrap().data["active"], false, "expired");
        call(&c, json!({"action": "set", "description": "email"}), 60).unwrap();
        assert!(call(&c, json!({"action": "clear"}), 70).unwrap().summary.contains("email after 10 min"));
        assert_eq!(call(&c, json!({"action": "clear"}), 71).unwrap().data["cleared"], false);
    }

    #[test]
    fn bad_parameters() {
        let c = crate::store::open_in_memory().unwrap();
        assert!(call(&c, json!({"action": "set"}), 0).is_err());
        assert!(call(&c, json!({"action": "set", "description": "x", "minutes": 0}), 0).is_err());
        assert!(call(&c, json!({"action": "pause"}), 0).is_err());
    }
}
