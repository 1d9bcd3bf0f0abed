//! The regulator end to end through the engine, against the scripted endpoint with scripted
//! log-probabilities (docs/cognition.md §13): spans on the right characters, drift with its
//! terms, three corrections bringing the prelude into the next prompt, a cost cap with poor
//! replies stopping the spending, a tool loop in the ACT loop, and feedback in the audit.

use crate::support::harness::{self, Call, start_custom, start_heuristic};
use crate::support::openai_double::Reply;
use chalie::config::ModelUse;
use chalie::events::EngineEvent;
use serde_json::json;

fn scripted(chunks: &[(&str, f64)]) -> Reply {
    Reply::Text {
        chunks: chunks.iter().map(|(c, _)| c.to_string()).collect(),
        delay_ms: 0,
        logprobs: Some(chunks.iter().map(|(_, lp)| *lp).collect()),
    }
}

/// "The capital of Tanzania is Dodoma." with the model unsure of "Dodoma" (characters 27–33).
fn dodoma() -> Reply {
    scripted(&[
        ("The", -0.1),
        (" capital", -0.2),
        (" of", -0.1),
        (" Tanzania", -0.3),
        (" is", -0.1),
        (" Dod", -3.4),
        ("oma", -2.8),
        (".", -0.1),
    ])
}

#[tokio::test]
async fn a_low_logprob_stretch_gives_spans_at_its_characters() {
    let reply = dodoma();
    let h = start_heuristic(vec![reply]).await;
    let r = h.say("t", "what is the capital of Tanzania?").await;
    assert_eq!(r.response, "The capital of Tanzania is Dodoma.");
    let spans = &r.regulator.low_confidence_spans;
    assert_eq!(spans.len(), 1, "{:?}", r.regulator);
    assert_eq!((spans[0].start, spans[0].end, spans[0].text.as_str()), (27, 33, "Dodoma"));
    assert_eq!(r.response.chars().skip(27).take(6).collect::<String>(), "Dodoma");
    assert!((spans[0].mean_logprob - (-3.1)).abs() < 1e-9);
    assert_eq!(r.regulator.decision, "low_confidence_spans");
    assert!(r.regulator.confidence > 0.5, "mean NLL is low over the whole reply: {}", r.regulator.confidence);
    // The verdict is on the audit row too.
    let row = h.decision(&r.exchange_id).await;
    assert_eq!(row.regulator.unwrap()["low_confidence_spans"][0]["text"], "Dodoma");
}

#[tokio::test]
async fn an_off_topic_reply_drifts_with_its_terms() {
    let h = start_heuristic(vec![Reply::text("Here is a recipe for chocolate cake with butter frosting.")]).await;
    let mut events = h.bus.subscribe();
    let r = h.say("t", "explain the tokio runtime").await;
    let drift = r.regulator.scope_drift.as_ref().expect("drift");
    assert!(drift.score >= 0.5, "{drift:?}");
    for term in ["chocolate", "cake", "recipe"] {
        assert!(drift.terms.iter().any(|t| t == term), "{term} in {:?}", drift.terms);
    }
    assert_eq!(r.regulator.decision, "scope_drift_warn");
    let notices: Vec<String> = harness::drain(&mut events)
        .into_iter()
        .filter_map(|e| match e {
            chalie::events::EngineEvent::Notice { message, .. } => Some(message),
            _ => None,
        })
        .collect();
    assert!(notices.iter().any(|n| n.contains("strays") && n.contains("chocolate")), "{notices:?}");
}

