//! Natural times for reminders: "in 20 minutes", "tomorrow at 9am", "every Sunday evening",
//! "2026-11-22T09:00". Pure functions over the user's local wall clock, minute precision; a leaf
//! module (it imports nothing from the crate), so the scheduler and the skills share it.
//!
//! The parser is a small token scanner, not a grammar: it finds the time phrases in a text
//! (a relative offset, a recurrence, a day, a clock time, a part of the day), keeps the
//! first of each kind, and resolves them against `now`. [`split_reminder`] uses the same
//! scan to cut "remind me to call mum tomorrow at 9am" into what and when, taking the
//! time phrases at the start or the end of the request so a time inside the message
//! ("remind me to book the 10am slot tomorrow at 9") stays part of it.
//!
//! Rules worth knowing:
//! - A clock time with no day that is already past today rolls to tomorrow; a weekday that
//!   is today and already past rolls a week; a month and day already past roll a year.
//!   An explicit "today"/"tonight" never rolls (the caller reports a past time), except
//!   that "tonight"/"this evening" with its usual hour gone but the evening not over is an
//!   hour from now.
//! - "at 9" (no am/pm) is the next 9 o'clock, morning or evening. With a day given
//!   ("tomorrow at 9", "every day at 6") 7–11 read as morning, 12 as noon and 1–6 as
//!   afternoon/evening; a part of the day ("Sunday evening at 7") decides instead.
//! - Default hours: a day alone is 09:00; morning 09:00, afternoon 14:00, evening 18:00,
//!   night/tonight 21:00; "midnight" is the midnight at the end of the day named.
//! - "next Monday" is the first Monday after today; "on Monday"/"Monday" may be today.
//! - A recurrence with no day or time ("every hour", "every 15 minutes", "every day")
//!   starts one period from now.

use chrono::{
    DateTime, Datelike, Days, Duration, Local, Months, NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Timelike, Weekday,
};
use std::fmt;

mod matchers;
mod resolve;
#[cfg(test)]
mod tests;
mod words;

use matchers::*;
use resolve::*;
use words::*;

/// How a reminder repeats (the `recurrence` column: daily|weekly|monthly|weekdays|hourly|interval:N).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recurrence {
    Daily,
    Weekly,
    Monthly,
    /// Monday to Friday.
    Weekdays,
    Hourly,
    /// Every N minutes (N ≥ 1).
    Interval(u32),
}

impl Recurrence {
    /// The stored form: "daily", "weekly", "monthly", "weekdays", "hourly", "interval:N".
    pub fn as_str(&self) -> String {
        match self {
            Recurrence::Daily => "daily".into(),
            Recurrence::Weekly => "weekly".into(),
            Recurrence::Monthly => "monthly".into(),
            Recurrence::Weekdays => "weekdays".into(),
            Recurrence::Hourly => "hourly".into(),
            Recurrence::Interval(n) => format!("interval:{n}"),
        }
    }

    /// Parse the stored form, case-insensitively, plus a few obvious synonyms
    /// ("every day", "weekday", "interval: 15", "every 15 minutes"). `None` for anything else.
    pub fn parse(s: &str) -> Option<Recurrence> {
        let s = s.trim().to_ascii_lowercase();
        let s = s.strip_prefix("every ").map(str::trim).unwrap_or(&s);
        match s {
            "daily" | "day" => return Some(Recurrence::Daily),
            "weekly" | "week" => return Some(Recurrence::Weekly),
            "monthly" | "month" => return Some(Recurrence::Monthly),
            "weekdays" | "weekday" | "workdays" | "workday" => return Some(Recurrence::Weekdays),
            "hourly" | "hour" => return Some(Recurrence::Hourly),
            _ => {}
        }
        if let Some(n) = s.strip_prefix("interval:").or_else(|| s.strip_prefix("interval ")) {
            return n.trim().parse::<u32>().ok().filter(|n| *n > 0).map(Recurrence::Interval);
        }
        // "15 minutes", "2 hours"
        let toks = tokenize(s);
        match duration_at(&toks, 0) {
            Some((d, len)) if len == toks.len() => recurrence_of(d),
            _ => None,
        }
    }

    /// A fixed period in minutes, for the recurrences that have one.
    pub fn period_minutes(&self) -> Option<i64> {
        match self {
            Recurrence::Hourly => Some(60),
            Recurrence::Interval(n) => Some(i64::from(*n)),
            _ => None,
        }
    }

    /// The occurrence after `prev`, in local wall time. A monthly reminder on the 31st moves
    /// to the last day of a shorter month (and stays on that day afterwards).
    pub fn advance(&self, prev: NaiveDateTime) -> NaiveDateTime {
        match self {
            Recurrence::Daily => prev.checked_add_days(Days::new(1)).unwrap_or(prev),
            Recurrence::Weekly => prev.checked_add_days(Days::new(7)).unwrap_or(prev),
            Recurrence::Monthly => prev.checked_add_months(Months::new(1)).unwrap_or(prev),
            Recurrence::Weekdays => {
                let mut next = prev.checked_add_days(Days::new(1)).unwrap_or(prev);
                while is_weekend(next.date()) {
                    next = next.checked_add_days(Days::new(1)).unwrap_or(next);
                }
                next
            }
            Recurrence::Hourly => prev + Duration::hours(1),
            Recurrence::Interval(n) => prev + Duration::minutes(i64::from(*n)),
        }
    }
}

