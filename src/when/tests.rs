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
    assert_eq!(split("can you remind me to check the oven in 20 minutes please"), "check the oven | 2026-11-18T10:20");
    assert_eq!(split("remind me about the dentist on friday at 3pm"), "the dentist | 2026-11-20T15:00");
    assert_eq!(split("remind me that the plumber comes at 3"), "the plumber comes | 2026-11-18T15:00");
    assert_eq!(split("remind me every hour to drink water"), "drink water | 2026-11-18T11:00 hourly");
    assert_eq!(split("remind me to stretch every 15 minutes"), "stretch | 2026-11-18T10:15 interval:15");
    assert_eq!(split("remind me to water the plants every day at 8am"), "water the plants | 2026-11-19T08:00 daily");
    assert_eq!(split("remind me to book the 10am slot tomorrow at 9"), "book the 10am slot | 2026-11-19T09:00");
    assert_eq!(split("remind me to take the 5pm train"), "take the train | 2026-11-18T17:00");
    assert_eq!(split("Reminder: dentist on Friday at 3pm"), "dentist | 2026-11-20T15:00");
    assert_eq!(split("don't let me forget to pay rent on the 1st"), "pay rent | 2026-12-01T09:00");
    assert_eq!(split("set me a reminder to buy milk tonight"), "buy milk | 2026-11-18T21:00");
    assert_eq!(split("remind me to watch the match on Sunday evening"), "watch the match | 2026-11-22T18:00");
    assert_eq!(split("remind me on 3 December at 10am to renew the passport"), "renew the passport | 2026-12-03T10:00");
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
