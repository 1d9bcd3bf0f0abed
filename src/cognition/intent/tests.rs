use super::*;
use crate::cognition::signals::extract;
use crate::llm::schema::validate;

fn intent_in(text: &str, wm: usize) -> IntentResult {
    let ctx = IntentContext { warmth: 0.0, memory_confidence: 0.0, working_memory_turns: wm };
    classify_intent(text, &extract(text), &ctx)
}

fn kind(text: &str) -> IntentType {
    intent_in(text, 0).intent_type
}

fn reply(v: Value) -> TriageResult {
    TriageResult::from_json(&v).unwrap()
}

fn check(r: TriageResult, text: &str, ctx: &TriageContext) -> (TriageResult, Vec<&'static str>) {
    sanity_check(r, text, &extract(text), ctx)
}

fn with_tools() -> TriageContext {
    TriageContext { tools_available: vec!["web_search".into()], ..TriageContext::default() }
}

// ── intent classifier ──

#[test]
fn intent_empty() {
    let r = intent_in("  ", 0);
    assert_eq!(r.intent_type, IntentType::Empty);
    assert_eq!(r.confidence, 1.0);
}

#[test]
fn intent_action_keywords_before_question_keywords() {
    for t in [
        "Can you remind me to call mum at 5pm?",
        "What did I tell you about my sister?",
        "Do you remember my name?",
        "could you add milk to my shopping list?",
        "What's on my to-do list?",
        "Set a timer for 10 minutes",
        "Remember that my sister's birthday is on June 3rd",
        "hey, check my shopping list",
        "thanks, now remind me at 5 to leave",
        "Look up the opening hours of the library",
        "add eggs",
        "Call me Sam",
        "Remember when we went to Paris?",
        "You mentioned a book last time",
    ] {
        assert_eq!(kind(t), IntentType::Action, "{t}");
    }
    for t in [
        "Add comments to this function please",
        "What book starts with the line Call me Ishmael?",
        "I remember when I was a kid",
        "Could you summarise what you just said?",
        "That reminds me of my childhood",
    ] {
        assert_ne!(kind(t), IntentType::Action, "{t}");
    }
}

#[test]
fn intent_greeting_feedback_and_cancel() {
    assert_eq!(kind("hi there!"), IntentType::Greeting);
    assert_eq!(kind("How are you?"), IntentType::Greeting);
    assert_eq!(kind("thanks!"), IntentType::Feedback);
    assert_eq!(kind("That's not what I meant"), IntentType::Feedback);
    assert_eq!(kind("great, that works"), IntentType::Feedback);
    assert_eq!(kind("never mind"), IntentType::Command, "a cancel is a command");
    assert_eq!(kind("found it, all good"), IntentType::Statement, "self-resolved");
    // A greeting prefix on a real question is a question.
    assert_eq!(kind("Hello, what's the tallest mountain in Africa?"), IntentType::Question);
    // Feedback words inside a question do not make feedback.
    assert_ne!(kind("Is this a good time to buy a house?"), IntentType::Feedback);
}

#[test]
fn intent_command_continuation_question_statement() {
    assert_eq!(kind("Tell me a joke"), IntentType::Command);
    assert_eq!(kind("can you write a factorial in TypeScript?"), IntentType::Command);
    assert_eq!(kind("Please explain recursion"), IntentType::Command);
    assert_eq!(kind("Why is the sky blue?"), IntentType::Question);
    assert_eq!(kind("DO YOU KNOW BASKETBALL"), IntentType::Question, "leading interrogative, no `?`");
    assert_eq!(kind("My printer is not printing."), IntentType::Statement);
    // Vague references are continuations, with or without working memory.
    assert_eq!(kind("what about that one?"), IntentType::Continuation);
    assert_eq!(kind("Tell me more"), IntentType::Continuation);
    // Openers count only when there is a conversation to continue.
    assert_eq!(intent_in("and what about Python?", 2).intent_type, IntentType::Continuation);
    assert_eq!(intent_in("and what about Python?", 0).intent_type, IntentType::Question);
}