#[tokio::test]
async fn three_corrections_put_the_prelude_into_the_next_prompt() {
    let replies = (0..4).map(|i| Reply::text(&format!("Refactored it and added docstrings ({i})."))).collect();
    let h = start_heuristic(replies).await;
    let first = h.say("t", "refactor the parser function").await;
    assert!(first.regulator.procedural_warning.is_none());
    h.say("t", "No, I meant without docstrings").await;
    h.say("t", "that's not what I asked, no docstrings").await;
    let r = h.say("t", "I said no docstrings in the parser function").await;
    let warning = r.regulator.procedural_warning.as_ref().expect("warning");
    assert_eq!(warning.cluster, "function+parser");
    assert_eq!(warning.corrections[0], "I said no docstrings in the parser function", "newest first");
    assert_eq!(warning.corrections.len(), 3);
    // The retry's generation prompt carried the past corrections; the earlier ones did not.
    let prompts: Vec<String> = h
        .double
        .chat_requests()
        .iter()
        .filter(|q| matches!(harness::kind(q), Call::Generation(_)))
        .map(harness::system_prompt)
        .collect();
    assert_eq!(prompts.len(), 4);
    assert!(!prompts[2].contains("corrected earlier replies"), "{}", prompts[2]);
    assert!(prompts[3].contains("corrected earlier replies"), "{}", prompts[3]);
    assert!(prompts[3].contains("No, I meant without docstrings"));
    // Each correction is the last turn's feedback in the audit.
    let row = h.decision(&first.exchange_id).await;
    assert_eq!(row.feedback.unwrap()["label"], "correction");
}

/// The engine keeps the state its last turn stored instead of parsing it again, but only while
/// the stored text is that one: a state written between turns by anyone else (here a reset) is
/// the one the next turn starts from.
#[tokio::test]
async fn a_state_rewritten_between_turns_is_the_one_the_next_turn_reads() {
    let replies = (0..5).map(|i| Reply::text(&format!("Refactored it and added docstrings ({i})."))).collect();
    let h = start_heuristic(replies).await;
    h.say("t", "refactor the parser function").await;
    h.say("t", "No, I meant without docstrings").await;
    h.say("t", "that's not what I asked, no docstrings").await;
    let fresh = serde_json::to_string(&chalie::cognition::regulator::RegulatorState::for_user("local")).unwrap();
    h.db.call(move |c| chalie::store::RegulatorStateRepo(c).save("local", &fresh)).await.unwrap();
    let r = h.say("t", "I said no docstrings in the parser function").await;
    assert!(r.regulator.procedural_warning.is_none(), "the reset state has no corrections: {:?}", r.regulator);
    // Left alone, the state the engine keeps is the stored one: the corrections count again.
    let r = h.say("t", "no, that's wrong, no docstrings in the parser function").await;
    assert!(r.regulator.procedural_warning.is_none(), "two corrections since the reset");
}

#[tokio::test]
async fn a_cap_with_poor_replies_stops_the_spending() {
    let mut settings = harness::settings(ModelUse::Heuristic);
    settings.regulator_token_cap = 20;
    let replies = (0..5).map(|i| Reply::text(&format!("Some long answer number {i} about your trip plans."))).collect();
    let h = start_custom(replies, settings, &[]).await;
    h.say("t", "plan my trip to Lisbon").await;
    h.say("t", "that's useless, plan the trip to Lisbon").await;
    h.say("t", "not helpful at all, the Lisbon trip").await;
    let calls_before = h.double.chat_requests().len();
    let r = h.say("t", "this doesn't help, just plan Lisbon").await;
    assert_eq!(h.double.chat_requests().len(), calls_before, "no model call once the break holds");
    assert_eq!(r.regulator.decision, "circuit_break");
    let chalie::vocab::regulator::BreakReason::CostCapReached { tokens_spent, tokens_cap, mean_quality } =
        r.regulator.breaks[0].reason.clone()
    else {
        panic!("{:?}", r.regulator.breaks)
    };
    assert!(tokens_spent >= 20 && tokens_cap == 20, "{tokens_spent}");
    assert!((mean_quality - 0.1).abs() < 1e-9, "three complaints: {mean_quality}");
    assert!(r.response.starts_with("Stopped:") && !r.response.contains('\n'), "{}", r.response);
    // The self-model carries the break (severity 0.5), and the router reads it as self_constraint.
    assert_eq!(r.router.signals["self_constraint"], json!(0.5), "{}", r.router.signals);
    // The break reset the budget: the next message is answered again.
    let again = h.say("t", "a weekend in Lisbon, two people, by train").await;
    assert_eq!(h.double.chat_requests().len(), calls_before + 1);
    assert!(again.regulator.breaks.is_empty(), "{:?}", again.regulator);
    let audit = h.decision(&r.exchange_id).await;
    assert_eq!(audit.regulator.unwrap()["breaks"][0]["reason"], json!("cost_cap_reached"));
}

