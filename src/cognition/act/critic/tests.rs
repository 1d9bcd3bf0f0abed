use super::*;
use crate::cognition::act::dispatch::dispatch;
use crate::cognition::act::skill::SkillContext;
use chrono::Local;

fn ctx() -> SkillContext {
    SkillContext::new("t", "x", "t", Local::now())
}

fn result(kind: &str, data: Value) -> ActionResult {
    ActionResult { kind: kind.into(), ok: true, summary: "done".into(), data, ms: 0.0, card: true, choices: vec![] }
}

fn list(action: &str, name: &str, items: &[&str]) -> Action {
    Action::new("list", json!({"action": action, "name": name, "items": items}))
}

#[test]
fn only_actions_that_change_something_are_checked() {
    let ok = result("list", json!({}));
    assert!(has_effects(&list("add", "x", &["a"]), &ok));
    assert!(!has_effects(&list("view", "x", &[]), &ok), "a read");
    let mut failed = ok.clone();
    failed.ok = false;
    assert!(!has_effects(&list("add", "x", &["a"]), &failed), "nothing happened");
    let mut asked = ok.clone();
    asked.choices = vec!["a".into(), "b".into()];
    assert!(!has_effects(&list("remove", "x", &["a"]), &asked), "a question changed nothing");
    let set = Action::new("schedule", json!({"action": "create"}));
    assert!(has_effects(&set, &result("schedule", json!({"created": true}))));
    assert!(!has_effects(&set, &result("schedule", json!({"created": false}))), "already set: nothing new");
    assert!(!has_effects(&Action::new("recall", json!({})), &result("recall", json!({}))));
}

#[test]
fn list_checks_read_what_the_store_holds() {
    let seen = |items: &[(&str, bool)], lists: &[&str]| Observed {
        lists: lists.iter().map(|s| s.to_string()).collect(),
        items: Some(items.iter().map(|(c, k)| (c.to_string(), *k)).collect()),
        reminder: None,
    };
    let added = result("list", json!({"list": "shopping", "added": ["milk"]}));
    let add = list("add", "shopping", &["milk"]);
    assert!(check(&add, &added, &seen(&[("milk", false)], &["shopping"]), 0).is_ok());
    let e = check(&add, &added, &seen(&[("eggs", false)], &["shopping"]), 0).unwrap_err();
    assert_eq!(e, "milk is not on shopping after adding it");
    let gone = Observed { lists: vec![], items: None, reminder: None };
    assert!(check(&add, &added, &gone, 0).unwrap_err().contains("does not exist"));

    let removed = result("list", json!({"list": "shopping", "done": ["milk"]}));
    let remove = list("remove", "shopping", &["milk"]);
    assert!(check(&remove, &removed, &seen(&[], &["shopping"]), 0).is_ok());
    assert_eq!(
        check(&remove, &removed, &seen(&[("milk", false)], &["shopping"]), 0).unwrap_err(),
        "milk is still on shopping"
    );
    let checked = list("check", "shopping", &["milk"]);
    assert!(check(&checked, &removed, &seen(&[("milk", true)], &["shopping"]), 0).is_ok());
    assert!(check(&checked, &removed, &seen(&[("milk", false)], &["shopping"]), 0).is_err());

    let cleared = result("list", json!({"list": "shopping", "removed": 2}));
    let clear = list("clear", "shopping", &[]);
    assert!(check(&clear, &cleared, &seen(&[], &["shopping"]), 0).is_ok());
    assert!(check(&clear, &cleared, &seen(&[("a", false)], &["shopping"]), 0).is_err());
    let deleted = result("list", json!({"list": "shopping", "deleted": true}));
    let delete = list("delete", "shopping", &[]);
    assert!(check(&delete, &deleted, &gone, 0).is_ok());
    assert!(check(&delete, &deleted, &seen(&[], &["shopping"]), 0).is_err());
}

#[test]
fn a_reminder_must_be_pending_in_the_future_or_really_cancelled() {
    let set = Action::new("schedule", json!({"action": "create"}));
    let r = result("schedule", json!({"created": true, "reminder": {"id": 3}}));
    let at = |state: &str, due: i64| Observed { reminder: Some((state.into(), due)), ..Observed::default() };
    assert!(check(&set, &r, &at("pending", 200), 100).is_ok());
    assert_eq!(check(&set, &r, &at("pending", 100), 100).unwrap_err(), "reminder #3 is not in the future");
    assert!(check(&set, &r, &at("fired", 200), 100).is_err());
    assert!(check(&set, &r, &Observed::default(), 100).unwrap_err().contains("not stored"));
    let cancel = Action::new("schedule", json!({"action": "cancel"}));
    assert!(check(&cancel, &r, &at("cancelled", 200), 100).is_ok());
    assert_eq!(check(&cancel, &r, &at("pending", 200), 100).unwrap_err(), "reminder #3 is still pending");
}

