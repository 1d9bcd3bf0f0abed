use super::*;
use crate::store::fixtures::Fixture;
use crate::store::open_in_memory;
use chrono::{Local, TimeZone};

/// Wednesday 18 November 2026, 10:00 local.
fn ctx() -> SkillContext {
    ctx_at("2026-11-18T10:00")
}

fn ctx_at(s: &str) -> SkillContext {
    let n = NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M").unwrap();
    SkillContext::new("t1", "e1", "general", Local.from_local_datetime(&n).earliest().unwrap())
}

fn p(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

fn call(c: &Connection, v: Value) -> Result<SkillOutput, SkillError> {
    run(c, &p(v), &ctx())
}

fn set(c: &Connection, message: &str, due: &str) -> i64 {
    let out = call(c, json!({"action": "create", "message": message, "due_at": due})).unwrap();
    out.data["reminder"]["id"].as_i64().unwrap()
}

#[test]
fn create_with_natural_time() {
    let c = open_in_memory().unwrap();
    let out = call(&c, json!({"action": "create", "message": "call mum", "due_at": "tomorrow at 9am"})).unwrap();
    assert_eq!(out.summary, "Reminder set: call mum — 2026-11-19T09:00 (tomorrow 09:00) [#1]");
    let r = &out.data["reminder"];
    assert_eq!(r["message"], "call mum");
    assert_eq!(r["due_at"], "2026-11-19T09:00");
    assert_eq!(r["state"], "pending");
    assert_eq!(r["recurrence"], Value::Null);
    let f = Fixture(&c);
    let (due_ts, thread, created): (i64, String, i64) = (
        f.value("reminders", "due_ts", "id = 1", []),
        f.value("reminders", "thread_id", "id = 1", []),
        f.value("reminders", "created_at", "id = 1", []),
    );
    assert_eq!(Some(due_ts), time::to_unix(time::parse_iso("2026-11-19T09:00").unwrap()));
    assert_eq!(thread, "t1");
    assert_eq!(created, ctx().now.timestamp());
}

#[test]
fn create_with_iso_and_recurrence() {
    let c = open_in_memory().unwrap();
    let out = call(
        &c,
        json!({"action": "create", "message": "plan the week", "due_at": "2026-11-22T18:00", "recurrence": "weekly",
               "item_type": "prompt"}),
    )
    .unwrap();
    assert_eq!(out.summary, "Reminder set: plan the week — 2026-11-22T18:00 (Sunday 18:00, weekly, prompt) [#1]");
    assert_eq!(out.data["reminder"]["recurrence"], "weekly");
    assert_eq!(out.data["reminder"]["item_type"], "prompt");
}

#[test]
fn recurrence_from_the_phrase_and_synonyms() {
    let c = open_in_memory().unwrap();
    let out = call(&c, json!({"action": "create", "message": "stretch", "due_at": "every 15 minutes"})).unwrap();
    assert_eq!(out.data["reminder"]["recurrence"], "interval:15");
    assert_eq!(out.data["reminder"]["due_at"], "2026-11-18T10:15");
    let out = call(&c, json!({"message": "pills", "due_at": "at 8am", "recurrence": "every day"})).unwrap();
    assert_eq!(out.data["reminder"]["recurrence"], "daily");
    let out = call(&c, json!({"message": "water", "due_at": "at 8pm", "recurrence": "30 minutes"})).unwrap();
    assert_eq!(out.data["reminder"]["recurrence"], "interval:30");
    let err = call(&c, json!({"message": "x", "due_at": "at 8pm", "recurrence": "yearly"})).unwrap_err();
    assert!(matches!(err, SkillError::Param { name: "recurrence", .. }), "{err}");
}

#[test]
fn time_taken_from_the_message_when_due_at_is_missing() {
    let c = open_in_memory().unwrap();
    let out = call(&c, json!({"action": "create", "message": "call mum tomorrow at 9am"})).unwrap();
    assert_eq!(out.data["reminder"]["message"], "call mum");
    assert_eq!(out.data["reminder"]["due_at"], "2026-11-19T09:00");
    let err = call(&c, json!({"action": "create", "message": "call mum"})).unwrap_err();
    assert!(matches!(err, SkillError::Param { name: "due_at", .. }), "{err}");
}

#[test]
fn bad_create_parameters() {
    let c = open_in_memory().unwrap();
    let err = call(&c, json!({"action": "create", "due_at": "tomorrow"})).unwrap_err();
    assert!(matches!(err, SkillError::Param { name: "message", .. }));
    let err = call(&c, json!({"action": "create", "message": "x", "due_at": "whenever"})).unwrap_err();
    assert!(matches!(err, SkillError::Param { name: "due_at", .. }));
    let err =
        call(&c, json!({"action": "create", "message": "x", "due_at": "at 5pm", "item_type": "email"})).unwrap_err();
    assert!(matches!(err, SkillError::Param { name: "item_type", .. }));
    let err = call(&c, json!({"action": "explode"})).unwrap_err();
    assert!(matches!(err, SkillError::Param { name: "action", .. }));
}

#[test]
fn past_times_are_refused() {
    let c = open_in_memory().unwrap();
    let err = call(&c, json!({"action": "create", "message": "x", "due_at": "2026-11-18T09:00"})).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, SkillError::Param { name: "due_at", .. }));
    assert!(text.contains("2026-11-18T09:00 is in the past"), "{text}");
    assert!(text.contains("it is now 2026-11-18T10:00"), "{text}");
    let err = call(&c, json!({"action": "create", "message": "x", "due_at": "today at 9am"})).unwrap_err();
    assert!(matches!(err, SkillError::Param { name: "due_at", .. }));
    // The current minute is fine (it fires at once).
    assert!(call(&c, json!({"action": "create", "message": "now", "due_at": "2026-11-18T10:00"})).is_ok());
    // A recurring reminder with a past start begins at its next occurrence.
    let out =
        call(&c, json!({"action": "create", "message": "pills", "due_at": "2026-11-17T09:00", "recurrence": "daily"}))
            .unwrap();
    assert_eq!(out.data["reminder"]["due_at"], "2026-11-19T09:00");
}