#[test]
fn intent_complexity_levels() {
    assert_eq!(intent_in("What is Rust?", 0).complexity, Complexity::Simple);
    assert_eq!(intent_in("explain how a hash map works and why lookups are fast", 0).complexity, Complexity::Moderate);
    let long = "word ".repeat(20);
    assert_eq!(intent_in(&long, 0).complexity, Complexity::Moderate);
    let longer = "word ".repeat(31);
    assert_eq!(intent_in(&longer, 0).complexity, Complexity::Complex);
    let clauses = "plan my week and also book a table and then remind me to call the bank on monday ok";
    assert_eq!(intent_in(clauses, 0).complexity, Complexity::Complex);
}

#[test]
fn intent_confidence_by_type_and_context() {
    assert!(intent_in("hi", 0).confidence >= 0.9);
    let cold = intent_in("what about that one?", 0).confidence;
    let warm = intent_in("what about that one?", 3).confidence;
    assert!(cold < warm, "{cold} < {warm}");
    let with_mark = intent_in("is it raining in Paris?", 0).confidence;
    let without = intent_in("is it raining in Paris", 0).confidence;
    assert!(with_mark > without);
    let ctx = IntentContext { warmth: 0.9, memory_confidence: 0.5, working_memory_turns: 4 };
    let t = "is it raining in Paris?";
    assert!(classify_intent(t, &extract(t), &ctx).confidence > with_mark, "warm context helps");
    let long = "word ".repeat(60);
    assert!(intent_in(&long, 0).confidence < 0.5);
    for t in ["", "x", "why", "hello", "tell me a joke", &long] {
        let c = intent_in(t, 0).confidence;
        assert!((0.1..=1.0).contains(&c), "{t}: {c}");
    }
}

#[test]
fn intent_detects_each_innate_skill_by_keyword() {
    let cases = [
        ("what did I tell you about my sister?", "recall"),
        ("remember that I'm allergic to peanuts", "memorize"),
        ("how confident are you about that?", "introspect"),
        ("what does the ocean remind you of?", "associate"),
        ("remind me to stretch at 3pm", "schedule"),
        ("add milk to my shopping list", "list"),
        ("put Dune and Emma on my books list", "list"),
        ("start a focus session", "focus"),
        ("what do you know about me?", "autobiography"),
        ("keep working on the report in the background task queue", "persistent_task"),
        ("search my documents for the lease", "document"),
        ("read this https://example.com/post", "read"),
    ];
    for (text, skill) in cases {
        assert!(detect_skills(text).contains(&skill), "{text}: {:?}", detect_skills(text));
    }
    assert!(detect_skills("What is the capital of Peru?").is_empty());
    assert!(detect_skills("how do I sort the python list?").is_empty(), "a list that is not the user's");
    assert!(contains_url("see www.example.org"));
    assert!(!contains_url("no link here"));
}

// ── triage post-processing and schema ──

#[test]
fn intent_triage_schema_accepts_a_full_reply_and_rejects_bad_ones() {
    let schema = triage_schema();
    let good = json!({
        "branch": "act", "mode": "ACT", "tools": [], "skills": ["recall", "list"],
        "confidence_internal": 0.3, "confidence_tool_need": 0.1, "freshness_risk": 0.0,
        "effort_estimate": "trivial", "reasoning": "list request"
    });
    validate(&good, &schema).unwrap();
    let mut missing = good.clone();
    missing.as_object_mut().unwrap().remove("mode");
    assert!(validate(&missing, &schema).is_err());
    let mut bad_mode = good.clone();
    bad_mode["mode"] = json!("RUN");
    assert!(validate(&bad_mode, &schema).is_err());
    let mut many_tools = good.clone();
    many_tools["tools"] = json!(["a", "b", "c", "d"]);
    assert!(validate(&many_tools, &schema).is_err());
    let mut out_of_range = good.clone();
    out_of_range["freshness_risk"] = json!(1.5);
    assert!(validate(&out_of_range, &schema).is_err());
    let mut extra = good;
    extra["note"] = json!("x");
    assert!(validate(&extra, &schema).is_err());
}