/// The verdicts of that session's seven turns, in order.
const EVERY_KIND_DECISIONS: [&str; 7] = [
    "low_confidence_spans",
    "continue",
    "scope_drift_warn",
    "continue",
    "scope_drift_warn",
    "circuit_break",
    "procedural_warning",
];

/// The model's replies in the session where every decision kind fires: an unsure stretch
/// ("Dodoma"), a plain answer, an off-topic one, then the corrected task's attempts.
fn every_kind_replies() -> Vec<Reply> {
    vec![
        dodoma(),
        Reply::text("Nairobi is the capital of Kenya."),
        Reply::text("Here is a recipe for chocolate cake with butter frosting."),
        Reply::text("Refactored the parser function with docstrings."),
        Reply::text("Kept every docstring and renamed the module too."),
        Reply::text("Here is the parser function refactored."),
    ]
}

/// One session in which every decision kind fires, as the session log records them (the
/// `regulated` events): spans, continue, drift, a break (the quality decline after two
/// corrections; the turn makes no model call) and the procedural warning on the third.
#[tokio::test]
async fn a_session_where_every_decision_kind_fires() {
    let replies = every_kind_replies();
    let h = start_heuristic(replies).await;
    let mut events = h.bus.subscribe();
    let messages = [
        "what is the capital of Tanzania?",
        "thanks! and what about Kenya's capital?",
        "explain the tokio runtime",
        "refactor the parser function",
        "No, I meant without docstrings",
        "that's not what I asked",
        "I said no docstrings in the parser function",
    ];
    let mut decisions = Vec::new();
    for m in messages {
        let before = h.double.chat_requests().len();
        let r = h.say("t", m).await;
        let seen = harness::drain(&mut events);
        // The reply is announced once it is stored; the verdict is the turn's bookkeeping after it.
        let at = |regulated: bool| {
            seen.iter().position(|e| match e {
                EngineEvent::ReplyDone { exchange_id, .. } => !regulated && *exchange_id == r.exchange_id,
                EngineEvent::Regulated { exchange_id, .. } => regulated && *exchange_id == r.exchange_id,
                _ => false,
            })
        };
        assert!(at(false).is_some() && at(false) < at(true), "{m}: ReplyDone before Regulated");
        let regulated: Vec<_> = seen
            .into_iter()
            .filter_map(|e| match e {
                EngineEvent::Regulated { exchange_id, report } => Some((exchange_id, report)),
                _ => None,
            })
            .collect();
        assert_eq!(regulated.len(), 1, "one verdict per turn");
        assert_eq!(regulated[0].0, r.exchange_id);
        assert_eq!(regulated[0].1, r.regulator);
        if r.regulator.decision == "circuit_break" {
            assert_eq!(h.double.chat_requests().len(), before, "a break makes no model call");
            assert!(r.response.starts_with("Stopped:"), "{}", r.response);
        }
        decisions.push(r.regulator.decision.clone());
    }
    assert_eq!(decisions, EVERY_KIND_DECISIONS, "{decisions:?}");
}

/// The state is per user in the database: a new engine on the same database (a restart) still
/// knows the three corrections, and the audit rows keep the feedback labels.
#[tokio::test]
async fn corrections_survive_a_restart() {
    let replies = (0..5).map(|i| Reply::text(&format!("Refactored the parser function ({i})."))).collect();
    let h = start_heuristic(replies).await;
    h.say("t", "refactor the parser function").await;
    for c in ["No, I meant without docstrings", "that's wrong", "not what I asked"] {
        h.say("t", c).await;
    }
    let restarted = restart(&h).await;
    let xid = h.store("t2", "refactor the parser function").await;
    let r = restarted.turn("t2", &xid, "refactor the parser function", &Default::default()).await.unwrap();
    let warning = r.regulator.procedural_warning.expect("the warning after a restart");
    assert_eq!(warning.cluster, "function+parser");
    assert_eq!(warning.corrections, ["not what I asked", "that's wrong", "No, I meant without docstrings"]);
}