#[test]
fn the_checks_against_a_real_store() {
    let c = crate::store::open_in_memory().unwrap();
    let add = list("add", "shopping", &["milk"]);
    let r = dispatch(&c, &add, &ctx(), None);
    let now = ctx().now.timestamp();
    assert_eq!(check(&add, &r, &observe(&c, &r).unwrap(), now), Ok("shopping holds what was added".into()));
    // The item vanishes behind the skill's back: the check notices.
    let remove = list("remove", "shopping", &["milk"]);
    dispatch(&c, &remove, &ctx(), None);
    assert!(check(&add, &r, &observe(&c, &r).unwrap(), now).is_err());
    let set = Action::new("schedule", json!({"action": "create", "message": "call mum", "due_at": "tomorrow at 9am"}));
    let r = dispatch(&c, &set, &ctx(), None);
    assert!(r.ok, "{r:?}");
    assert!(check(&set, &r, &observe(&c, &r).unwrap(), now).is_ok());
    assert!(check(&set, &r, &observe(&c, &r).unwrap(), now + 3 * 86_400).is_err(), "seen from the day after");
}

#[test]
fn verdicts_are_strict() {
    let add = list("add", "todo", &["milk"]);
    let v = parse(&json!({"verified": true}), &add).unwrap();
    assert!(v.verified && v.correction.is_empty());
    let fix = json!({"verified": false, "severity": "major", "issue": "wrong list",
        "correction": [{"type": "list", "params": {"action": "remove", "name": "todo", "items": ["milk"]}},
                       {"type": "list", "action": "add", "name": "shopping", "items": ["oat milk"]}]});
    let v = parse(&fix, &add).unwrap();
    assert_eq!(v.correction.len(), 2);
    assert_eq!(v.correction[1].params["name"], "shopping", "flat parameters are read too");
    let as_text = json!({"verified": false, "issue": "x", "correction": fix["correction"][0].to_string()});
    assert_eq!(parse(&as_text, &add).unwrap().correction.len(), 1, "an action in a string is read");
    assert!(parse(&json!({"verified": "yes"}), &add).is_err());
    assert!(parse(&json!({"verified": false}), &add).is_err(), "a doubt must say what is wrong");
    assert!(parse(&json!({"verified": false, "issue": "x", "severity": "awful"}), &add).is_err());
    assert!(parse(&json!({"verified": false, "issue": "x", "correction": "add oat milk instead"}), &add).is_err());
    let other = json!({"verified": false, "issue": "x", "correction": {"type": "schedule", "params": {}}});
    assert!(parse(&other, &add).unwrap_err().contains("schedule"), "a correction keeps to the action's skill");
}

#[test]
fn safe_actions_are_corrected_and_consequential_ones_ask() {
    let add = list("add", "todo", &["milk"]);
    let added = result("list", json!({"list": "todo", "added": ["milk"]}));
    let ok: Result<String, String> = Ok(String::new());
    let verdict = |correction: Vec<Action>| Verdict {
        verified: false,
        severity: "major".into(),
        issue: "the user asked for the shopping list".into(),
        correction,
    };
    assert_eq!(resolve(&add, &added, &ok, None), Outcome::Fine, "no model: the checks alone");
    let fine = Verdict { verified: true, severity: "minor".into(), issue: String::new(), correction: vec![] };
    assert_eq!(resolve(&add, &added, &ok, Some(&fine)), Outcome::Fine);
    // Taking back its own addition and adding the right thing is a safe repair.
    let fix = vec![list("remove", "todo", &["milk"]), list("add", "shopping", &["oat milk"])];
    assert_eq!(resolve(&add, &added, &ok, Some(&verdict(fix.clone()))), Outcome::Correct(fix));
    // Removing something it did not add is not.
    let risky = vec![list("remove", "todo", &["eggs"])];
    assert!(matches!(resolve(&add, &added, &ok, Some(&verdict(risky))), Outcome::Ask(_)));
    assert_eq!(
        resolve(&add, &added, &ok, Some(&verdict(vec![]))),
        Outcome::Flag("the user asked for the shopping list".into())
    );
    assert_eq!(
        resolve(&add, &added, &Err("milk is not on todo".into()), None),
        Outcome::Flag("milk is not on todo".into())
    );

    let set = Action::new("schedule", json!({"action": "create", "message": "call mum"}));
    let r =
        ActionResult { summary: "Reminder set: call mum tomorrow 09:00 [#1]".into(), ..result("schedule", json!({})) };
    let later =
        Action::new("schedule", json!({"action": "create", "message": "call mum", "due_at": "2026-11-25T10:00"}));
    let v = Verdict { issue: "the user said 10".into(), ..verdict(vec![later]) };
    let Outcome::Ask(q) = resolve(&set, &r, &ok, Some(&v)) else { panic!("a reminder is consequential") };
    assert_eq!(
        q,
        "Done: Reminder set: call mum tomorrow 09:00 [#1]. But a check says: the user said 10. \
         Should I change it: create call mum at 2026-11-25T10:00?"
    );
    let Outcome::Ask(q) = resolve(&set, &r, &Err("reminder #1 is not in the future".into()), None) else {
        panic!("asks")
    };
    assert!(q.ends_with("Should I undo it?"), "{q}");
}