#[test]
fn intent_triage_from_reply_strips_fences_and_chatter() {
    let r = TriageResult::from_reply("```json\n{\"mode\": \"RESPOND\", \"skills\": []}\n```").unwrap();
    assert_eq!(r.mode, TriageMode::Respond);
    assert_eq!(r.branch, Branch::Respond);
    let r = TriageResult::from_reply("Here you go: {\"branch\": \"clarify\"} hope it helps").unwrap();
    assert_eq!(r.mode, TriageMode::Clarify, "mode from branch");
    assert!(TriageResult::from_reply("no json").is_err());
    assert!(TriageResult::from_reply("{\"mode\": \"DANCE\"}").unwrap_err().contains("no valid mode"));
    assert!(TriageResult::from_json(&json!([1])).is_err());
}

#[test]
fn intent_triage_mode_wins_over_branch() {
    let r = reply(json!({"mode": "act", "branch": "respond"}));
    assert_eq!(r.mode, TriageMode::Act);
    assert_eq!(r.branch, Branch::Act);
    let r = reply(json!({"mode": "CANCEL"}));
    assert_eq!(r.branch, Branch::Social);
    assert_eq!(r.mode.as_mode(), None);
    assert_eq!(TriageMode::Acknowledge.as_mode(), Some(Mode::Acknowledge));
}

#[test]
fn intent_triage_skills_whitelist_primitives_first_sorted_capped() {
    let r = reply(json!({
        "mode": "ACT",
        "skills": ["schedule", "web_search", "List", "focus", "associate", "document", "recall", "list"]
    }));
    // All three primitives for ACT, in order; contextual sorted and capped at 3; unknown dropped.
    assert_eq!(r.skills, vec!["recall", "memorize", "introspect", "associate", "document", "focus"]);
    let r = reply(json!({"mode": "ACT", "skills": "schedule"}));
    assert_eq!(r.skills, vec!["recall", "memorize", "introspect", "schedule"]);
    // Not ACT: primitives are not enforced, but still come first.
    let r = reply(json!({"mode": "RESPOND", "skills": ["list", "memorize"]}));
    assert_eq!(r.skills, vec!["memorize", "list"]);
    assert_eq!(normalize_skills::<&str>(&[], false), Vec::<String>::new());
}

#[test]
fn intent_triage_effort_confidences_tools_reasoning() {
    let r = reply(json!({
        "mode": "ACT", "effort_estimate": "huge", "confidence_internal": "0.25",
        "confidence_tool_need": 7, "freshness_risk": -1, "tools": ["a", "a", "b", "c", "d", ""],
        "reasoning": "  because  "
    }));
    assert_eq!(r.effort, Effort::Moderate, "unknown effort → moderate");
    assert_eq!(r.confidence_internal, 0.25);
    assert_eq!(r.confidence_tool_need, 1.0);
    assert_eq!(r.freshness_risk, 0.0);
    assert_eq!(r.tools, vec!["a", "b", "c"]);
    assert_eq!(r.reasoning, "because");
    assert_eq!(r.source, TriageSource::Model);
    assert_eq!(reply(json!({"mode": "ACT", "effort": "Deep"})).effort, Effort::Deep);
    assert_eq!(reply(json!({"mode": "ACT"})).effort, Effort::Moderate);
    let defaults = reply(json!({"mode": "RESPOND", "confidence_internal": null}));
    assert_eq!((defaults.confidence_internal, defaults.confidence_tool_need, defaults.freshness_risk), (0.5, 0.5, 0.0));
    for (s, e) in
        [("trivial", Effort::Trivial), ("LIGHT", Effort::Light), ("deep", Effort::Deep), ("?", Effort::Moderate)]
    {
        assert_eq!(Effort::parse(s), e);
    }
}

#[test]
fn intent_triage_result_serde_uses_the_reply_field_names() {
    let r = reply(json!({"mode": "ACT", "skills": ["list"], "effort_estimate": "light"}));
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["mode"], "ACT");
    assert_eq!(v["branch"], "act");
    assert_eq!(v["effort_estimate"], "light");
    let back: TriageResult = serde_json::from_value(v).unwrap();
    assert_eq!(back, r);
}

#[test]
fn intent_skill_tiers() {
    for s in ["recall", "memorize", "introspect", "list", "focus", "moment", "emit_card"] {
        assert_eq!(skill_tier(s), Some(Effort::Trivial), "{s}");
    }
    for s in ["associate", "schedule", "autobiography", "document", "read", "reflect"] {
        assert_eq!(skill_tier(s), Some(Effort::Light), "{s}");
    }
    assert_eq!(skill_tier("persistent_task"), Some(Effort::Deep));
    assert_eq!(skill_tier("web_search"), None);
}

