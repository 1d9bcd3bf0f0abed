//! The `schedule` skill: reminders (docs/cognition.md §7.4: action create/list/cancel; message;
//! due_at; item_type notification|prompt; recurrence daily|weekly|monthly|weekdays|hourly|
//! interval:N; item_id; time_range). Deterministic and fast: one or two indexed queries.
//!
//! `due_at` may be ISO 8601 (`2026-11-22T09:00`, with or without seconds or a zone) or a
//! natural phrase ("tomorrow at 9am", "every Sunday evening", "in 20 minutes") resolved
//! against the turn's local clock; with no `due_at`, a time inside `message` is used
//! ("call mum tomorrow at 9am"). Reminders are stored with `due_at` as ISO local text (what
//! the user sees) and `due_ts` as unix seconds (what the scheduler compares).

use super::list_match::{Found, find_phrase, same_word, which};
use crate::cognition::act::skill::{SkillContext, SkillError, SkillOutput, opt_str_param};
use crate::store::{NewReminder, ReminderRow, RemindersRepo};
use crate::when::{self as time, Recurrence};
use chrono::{Datelike, Days, Months, NaiveDate, NaiveDateTime, Timelike, Weekday};
use rusqlite::Connection;
use serde_json::{Map, Value, json};

/// The most reminders one `list` returns.
pub const LIST_LIMIT: usize = 100;
/// The longest reminder text accepted.
pub const MAX_MESSAGE_CHARS: usize = 1000;

const RECURRENCES: &str = "daily, weekly, monthly, weekdays, hourly or interval:N (minutes)";
const RANGES: &str = "today, tomorrow, this week, next week, this month, a weekday name, an ISO date, or all";

pub fn run(c: &Connection, p: &Map<String, Value>, ctx: &SkillContext) -> Result<SkillOutput, SkillError> {
    let action = match opt_str_param(p, "action") {
        Some(a) => a.to_ascii_lowercase(),
        None if p.contains_key("item_id") => "cancel".into(),
        None if message_param(p).is_some() => "create".into(),
        None => "list".into(),
    };
    match action.as_str() {
        "create" | "add" | "set" | "new" | "schedule" | "remind" => create(c, p, ctx),
        "list" | "view" | "show" | "get" | "list_all" => list(c, p, ctx),
        "cancel" | "delete" | "remove" | "clear" => cancel(c, p, ctx),
        other => Err(SkillError::Param {
            name: "action",
            problem: format!("unknown action \"{other}\"; expected create, list or cancel"),
        }),
    }
}

/// A stored reminder.
#[derive(Debug, Clone, PartialEq)]
struct Reminder {
    id: i64,
    message: String,
    due_at: String,
    due_ts: i64,
    item_type: String,
    recurrence: Option<String>,
    state: String,
}

impl From<ReminderRow> for Reminder {
    fn from(r: ReminderRow) -> Reminder {
        Reminder {
            id: r.id,
            message: r.message,
            due_at: r.due_at,
            due_ts: r.due_ts,
            item_type: r.item_type,
            recurrence: r.recurrence,
            state: r.state,
        }
    }
}

impl Reminder {
    fn json(&self) -> Value {
        json!({
            "id": self.id,
            "message": self.message,
            "due_at": self.due_at,
            "recurrence": self.recurrence,
            "item_type": self.item_type,
            "state": self.state,
        })
    }

    /// "#3 call mum (tomorrow 09:00)": short enough to offer as one of several choices.
    fn label(&self, now: NaiveDateTime) -> String {
        match time::parse_iso(&self.due_at) {
            Some(due) => format!("#{} {} ({})", self.id, self.message, time::humanize(due, now)),
            None => format!("#{} {}", self.id, self.message),
        }
    }

    /// "call mum — 2026-11-22T09:00 (tomorrow 09:00, daily)"
    fn describe(&self, now: NaiveDateTime) -> String {
        let mut when = match time::parse_iso(&self.due_at) {
            Some(due) => time::humanize(due, now),
            None => String::new(),
        };
        if let Some(r) = &self.recurrence {
            if !when.is_empty() {
                when.push_str(", ");
            }
            when.push_str(r);
        }
        if self.item_type == "prompt" {
            when.push_str(if when.is_empty() { "prompt" } else { ", prompt" });
        }
        if when.is_empty() {
            format!("{} — {}", self.message, self.due_at)
        } else {
            format!("{} — {} ({when})", self.message, self.due_at)
        }
    }
}

fn now_minute(ctx: &SkillContext) -> NaiveDateTime {
    let n = ctx.now.naive_local();
    n.with_second(0).and_then(|n| n.with_nanosecond(0)).unwrap_or(n)
}

