//! The matchers: each recognises one kind of time phrase at a token position.

use super::*;

/// Everything a matcher may consult about where it is.
#[derive(Clone, Copy)]
pub(super) struct At<'a> {
    pub(super) t: &'a [Tok],
    pub(super) i: usize,
    /// Lenient mode (a whole `due_at` text) accepts a bare "evening".
    pub(super) lenient: bool,
    /// The previous token ended a day phrase ("tomorrow 9", "Sunday evening").
    pub(super) after_day: bool,
}

pub(super) type Hit = (usize, Vec<Comp>);

pub(super) fn scan(t: &[Tok], lenient: bool) -> Vec<Match> {
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

pub(super) fn match_iso(a: At) -> Option<Hit> {
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

pub(super) fn match_every(a: At) -> Option<Hit> {
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

pub(super) fn match_relative(a: At) -> Option<Hit> {
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

pub(super) fn match_day_word(a: At) -> Option<Hit> {
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

pub(super) fn match_weekday(a: At) -> Option<Hit> {
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

pub(super) fn year_at(t: &[Tok], i: usize) -> Option<i32> {
    let w = word(t, i);
    (w.len() == 4).then(|| w.parse::<i32>().ok()).flatten().filter(|y| (1970..=2200).contains(y))
}

pub(super) fn match_date(a: At) -> Option<Hit> {
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
pub(super) fn clock_token(w: &str) -> Option<(u32, u32, Option<bool>, bool, bool)> {
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

pub(super) fn meridiem(w: &str) -> Option<bool> {
    match w {
        "am" => Some(false),
        "pm" => Some(true),
        _ => None,
    }
}

pub(super) fn clock_from(h: u32, m: u32, pm: Option<bool>, zero_padded: bool) -> Clock {
    match pm {
        Some(pm) => Clock::Exact(h % 12 + if pm { 12 } else { 0 }, m),
        None if h == 0 || h > 12 || zero_padded => Clock::Exact(h, m),
        None => Clock::Ambiguous(h, m),
    }
}

pub(super) fn match_clock(a: At) -> Option<Hit> {
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

pub(super) fn match_part(a: At) -> Option<Hit> {
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