// ── self-check rules ──

#[test]
fn intent_r1_act_without_tools() {
    let none = TriageContext::default();
    // A contextual skill: keep.
    let (r, fired) = check(reply(json!({"mode": "ACT", "skills": ["list"]})), "add milk", &none);
    assert_eq!((r.mode, fired), (TriageMode::Act, vec!["R1:innate_skill"]));
    // Tools registered: the ACT loop picks.
    let (r, fired) = check(reply(json!({"mode": "ACT"})), "what is up with the stock market", &with_tools());
    assert_eq!((r.mode, fired), (TriageMode::Act, vec!["R1:deferred_to_loop"]));
    // No tools: recover an innate skill by keyword.
    let (r, fired) = check(reply(json!({"mode": "ACT"})), "remind me to stretch at 3pm", &none);
    assert_eq!(fired, vec!["R1:recovered_skill"]);
    assert!(r.skills.contains(&"schedule".to_string()));
    // Nothing: RESPOND and a capability gap.
    let (r, fired) = check(reply(json!({"mode": "ACT", "reasoning": "x"})), "what is the stock price of ACME", &none);
    assert_eq!((r.mode, r.branch, fired), (TriageMode::Respond, Branch::Respond, vec!["R1:capability_gap"]));
    assert!(r.reasoning.starts_with("capability gap"));
    // ACT with a tool named: R1 does not apply.
    let (_, fired) = check(reply(json!({"mode": "ACT", "tools": ["web_search"]})), "x", &with_tools());
    assert!(fired.is_empty());
}

#[test]
fn intent_r2_freshness_on_factual_questions() {
    let q = "Who won the match last night?";
    let fresh = || reply(json!({"mode": "RESPOND", "freshness_risk": 0.7}));
    let (r, fired) = check(fresh(), q, &with_tools());
    assert_eq!(r.mode, TriageMode::Act);
    assert_eq!(fired, vec!["R2", "R1:deferred_to_loop"]);
    assert_eq!(&r.skills[..3], &PRIMITIVES.map(String::from));
    // Below the threshold, without tools, or not a factual question: unchanged.
    let (r, _) = check(reply(json!({"mode": "RESPOND", "freshness_risk": 0.69})), q, &with_tools());
    assert_eq!(r.mode, TriageMode::Respond);
    let (r, _) = check(fresh(), q, &TriageContext::default());
    assert_eq!(r.mode, TriageMode::Respond);
    let (r, _) = check(fresh(), "Tell me about last night's match", &with_tools());
    assert_eq!(r.mode, TriageMode::Respond);
    assert!(is_factual_question("What's the weather in Rome?"));
    assert!(is_factual_question("so, is it raining in Oslo?"));
    assert!(!is_factual_question("What is it"));
}

#[test]
fn intent_r2b_tool_words_and_r5_url() {
    let (r, fired) = check(reply(json!({"mode": "RESPOND"})), "search for cheap flights to Lisbon", &with_tools());
    assert_eq!((r.mode, fired[0]), (TriageMode::Act, "R2b"));
    let (r, fired) =
        check(reply(json!({"mode": "CLARIFY"})), "summarise https://example.com/a", &TriageContext::default());
    assert_eq!(r.mode, TriageMode::Act);
    assert_eq!(fired, vec!["R5", "R1:innate_skill"]);
    assert!(r.skills.contains(&"read".to_string()));
    // Tool words with no tools and no innate skill: R2b, then R1 takes it back.
    let (r, fired) =
        check(reply(json!({"mode": "RESPOND"})), "google the population of Peru", &TriageContext::default());
    assert_eq!(fired, vec!["R2b", "R1:capability_gap"]);
    assert_eq!(r.mode, TriageMode::Respond);
    // Social modes are not touched by R2b/R5.
    let (r, _) = check(reply(json!({"mode": "ACKNOWLEDGE"})), "thanks for the link www.x.org", &with_tools());
    assert_eq!(r.mode, TriageMode::Acknowledge);
}