fn message_param(p: &Map<String, Value>) -> Option<&str> {
    ["message", "text", "reminder", "what", "title", "content"].iter().find_map(|k| opt_str_param(p, k))
}

fn get(c: &Connection, id: i64) -> Result<Option<Reminder>, SkillError> {
    Ok(RemindersRepo(c).get(id)?.map(Reminder::from))
}

// ------------------------------------------------------------------ create

fn create(c: &Connection, p: &Map<String, Value>, ctx: &SkillContext) -> Result<SkillOutput, SkillError> {
    let raw_message = message_param(p).ok_or_else(|| SkillError::Param {
        name: "message",
        problem: "missing: say what to remind (e.g. \"call mum\")".into(),
    })?;
    let due_text = ["due_at", "when", "time", "due", "at"].iter().find_map(|k| opt_str_param(p, k));
    let (message, when) = match due_text {
        Some(text) => {
            let when = time::parse_when(text, ctx.now).ok_or_else(|| SkillError::Param {
                name: "due_at",
                problem: format!(
                    "cannot read \"{text}\" as a time; give ISO 8601 local time like 2026-11-22T09:00 \
                     or a phrase like \"tomorrow at 9am\" or \"in 20 minutes\""
                ),
            })?;
            (raw_message.to_string(), when)
        }
        None => match time::split_when(raw_message, ctx.now) {
            Some((what, when)) => (what, when),
            None => {
                return Err(SkillError::Param {
                    name: "due_at",
                    problem: "missing: give ISO 8601 local time like 2026-11-22T09:00 or a phrase like \
                              \"tomorrow at 9am\""
                        .into(),
                });
            }
        },
    };
    let message = message.trim().to_string();
    if message.chars().count() > MAX_MESSAGE_CHARS {
        return Err(SkillError::Param {
            name: "message",
            problem: format!("too long ({} characters, at most {MAX_MESSAGE_CHARS})", message.chars().count()),
        });
    }
    let recurrence = match opt_str_param(p, "recurrence") {
        None => when.recurrence,
        Some(r) if matches!(r.to_ascii_lowercase().as_str(), "none" | "once" | "null" | "no") => None,
        Some(r) => Some(
            Recurrence::parse(r)
                .or_else(|| time::parse_when(&format!("every {r}"), ctx.now).and_then(|w| w.recurrence))
                .ok_or_else(|| SkillError::Param {
                    name: "recurrence",
                    problem: format!("unknown recurrence \"{r}\"; expected {RECURRENCES}"),
                })?,
        ),
    };
    let item_type = match opt_str_param(p, "item_type").map(str::to_ascii_lowercase).as_deref() {
        None | Some("notification") | Some("reminder") | Some("task") => "notification",
        Some("prompt") => "prompt",
        Some(other) => {
            return Err(SkillError::Param {
                name: "item_type",
                problem: format!("unknown item type \"{other}\"; expected notification or prompt"),
            });
        }
    };

    let now = now_minute(ctx);
    let mut due = when.due;
    if due < now {
        match recurrence {
            // A recurring reminder given a past start begins at its next occurrence.
            Some(r) => {
                let mut guard = 0;
                while due < now && guard < 100_000 {
                    due = r.advance(due);
                    guard += 1;
                }
            }
            None => {
                return Err(SkillError::Param {
                    name: "due_at",
                    problem: format!(
                        "{} is in the past (it is now {}); give a future time",
                        time::iso(due),
                        time::iso(now)
                    ),
                });
            }
        }
    }
    let due_at = time::iso(due);
    let due_ts = time::to_unix(due).ok_or_else(|| SkillError::Param {
        name: "due_at",
        problem: format!("{due_at} does not exist in the local time zone"),
    })?;
    let rec_text = recurrence.map(|r| r.as_str());

    // The same reminder twice (an ACT loop repeating itself) is set once.
    let repo = RemindersRepo(c);
    if let Some(existing) = repo.pending_duplicate(&message, &due_at, rec_text.as_deref())?.map(Reminder::from) {
        let summary = format!("Reminder already set: {} [#{}]", existing.describe(now), existing.id);
        return Ok(SkillOutput::new(
            summary,
            json!({"action": "create", "created": false, "reminder": existing.json()}),
        ));
    }

    let thread = Some(ctx.thread_id.as_str()).filter(|t| !t.is_empty());
    let new = NewReminder {
        message: &message,
        due_at: &due_at,
        due_ts,
        item_type,
        recurrence: rec_text.as_deref(),
        thread_id: thread,
    };
    let id = repo.insert(&new, ctx.now.timestamp())?;
    let r = get(c, id)?.ok_or_else(|| SkillError::NotFound(format!("reminder #{id} vanished")))?;
    let summary = format!("Reminder set: {} [#{id}]", r.describe(now));
    Ok(SkillOutput::new(summary, json!({"action": "create", "created": true, "reminder": r.json()})))
}