#[test]
fn the_same_reminder_twice_is_set_once() {
    let c = open_in_memory().unwrap();
    let a = set(&c, "call mum", "tomorrow at 9am");
    let out = call(&c, json!({"action": "create", "message": "Call Mum", "due_at": "2026-11-19T09:00"})).unwrap();
    assert_eq!(out.data["reminder"]["id"].as_i64(), Some(a));
    assert_eq!(out.data["created"], false);
    assert!(out.summary.starts_with("Reminder already set"));
    let n = Fixture(&c).count("reminders", "", []);
    assert_eq!(n, 1);
}

#[test]
fn list_soonest_first_with_ranges() {
    let c = open_in_memory().unwrap();
    set(&c, "dentist", "on Friday at 3pm");
    set(&c, "call mum", "tomorrow at 9am");
    set(&c, "bins", "at 5pm");
    set(&c, "renew passport", "on 3 December at 10am");
    let cancelled = set(&c, "gone", "at 6pm");
    call(&c, json!({"action": "cancel", "item_id": cancelled})).unwrap();

    let out = call(&c, json!({"action": "list"})).unwrap();
    let msgs: Vec<_> = out.data["reminders"].as_array().unwrap().iter().map(|r| r["message"].clone()).collect();
    assert_eq!(msgs, vec!["bins", "call mum", "dentist", "renew passport"]);
    assert_eq!(out.data["count"], 4);
    assert!(out.summary.starts_with("4 pending reminders:\n- #3 bins — 2026-11-18T17:00 (today 17:00)"));

    let names = |range: &str| -> Vec<String> {
        let out = call(&c, json!({"action": "list", "time_range": range})).unwrap();
        out.data["reminders"].as_array().unwrap().iter().map(|r| r["message"].as_str().unwrap().into()).collect()
    };
    assert_eq!(names("today"), vec!["bins"]);
    assert_eq!(names("tomorrow"), vec!["call mum"]);
    assert_eq!(names("this week"), vec!["bins", "call mum", "dentist"]);
    assert_eq!(names("next week"), Vec::<String>::new());
    assert_eq!(names("friday"), vec!["dentist"]);
    assert_eq!(names("2026-12-03"), vec!["renew passport"]);
    assert_eq!(names("this month"), vec!["bins", "call mum", "dentist"]);
    assert_eq!(names("all").len(), 4);
    let out = call(&c, json!({"action": "list", "time_range": "next week"})).unwrap();
    assert_eq!(out.summary, "No pending reminders (next week).");
    let err = call(&c, json!({"action": "list", "time_range": "someday"})).unwrap_err();
    assert!(matches!(err, SkillError::Param { name: "time_range", .. }));
}