/// A second engine on the harness's database and double, as after a restart.
async fn restart(h: &harness::Harness) -> chalie::cognition::pipeline::Engine {
    let llm = std::sync::Arc::new(chalie::llm::Llm::new(
        h.bus.clone(),
        harness::settings(ModelUse::Heuristic),
        chalie::config::Role::ALL.map(|r| {
            let provider = chalie::llm::openai::OpenAiProvider::new("double", &h.double.base_url(), None);
            (r, chalie::llm::Route { provider: std::sync::Arc::new(provider), model: "m".into(), builtin: false })
        }),
    ));
    chalie::cognition::pipeline::Engine::start(h.db.clone(), llm, h.bus.clone()).await.unwrap()
}

/// The repeat check reads the last exchange's message from the history: the first message
/// after a restart that repeats the request is still a missed_act.
#[tokio::test]
async fn a_repeat_after_a_restart_is_missed_act() {
    let replies = (0..3).map(|i| Reply::text(&format!("Lisbon is lovely in June ({i})."))).collect();
    let h = start_heuristic(replies).await;
    let first = h.say("t", "find the cheapest flights to lisbon in june").await;
    let restarted = restart(&h).await;
    let text = "find the cheapest flights to lisbon in june";
    let xid = h.store("t", text).await;
    restarted.turn("t", &xid, text, &Default::default()).await.unwrap();
    let row = h.decision(&first.exchange_id).await;
    let fb = row.feedback.expect("the repeat judged the last reply");
    assert_eq!(fb["label"], "missed_act", "{fb}");
}