// ------------------------------------------------------------------ list

/// The [start, end) local days a `time_range` covers; `None` = everything pending.
fn range_days(text: &str, today: NaiveDate) -> Result<Option<(NaiveDate, NaiveDate)>, SkillError> {
    let t = text.trim().to_ascii_lowercase();
    let t = t.trim_start_matches("for ").trim_start_matches("on ");
    let day = |n: u64| today.checked_add_days(Days::new(n));
    let monday = today.checked_sub_days(Days::new(u64::from(today.weekday().num_days_from_monday())));
    let first = today.with_day(1);
    let range = match t {
        "" | "all" | "any" | "pending" | "upcoming" | "everything" | "future" => return Ok(None),
        "today" | "tonight" | "this evening" | "this afternoon" | "this morning" => Some((today, day(1))),
        "tomorrow" => Some((day(1).unwrap_or(today), day(2))),
        "this week" | "week" => monday.map(|m| (m, m.checked_add_days(Days::new(7)))),
        "next week" => {
            monday.map(|m| (m.checked_add_days(Days::new(7)).unwrap_or(m), m.checked_add_days(Days::new(14))))
        }
        "next 7 days" | "the next 7 days" | "next seven days" | "7 days" => Some((today, day(7))),
        "this month" | "month" => first.map(|f| (f, f.checked_add_months(Months::new(1)))),
        "next month" => {
            first.and_then(|f| f.checked_add_months(Months::new(1))).map(|f| (f, f.checked_add_months(Months::new(1))))
        }
        other => {
            if let Ok(d) = NaiveDate::parse_from_str(other, "%Y-%m-%d") {
                Some((d, d.checked_add_days(Days::new(1))))
            } else if let Ok(wd) = other.parse::<Weekday>() {
                let ahead = (7 + wd.num_days_from_monday() - today.weekday().num_days_from_monday()) % 7;
                day(u64::from(ahead)).map(|d| (d, d.checked_add_days(Days::new(1))))
            } else {
                None
            }
        }
    };
    match range {
        Some((start, Some(end))) => Ok(Some((start, end))),
        _ => Err(SkillError::Param {
            name: "time_range",
            problem: format!("unknown time range \"{text}\"; expected {RANGES}"),
        }),
    }
}

fn day_start_ts(d: NaiveDate) -> Option<i64> {
    d.and_hms_opt(0, 0, 0).and_then(time::to_unix)
}

fn list(c: &Connection, p: &Map<String, Value>, ctx: &SkillContext) -> Result<SkillOutput, SkillError> {
    let now = now_minute(ctx);
    let range_text = opt_str_param(p, "time_range").or_else(|| opt_str_param(p, "window"));
    let range = match range_text {
        Some(t) => range_days(t, now.date())?,
        None => None,
    };
    let (lo, hi) = match range {
        Some((start, end)) => (day_start_ts(start).unwrap_or(i64::MIN), day_start_ts(end).unwrap_or(i64::MAX)),
        None => (i64::MIN, i64::MAX),
    };
    let rows: Vec<Reminder> =
        RemindersRepo(c).pending_between(lo, hi, LIST_LIMIT)?.into_iter().map(Reminder::from).collect();
    let scope = range_text.filter(|_| range.is_some()).map(|t| format!(" ({t})")).unwrap_or_default();
    let summary = if rows.is_empty() {
        format!("No pending reminders{scope}.")
    } else {
        let mut s = format!("{} pending reminder{}{scope}:", rows.len(), if rows.len() == 1 { "" } else { "s" });
        for r in &rows {
            s.push_str(&format!("\n- #{} {}", r.id, r.describe(now)));
        }
        s
    };
    let data = json!({
        "action": "list",
        "time_range": range_text,
        "count": rows.len(),
        "reminders": rows.iter().map(Reminder::json).collect::<Vec<_>>(),
    });
    Ok(SkillOutput::new(summary, data))
}

// ------------------------------------------------------------------ cancel

fn id_param(p: &Map<String, Value>) -> Result<Option<i64>, SkillError> {
    let bad =
        |v: &Value| SkillError::Param { name: "item_id", problem: format!("expected a reminder number, got {v}") };
    match p.get("item_id").or_else(|| p.get("id")) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n.as_i64().map(Some).ok_or_else(|| bad(&Value::Number(n.clone()))),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(v @ Value::String(s)) => s.trim().trim_start_matches('#').parse().map(Some).map_err(|_| bad(v)),
        Some(v) => Err(bad(v)),
    }
}

