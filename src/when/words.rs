//! The tokens and the vocabulary of time phrases: weekdays, months, numbers, units,
//! durations, and the parts a phrase is split into.

use super::*;

#[derive(Debug, Clone)]
pub(super) struct Tok {
    /// Lowercased, edge punctuation trimmed, "p.m" → "pm".
    pub(super) w: String,
    /// Byte range of the trimmed token in the original text.
    pub(super) start: usize,
    pub(super) end: usize,
}

pub(super) const EDGE: &[char] = &[
    ',', ';', ':', '!', '?', '.', '(', ')', '[', ']', '{', '}', '"', '\'', '`', '-', '–', '—', '“', '”', '‘', '’', '…',
];

pub(super) fn tokenize(text: &str) -> Vec<Tok> {
    pub(super) fn push(text: &str, s: usize, e: usize, out: &mut Vec<Tok>) {
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

pub(super) fn word(t: &[Tok], i: usize) -> &str {
    t.get(i).map_or("", |t| t.w.as_str())
}

pub(super) fn is_any(t: &[Tok], i: usize, set: &[&str]) -> bool {
    set.contains(&word(t, i))
}

// ------------------------------------------------------------------ components

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Part {
    Morning,
    Afternoon,
    Evening,
    Night,
}

impl Part {
    pub(super) fn default_hour(self) -> u32 {
        match self {
            Part::Morning => 9,
            Part::Afternoon => 14,
            Part::Evening => 18,
            Part::Night => 21,
        }
    }

    pub(super) fn from_word(w: &str) -> Option<Part> {
        Some(match w {
            "morning" | "mornings" => Part::Morning,
            "afternoon" | "afternoons" => Part::Afternoon,
            "evening" | "evenings" => Part::Evening,
            "night" | "nights" => Part::Night,
            _ => return None,
        })
    }

    /// The hour at which this part of the day is over.
    pub(super) fn end_hour(self) -> u32 {
        match self {
            Part::Morning => 12,
            Part::Afternoon => 17,
            Part::Evening | Part::Night => 24,
        }
    }

    /// The 24-hour clock for an hour given without am/pm in this part of the day.
    pub(super) fn hour_for(self, h: u32) -> u32 {
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
pub(super) enum Day {
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
pub(super) enum Clock {
    Exact(u32, u32),
    /// 1–12 with no am/pm.
    Ambiguous(u32, u32),
    Midnight,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Dur {
    pub(super) months: u32,
    pub(super) days: u64,
    pub(super) minutes: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Comp {
    Rec(Recurrence),
    Day(Day),
    Clock(Clock),
    Part(Part),
    Rel(Dur),
}

#[derive(Debug, Clone)]
pub(super) struct Match {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) comps: Vec<Comp>,
}

#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Parts {
    pub(super) rec: Option<Recurrence>,
    pub(super) day: Option<Day>,
    pub(super) clock: Option<Clock>,
    pub(super) part: Option<Part>,
    pub(super) rel: Option<Dur>,
}

pub(super) fn merge<'a>(matches: impl Iterator<Item = &'a Match>) -> Parts {
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

pub(super) fn weekday_full(w: &str) -> Option<(Weekday, bool)> {
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

pub(super) fn weekday_abbrev(w: &str) -> Option<Weekday> {
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

pub(super) fn month(w: &str) -> Option<u32> {
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

pub(super) fn number_word(w: &str) -> Option<u32> {
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
pub(super) fn integer(w: &str) -> Option<u32> {
    if !w.is_empty() && w.len() <= 4 && w.bytes().all(|b| b.is_ascii_digit()) {
        return w.parse().ok();
    }
    number_word(w)
}

/// "3", "3rd", "21st", "03" → day of month 1..=31; `bool` = had an ordinal suffix.
pub(super) fn day_number(w: &str) -> Option<(u32, bool)> {
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
pub(super) enum Unit {
    Minute,
    Hour,
    Day,
    Week,
    Month,
}

pub(super) fn unit(w: &str, compact: bool) -> Option<Unit> {
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

pub(super) fn add_amount(d: &mut Dur, amount: f64, u: Unit) -> Option<()> {
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
pub(super) fn compact_duration(w: &str) -> Option<Dur> {
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
pub(super) fn duration_piece(t: &[Tok], i: usize) -> Option<(Dur, usize)> {
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
pub(super) fn duration_at(t: &[Tok], i: usize) -> Option<(Dur, usize)> {
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

pub(super) fn recurrence_of(d: Dur) -> Option<Recurrence> {
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
