//! Natural times for reminders: "in 20 minutes", "tomorrow at 9am", "every Sunday evening",
//! "2026-11-22T09:00". Pure functions over the user's local wall clock, minute precision.
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

// ------------------------------------------------------------------ tokens

#[derive(Debug, Clone)]
struct Tok {
    /// Lowercased, edge punctuation trimmed, "p.m" → "pm".
    w: String,
    /// Byte range of the trimmed token in the original text.
    start: usize,
    end: usize,
}

const EDGE: &[char] = &[
    ',', ';', ':', '!', '?', '.', '(', ')', '[', ']', '{', '}', '"', '\'', '`', '-', '–', '—', '“', '”', '‘', '’', '…',
];

fn tokenize(text: &str) -> Vec<Tok> {
    fn push(text: &str, s: usize, e: usize, out: &mut Vec<Tok>) {
        let raw = &text[s..e];
        let lead = raw.len() - raw.trim_start_matches(EDGE).len();
        let inner = raw.trim_matches(EDGE);
        if inner.is_empty() {
            return;
        }
        let mut w = inner.to_lowercase();
        for (from, to) in [("a.m", "am"), ("p.m", "pm")] {
            if w.ends_with(from) {
                w.truncate(w.len() - from.len());
                w.push_str(to);
            }
        }
        let w = w.replace('’', "'");
        out.push(Tok { w, start: s + lead, end: s + lead + inner.len() });
    }
    let mut out = Vec::new();
    let mut start = None;
    for (i, ch) in text.char_indices() {
        if ch.is_whitespace() || ch == ',' {
            if let Some(s) = start.take() {
                push(text, s, i, &mut out);
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        push(text, s, text.len(), &mut out);
    }
    out
}

fn word(t: &[Tok], i: usize) -> &str {
    t.get(i).map_or("", |t| t.w.as_str())
}

fn is_any(t: &[Tok], i: usize, set: &[&str]) -> bool {
    set.contains(&word(t, i))
}

// ------------------------------------------------------------------ components

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Morning,
    Afternoon,
    Evening,
    Night,
}

impl Part {
    fn default_hour(self) -> u32 {
        match self {
            Part::Morning => 9,
            Part::Afternoon => 14,
            Part::Evening => 18,
            Part::Night => 21,
        }
    }

    fn from_word(w: &str) -> Option<Part> {
        Some(match w {
            "morning" | "mornings" => Part::Morning,
            "afternoon" | "afternoons" => Part::Afternoon,
            "evening" | "evenings" => Part::Evening,
            "night" | "nights" => Part::Night,
            _ => return None,
        })
    }

    /// The hour at which this part of the day is over.
    fn end_hour(self) -> u32 {
        match self {
            Part::Morning => 12,
            Part::Afternoon => 17,
            Part::Evening | Part::Night => 24,
        }
    }

    /// The 24-hour clock for an hour given without am/pm in this part of the day.
    fn hour_for(self, h: u32) -> u32 {
        match self {
            Part::Morning => h % 12,
            Part::Afternoon | Part::Evening => h % 12 + 12,
            Part::Night => match h {
                6..=11 => h + 12,
                12 => 0,
                _ => h,
            },
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Day {
    Today,
    /// Days from today: tomorrow = 1.
    Offset(u64),
    /// A weekday; `true` = strictly after today ("next Monday").
    Weekday(Weekday, bool),
    Date {
        y: Option<i32>,
        m: u32,
        d: u32,
    },
    /// A day of the month ("on the 3rd").
    OfMonth(u32),
    NextWeek,
    NextMonth,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Clock {
    Exact(u32, u32),
    /// 1–12 with no am/pm.
    Ambiguous(u32, u32),
    Midnight,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Dur {
    months: u32,
    days: u64,
    minutes: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Comp {
    Rec(Recurrence),
    Day(Day),
    Clock(Clock),
    Part(Part),
    Rel(Dur),
}

#[derive(Debug, Clone)]
struct Match {
    start: usize,
    end: usize,
    comps: Vec<Comp>,
}

#[derive(Debug, Default, Clone, Copy)]
struct Parts {
    rec: Option<Recurrence>,
    day: Option<Day>,
    clock: Option<Clock>,
    part: Option<Part>,
    rel: Option<Dur>,
}

fn merge<'a>(matches: impl Iterator<Item = &'a Match>) -> Parts {
    let mut p = Parts::default();
    for c in matches.flat_map(|m| m.comps.iter()) {
        match *c {
            Comp::Rec(r) => {
                p.rec.get_or_insert(r);
            }
            Comp::Day(d) => {
                p.day.get_or_insert(d);
            }
            Comp::Clock(c) => {
                p.clock.get_or_insert(c);
            }
            Comp::Part(x) => {
                p.part.get_or_insert(x);
            }
            Comp::Rel(d) => {
                p.rel.get_or_insert(d);
            }
        }
    }
    p
}

// ------------------------------------------------------------------ lexicon

fn weekday_full(w: &str) -> Option<(Weekday, bool)> {
    let (base, plural) = match w.strip_suffix('s') {
        Some(b) if b.ends_with("day") => (b, true),
        _ => (w, false),
    };
    let wd = match base {
        "monday" => Weekday::Mon,
        "tuesday" => Weekday::Tue,
        "wednesday" => Weekday::Wed,
        "thursday" => Weekday::Thu,
        "friday" => Weekday::Fri,
        "saturday" => Weekday::Sat,
        "sunday" => Weekday::Sun,
        _ => return None,
    };
    Some((wd, plural))
}

fn weekday_abbrev(w: &str) -> Option<Weekday> {
    Some(match w {
        "mon" => Weekday::Mon,
        "tue" | "tues" => Weekday::Tue,
        "wed" | "weds" => Weekday::Wed,
        "thu" | "thur" | "thurs" => Weekday::Thu,
        "fri" => Weekday::Fri,
        "sat" => Weekday::Sat,
        "sun" => Weekday::Sun,
        _ => return None,
    })
}

fn month(w: &str) -> Option<u32> {
    Some(match w {
        "january" | "jan" => 1,
        "february" | "feb" => 2,
        "march" | "mar" => 3,
        "april" | "apr" => 4,
        "may" => 5,
        "june" | "jun" => 6,
        "july" | "jul" => 7,
        "august" | "aug" => 8,
        "september" | "sep" | "sept" => 9,
        "october" | "oct" => 10,
        "november" | "nov" => 11,
        "december" | "dec" => 12,
        _ => return None,
    })
}

fn number_word(w: &str) -> Option<u32> {
    const WORDS: [&str; 21] = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
        "twenty",
    ];
    if let Some(n) = WORDS.iter().position(|x| *x == w) {
        return Some(n as u32);
    }
    Some(match w {
        "twenty-five" | "twentyfive" => 25,
        "thirty" => 30,
        "forty" => 40,
        "forty-five" | "fortyfive" => 45,
        "fifty" => 50,
        "sixty" => 60,
        "ninety" => 90,
        _ => return None,
    })
}

/// A plain non-negative integer written in digits (at most 4) or as a word.
fn integer(w: &str) -> Option<u32> {
    if !w.is_empty() && w.len() <= 4 && w.bytes().all(|b| b.is_ascii_digit()) {
        return w.parse().ok();
    }
    number_word(w)
}

/// "3", "3rd", "21st", "03" → day of month 1..=31; `bool` = had an ordinal suffix.
fn day_number(w: &str) -> Option<(u32, bool)> {
    let digits: String = w.chars().take_while(char::is_ascii_digit).collect();
    if digits.is_empty() || digits.len() > 2 {
        return None;
    }
    let rest = &w[digits.len()..];
    let ordinal = match rest {
        "" => false,
        "st" | "nd" | "rd" | "th" => true,
        _ => return None,
    };
    let d: u32 = digits.parse().ok()?;
    (1..=31).contains(&d).then_some((d, ordinal))
}

#[derive(Clone, Copy)]
enum Unit {
    Minute,
    Hour,
    Day,
    Week,
    Month,
}

fn unit(w: &str, compact: bool) -> Option<Unit> {
    Some(match w {
        "minute" | "minutes" | "min" | "mins" => Unit::Minute,
        "hour" | "hours" | "hr" | "hrs" => Unit::Hour,
        "day" | "days" => Unit::Day,
        "week" | "weeks" | "wk" | "wks" => Unit::Week,
        "month" | "months" => Unit::Month,
        "m" if compact => Unit::Minute,
        "h" if compact => Unit::Hour,
        "d" if compact => Unit::Day,
        "w" if compact => Unit::Week,
        _ => return None,
    })
}

fn add_amount(d: &mut Dur, amount: f64, u: Unit) -> Option<()> {
    if !(amount > 0.0 && amount < 100_000.0) {
        return None;
    }
    let whole = amount.fract() == 0.0;
    match u {
        Unit::Minute => d.minutes += amount.round() as i64,
        Unit::Hour => d.minutes += (amount * 60.0).round() as i64,
        Unit::Day if whole => d.days += amount as u64,
        Unit::Day => d.minutes += (amount * 1440.0).round() as i64,
        Unit::Week if whole => d.days += amount as u64 * 7,
        Unit::Week => d.minutes += (amount * 10080.0).round() as i64,
        Unit::Month if whole => d.months += amount as u32,
        Unit::Month => return None,
    }
    Some(())
}

/// A compact duration token: "20min", "2h", "2hrs", "1h30", "1h30m", "90m", "2d", "1.5h".
fn compact_duration(w: &str) -> Option<Dur> {
    let mut d = Dur::default();
    let mut rest = w;
    let mut any = false;
    while !rest.is_empty() {
        let n_len = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        if n_len == 0 {
            return None;
        }
        let amount: f64 = rest[..n_len].parse().ok()?;
        rest = &rest[n_len..];
        let u_len = rest.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(rest.len());
        let u = if u_len == 0 {
            // "1h30": a trailing bare number after hours is minutes.
            if any && rest.is_empty() { Unit::Minute } else { return None }
        } else {
            unit(&rest[..u_len], true)?
        };
        rest = &rest[u_len..];
        add_amount(&mut d, amount, u)?;
        any = true;
    }
    any.then_some(d)
}

/// One "amount unit" piece at `i`: "20 minutes", "an hour", "half an hour", "2 and a half
/// hours", "1.5 hours", "a couple of hours", "a few minutes", "20min".
fn duration_piece(t: &[Tok], i: usize) -> Option<(Dur, usize)> {
    let w = word(t, i);
    if w.is_empty() {
        return None;
    }
    if let Some(d) = compact_duration(w)
        && w.chars().any(|c| c.is_ascii_alphabetic())
    {
        return Some((d, 1));
    }
    let mut d = Dur::default();
    // "half an hour", "half hour", "half a day"
    if w == "half" {
        let mut j = i + 1;
        if is_any(t, j, &["a", "an"]) {
            j += 1;
        }
        let u = unit(word(t, j), false)?;
        add_amount(&mut d, 0.5, u)?;
        return Some((d, j + 1 - i));
    }
    let (amount, mut j) = match w {
        "a" | "an" => match word(t, i + 1) {
            "couple" => (2.0, i + 2 + usize::from(word(t, i + 2) == "of")),
            "few" => (3.0, i + 2),
            _ => (1.0, i + 1),
        },
        "couple" => (2.0, i + 1 + usize::from(word(t, i + 1) == "of")),
        "few" => (3.0, i + 1),
        _ => {
            let n = if let Some(n) = integer(w) {
                f64::from(n)
            } else if w.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
                w.parse::<f64>().ok()?
            } else {
                return None;
            };
            (n, i + 1)
        }
    };
    // "2 and a half hours"
    let mut amount = amount;
    if word(t, j) == "and" && word(t, j + 1) == "a" && word(t, j + 2) == "half" && unit(word(t, j + 3), false).is_some()
    {
        amount += 0.5;
        j += 3;
    }
    let u = unit(word(t, j), false)?;
    add_amount(&mut d, amount, u)?;
    j += 1;
    // "an hour and a half"
    if word(t, j) == "and" && word(t, j + 1) == "a" && word(t, j + 2) == "half" {
        add_amount(&mut d, 0.5, u)?;
        j += 3;
    }
    Some((d, j - i))
}

/// A duration of one or more pieces: "2 hours and 30 minutes", "1 hour 30 minutes".
fn duration_at(t: &[Tok], i: usize) -> Option<(Dur, usize)> {
    let (mut d, mut len) = duration_piece(t, i)?;
    loop {
        let j = i + len;
        let skip = usize::from(word(t, j) == "and");
        match duration_piece(t, j + skip) {
            Some((more, l)) => {
                d.months += more.months;
                d.days += more.days;
                d.minutes += more.minutes;
                len += skip + l;
            }
            None => return Some((d, len)),
        }
    }
}

fn recurrence_of(d: Dur) -> Option<Recurrence> {
    if d.months > 0 {
        return (d.months == 1 && d.days == 0 && d.minutes == 0).then_some(Recurrence::Monthly);
    }
    let minutes = d.days as i64 * 1440 + d.minutes;
    Some(match minutes {
        m if m <= 0 => return None,
        60 => Recurrence::Hourly,
        1440 => Recurrence::Daily,
        10080 => Recurrence::Weekly,
        m => Recurrence::Interval(u32::try_from(m).ok()?),
    })
}

// ------------------------------------------------------------------ matchers

/// Everything a matcher may consult about where it is.
#[derive(Clone, Copy)]
struct At<'a> {
    t: &'a [Tok],
    i: usize,
    /// Lenient mode (a whole `due_at` text) accepts a bare "evening".
    lenient: bool,
    /// The previous token ended a day phrase ("tomorrow 9", "Sunday evening").
    after_day: bool,
}

type Hit = (usize, Vec<Comp>);

fn scan(t: &[Tok], lenient: bool) -> Vec<Match> {
    let mut out: Vec<Match> = Vec::new();
    let mut i = 0;
    while i < t.len() {
        let after_day =
            out.last().is_some_and(|m| m.end == i && m.comps.iter().any(|c| matches!(c, Comp::Day(_) | Comp::Rec(_))));
        let at = At { t, i, lenient, after_day };
        let hit = match_iso(at)
            .or_else(|| match_every(at))
            .or_else(|| match_relative(at))
            .or_else(|| match_day_word(at))
            .or_else(|| match_weekday(at))
            .or_else(|| match_date(at))
            .or_else(|| match_clock(at))
            .or_else(|| match_part(at));
        match hit {
            Some((len, comps)) if len > 0 => {
                out.push(Match { start: i, end: i + len, comps });
                i += len;
            }
            _ => i += 1,
        }
    }
    out
}

fn match_iso(a: At) -> Option<Hit> {
    let w = word(a.t, a.i);
    if w.len() < 10 || !w.as_bytes()[0].is_ascii_digit() || w.as_bytes()[4] != b'-' {
        return None;
    }
    let upper = w.to_ascii_uppercase();
    if let Some(dt) = parse_iso(&upper) {
        let comps = vec![
            Comp::Day(Day::Date { y: Some(dt.year()), m: dt.month(), d: dt.day() }),
            Comp::Clock(Clock::Exact(dt.hour(), dt.minute())),
        ];
        return Some((1, comps));
    }
    let date = NaiveDate::parse_from_str(w, "%Y-%m-%d").ok()?;
    Some((1, vec![Comp::Day(Day::Date { y: Some(date.year()), m: date.month(), d: date.day() })]))
}

fn match_every(a: At) -> Option<Hit> {
    let (t, i) = (a.t, a.i);
    let w = word(t, i);
    let simple = |r: Recurrence| Some((1, vec![Comp::Rec(r)]));
    match w {
        "daily" => return simple(Recurrence::Daily),
        "hourly" => return simple(Recurrence::Hourly),
        "weekly" => return simple(Recurrence::Weekly),
        "monthly" => return simple(Recurrence::Monthly),
        "nightly" => return Some((1, vec![Comp::Rec(Recurrence::Daily), Comp::Part(Part::Night)])),
        "weekdays" => return simple(Recurrence::Weekdays),
        "on" if word(t, i + 1) == "weekdays" => return Some((2, vec![Comp::Rec(Recurrence::Weekdays)])),
        "every" | "each" => {}
        _ => return None,
    }
    let j = i + 1;
    let n = word(t, j);
    let rec = |len: usize, r: Recurrence| Some((len + 1, vec![Comp::Rec(r)]));
    match n {
        "day" => return rec(1, Recurrence::Daily),
        "single" if word(t, j + 1) == "day" => return rec(2, Recurrence::Daily),
        "week" => return rec(1, Recurrence::Weekly),
        "month" => return rec(1, Recurrence::Monthly),
        "hour" => return rec(1, Recurrence::Hourly),
        "minute" => return rec(1, Recurrence::Interval(1)),
        "weekday" | "weekdays" | "workday" | "workdays" => return rec(1, Recurrence::Weekdays),
        "working" | "work" | "business" if is_any(t, j + 1, &["day", "days"]) => {
            return rec(2, Recurrence::Weekdays);
        }
        "other" if word(t, j + 1) == "day" => return rec(2, Recurrence::Interval(2880)),
        "other" if word(t, j + 1) == "week" => return rec(2, Recurrence::Interval(20160)),
        "half" => {
            let len = if is_any(t, j + 1, &["an", "a"]) { 3 } else { 2 };
            return (word(t, j + len - 1) == "hour").then(|| (len + 1, vec![Comp::Rec(Recurrence::Interval(30))]));
        }
        _ => {}
    }
    if let Some(p) = Part::from_word(n) {
        return Some((2, vec![Comp::Rec(Recurrence::Daily), Comp::Part(p)]));
    }
    if let Some(wd) = weekday_full(n).map(|x| x.0).or_else(|| weekday_abbrev(n)) {
        return Some((2, vec![Comp::Rec(Recurrence::Weekly), Comp::Day(Day::Weekday(wd, false))]));
    }
    let (d, len) = duration_at(t, j)?;
    Some((len + 1, vec![Comp::Rec(recurrence_of(d)?)]))
}

fn match_relative(a: At) -> Option<Hit> {
    let (t, i) = (a.t, a.i);
    if is_any(t, i, &["in", "within", "after"]) {
        let (d, len) = duration_at(t, i + 1)?;
        let mut end = i + 1 + len;
        // "in 20 minutes' time", "in 20 minutes from now"
        if is_any(t, end, &["time", "'s", "from"]) {
            end += if word(t, end) == "from" && word(t, end + 1) == "now" { 2 } else { 1 };
        }
        return Some((end - i, vec![Comp::Rel(d)]));
    }
    // "20 minutes from now", "an hour later"
    let (d, len) = duration_at(t, i)?;
    let end = i + len;
    if word(t, end) == "from" && word(t, end + 1) == "now" {
        return Some((len + 2, vec![Comp::Rel(d)]));
    }
    if is_any(t, end, &["later", "hence"]) {
        return Some((len + 1, vec![Comp::Rel(d)]));
    }
    None
}

fn match_day_word(a: At) -> Option<Hit> {
    let (t, i) = (a.t, a.i);
    let w = word(t, i);
    let day = |len: usize, d: Day| Some((len, vec![Comp::Day(d)]));
    match w {
        "today" => day(1, Day::Today),
        "later" if word(t, i + 1) == "today" => day(2, Day::Today),
        "tonight" | "tonite" => Some((1, vec![Comp::Day(Day::Today), Comp::Part(Part::Night)])),
        "tomorrow" | "tmrw" | "tmr" | "tomorow" | "tommorow" | "tommorrow" => day(1, Day::Offset(1)),
        "day" if word(t, i + 1) == "after" && word(t, i + 2) == "tomorrow" => day(3, Day::Offset(2)),
        "the" if word(t, i + 1) == "day" && word(t, i + 2) == "after" && word(t, i + 3) == "tomorrow" => {
            day(4, Day::Offset(2))
        }
        "this" | "later" if Part::from_word(word(t, i + 1)).is_some() => {
            let p = Part::from_word(word(t, i + 1))?;
            Some((2, vec![Comp::Day(Day::Today), Comp::Part(p)]))
        }
        "next" if word(t, i + 1) == "week" => day(2, Day::NextWeek),
        "next" if word(t, i + 1) == "month" => day(2, Day::NextMonth),
        "weekend" => day(1, Day::Weekday(Weekday::Sat, false)),
        "this" | "the" | "at" | "on" | "next" if word(t, i + 1) == "weekend" => {
            day(2, Day::Weekday(Weekday::Sat, w == "next"))
        }
        "at" | "on" | "over" if word(t, i + 1) == "the" && word(t, i + 2) == "weekend" => {
            day(3, Day::Weekday(Weekday::Sat, false))
        }
        _ => None,
    }
}

fn match_weekday(a: At) -> Option<Hit> {
    let (t, i) = (a.t, a.i);
    let mut j = i;
    let mut next = false;
    let mut prefixed = false;
    loop {
        match word(t, j) {
            "on" | "this" | "by" | "for" | "until" | "coming" => {}
            "next" => next = true,
            _ => break,
        }
        prefixed = true;
        j += 1;
        if j - i > 3 {
            return None;
        }
    }
    let w = word(t, j);
    let (wd, plural) = match weekday_full(w) {
        Some(x) => x,
        None if prefixed => (weekday_abbrev(w)?, false),
        None => return None,
    };
    let mut comps = vec![Comp::Day(Day::Weekday(wd, next))];
    if plural {
        comps.insert(0, Comp::Rec(Recurrence::Weekly));
    }
    Some((j + 1 - i, comps))
}

fn year_at(t: &[Tok], i: usize) -> Option<i32> {
    let w = word(t, i);
    (w.len() == 4).then(|| w.parse::<i32>().ok()).flatten().filter(|y| (1970..=2200).contains(y))
}

fn match_date(a: At) -> Option<Hit> {
    let (t, i) = (a.t, a.i);
    let mut j = i;
    if is_any(t, j, &["on", "by", "for", "until"]) {
        j += 1;
    }
    let the = word(t, j) == "the";
    if the {
        j += 1;
    }
    // "3 December", "3rd of December 2026", "the 3rd"
    if let Some((d, ordinal)) = day_number(word(t, j)) {
        let mut k = j + 1;
        if word(t, k) == "of" && month(word(t, k + 1)).is_some() {
            k += 1;
        }
        if let Some(m) = month(word(t, k)) {
            let y = year_at(t, k + 1);
            let end = k + 1 + usize::from(y.is_some());
            return Some((end - i, vec![Comp::Day(Day::Date { y, m, d })]));
        }
        if the && ordinal {
            return Some((j + 1 - i, vec![Comp::Day(Day::OfMonth(d))]));
        }
        return None;
    }
    if the {
        return None;
    }
    // "December 3rd", "Dec 3, 2026"
    let m = month(word(t, j))?;
    let k = j + 1 + usize::from(word(t, j + 1) == "the");
    let (d, _) = day_number(word(t, k))?;
    let y = year_at(t, k + 1);
    let end = k + 1 + usize::from(y.is_some());
    Some((end - i, vec![Comp::Day(Day::Date { y, m, d })]))
}

/// A clock token: "5", "5pm", "5:30", "5:30pm", "17:30", "09:00", "5.30pm".
/// Returns (hour, minute, meridiem pm?, has minutes, leading zero).
fn clock_token(w: &str) -> Option<(u32, u32, Option<bool>, bool, bool)> {
    let (body, mer) = if let Some(b) = w.strip_suffix("am") {
        (b, Some(false))
    } else if let Some(b) = w.strip_suffix("pm") {
        (b, Some(true))
    } else {
        (w, None)
    };
    let (hs, ms) = match body.split_once([':', '.']) {
        Some((h, m)) => (h, Some(m)),
        None => (body, None),
    };
    if hs.is_empty() || hs.len() > 2 || !hs.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let h: u32 = hs.parse().ok()?;
    let m: u32 = match ms {
        Some(m) if m.len() == 2 && m.bytes().all(|b| b.is_ascii_digit()) => m.parse().ok()?,
        Some(m) if m.len() == 5 && m.as_bytes()[2] == b':' => m[..2].parse().ok()?, // 09:00:00
        Some(_) => return None,
        None => 0,
    };
    if m > 59 || h > 23 || (mer.is_some() && !(1..=12).contains(&h)) {
        return None;
    }
    Some((h, m, mer, ms.is_some(), hs.len() == 2 && hs.starts_with('0')))
}

fn meridiem(w: &str) -> Option<bool> {
    match w {
        "am" => Some(false),
        "pm" => Some(true),
        _ => None,
    }
}

fn clock_from(h: u32, m: u32, pm: Option<bool>, zero_padded: bool) -> Clock {
    match pm {
        Some(pm) => Clock::Exact(h % 12 + if pm { 12 } else { 0 }, m),
        None if h == 0 || h > 12 || zero_padded => Clock::Exact(h, m),
        None => Clock::Ambiguous(h, m),
    }
}

fn match_clock(a: At) -> Option<Hit> {
    let (t, i) = (a.t, a.i);
    let mut j = i;
    // A marker makes a bare number a time ("at 9"); "for"/"before" only lead into a clearer time.
    let mut marked = a.after_day;
    match word(t, j) {
        "at" | "@" | "around" | "by" => {
            marked = true;
            j += 1;
            if word(t, j) == "around" || word(t, j) == "about" {
                j += 1;
            }
        }
        "for" | "from" | "before" | "until" => j += 1,
        _ => {}
    }
    let clock = |len: usize, c: Clock| Some((len, vec![Comp::Clock(c)]));
    let w = word(t, j);
    match w {
        "noon" | "midday" => return clock(j + 1 - i, Clock::Exact(12, 0)),
        "midnight" => return clock(j + 1 - i, Clock::Midnight),
        "lunchtime" => return clock(j + 1 - i, Clock::Exact(12, 0)),
        "lunch" if marked && j > i => return clock(j + 1 - i, Clock::Exact(12, 0)),
        "eod" => return clock(j + 1 - i, Clock::Exact(17, 0)),
        "end" if word(t, j + 1) == "of" && word(t, j + 2) == "day" => return clock(j + 3 - i, Clock::Exact(17, 0)),
        "end" if word(t, j + 1) == "of" && word(t, j + 2) == "the" && word(t, j + 3) == "day" => {
            return clock(j + 4 - i, Clock::Exact(17, 0));
        }
        _ => {}
    }
    // "half past 5", "quarter past 9", "quarter to 6", "10 past 5"
    let before = match w {
        "half" => Some(30),
        "quarter" => Some(15),
        _ if marked => integer(w).filter(|n| (1..60).contains(n)),
        _ => None,
    };
    if let Some(mins) = before
        && is_any(t, j + 1, &["past", "to", "after"])
        && let Some(h) = integer(word(t, j + 2)).filter(|h| (1..=12).contains(h))
        && !(w == "half" && word(t, j + 1) != "past")
    {
        let (h, m) = if word(t, j + 1) == "to" { ((h + 10) % 12 + 1, 60 - mins) } else { (h, mins) };
        let mut end = j + 3;
        let pm = meridiem(word(t, end));
        end += usize::from(pm.is_some());
        return clock(end - i, clock_from(h, m, pm, false));
    }
    let (h, m, mut pm, has_minutes, zero) = match clock_token(w) {
        Some(x) => x,
        None if marked && j > i => {
            let n = number_word(w).filter(|n| (1..=12).contains(n))?;
            (n, 0, None, false, false)
        }
        None => return None,
    };
    let mut end = j + 1;
    if pm.is_none()
        && let Some(x) = meridiem(word(t, end))
    {
        if !(1..=12).contains(&h) {
            return None;
        }
        pm = Some(x);
        end += 1;
    }
    let oclock = match word(t, end) {
        "o'clock" | "oclock" => 1,
        "o" if word(t, end + 1) == "clock" => 2,
        _ => 0,
    };
    end += oclock;
    let is_dot = w.contains('.');
    let accepted = pm.is_some() || oclock > 0 || (has_minutes && !is_dot) || marked;
    // A number followed by a unit is an amount ("for 5 minutes"), never a time.
    if !accepted || (pm.is_none() && unit(word(t, j + 1), false).is_some()) {
        return None;
    }
    clock(end - i, clock_from(h, m, pm, zero))
}

fn match_part(a: At) -> Option<Hit> {
    let (t, i) = (a.t, a.i);
    let part = |len: usize, p: Part| Some((len, vec![Comp::Part(p)]));
    match word(t, i) {
        "in" if word(t, i + 1) == "the" => part(3, Part::from_word(word(t, i + 2))?),
        "at" if word(t, i + 1) == "night" => part(2, Part::Night),
        "first" if word(t, i + 1) == "thing" => {
            let len =
                if word(t, i + 2) == "in" && word(t, i + 3) == "the" && word(t, i + 4) == "morning" { 5 } else { 2 };
            Some((len, vec![Comp::Part(Part::Morning), Comp::Clock(Clock::Exact(8, 0))]))
        }
        w => {
            let p = Part::from_word(w)?;
            (a.lenient || a.after_day).then_some((1, vec![Comp::Part(p)]))
        }
    }
}

// ------------------------------------------------------------------ resolution

fn truncate(dt: NaiveDateTime) -> NaiveDateTime {
    NaiveDateTime::new(dt.date(), NaiveTime::from_hms_opt(dt.hour(), dt.minute(), 0).unwrap_or(dt.time()))
}

fn is_weekend(d: NaiveDate) -> bool {
    matches!(d.weekday(), Weekday::Sat | Weekday::Sun)
}

fn add_days(d: NaiveDate, n: u64) -> Option<NaiveDate> {
    d.checked_add_days(Days::new(n))
}

/// The first `wd` on or after `from` (strictly after when `strict`).
fn weekday_from(from: NaiveDate, wd: Weekday, strict: bool) -> Option<NaiveDate> {
    let ahead = (7 + wd.num_days_from_monday() - from.weekday().num_days_from_monday()) % 7;
    let ahead = if strict && ahead == 0 { 7 } else { ahead };
    add_days(from, u64::from(ahead))
}

/// 1–12 without am/pm and no part of the day: 7–11 morning, 12 noon, 1–6 afternoon.
fn usual_hour(h: u32) -> u32 {
    match h {
        1..=6 => h + 12,
        _ => h,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Roll {
    None,
    Day,
    Week,
    Month(u32),
    Year,
}

fn at_hm(date: NaiveDate, h: u32, m: u32) -> Option<NaiveDateTime> {
    date.and_hms_opt(h, m, 0)
}

fn resolve(p: &Parts, now: DateTime<Local>) -> Option<When> {
    let now_n = truncate(now.naive_local());
    let today = now_n.date();
    let rec = p.rec;
    let has_when = p.day.is_some() || p.clock.is_some() || p.part.is_some();

    if let Some(rel) = p.rel {
        if rel.months == 0 && rel.days == 0 {
            if rel.minutes <= 0 {
                return None;
            }
            let due = truncate((now + Duration::minutes(rel.minutes)).naive_local());
            return Some(When { due, recurrence: rec });
        }
        let date = today.checked_add_months(Months::new(rel.months))?;
        let date = add_days(date, rel.days)?;
        let due = match (p.clock, p.part) {
            (None, None) => NaiveDateTime::new(date, now_n.time()) + Duration::minutes(rel.minutes),
            _ => {
                let (h, m, extra) = clock_hm(p.clock, p.part, None)?;
                add_days(date, extra).and_then(|d| at_hm(d, h, m))?
            }
        };
        return Some(When { due, recurrence: rec });
    }

    if !has_when {
        let r = rec?;
        let due = match r.period_minutes() {
            Some(min) => truncate((now + Duration::minutes(min)).naive_local()),
            None => r.advance(now_n),
        };
        return Some(When { due, recurrence: rec });
    }

    let (date, roll, default) = match p.day {
        None => (today, Roll::Day, None),
        Some(Day::Today) => (today, Roll::None, None),
        Some(Day::Offset(n)) => (add_days(today, n)?, Roll::None, Some((9, 0))),
        Some(Day::Weekday(wd, strict)) => (weekday_from(today, wd, strict)?, Roll::Week, Some((9, 0))),
        Some(Day::Date { y: Some(y), m, d }) => (NaiveDate::from_ymd_opt(y, m, d)?, Roll::None, Some((9, 0))),
        Some(Day::Date { y: None, m, d }) => {
            let date = (0..=8).find_map(|k| NaiveDate::from_ymd_opt(today.year() + k, m, d))?;
            (date, Roll::Year, Some((9, 0)))
        }
        Some(Day::OfMonth(d)) => {
            let first = today.with_day(1)?;
            let date = (0..=12)
                .filter_map(|k| first.checked_add_months(Months::new(k)))
                .find_map(|f| f.with_day(d).filter(|x| *x >= today))?;
            (date, Roll::Month(d), Some((9, 0)))
        }
        Some(Day::NextWeek) => (weekday_from(today, Weekday::Mon, true)?, Roll::None, Some((9, 0))),
        Some(Day::NextMonth) => (today.with_day(1)?.checked_add_months(Months::new(1))?, Roll::None, Some((9, 0))),
    };
    // A day that can be today, with an hour that could be morning or evening: the next one.
    let nearest = matches!(p.day, None | Some(Day::Today)) && rec.is_none();
    let explicit_day = p.day.is_some();
    let mut due = match (p.clock, p.part) {
        (Some(Clock::Ambiguous(h, m)), None) if nearest => {
            let cands = [h % 12, h % 12 + 12];
            match cands.iter().filter_map(|&hh| at_hm(date, hh, m)).find(|c| *c > now_n) {
                Some(c) => c,
                None => at_hm(date, usual_hour(h), m)?,
            }
        }
        (None, None) => {
            let (h, m) = match default {
                Some(hm) => hm,
                // "today" alone: the next of 09:00, 12:00, 15:00, 18:00, 21:00, else in an hour.
                None => match [9, 12, 15, 18, 21].iter().find_map(|&h| at_hm(date, h, 0).filter(|c| *c > now_n)) {
                    Some(c) => (c.hour(), c.minute()),
                    None => {
                        let c = truncate((now + Duration::hours(1)).naive_local());
                        return Some(When { due: c, recurrence: rec });
                    }
                },
            };
            at_hm(date, h, m)?
        }
        (clock, part) => {
            let (h, m, extra) = clock_hm(clock, part, Some(explicit_day))?;
            add_days(date, extra).and_then(|d| at_hm(d, h, m))?
        }
    };
    // "tonight" at 22:30, "this evening" at 19:00: the part's usual hour is past but the part
    // is not over, so an hour from now.
    if p.day == Some(Day::Today)
        && p.clock.is_none()
        && let Some(part) = p.part
        && due <= now_n
        && now_n.hour() < part.end_hour()
    {
        due = truncate((now + Duration::hours(1)).naive_local());
    }
    let mut guard = 0;
    while due <= now_n && roll != Roll::None && guard < 800 {
        guard += 1;
        due = match roll {
            Roll::Day => due.checked_add_days(Days::new(1))?,
            Roll::Week => due.checked_add_days(Days::new(7))?,
            Roll::Year => {
                let (m, d) = (due.month(), due.day());
                let y = (1..=8).find_map(|k| NaiveDate::from_ymd_opt(due.year() + k, m, d))?;
                NaiveDateTime::new(y, due.time())
            }
            Roll::Month(d) => {
                let first = due.date().with_day(1)?;
                let next =
                    (1..=12).filter_map(|k| first.checked_add_months(Months::new(k))).find_map(|f| f.with_day(d))?;
                NaiveDateTime::new(next, due.time())
            }
            Roll::None => due,
        };
    }
    if rec == Some(Recurrence::Weekdays) {
        while is_weekend(due.date()) || due <= now_n {
            due = due.checked_add_days(Days::new(1))?;
        }
    }
    Some(When { due, recurrence: rec })
}

/// Hour and minute for a clock and/or part of the day, plus days to add (midnight at the
/// end of a named day). `explicit_day` = a day was named (None: a relative day offset).
fn clock_hm(clock: Option<Clock>, part: Option<Part>, explicit_day: Option<bool>) -> Option<(u32, u32, u64)> {
    Some(match (clock, part) {
        (Some(Clock::Exact(h, m)), _) => (h, m, 0),
        (Some(Clock::Midnight), _) => (0, 0, u64::from(explicit_day != Some(false))),
        (Some(Clock::Ambiguous(h, m)), Some(p)) => (p.hour_for(h), m, 0),
        (Some(Clock::Ambiguous(h, m)), None) => (usual_hour(h), m, 0),
        (None, Some(p)) => (p.default_hour(), 0, 0),
        (None, None) => return None,
    })
}

// ------------------------------------------------------------------ reminder requests

/// The token range of a reminder phrase, if any.
fn find_trigger(t: &[Tok]) -> Option<(usize, usize)> {
    for i in 0..t.len() {
        let w = word(t, i);
        let next = word(t, i + 1);
        let len = match w {
            "remind" | "ping" | "alert" | "notify" | "nudge" if is_any(t, i + 1, &["me", "us"]) => 2,
            "remind" if next == "myself" => 2,
            "don't" | "dont" if next == "let" && word(t, i + 2) == "me" && word(t, i + 3) == "forget" => 4,
            "do" if next == "not"
                && word(t, i + 2) == "let"
                && word(t, i + 3) == "me"
                && word(t, i + 4) == "forget" =>
            {
                5
            }
            "set" | "create" | "add" | "make" | "schedule" | "new" | "put" => {
                let mut j = i + 1;
                while j < t.len() && j - i <= 3 && is_any(t, j, &["a", "an", "me", "us", "another", "new", "quick"]) {
                    j += 1;
                }
                if is_any(t, j, &["reminder", "reminders", "alarm", "alert"]) { j + 1 - i } else { 0 }
            }
            "reminder" if i == 0 || is_any(t, i - 1, &["a", "new"]) => 1,
            _ => 0,
        };
        if len > 0 {
            let start = if w == "reminder" && i > 0 { i - 1 } else { i };
            return Some((start, i + len));
        }
    }
    None
}

const COURTESY: &[&str] = &["please", "pls", "plz", "thanks", "thx", "ok", "okay", "thank", "you"];
const LEAD: &[&str] = &["to", "that", "about", "of", "re", "regarding", "for", "me", "and"];
const TRAIL: &[&str] = &["at", "on", "in", "by", "for", "from", "and", "starting", "please", "the"];
const BRIDGE: &[&str] = &["of", "and", "at", "on", "from", "starting"];

fn split_tokens(
    text: &str,
    t: &[Tok],
    trigger: Option<(usize, usize)>,
    now: DateTime<Local>,
) -> Option<(String, When)> {
    let (before, after_start) = match trigger {
        Some((s, e)) => (&t[..s], e),
        None => (&t[..0], 0),
    };
    let mut after_end = t.len();
    // Trailing courtesy: "… at 5pm please", "… thank you".
    while after_end > after_start && COURTESY.contains(&word(t, after_end - 1)) {
        after_end -= 1;
    }
    let after = &t[after_start..after_end];

    // Strict scans: a bare "night" is a time only next to a day ("Sunday night"), so
    // "movie night" stays part of the message.
    let before_matches = scan(before, false);
    let after_matches = scan(after, false);

    // Clusters of adjacent phrases (a bridging "of"/"at"/"and" between them is part of it).
    let mut clusters: Vec<(usize, usize, Vec<usize>)> = Vec::new();
    for (k, m) in after_matches.iter().enumerate() {
        match clusters.last_mut() {
            Some((_, end, ms)) if (*end..m.start).all(|x| BRIDGE.contains(&word(after, x))) => {
                *end = m.end;
                ms.push(k);
            }
            _ => clusters.push((m.start, m.end, vec![k])),
        }
    }
    let mut chosen: Vec<usize> =
        clusters.iter().enumerate().filter(|(_, c)| c.0 == 0 || c.1 == after.len()).map(|(k, _)| k).collect();
    if chosen.is_empty() && before_matches.is_empty() {
        chosen = (0..clusters.len()).collect();
    }
    let mut used = vec![false; after.len()];
    let mut picked: Vec<&Match> = before_matches.iter().collect();
    for &k in &chosen {
        let (s, e, ms) = &clusters[k];
        used[*s..*e].iter_mut().for_each(|u| *u = true);
        picked.extend(ms.iter().map(|&m| &after_matches[m]));
    }
    if picked.is_empty() {
        return None;
    }
    let when = resolve(&merge(picked.into_iter()), now)?;

    // What is left, in the user's own words.
    let mut keep: Vec<usize> = (0..after.len()).filter(|&x| !used[x]).collect();
    while keep.first().is_some_and(|&x| LEAD.contains(&word(after, x))) {
        keep.remove(0);
    }
    while keep.last().is_some_and(|&x| TRAIL.contains(&word(after, x))) {
        keep.pop();
    }
    let mut pieces: Vec<&str> = Vec::new();
    let mut k = 0;
    while k < keep.len() {
        let mut e = k;
        while e + 1 < keep.len() && keep[e + 1] == keep[e] + 1 {
            e += 1;
        }
        pieces.push(&text[after[keep[k]].start..after[keep[e]].end]);
        k = e + 1;
    }
    let what = pieces.join(" ");
    let what = what.trim_matches(|c: char| c.is_whitespace() || EDGE.contains(&c)).to_string();
    (!what.is_empty()).then_some((what, when))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Wednesday 18 November 2026, 10:00 local.
    fn now() -> DateTime<Local> {
        at("2026-11-18T10:00")
    }

    fn at(s: &str) -> DateTime<Local> {
        Local.from_local_datetime(&NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M").unwrap()).earliest().unwrap()
    }

    fn n(s: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M").unwrap()
    }

    #[track_caller]
    fn due(text: &str) -> String {
        match parse_when(text, now()) {
            Some(w) => {
                let r = w.recurrence.map(|r| format!(" {r}")).unwrap_or_default();
                format!("{}{r}", iso(w.due))
            }
            None => "none".into(),
        }
    }

    #[track_caller]
    fn due_at(text: &str, now: &str) -> String {
        parse_when(text, at(now)).map_or("none".into(), |w| iso(w.due))
    }

    #[test]
    fn relative_offsets() {
        assert_eq!(due("in 20 minutes"), "2026-11-18T10:20");
        assert_eq!(due("in 2 hours"), "2026-11-18T12:00");
        assert_eq!(due("in an hour"), "2026-11-18T11:00");
        assert_eq!(due("in half an hour"), "2026-11-18T10:30");
        assert_eq!(due("in a minute"), "2026-11-18T10:01");
        assert_eq!(due("in 1 hour 30 minutes"), "2026-11-18T11:30");
        assert_eq!(due("in 2 hours and 15 minutes"), "2026-11-18T12:15");
        assert_eq!(due("in an hour and a half"), "2026-11-18T11:30");
        assert_eq!(due("in 1.5 hours"), "2026-11-18T11:30");
        assert_eq!(due("in 90 mins"), "2026-11-18T11:30");
        assert_eq!(due("in 20min"), "2026-11-18T10:20");
        assert_eq!(due("in 1h30"), "2026-11-18T11:30");
        assert_eq!(due("in five minutes"), "2026-11-18T10:05");
        assert_eq!(due("in a couple of hours"), "2026-11-18T12:00");
        assert_eq!(due("20 minutes from now"), "2026-11-18T10:20");
        assert_eq!(due("in 3 days"), "2026-11-21T10:00");
        assert_eq!(due("in 2 days at 9am"), "2026-11-20T09:00");
        assert_eq!(due("in a week"), "2026-11-25T10:00");
        assert_eq!(due("in a month"), "2026-12-18T10:00");
    }

    #[test]
    fn seconds_are_dropped() {
        let now = at("2026-11-18T10:00") + Duration::seconds(45);
        assert_eq!(parse_when("in 20 minutes", now).map(|w| iso(w.due)).as_deref(), Some("2026-11-18T10:20"));
    }

    #[test]
    fn clock_times_roll_to_the_next_day_when_past() {
        assert_eq!(due("at 5pm"), "2026-11-18T17:00");
        assert_eq!(due("5 pm"), "2026-11-18T17:00");
        assert_eq!(due("at 5:30 p.m."), "2026-11-18T17:30");
        assert_eq!(due("at 17:30"), "2026-11-18T17:30");
        assert_eq!(due("at 9am"), "2026-11-19T09:00");
        assert_eq!(due("at 10am"), "2026-11-19T10:00", "the current minute counts as past");
        assert_eq!(due("at 09:00"), "2026-11-19T09:00");
        assert_eq!(due("at 12am"), "2026-11-19T00:00");
        assert_eq!(due("at 12pm"), "2026-11-18T12:00");
        assert_eq!(due("noon"), "2026-11-18T12:00");
        assert_eq!(due("at midday"), "2026-11-18T12:00");
        assert_eq!(due("midnight"), "2026-11-19T00:00");
        assert_eq!(due("half past 5"), "2026-11-18T17:30");
        assert_eq!(due("at quarter to 6"), "2026-11-18T17:45");
        assert_eq!(due("at 5 o'clock"), "2026-11-18T17:00");
    }

    #[test]
    fn ambiguous_hours_take_the_next_occurrence() {
        assert_eq!(due("at 9"), "2026-11-18T21:00");
        assert_eq!(due("at 11"), "2026-11-18T11:00");
        assert_eq!(due("at 3"), "2026-11-18T15:00");
        assert_eq!(due_at("at 9", "2026-11-18T07:00"), "2026-11-18T09:00");
        assert_eq!(due_at("at 9", "2026-11-18T22:00"), "2026-11-19T09:00");
        assert_eq!(due_at("at 3", "2026-11-18T22:00"), "2026-11-19T15:00");
        assert_eq!(due("at nine"), "2026-11-18T21:00");
    }

    #[test]
    fn named_days() {
        assert_eq!(due("tomorrow at 9am"), "2026-11-19T09:00");
        assert_eq!(due("tomorrow at 9"), "2026-11-19T09:00");
        assert_eq!(due("tomorrow at 6"), "2026-11-19T18:00");
        assert_eq!(due("tomorrow"), "2026-11-19T09:00");
        assert_eq!(due("tomorrow morning"), "2026-11-19T09:00");
        assert_eq!(due("tomorrow afternoon"), "2026-11-19T14:00");
        assert_eq!(due("tomorrow evening"), "2026-11-19T18:00");
        assert_eq!(due("tomorrow night"), "2026-11-19T21:00");
        assert_eq!(due("tomorrow evening at 7"), "2026-11-19T19:00");
        assert_eq!(due("at 7 tomorrow morning"), "2026-11-19T07:00");
        assert_eq!(due("tonight"), "2026-11-18T21:00");
        assert_eq!(due("tonight at 8"), "2026-11-18T20:00");
        assert_eq!(due_at("tonight", "2026-11-18T22:30"), "2026-11-18T23:30", "tonight is not over yet");
        assert_eq!(due_at("this morning", "2026-11-18T15:00"), "2026-11-18T09:00", "past: the caller refuses it");
        assert_eq!(due("this afternoon"), "2026-11-18T14:00");
        assert_eq!(due("today at 3pm"), "2026-11-18T15:00");
        assert_eq!(due("today at 9am"), "2026-11-18T09:00", "an explicit today does not roll");
        assert_eq!(due("today"), "2026-11-18T12:00");
        assert_eq!(due("the day after tomorrow"), "2026-11-20T09:00");
        assert_eq!(due("tomorrow at midnight"), "2026-11-20T00:00");
        assert_eq!(due("in the evening"), "2026-11-18T18:00");
        assert_eq!(due("in the morning"), "2026-11-19T09:00");
        assert_eq!(due("at night"), "2026-11-18T21:00");
        assert_eq!(due("evening"), "2026-11-18T18:00");
        assert_eq!(due("next week"), "2026-11-23T09:00");
        assert_eq!(due("next month"), "2026-12-01T09:00");
        assert_eq!(due("this weekend"), "2026-11-21T09:00");
    }

    #[test]
    fn weekdays() {
        assert_eq!(due("on Friday at 3pm"), "2026-11-20T15:00");
        assert_eq!(due("friday"), "2026-11-20T09:00");
        assert_eq!(due("next Monday"), "2026-11-23T09:00");
        assert_eq!(due("Sunday evening"), "2026-11-22T18:00");
        assert_eq!(due("on wed at 11am"), "2026-11-18T11:00", "today, still ahead");
        assert_eq!(due("on wednesday at 9am"), "2026-11-25T09:00", "today, already past");
        assert_eq!(due("next wednesday"), "2026-11-25T09:00");
        assert_eq!(due("at 3pm on Friday"), "2026-11-20T15:00");
        assert_eq!(due("this Saturday at noon"), "2026-11-21T12:00");
    }

    #[test]
    fn dates() {
        assert_eq!(due("on 3 December at 10am"), "2026-12-03T10:00");
        assert_eq!(due("December 3rd"), "2026-12-03T09:00");
        assert_eq!(due("dec 3 at 2:15pm"), "2026-12-03T14:15");
        assert_eq!(due("the 3rd of December"), "2026-12-03T09:00");
        assert_eq!(due("on 1 March"), "2027-03-01T09:00", "a past date rolls a year");
        assert_eq!(due("March 1, 2028"), "2028-03-01T09:00");
        assert_eq!(due("on the 25th"), "2026-11-25T09:00");
        assert_eq!(due("on the 5th"), "2026-12-05T09:00");
        assert_eq!(due("on 31 February"), "none");
    }

    #[test]
    fn iso_forms() {
        assert_eq!(due("2026-11-22T09:00"), "2026-11-22T09:00");
        assert_eq!(due("2026-11-22 09:00"), "2026-11-22T09:00");
        assert_eq!(due("2026-11-22T09:00:30"), "2026-11-22T09:00");
        assert_eq!(due("2026-11-22"), "2026-11-22T09:00");
        assert_eq!(due("on 2026-11-22 at 5pm"), "2026-11-22T17:00");
        let utc = chrono::Utc.with_ymd_and_hms(2026, 11, 22, 9, 0, 0).unwrap().with_timezone(&Local).naive_local();
        assert_eq!(due("2026-11-22T09:00:00Z"), iso(utc));
        assert_eq!(parse_iso("2026-11-22T09:00+00:00"), Some(utc));
        assert_eq!(parse_iso("tomorrow"), None);
        assert_eq!(iso(n("2026-11-22T09:00")), "2026-11-22T09:00");
    }

    #[test]
    fn recurrences() {
        assert_eq!(due("every Sunday evening"), "2026-11-22T18:00 weekly");
        assert_eq!(due("every day at 8am"), "2026-11-19T08:00 daily");
        assert_eq!(due("daily at 8"), "2026-11-19T08:00 daily");
        assert_eq!(due("every day at 6"), "2026-11-18T18:00 daily");
        assert_eq!(due("every weekday at 7:30"), "2026-11-19T07:30 weekdays");
        assert_eq!(due("every hour"), "2026-11-18T11:00 hourly");
        assert_eq!(due("hourly"), "2026-11-18T11:00 hourly");
        assert_eq!(due("every 15 minutes"), "2026-11-18T10:15 interval:15");
        assert_eq!(due("every 2 hours"), "2026-11-18T12:00 interval:120");
        assert_eq!(due("every half hour"), "2026-11-18T10:30 interval:30");
        assert_eq!(due("every morning"), "2026-11-19T09:00 daily");
        assert_eq!(due("every evening at 7"), "2026-11-18T19:00 daily");
        assert_eq!(due("every day"), "2026-11-19T10:00 daily");
        assert_eq!(due("every week"), "2026-11-25T10:00 weekly");
        assert_eq!(due("every month on the 1st"), "2026-12-01T09:00 monthly");
        assert_eq!(due("on Mondays at 9"), "2026-11-23T09:00 weekly");
        assert_eq!(due("every mon at 9am"), "2026-11-23T09:00 weekly");
        assert_eq!(due("every other day at 10pm"), "2026-11-18T22:00 interval:2880");
        assert_eq!(due("every weekday"), "2026-11-19T10:00 weekdays");
        assert_eq!(due("every year"), "none");
        assert_eq!(due_at("every weekday at 9am", "2026-11-20T10:00"), "2026-11-23T09:00", "Friday past → Monday");
    }

    #[test]
    fn no_time_at_all() {
        assert_eq!(due("call mum"), "none");
        assert_eq!(due(""), "none");
        assert_eq!(due("whenever"), "none");
        assert_eq!(due("for 5 minutes"), "none");
    }

    #[test]
    fn recurrence_strings_round_trip() {
        for r in [
            Recurrence::Daily,
            Recurrence::Weekly,
            Recurrence::Monthly,
            Recurrence::Weekdays,
            Recurrence::Hourly,
            Recurrence::Interval(15),
        ] {
            assert_eq!(Recurrence::parse(&r.as_str()), Some(r));
        }
        assert_eq!(Recurrence::Interval(15).as_str(), "interval:15");
        assert_eq!(Recurrence::parse("Every Day"), Some(Recurrence::Daily));
        assert_eq!(Recurrence::parse("every 15 minutes"), Some(Recurrence::Interval(15)));
        assert_eq!(Recurrence::parse("interval:0"), None);
        assert_eq!(Recurrence::parse("yearly"), None);
        assert_eq!(Recurrence::parse(""), None);
    }

    #[test]
    fn advancing_recurrences() {
        assert_eq!(Recurrence::Daily.advance(n("2026-11-18T09:00")), n("2026-11-19T09:00"));
        assert_eq!(Recurrence::Weekly.advance(n("2026-11-18T09:00")), n("2026-11-25T09:00"));
        assert_eq!(Recurrence::Monthly.advance(n("2026-01-31T09:00")), n("2026-02-28T09:00"));
        assert_eq!(Recurrence::Weekdays.advance(n("2026-11-20T09:00")), n("2026-11-23T09:00"));
        assert_eq!(Recurrence::Hourly.advance(n("2026-11-18T23:30")), n("2026-11-19T00:30"));
        assert_eq!(Recurrence::Interval(45).advance(n("2026-11-18T09:30")), n("2026-11-18T10:15"));
    }

    #[test]
    fn unix_conversion_round_trips() {
        let dt = n("2026-11-22T09:00");
        let ts = to_unix(dt).unwrap();
        assert_eq!(from_unix(ts), Some(dt));
        assert_eq!(to_unix(n("2026-11-22T09:01")), Some(ts + 60));
    }

    #[test]
    fn humanized() {
        let now = n("2026-11-18T10:00");
        assert_eq!(humanize(n("2026-11-18T17:00"), now), "today 17:00");
        assert_eq!(humanize(n("2026-11-19T09:00"), now), "tomorrow 09:00");
        assert_eq!(humanize(n("2026-11-20T15:00"), now), "Friday 15:00");
        assert_eq!(humanize(n("2026-12-03T10:00"), now), "Thu 3 Dec 10:00");
        assert_eq!(humanize(n("2027-01-01T09:00"), now), "Fri 1 Jan 2027 09:00");
    }

    #[track_caller]
    fn split(text: &str) -> String {
        match split_reminder(text, now()) {
            Some((what, w)) => {
                let r = w.recurrence.map(|r| format!(" {r}")).unwrap_or_default();
                format!("{what} | {}{r}", iso(w.due))
            }
            None => "none".into(),
        }
    }

    #[test]
    fn splitting_reminder_requests() {
        assert_eq!(split("remind me to call mum tomorrow at 9am"), "call mum | 2026-11-19T09:00");
        assert_eq!(split("remind me at 5pm to take the bins out"), "take the bins out | 2026-11-18T17:00");
        assert_eq!(split("remind me in 20 minutes to check the oven"), "check the oven | 2026-11-18T10:20");
        assert_eq!(split("set a reminder for Friday at 3pm: dentist"), "dentist | 2026-11-20T15:00");
        assert_eq!(split("every Sunday evening remind me to plan the week"), "plan the week | 2026-11-22T18:00 weekly");
        assert_eq!(split("Remind me to Call Mum tomorrow at 9am."), "Call Mum | 2026-11-19T09:00");
        assert_eq!(split("remind me tomorrow to call mum at 9"), "call mum | 2026-11-19T09:00");
        assert_eq!(
            split("can you remind me to check the oven in 20 minutes please"),
            "check the oven | 2026-11-18T10:20"
        );
        assert_eq!(split("remind me about the dentist on friday at 3pm"), "the dentist | 2026-11-20T15:00");
        assert_eq!(split("remind me that the plumber comes at 3"), "the plumber comes | 2026-11-18T15:00");
        assert_eq!(split("remind me every hour to drink water"), "drink water | 2026-11-18T11:00 hourly");
        assert_eq!(split("remind me to stretch every 15 minutes"), "stretch | 2026-11-18T10:15 interval:15");
        assert_eq!(
            split("remind me to water the plants every day at 8am"),
            "water the plants | 2026-11-19T08:00 daily"
        );
        assert_eq!(split("remind me to book the 10am slot tomorrow at 9"), "book the 10am slot | 2026-11-19T09:00");
        assert_eq!(split("remind me to take the 5pm train"), "take the train | 2026-11-18T17:00");
        assert_eq!(split("Reminder: dentist on Friday at 3pm"), "dentist | 2026-11-20T15:00");
        assert_eq!(split("don't let me forget to pay rent on the 1st"), "pay rent | 2026-12-01T09:00");
        assert_eq!(split("set me a reminder to buy milk tonight"), "buy milk | 2026-11-18T21:00");
        assert_eq!(split("remind me to watch the match on Sunday evening"), "watch the match | 2026-11-22T18:00");
        assert_eq!(
            split("remind me on 3 December at 10am to renew the passport"),
            "renew the passport | 2026-12-03T10:00"
        );
        assert_eq!(split("remind me to go to movie night tomorrow"), "go to movie night | 2026-11-19T09:00");
    }

    #[test]
    fn not_reminder_requests() {
        assert_eq!(split("remind me to call mum"), "none", "no time");
        assert_eq!(split("what is on at 5pm"), "none", "no reminder phrase");
        assert_eq!(split("remind me tomorrow"), "none", "nothing to remind");
    }

    #[test]
    fn odd_input_never_panics() {
        let odd = [
            "at",
            "in",
            "every",
            "remind me",
            "remind me to",
            "in 99999999 weeks",
            "in 1e9 minutes",
            "at 99:99",
            "at 12:5",
            "2026-13-45T25:61",
            "2026-02-30",
            "on the 31st",
            "9999-12-31T23:59",
            "every 0 minutes",
            "in 0 minutes",
            "é 5pm ü",
            "remind me to 日本 at 5pm",
            "—",
            "at 5pm:",
            "'at 5pm'",
            "the the the",
            "half",
            "quarter to",
            "at quarter to 1",
            "in half",
            "every other",
            "in 1h30x",
            "1..5 hours",
        ];
        for text in odd {
            let _ = parse_when(text, now());
            let _ = split_reminder(text, now());
            let _ = split_when(text, now());
            let _ = Recurrence::parse(text);
        }
        assert_eq!(due("at quarter to 1"), "2026-11-18T12:45");
        assert_eq!(split("remind me to 日本 at 5pm"), "日本 | 2026-11-18T17:00");
        assert_eq!(due("every 0 minutes"), "none");
        assert_eq!(due("in 0 minutes"), "none");
    }

    #[test]
    fn splitting_without_a_trigger() {
        let s = split_when("call mum tomorrow at 9am", now()).unwrap();
        assert_eq!((s.0.as_str(), iso(s.1.due).as_str()), ("call mum", "2026-11-19T09:00"));
        let s = split_when("remind me to call mum at 5pm", now()).unwrap();
        assert_eq!(s.0, "call mum");
        assert!(split_when("call mum", now()).is_none());
    }
}