fn pending(c: &Connection) -> Result<Vec<Reminder>, SkillError> {
    Ok(RemindersRepo(c).pending()?.into_iter().map(Reminder::from).collect())
}

/// Words that describe the reminder rather than name it ("my 5pm reminder").
const NOISE: &[&str] = &["my", "the", "a", "reminder", "reminders", "for", "about", "to", "that", "alarm"];

fn words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric() && c != ':')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| !NOISE.contains(&w.as_str()))
        .collect()
}

/// Pending reminders that `query` names: the same message up to case, articles and number,
/// else one containing the other as whole words ([`find_phrase`]), else all of its words in any
/// order, else its time ("my 5pm reminder").
fn find_matches(all: &[Reminder], query: &str, ctx: &SkillContext) -> Vec<Reminder> {
    let messages: Vec<&str> = all.iter().map(|r| r.message.as_str()).collect();
    match find_phrase(query, &messages) {
        Found::One(i) => return vec![all[i].clone()],
        Found::Several(is) => return is.iter().map(|&i| all[i].clone()).collect(),
        Found::Nothing => {}
    }
    let q = query.trim().to_lowercase();
    let qw = words(&q);
    if !qw.is_empty() {
        let by_words: Vec<_> = all
            .iter()
            .filter(|r| {
                let mw = words(&r.message);
                qw.iter().all(|w| mw.iter().any(|m| same_word(m, w)))
            })
            .cloned()
            .collect();
        if !by_words.is_empty() {
            return by_words;
        }
    }
    // "5pm", "my 5pm reminder", "tomorrow's 9am one": match on the time of day (and the day
    // when one is named).
    let Some(when) = time::parse_when(&q, ctx.now) else { return Vec::new() };
    let day_named = ["today", "tomorrow", "tonight", "monday", "tuesday", "wednesday", "thursday", "friday"]
        .iter()
        .chain(&["saturday", "sunday"])
        .any(|d| q.contains(d));
    all.iter()
        .filter(|r| {
            time::parse_iso(&r.due_at)
                .is_some_and(|d| d.time() == when.due.time() && (!day_named || d.date() == when.due.date()))
        })
        .cloned()
        .collect()
}

fn cancel(c: &Connection, p: &Map<String, Value>, ctx: &SkillContext) -> Result<SkillOutput, SkillError> {
    let now = now_minute(ctx);
    let target = if let Some(id) = id_param(p)? {
        let r = get(c, id)?.ok_or_else(|| SkillError::NotFound(format!("there is no reminder #{id}")))?;
        match r.state.as_str() {
            "cancelled" => {
                let summary = format!("Reminder #{id} was already cancelled: {}", r.describe(now));
                return Ok(SkillOutput::new(
                    summary,
                    json!({"action": "cancel", "cancelled": false, "reminder": r.json()}),
                ));
            }
            "fired" => {
                return Err(SkillError::NotFound(format!("reminder #{id} ({}) has already fired", r.message)));
            }
            _ => r,
        }
    } else {
        let query = message_param(p).or_else(|| opt_str_param(p, "due_at")).ok_or_else(|| SkillError::Param {
            name: "item_id",
            problem: "missing: give the reminder's number (item_id) or its message".into(),
        })?;
        let all = pending(c)?;
        let mut found = find_matches(&all, query, ctx);
        match found.len() {
            0 => {
                let hint = if all.is_empty() { "there are no pending reminders" } else { "see the list of reminders" };
                return Err(SkillError::NotFound(format!("no pending reminder matches \"{query}\" ({hint})")));
            }
            1 => found.remove(0),
            // Several fit: cancel none, ask which.
            _ => {
                let choices: Vec<String> = found.iter().map(|r| r.label(now)).collect();
                let data = json!({
                    "action": "cancel",
                    "cancelled": false,
                    "candidates": found.iter().map(Reminder::json).collect::<Vec<_>>(),
                });
                return Ok(SkillOutput::clarify(which("one", &choices), choices, data));
            }
        }
    };
    RemindersRepo(c).cancel(target.id)?;
    let r = get(c, target.id)?.unwrap_or(target);
    let summary = format!("Reminder cancelled: {} [#{}]", r.describe(now), r.id);
    Ok(SkillOutput::new(summary, json!({"action": "cancel", "cancelled": true, "reminder": r.json()})))
}

#[cfg(test)]
mod tests;