impl fmt::Display for Recurrence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.as_str())
    }
}

/// A resolved time: the first due time (local wall time, whole minutes) and how it repeats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct When {
    pub due: NaiveDateTime,
    pub recurrence: Option<Recurrence>,
}

/// The ISO 8601 local form used everywhere a due time is shown or stored: `2026-11-22T09:00`.
pub fn iso(dt: NaiveDateTime) -> String {
    dt.format("%Y-%m-%dT%H:%M").to_string()
}

/// Parse an ISO 8601 time into local wall time (minute precision): `2026-11-22T09:00`,
/// `2026-11-22 09:00`, with seconds, or with a zone (`Z`, `+01:00`, converted to local).
/// A bare date is not accepted here (see [`parse_when`]).
pub fn parse_iso(s: &str) -> Option<NaiveDateTime> {
    let s = s.trim();
    let zulu;
    let s = match s.strip_suffix(['Z', 'z']) {
        Some(x) if x.ends_with(|c: char| c.is_ascii_digit()) => {
            zulu = format!("{x}+00:00");
            zulu.as_str()
        }
        _ => s,
    };
    if let Ok(dt) = DateTime::parse_from_rfc3339(s) {
        return Some(truncate(dt.with_timezone(&Local).naive_local()));
    }
    for fmt in [
        "%Y-%m-%dT%H:%M:%S%.f%:z",
        "%Y-%m-%dT%H:%M%:z",
        "%Y-%m-%d %H:%M:%S%.f%:z",
        "%Y-%m-%d %H:%M%:z",
        "%Y-%m-%dT%H:%M:%S%.f%z",
        "%Y-%m-%dT%H:%M%z",
    ] {
        if let Ok(dt) = DateTime::parse_from_str(s, fmt) {
            return Some(truncate(dt.with_timezone(&Local).naive_local()));
        }
    }
    for fmt in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%d %H:%M"] {
        if let Ok(dt) = NaiveDateTime::parse_from_str(s, fmt) {
            return Some(truncate(dt));
        }
    }
    None
}

/// Local wall time → unix seconds. An ambiguous time (the repeated hour when clocks go back)
/// takes the earlier instant; a time that does not exist (the hour skipped when clocks go
/// forward) takes the instant one hour later, just after the gap.
pub fn to_unix(due: NaiveDateTime) -> Option<i64> {
    Local
        .from_local_datetime(&due)
        .earliest()
        .or_else(|| Local.from_local_datetime(&(due + Duration::hours(1))).earliest())
        .map(|t| t.timestamp())
}

/// Unix seconds → local wall time (minute precision).
pub fn from_unix(ts: i64) -> Option<NaiveDateTime> {
    DateTime::from_timestamp(ts, 0).map(|t| truncate(t.with_timezone(&Local).naive_local()))
}

/// A short human form relative to `now`: "today 17:00", "tomorrow 09:00", "Friday 15:00"
/// (within a week), "Thu 3 Dec 10:00", "Fri 1 Jan 2027 09:00".
pub fn humanize(due: NaiveDateTime, now: NaiveDateTime) -> String {
    let hm = due.format("%H:%M");
    let days = (due.date() - now.date()).num_days();
    match days {
        0 => format!("today {hm}"),
        1 => format!("tomorrow {hm}"),
        -1 => format!("yesterday {hm}"),
        2..=6 => format!("{} {hm}", due.format("%A")),
        _ if due.year() == now.year() => format!("{} {hm}", due.format("%a %-d %b")),
        _ => format!("{} {hm}", due.format("%a %-d %b %Y")),
    }
}

/// Parse a natural or ISO time against `now`. Phrases anywhere in the text count
/// ("remind at 5pm please" → 17:00); `None` when there is no time in it at all.
pub fn parse_when(text: &str, now: DateTime<Local>) -> Option<When> {
    let trimmed = text.trim();
    if let Some(due) = parse_iso(trimmed) {
        return Some(When { due, recurrence: None });
    }
    let toks = tokenize(trimmed);
    let matches = scan(&toks, true);
    if matches.is_empty() {
        return None;
    }
    resolve(&merge(matches.iter()), now)
}

/// Split a reminder request into what to remind and when, for the deterministic planner:
/// "remind me to call mum tomorrow at 9am" → ("call mum", tomorrow 09:00). It needs a
/// reminder phrase ("remind me", "set a reminder", "reminder:", "don't let me forget") and
/// a time; `None` otherwise.
pub fn split_reminder(text: &str, now: DateTime<Local>) -> Option<(String, When)> {
    let toks = tokenize(text);
    let trigger = find_trigger(&toks)?;
    split_tokens(text, &toks, Some(trigger), now)
}

/// Like [`split_reminder`] without needing the reminder phrase (one is stripped if present):
/// "call mum tomorrow at 9am" → ("call mum", tomorrow 09:00).
pub fn split_when(text: &str, now: DateTime<Local>) -> Option<(String, When)> {
    let toks = tokenize(text);
    let trigger = find_trigger(&toks);
    split_tokens(text, &toks, trigger, now)
}
