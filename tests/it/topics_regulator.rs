//! The topic stability regulator on the command line: three days of messages that switch topic
//! at every line make `topics regulate --dry-run` say what it would move and store nothing; the
//! real cycle stores version 1 by `regulator` with its audit row; a second cycle the same day
//! leaves the moved parameter alone (cooldown).

use crate::support::bin::{chalie, json_lines, text};
use chalie::store::{ChatRepo, TopicAdjustmentsRepo, TopicParamsRepo};
use serde_json::Value;

fn seed(dir: &std::path::Path) {
    let conn = chalie::store::open(&dir.join("chalie.db")).unwrap();
    let now = chalie::store::now_ts();
    for day in 0..3i64 {
        for i in 0..20i64 {
            let at = now - (day + 1) * 86_400 + 600 + i * 60;
            let topic = if i % 2 == 0 { "coffee" } else { "football" };
            ChatRepo(&conn)
                .append_at("t", &format!("x{day}-{i}"), "user", "a line", (Some("RESPOND"), Some(topic)), at)
                .unwrap();
        }
    }
}

#[test]
fn topics_regulate_moves_the_boundary_base_once_and_audits_it() {
    let dir = tempfile::tempdir().unwrap();
    seed(dir.path());
    let dry = chalie(dir.path(), &["topics", "regulate", "--dry-run"]);
    let out = text(&dry.stdout);
    assert!(dry.status.success(), "{}", text(&dry.stderr));
    assert!(out.contains("boundary.base") && out.contains("dry run: nothing stored"), "{out}");
    assert!(out.contains("switch frequency 1.000"), "{out}");

    let real = json_lines(&chalie(dir.path(), &["topics", "regulate", "--json"]));
    assert_eq!(real[0]["new_version"], 1, "{}", real[0]);
    let action = &real[0]["plan"]["actions"][0];
    assert_eq!((action["action"].as_str(), action["param"].as_str()), (Some("adjust"), Some("boundary.base")));
    assert_eq!(action["pressure"], "switch_frequency_high");
    let conn = chalie::store::open(&dir.path().join("chalie.db")).unwrap();
    let v = TopicParamsRepo(&conn).latest().unwrap().unwrap();
    assert_eq!((v.version, v.author.as_str()), (1, "regulator"));
    let params: Value = serde_json::from_str(&v.params).unwrap();
    let old = action["old"].as_f64().unwrap();
    assert!((params["boundary.base"].as_f64().unwrap() - (old + 0.025)).abs() < 1e-6, "{params}");
    let rows = TopicAdjustmentsRepo(&conn).log().since(0).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].parameter, "boundary.base");

    // The same day again: the base cools down; the switch threshold is the next control.
    let again = json_lines(&chalie(dir.path(), &["topics", "regulate", "--json"]));
    let next = &again[0]["plan"]["actions"][0];
    assert_eq!(next["param"], "topic.switch_threshold", "{}", again[0]);
    assert!(again[0]["plan"]["skipped"].as_array().is_some_and(|s| s.is_empty()), "{}", again[0]);
}
