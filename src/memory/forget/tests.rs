use super::*;

fn about(s: &str, all: bool) -> Option<Target> {
    Some(Target::About { subject: s.into(), all })
}

#[test]
fn requests_people_make() {
    assert_eq!(parse_request("forget my passport number"), about("passport number", false));
    assert_eq!(
        parse_request("please delete what I told you about my therapy, I don't want it kept"),
        about("therapy", true)
    );
    assert_eq!(parse_request("I'm done talking about Jordan, forget all of it"), about("Jordan", true));
    assert_eq!(parse_request("remove my work email from your memory"), about("work email", false));
    assert_eq!(parse_request("forget the last thing I said"), Some(Target::Last));
    assert_eq!(parse_request("Actually, please forget that PIN."), about("PIN", false));
    assert_eq!(parse_request("please forget that"), Some(Target::Last));
    assert_eq!(parse_request("can you forget everything about my ex?"), about("ex", true));
}

#[test]
fn what_is_not_a_request() {
    for t in [
        "don't forget to buy milk",
        "I forget things all the time",
        "never forget your roots",
        "what is my PIN?",
        "forget it",
    ] {
        assert_eq!(parse_request(t), None, "{t}");
    }
}

fn line(x: &str, t: &str, text: &str) -> Line {
    Line { exchange_id: x.into(), thread_id: t.into(), text: text.into() }
}

#[test]
fn clear_cut_matches_forget_and_unclear_ones_ask() {
    let lines = vec![
        line("x3", "a", "I love hiking in the Alps"),
        line("x2", "a", "My passport number is X1234567"),
        line("x1", "b", "my passport expires next year"),
    ];
    let Resolution::Forget(p) = resolve(&about("passport number", false).unwrap(), &lines, "a") else { panic!() };
    assert_eq!(p.exchanges, ["x2"]);
    assert!(p.needles.contains(&"X1234567".to_string()), "{:?}", p.needles);
    assert!(p.needles.contains(&"My passport number is X1234567".to_string()));
    // Two lines about the passport, one thing asked: which one?
    let r = resolve(&about("passport", false).unwrap(), &lines, "a");
    assert!(matches!(&r, Resolution::Clarify(c) if c.len() == 2), "{r:?}");
    // "all of it" takes both.
    let Resolution::Forget(p) = resolve(&about("passport", true).unwrap(), &lines, "a") else { panic!() };
    assert_eq!(p.exchanges, ["x2", "x1"]);
    let Resolution::Forget(p) = resolve(&Target::Last, &lines, "a") else { panic!() };
    assert_eq!(p.exchanges, ["x3"]);
    assert_eq!(resolve(&about("volcano", false).unwrap(), &lines, "a"), Resolution::Nothing);
    assert_eq!(resolve(&Target::Last, &lines, "zzz"), Resolution::Nothing);
}

#[test]
fn needles_are_the_line_its_secrets_and_names_not_common_words() {
    let n = needles_of("The PIN for my bank card is 4921");
    assert!(n.contains(&"4921".to_string()), "{n:?}");
    let n = needles_of("My therapist is Dr. Okafor and she is great.");
    assert!(n.contains(&"Okafor".to_string()), "{n:?}");
    assert!(!n.iter().any(|x| x == "therapist" || x == "great"), "{n:?}");
    let n = needles_of("my work email is jane.doe@acme-corp.com");
    assert!(n.contains(&"jane.doe@acme-corp.com".to_string()), "{n:?}");
    assert!(preview("my pin is 4921").contains("[secret]"));
}

#[test]
fn a_job_queued_before_the_forget_stores_nothing_and_a_later_mention_is_learned() {
    use crate::memory::episodic::{build_episode, store_episode};
    use crate::store::{ENCODE_QUEUE, JobsRepo, MemoryLayer, Purge, list_layer, purge};
    let mut c = crate::store::open_in_memory().unwrap();
    let payload = |x: &str| {
        serde_json::json!({"thread_id": "t", "exchange_id": x, "topic": "t", "user_text": "My PIN is 4921",
                           "response": "Noted.", "mode": "RESPOND", "created_at": 1_800_000_000})
    };
    // The worker claimed the job, then the user forgot the exchange before it stored.
    JobsRepo(&c).enqueue(ENCODE_QUEUE, &payload("x1"), 3).unwrap();
    let job = JobsRepo(&c).claim(ENCODE_QUEUE).unwrap().unwrap();
    purge(&mut c, &Purge { exchanges: vec!["x1".into()], needles: vec!["4921".into()], ..Purge::default() }).unwrap();
    let stored = store_episode(&mut c, job.id, &build_episode(&payload("x1")).unwrap(), None).unwrap();
    assert_eq!(stored, None);
    assert!(list_layer(&c, MemoryLayer::Episodes, None, 10).unwrap().is_empty());
    // Said again later: a new exchange, stored normally.
    let job = JobsRepo(&c).enqueue(ENCODE_QUEUE, &payload("x2"), 3).unwrap();
    JobsRepo(&c).claim(ENCODE_QUEUE).unwrap().unwrap();
    assert!(store_episode(&mut c, job, &build_episode(&payload("x2")).unwrap(), None).unwrap().is_some());
}

#[test]
fn a_forgotten_line_names_the_slots_it_stated() {
    let lines = [line("x1", "t", "I'm vegetarian"), line("x2", "t", "I had pasta for lunch")];
    let Resolution::Forget(plan) = resolve(&Target::Last, &lines, "t") else { panic!("clear-cut") };
    assert_eq!(plan.slots, [("diet".to_string(), "vegetarian".to_string())]);
    assert!(plan.needles.iter().any(|n| n == "vegetarian"), "{:?}", plan.needles);
    let Resolution::Forget(plan) = resolve(&Target::Last, &[line("x3", "t", "I'm keto")], "t") else { panic!() };
    assert_eq!(plan.slots, [("diet".to_string(), "keto".to_string())]);
    assert!(!plan.needles.iter().any(|n| n == "keto"), "too short to hunt as a string: {:?}", plan.needles);
}