#[test]
fn cancel_by_id() {
    let c = open_in_memory().unwrap();
    let id = set(&c, "call mum", "tomorrow at 9am");
    let out = call(&c, json!({"action": "cancel", "item_id": id})).unwrap();
    assert_eq!(out.summary, format!("Reminder cancelled: call mum — 2026-11-19T09:00 (tomorrow 09:00) [#{id}]"));
    assert_eq!(out.data["reminder"]["state"], "cancelled");
    // Again: already cancelled, not an error.
    let out = call(&c, json!({"action": "cancel", "item_id": format!("#{id}")})).unwrap();
    assert_eq!(out.data["cancelled"], false);
    let err = call(&c, json!({"action": "cancel", "item_id": 99})).unwrap_err();
    assert!(matches!(err, SkillError::NotFound(_)));
    let err = call(&c, json!({"action": "cancel", "item_id": "soon"})).unwrap_err();
    assert!(matches!(err, SkillError::Param { name: "item_id", .. }));
    Fixture(&c).set("reminders", "state = 'fired'", "id = ?1", [id]);
    let err = call(&c, json!({"action": "cancel", "item_id": id})).unwrap_err();
    assert!(err.to_string().contains("already fired"), "{err}");
}

#[test]
fn cancel_by_message() {
    let c = open_in_memory().unwrap();
    let mum = set(&c, "Call Mum", "tomorrow at 9am");
    set(&c, "call the dentist", "on Friday at 3pm");
    set(&c, "take the bins out", "at 5pm");
    let out = call(&c, json!({"action": "cancel", "message": "call mum"})).unwrap();
    assert_eq!(out.data["reminder"]["id"].as_i64(), Some(mum));
    // "call" now matches only the dentist one.
    let out = call(&c, json!({"action": "cancel", "message": "dentist"})).unwrap();
    assert_eq!(out.data["reminder"]["message"], "call the dentist");
    let out = call(&c, json!({"action": "cancel", "message": "my 5pm reminder"})).unwrap();
    assert_eq!(out.data["reminder"]["message"], "take the bins out");
    let err = call(&c, json!({"action": "cancel", "message": "gym"})).unwrap_err();
    assert!(matches!(err, SkillError::NotFound(_)), "{err}");
    let err = call(&c, json!({"action": "cancel"})).unwrap_err();
    assert!(matches!(err, SkillError::Param { name: "item_id", .. }));
}

#[test]
fn cancel_by_a_description_in_other_words() {
    let c = open_in_memory().unwrap();
    let card = set(&c, "buy a birthday card", "tomorrow at 9am");
    let plants = set(&c, "water the plants", "at 6pm");
    let out = call(&c, json!({"action": "cancel", "message": "the birthday cards"})).unwrap();
    assert_eq!(out.data["reminder"]["id"].as_i64(), Some(card), "{}", out.summary);
    let out = call(&c, json!({"action": "cancel", "message": "Plant"})).unwrap();
    assert_eq!(out.data["reminder"]["id"].as_i64(), Some(plants), "{}", out.summary);
}

#[test]
fn ambiguous_cancel_lists_candidates() {
    let c = open_in_memory().unwrap();
    let a = set(&c, "call mum", "tomorrow at 9am");
    let b = set(&c, "call mum about the party", "on Friday at 3pm");
    let out = call(&c, json!({"action": "cancel", "message": "mum"})).unwrap();
    assert_eq!(
        out.summary,
        format!("Which one: #{a} call mum (tomorrow 09:00) or #{b} call mum about the party (Friday 15:00)?")
    );
    assert_eq!(out.choices.len(), 2);
    assert_eq!(out.data["cancelled"], false);
    let pending = RemindersRepo(&c).pending_count().unwrap();
    assert_eq!(pending, 2, "nothing cancelled while it is unclear which");
    // An exact message wins over partial ones.
    let out = call(&c, json!({"action": "cancel", "message": "Call mum"})).unwrap();
    assert_eq!(out.data["reminder"]["id"].as_i64(), Some(a));
}

#[test]
fn action_inferred_when_missing() {
    let c = open_in_memory().unwrap();
    let out = call(&c, json!({"message": "call mum", "due_at": "in 20 minutes"})).unwrap();
    assert_eq!(out.data["action"], "create");
    assert_eq!(out.data["reminder"]["due_at"], "2026-11-18T10:20");
    assert_eq!(call(&c, json!({})).unwrap().data["action"], "list");
}

#[test]
fn list_is_capped() {
    let c = open_in_memory().unwrap();
    for k in 0..200 {
        set(&c, &format!("task {k}"), &format!("in {} minutes", k + 1));
    }
    let out = call(&c, json!({"action": "list"})).unwrap();
    assert_eq!(out.data["count"], LIST_LIMIT);
}

#[test]
fn created_reminders_fire() {
    let c = open_in_memory().unwrap();
    let id = set(&c, "check the oven", "in 20 minutes");
    let due = time::to_unix(time::parse_iso("2026-11-18T10:20").unwrap()).unwrap();
    let fired = crate::background::scheduler::fire_due(&c, due).unwrap();
    assert_eq!(fired.len(), 1);
    assert_eq!(fired[0].id, id);
}
