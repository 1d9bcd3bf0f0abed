//! Turning the matched parts into a due time against `now` (rolling past times forward).

use super::*;

pub(super) fn truncate(dt: NaiveDateTime) -> NaiveDateTime {
    NaiveDateTime::new(dt.date(), NaiveTime::from_hms_opt(dt.hour(), dt.minute(), 0).unwrap_or(dt.time()))
}

pub(super) fn is_weekend(d: NaiveDate) -> bool {
    matches!(d.weekday(), Weekday::Sat | Weekday::Sun)
}

pub(super) fn add_days(d: NaiveDate, n: u64) -> Option<NaiveDate> {
    d.checked_add_days(Days::new(n))
}

/// The first `wd` on or after `from` (strictly after when `strict`).
pub(super) fn weekday_from(from: NaiveDate, wd: Weekday, strict: bool) -> Option<NaiveDate> {
    let ahead = (7 + wd.num_days_from_monday() - from.weekday().num_days_from_monday()) % 7;
    let ahead = if strict && ahead == 0 { 7 } else { ahead };
    add_days(from, u64::from(ahead))
}

/// 1–12 without am/pm and no part of the day: 7–11 morning, 12 noon, 1–6 afternoon.
pub(super) fn usual_hour(h: u32) -> u32 {
    match h {
        1..=6 => h + 12,
        _ => h,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Roll {
    None,
    Day,
    Week,
    Month(u32),
    Year,
}

pub(super) fn at_hm(date: NaiveDate, h: u32, m: u32) -> Option<NaiveDateTime> {
    date.and_hms_opt(h, m, 0)
}

pub(super) fn resolve(p: &Parts, now: DateTime<Local>) -> Option<When> {
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
pub(super) fn clock_hm(
    clock: Option<Clock>,
    part: Option<Part>,
    explicit_day: Option<bool>,
) -> Option<(u32, u32, u64)> {
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
pub(super) fn find_trigger(t: &[Tok]) -> Option<(usize, usize)> {
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

pub(super) const COURTESY: &[&str] = &["please", "pls", "plz", "thanks", "thx", "ok", "okay", "thank", "you"];
pub(super) const LEAD: &[&str] = &["to", "that", "about", "of", "re", "regarding", "for", "me", "and"];
pub(super) const TRAIL: &[&str] = &["at", "on", "in", "by", "for", "from", "and", "starting", "please", "the"];
pub(super) const BRIDGE: &[&str] = &["of", "and", "at", "on", "from", "starting"];

pub(super) fn split_tokens(
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
