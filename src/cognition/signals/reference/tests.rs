use super::*;
use crate::text::{normalize, words};

fn missing(t: &str) -> bool {
    let lower = normalize(t);
    missing_object(t, &words(&lower))
}

fn corr(t: &str) -> Correction {
    correction(&words(&normalize(t)))
}

fn support(t: &str, wm: &[&str], new_topic: bool) -> f64 {
    referent_support(&words(&normalize(t)), wm, new_topic)
}

#[test]
fn reference_missing_object_pointer_objects() {
    for t in [
        "fix my code",
        "translate this into French",
        "can you summarize it",
        "Could you proofread the email for me?",
        "please review my essay",
        "debug this function",
        "send it to Maria",
        "Rewrite that paragraph so it sounds friendlier",
        "review my essay about climate change",
        "can you check and fix it?",
        "go through and proofread my draft",
        "explain this",
    ] {
        assert!(missing(t), "{t}");
    }
}

#[test]
fn reference_missing_object_negatives_carry_their_object() {
    for t in [
        "translate 'bonjour' to English",
        "fix the typo in 'teh'",
        "translate good night into Spanish",
        "fix my code: for i in range(10) print(i)",
        "Summarize the plot of Hamlet in two sentences",
        "check my shopping list",
        "explain how photosynthesis works",
        "check the file permissions",
        "write an email to my landlord",
        "fix this morning's report",
        "can you check the weather in Paris",
        "what is this?",
        "",
    ] {
        assert!(!missing(t), "{t}");
    }
}

#[test]
fn reference_inline_material_detection() {
    assert!(quoted_span("translate 'bonjour' please"));
    assert!(!quoted_span("don't fix it, it's fine"), "apostrophes inside words are not quotes");
    assert!(has_inline_material("summarize this: the meeting moved"));
    assert!(!has_inline_material("summarize it"));
}

#[test]
fn reference_corrections_bare_and_with_detail() {
    for t in [
        "That's not what I meant",
        "no, that's not what I asked",
        "you misunderstood me",
        "I think you misunderstood",
        "Nope, you missed the point",
        "thats not it",
        "sorry, I didn't mean that",
    ] {
        assert_eq!(corr(t), Correction::Bare, "{t}");
    }
    for t in [
        "no, I meant questions about the building, not the contract",
        "I meant the Python version",
        "you misunderstood, I want the vegetarian recipe",
        "I mean, can you tell me how to update the BIOS on Linux?",
    ] {
        assert_eq!(corr(t), Correction::WithDetail, "{t}");
    }
    for t in [
        "no, more formal",
        "this doesn't work",
        "what does misunderstood mean in French",
        "I meant it",
        "what did you mean by that?",
        "tell me what I meant to buy",
    ] {
        assert_ne!(corr(t), Correction::Bare, "{t}");
    }
    assert_eq!(corr("what I really wanted was a summary"), Correction::None);
}

#[test]
fn reference_code_detection() {
    assert!(looks_like_code("for i in range(10) print(i)"));
    assert!(looks_like_code("let x = vec![1, 2];"));
    assert!(!looks_like_code("the meeting is moved to Thursday afternoon"));
    assert!(!looks_like_code("how formal is that?"));
    assert!(!looks_like_code("Reminder set: return the library book — 2026-11-28T10:00 (Saturday 10:00) [#12]"));
    assert!(names_code(&["fix", "my", "code"]));
    assert!(!names_code(&["translate", "this"]));
}

#[test]
fn reference_support_grows_with_working_memory_and_needs_code_for_code() {
    assert_eq!(support("fix it", &[], false), 0.0);
    assert_eq!(support("fix it", &["a", "b"], false), 0.5);
    assert_eq!(support("fix it", &["a", "b", "c", "d", "e"], false), 1.0);
    assert_eq!(support("fix it", &["a", "b", "c", "d"], true), 0.5, "another topic's memory");
    let prose = ["translate 'see you soon'", "À bientôt", "how formal is that?", "Quite informal."];
    assert_eq!(support("fix my code", &prose, false), 0.0, "no code to fix");
    let code = ["for i in range(10) print(i)", "Add a colon after range(10)."];
    assert_eq!(support("fix my code", &code, false), 0.5);
}

fn underspecified(t: &str) -> bool {
    let lower = normalize(t);
    underspecified_request(t, &words(&lower))
}

#[test]
fn reference_underspecified_requests_lack_their_details() {
    for t in [
        "I need to write an email to my landlord",
        "help me plan it",
        "I have a packed day, can you help me plan it?",
        "can you help me plan my week?",
        "Could you draft a letter for my boss?",
        "write a speech",
        "I want to organise a party",
        "please prepare a short presentation",
        "I'm choosing between two apartments",
        "I can't decide between a few options",
    ] {
        assert!(underspecified(t), "{t}");
    }
}

#[test]
fn reference_specified_requests_are_not_underspecified() {
    for t in [
        "help me plan a 3-day trip to Rome in May on a $500 budget",
        "help me plan a trip to Rome next week with my sister",
        "I need to write an email to my landlord about the broken heater",
        "can you draft something polite but firm?",
        "write a haiku",
        "write a poem about the sea",
        "write an email saying 'I will be late'",
        "I write emails for a living",
        "what's the plan for today?",
        "can you tell me the plan",
        "Could you prepare me for the interview?",
        "fix my code",
        "I'm choosing between the Honda Civic and the Toyota Corolla",
        "what's the difference between an index fund and an ETF?",
        "I'm torn between Lisbon or Porto for a weekend",
        "",
    ] {
        assert!(!underspecified(t), "{t}");
    }
}
