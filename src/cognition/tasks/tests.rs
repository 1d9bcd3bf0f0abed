use super::plan::{coverage, depths, fallback, ready, validate};
use super::*;
use crate::vocab::tasks::StepState;
use serde_json::{Value, json};

const SKILLS: &[&str] = &["recall", "memorize", "introspect", "read", "list"];

fn step(id: &str, description: &str, deps: &[&str], tools: &[&str]) -> Value {
    json!({"id": id, "description": description, "depends_on": deps, "tools_needed": tools})
}

fn bike_plan() -> Value {
    json!({"steps": [
        step("s1", "list what matters for a twenty kilometre daily commute", &[], &[]),
        step("s2", "read the saved e-bike review notes the user pointed to", &[], &["read", "browser"]),
        step("s3", "compare range, weight and price of the candidate bikes", &["s1", "s2"], &["recall"]),
        step("s4", "write a shortlist of three bikes with one reason each", &["s3"], &["list"]),
    ], "decomposition_confidence": 0.8})
}

#[test]
fn a_sound_plan_passes_and_keeps_only_tools_that_run() {
    let p = validate(&bike_plan(), SKILLS).unwrap();
    assert_eq!(p.steps.len(), 4);
    assert_eq!(p.steps[1].tools_needed, vec!["read"], "`browser` is not a skill of this build");
    assert_eq!(p.source, "model");
    let d = depths(&p.steps).unwrap();
    assert_eq!((d["s1"], d["s2"], d["s3"], d["s4"]), (0, 0, 1, 2));
}

#[test]
fn every_gate_rejects_its_own_failure() {
    let with = |f: &dyn Fn(&mut Value)| {
        let mut v = bike_plan();
        f(&mut v);
        validate(&v, SKILLS).unwrap_err()
    };
    assert!(with(&|v| v["decomposition_confidence"] = json!(0.5)).contains("confidence"));
    assert!(with(&|v| v["steps"].as_array_mut().unwrap().truncate(1)).contains("1 steps"));
    assert!(
        with(&|v| {
            let s = v["steps"][0].clone();
            let a = v["steps"].as_array_mut().unwrap();
            for i in 0..5 {
                let mut s = s.clone();
                s["id"] = json!(format!("x{i}"));
                s["description"] = json!(format!("a different step number {i} about bikes {}", "x ".repeat(i)));
                a.push(s);
            }
        })
        .contains("9 steps")
    );
    assert!(with(&|v| v["steps"][0]["description"] = json!("compare bikes")).contains("2 words"));
    assert!(with(&|v| v["steps"][0]["description"] = json!("word ".repeat(31))).contains("31 words"));
    assert!(with(&|v| v["steps"][3]["depends_on"] = json!(["s9"])).contains("`s9`"));
    assert!(with(&|v| v["steps"][3]["depends_on"] = json!(["s4"])).contains("`s4`"), "a step on itself");
    assert!(with(&|v| v["steps"][1]["id"] = json!("s1")).contains("share an id"));
    assert!(
        with(&|v| {
            v["steps"][0]["depends_on"] = json!(["s4"]);
            v["steps"][1]["depends_on"] = json!(["s1"]);
        })
        .contains("every step depends")
    );
    assert!(with(&|v| v["steps"][0]["depends_on"] = json!(["s4"])).contains("cycle"), "s1→s4→s3→s1");
    assert!(
        with(&|v| v["steps"][1]["description"] = json!("list what matters for a twenty kilometre daily commute ride"))
            .contains("near duplicates")
    );
}

#[test]
fn the_fallback_is_one_honest_step() {
    let p = fallback("watch flights to Lisbon under 120 euros for May", "2 steps only");
    assert_eq!(p.steps.len(), 1);
    assert_eq!(p.steps[0].description, "watch flights to Lisbon under 120 euros for May");
    assert_eq!((p.source.as_str(), p.rejected.as_deref()), ("fallback", Some("2 steps only")));
}

#[test]
fn ready_steps_come_breadth_first_then_toolless_then_shorter_then_by_id() {
    let mut p = validate(&bike_plan(), SKILLS).unwrap();
    // s1 (no tools) before s2 (needs `read`), both roots; s3 waits for both.
    assert_eq!(ready(&p), vec![0, 1]);
    p.steps[0].state = StepState::Done;
    assert_eq!(ready(&p), vec![1]);
    p.steps[1].state = StepState::Skipped;
    assert_eq!(ready(&p), vec![2], "a skipped dependency no longer blocks");
    assert!((coverage(&p) - 0.5).abs() < 1e-9);
    p.steps[2].state = StepState::Done;
    p.steps[3].state = StepState::Done;
    assert!(ready(&p).is_empty());
    assert!((coverage(&p) - 1.0).abs() < 1e-9);
}

#[test]
fn shorter_descriptions_and_ids_break_ties() {
    let v = json!({"steps": [
        step("s2", "read every saved review of the bikes carefully", &[], &[]),
        step("s1", "note the commute length and terrain", &[], &[]),
        step("s3", "note the budget for the new bike", &[], &[]),
    ], "decomposition_confidence": 0.9});
    let p = validate(&v, SKILLS).unwrap();
    // s1 and s3 have six words; s1 wins on id; s2 (eight words) last.
    assert_eq!(ready(&p), vec![1, 2, 0]);
}

#[test]
fn a_goal_close_to_an_open_task_is_that_task() {
    let open = [(1, "keep an eye on flights to Lisbon under 120 euros in May"), (2, "research e-bikes for my commute")];
    assert_eq!(duplicate_of("keep an eye on flights to Lisbon under 120 euros for May", open), Some(1));
    assert_eq!(duplicate_of("find a dentist near the office", open), None);
    assert_eq!(duplicate_of("", open), None);
}

#[test]
fn surfacing_after_cycle_two_on_a_jump_or_when_done() {
    assert!(!should_surface(1, 0.0, 0.1, false));
    assert!(should_surface(2, 0.1, 0.1, false));
    assert!(!should_surface(3, 0.5, 0.6, false), "a 10-point rise is not news");
    assert!(should_surface(3, 0.5, 0.75, false));
    assert!(should_surface(1, 0.0, 1.0, true));
}