#[test]
fn intent_r3_ignore_on_a_real_question_cancel_protected() {
    let q = "wait, what time does the pharmacy close?";
    let (r, fired) = check(reply(json!({"mode": "IGNORE"})), q, &TriageContext::default());
    assert_eq!((r.mode, r.branch, fired), (TriageMode::Respond, Branch::Respond, vec!["R3"]));
    let (r, fired) = check(reply(json!({"mode": "CANCEL"})), q, &TriageContext::default());
    assert_eq!((r.mode, fired.len()), (TriageMode::Cancel, 0));
    // Three words or no `?`: stays IGNORE.
    let (r, _) = check(reply(json!({"mode": "IGNORE"})), "what time now?", &TriageContext::default());
    assert_eq!(r.mode, TriageMode::Ignore);
    let (r, _) = check(reply(json!({"mode": "IGNORE"})), "ok I will check the time myself", &TriageContext::default());
    assert_eq!(r.mode, TriageMode::Ignore);
}

#[test]
fn intent_r4_same_tool_after_act() {
    let ctx = TriageContext {
        tools_available: vec!["web_search".into()],
        previous_mode: Some(Mode::Act),
        previous_tools: vec!["web_search".into()],
        named_tools: Vec::new(),
    };
    let again = |need: f64| reply(json!({"mode": "ACT", "tools": ["web_search"], "confidence_tool_need": need}));
    let (r, fired) = check(again(0.9), "and the weather in Rome?", &ctx);
    assert_eq!((r.mode, fired), (TriageMode::Act, vec!["R4:damped"]));
    assert!((r.confidence_tool_need - 0.63).abs() < 1e-9);
    let (r, fired) = check(again(0.5), "and the weather in Rome?", &ctx);
    assert_eq!((r.mode, fired), (TriageMode::Respond, vec!["R4:respond"]));
    // A different tool, or a previous mode other than ACT: untouched.
    let other = reply(json!({"mode": "ACT", "tools": ["maps"], "confidence_tool_need": 0.5}));
    assert!(check(other, "x", &ctx).1.is_empty());
    let ctx2 = TriageContext { previous_mode: Some(Mode::Respond), ..ctx };
    assert!(check(again(0.5), "x", &ctx2).1.is_empty());
}

#[test]
fn intent_r6_effort_proportionality() {
    let light = reply(json!({"mode": "ACT", "skills": ["persistent_task", "schedule"], "effort_estimate": "light"}));
    let (r, fired) = check(light, "remind me at 5", &TriageContext::default());
    assert!(fired.contains(&"R6:removed_deep"));
    assert!(!r.skills.contains(&"persistent_task".to_string()));
    let deep = reply(json!({"mode": "ACT", "skills": ["schedule"], "effort_estimate": "deep"}));
    let (r, fired) = check(deep, "plan my whole move to Berlin", &TriageContext::default());
    assert!(fired.contains(&"R6:added_persistent_task"));
    assert_eq!(r.skills, vec!["recall", "memorize", "introspect", "schedule", "persistent_task"]);
    // Already three contextual skills: the last makes room, the cap holds.
    let full =
        reply(json!({"mode": "ACT", "skills": ["associate", "document", "schedule"], "effort_estimate": "deep"}));
    let (r, _) = check(full, "research my family history", &TriageContext::default());
    assert_eq!(r.skills, vec!["recall", "memorize", "introspect", "associate", "document", "persistent_task"]);
    // A deep RESPOND is not turned into a task; moderate effort changes nothing.
    let respond = reply(json!({"mode": "RESPOND", "effort_estimate": "deep"}));
    assert!(check(respond, "explain quantum field theory", &TriageContext::default()).1.is_empty());
    let moderate = reply(json!({"mode": "ACT", "skills": ["persistent_task"], "effort_estimate": "moderate"}));
    assert!(!check(moderate, "x", &TriageContext::default()).1.iter().any(|f| f.starts_with("R6")));
}

#[test]
fn intent_sanity_check_leaves_a_sound_result_alone() {
    let r = reply(json!({"mode": "RESPOND", "freshness_risk": 0.1}));
    let (out, fired) = check(r.clone(), "Why is the sky blue?", &with_tools());
    assert_eq!(out, r);
    assert!(fired.is_empty());
}

// ── heuristic fallback ──