/// The session where every decision kind fires, recorded by the real binary (`ask --batch`)
/// and rerun offline with `--replay LOG --rerun --headless`: the log carries one `regulated`
/// event per turn and the rerun reports the same verdict for each.
#[test]
fn a_rerun_reports_every_decision_kind_per_turn() {
    use crate::support::bin::{chalie_with, json_lines, text};
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let double = rt.block_on(crate::support::openai_double::Double::start(every_kind_replies()));
    let config = dir.path().join("config.toml");
    let toml = format!(
        "[providers.double]\nkind = \"openai\"\nbase_url = \"{}\"\n[models]\nprimary = \"double/chat\"\n\
         lightweight = \"double/chat\"\nstrong = \"double/chat\"\nembedding = \"double/embed\"\n\
         [llm]\ntriage = \"heuristic\"\nmemory_extraction = \"heuristic\"\ncritic = \"heuristic\"\n",
        double.base_url()
    );
    std::fs::write(&config, toml).unwrap();
    let batch = dir.path().join("batch.txt");
    std::fs::write(
        &batch,
        "what is the capital of Tanzania?\nthanks! and what about Kenya's capital?\nexplain the tokio runtime\n\
         refactor the parser function\nNo, I meant without docstrings\nthat's not what I asked\n\
         I said no docstrings in the parser function\n",
    )
    .unwrap();
    let recorded = dir.path().join("recorded");
    let out = chalie_with(&recorded, &config, &[], &["ask", "--json", "--batch", batch.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let decisions: Vec<String> =
        json_lines(&out).iter().map(|r| r["regulator"]["decision"].as_str().unwrap_or("-").to_string()).collect();
    assert_eq!(decisions, EVERY_KIND_DECISIONS);
    drop(double);
    let log = std::fs::read_dir(recorded.join("sessions")).unwrap().next().unwrap().unwrap().path();
    let raw = std::fs::read_to_string(&log).unwrap();
    assert_eq!(raw.lines().filter(|l| l.contains(r#""type":"regulated""#)).count(), 7, "one verdict per turn");

    let out = chalie_with(
        &dir.path().join("rerun"),
        &config,
        &[],
        &["--replay", log.to_str().unwrap(), "--rerun", "--headless"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rerun: Vec<String> =
        json_lines(&out).iter().map(|t| t["regulator"]["decision"].as_str().unwrap_or("-").to_string()).collect();
    assert_eq!(rerun, EVERY_KIND_DECISIONS, "{}", text(&out.stderr));
}

/// Every model call a turn makes (embedding, triage, generation) names the turn's exchange, so
/// the regulator reads exactly the turn's tokens and costs off the bus.
#[tokio::test]
async fn every_model_call_of_a_turn_names_its_exchange() {
    let h = crate::support::harness::start(vec![
        harness::triage_reply("RESPOND", &[]),
        Reply::text("Paris is the capital of France."),
    ])
    .await;
    let mut events = h.bus.subscribe();
    let r = h.say("t", "what is the capital of France?").await;
    let origins: Vec<Option<String>> = harness::drain(&mut events)
        .into_iter()
        .filter_map(|e| match e {
            chalie::events::EngineEvent::LlmStart { origin, .. } => Some(origin),
            _ => None,
        })
        .collect();
    assert!(origins.len() >= 3, "embedding, triage and the reply: {origins:?}");
    let want = Some(format!("exchange:{}", r.exchange_id));
    assert!(origins.iter().all(|o| *o == want), "{origins:?}");
    // The turn's cost counts every role: the reply's tokens and the triage call's.
    assert!(r.regulator.cost.tokens_out > u64::from(r.tokens_out), "{:?} vs {}", r.regulator.cost, r.tokens_out);
    assert!(r.regulator.cost.tokens_in > u64::from(r.tokens_in), "{:?} vs {}", r.regulator.cost, r.tokens_in);
}

/// Five recalls in a row (different queries, so the seed's same-action rule never fires) end
/// the ACT loop with the regulator's own termination, beside fatigue; the reply says why and
/// no reply is generated.
#[tokio::test]
async fn a_tool_loop_ends_the_act_loop() {
    let plan = |qs: &[&str]| {
        let actions: Vec<serde_json::Value> =
            qs.iter().map(|q| json!({"type": "recall", "params": {"query": q}})).collect();
        Reply::text(&json!({ "actions": actions }).to_string())
    };
    let h = start_heuristic(vec![
        plan(&["alpha", "beta"]),
        plan(&["gamma", "delta"]),
        plan(&["epsilon"]),
        plan(&["zeta"]),
        Reply::text("This reply must not be generated."),
    ])
    .await;
    let r = h.say("t", "what do you remember about my projects?").await;
    assert_eq!(r.act_termination.map(|t| t.as_str()), Some("regulator_break"), "{:?}", r.act_iterations.len());
    assert_eq!(r.act_iterations.len(), 3);
    assert!(r.response.starts_with("Stopped: the recall skill ran 5 times"), "{}", r.response);
    assert_eq!(r.regulator.decision, "circuit_break");
    assert_eq!(
        r.regulator.breaks[0].reason,
        chalie::vocab::regulator::BreakReason::RepeatedToolCallLoop {
            tool_name: "recall".into(),
            consecutive_count: 5
        }
    );
    let generated = h.double.chat_requests().iter().filter(|q| matches!(harness::kind(q), Call::Generation(_))).count();
    assert_eq!(generated, 0, "the break stops the reply's model call");
}

/// A committed schema-4 log (recorded from the session above, where every decision kind
/// fires) still reads cleanly, with its seven `regulated` verdicts, beside the schema-3 fixture.
#[test]
fn the_committed_schema_4_fixture_reads_with_its_verdicts() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/replay_session_schema4.jsonl");
    let log = chalie::session::read_log(&path).unwrap();
    assert_eq!(log.warnings, Vec::<String>::new());
    let turns = chalie::session::recorded_turns(&log);
    assert_eq!(turns.len(), 7);
    assert!(turns.iter().all(|t| t.reply.is_some()));
    let raw = std::fs::read_to_string(&path).unwrap();
    let decisions: Vec<String> = raw
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["type"] == "regulated")
        .map(|v| v["report"]["decision"].as_str().unwrap_or("-").to_string())
        .collect();
    assert_eq!(decisions, EVERY_KIND_DECISIONS);
}