#[test]
fn intent_heuristic_innate_skills() {
    let none = TriageContext::default();
    for (text, skill) in [
        ("what did I tell you about my sister?", "recall"),
        ("remember that my flight is on Friday", "memorize"),
        ("how confident are you?", "introspect"),
        ("what comes to mind when you think of autumn?", "associate"),
        ("remind me to call mum at 5pm", "schedule"),
        ("put eggs on my shopping list", "list"),
        ("start a focus session", "focus"),
        ("tell me about myself", "autobiography"),
    ] {
        let r = heuristic_triage(text, &extract(text), &none);
        assert_eq!(r.mode, TriageMode::Act, "{text}");
        assert_eq!(r.source, TriageSource::Heuristic);
        assert!(r.skills.contains(&skill.to_string()), "{text}: {:?}", r.skills);
        assert_eq!(&r.skills[..3], &PRIMITIVES.map(String::from));
        assert!(r.reasoning.contains(skill));
    }
    let r = heuristic_triage("remind me at 5", &extract("remind me at 5"), &none);
    assert_eq!(r.effort, Effort::Light, "schedule is a light skill");
}

#[test]
fn intent_heuristic_tools_realtime_url_and_default() {
    let t = "search for the latest Rust release";
    let r = heuristic_triage(t, &extract(t), &with_tools());
    assert_eq!((r.mode, r.freshness_risk), (TriageMode::Act, 0.8));
    let t = "what's the weather in Oslo today?";
    let r = heuristic_triage(t, &extract(t), &with_tools());
    assert_eq!((r.mode, r.freshness_risk), (TriageMode::Act, 0.8));
    // Without tools the same messages are answered.
    let r = heuristic_triage(t, &extract(t), &TriageContext::default());
    assert_eq!(r.mode, TriageMode::Respond);
    // A URL is the `read` skill, tools or not.
    let t = "what does https://example.com/x say?";
    let r = heuristic_triage(t, &extract(t), &TriageContext::default());
    assert_eq!(r.mode, TriageMode::Act);
    assert!(r.skills.contains(&"read".to_string()));
    let t = "Why is the sky blue?";
    let r = heuristic_triage(t, &extract(t), &with_tools());
    assert_eq!((r.mode, r.branch), (TriageMode::Respond, Branch::Respond));
    let r = heuristic_triage("", &extract(""), &with_tools());
    assert_eq!((r.mode, r.branch), (TriageMode::Ignore, Branch::Social));
}

#[test]
fn a_named_mcp_tool_is_a_capability() {
    let text = "use echo to say hi";
    let named = TriageContext { named_tools: vec!["mcp.notes.echo".into()], ..TriageContext::default() };
    // Without the tool, ACT with nothing to act with is a capability gap.
    let (r, fired) = check(reply(json!({"mode": "ACT"})), text, &TriageContext::default());
    assert_eq!((r.mode, fired), (TriageMode::Respond, vec!["R1:capability_gap"]));
    let (r, fired) = check(reply(json!({"mode": "ACT"})), text, &named);
    assert_eq!((r.mode, fired), (TriageMode::Act, vec!["R1:named_tool"]));
    assert_eq!(r.tools, ["mcp.notes.echo"]);
    assert!(crate::cognition::router::triage_act_confirmed(&r, &[]).is_some(), "the router's ACT signal sees it");
    let (r, _) = check(reply(json!({"mode": "RESPOND"})), text, &named);
    assert_eq!(r.mode, TriageMode::Act, "a reply the model would have answered becomes ACT");
    // A tool the message does not name is the model's invention and is dropped.
    let invented = reply(json!({"mode": "ACT", "tools": ["mcp.notes.delete"]}));
    let (r, fired) = check(invented, "delete everything", &TriageContext::default());
    assert!(r.tools.is_empty() && r.mode == TriageMode::Respond, "{fired:?}");
    assert!(crate::cognition::router::triage_act_confirmed(&r, &[]).is_none());
    // The keyword fallback: RESPOND without the tool, ACT with it.
    assert_eq!(heuristic_triage(text, &extract(text), &TriageContext::default()).mode, TriageMode::Respond);
    let h = heuristic_triage(text, &extract(text), &named);
    assert_eq!((h.mode, h.tools.clone()), (TriageMode::Act, vec!["mcp.notes.echo".to_string()]));
}
