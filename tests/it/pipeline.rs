//! The cognition pipeline end to end against the scripted OpenAI double: each of the five
//! modes from a realistic message, the audit rows every turn leaves, Phase D's writes, the
//! identity hook, the event order and cancellation. Degradation: [`crate::pipeline_degrade`];
//! the built-in local models: [`crate::pipeline_local`].

use crate::support::harness::*;
use crate::support::openai_double::Reply;
use chalie::cognition::intent::TriageSource;
use chalie::cognition::pipeline::TurnReport;
use chalie::cognition::router::{DEFAULT_WEIGHTS_VERSION, Mode};
use chalie::events::EngineEvent;
use serde_json::Value;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The audit trail of one turn: its routing_decisions row carries the delivered mode, all
/// five scores, the signals, the weights version, the routing time and the fallbacks; its
/// interaction_log row exists.
async fn assert_audited(h: &Harness, r: &TurnReport) {
    let d = h.decision(&r.exchange_id).await;
    assert_eq!(d.selected_mode, r.mode.as_str());
    assert_eq!(d.thread_id.as_deref(), Some(r.thread_id.as_str()));
    assert_eq!(d.topic, r.topic.name);
    assert!(!d.topic.is_empty());
    let scores = d.scores.as_object().expect("scores are an object");
    for m in Mode::ALL {
        // Stored as JSON text: equal up to serde_json's default (not round-trip exact) parsing.
        let s = scores.get(m.as_str()).and_then(Value::as_f64).expect("every mode has a score");
        assert!((s - r.router.scores.get(m)).abs() < 1e-12, "{m} score in {scores:?} vs {:?}", r.router.scores);
    }
    assert_eq!(scores.len(), 5);
    let signals = d.signal_snapshot.as_object().expect("signal snapshot is an object");
    assert!(signals.len() > 10 && signals.contains_key("derived"), "{signals:?}");
    assert_eq!(d.signal_snapshot, r.router.signals);
    assert_eq!(d.weights_version, Some(i64::from(DEFAULT_WEIGHTS_VERSION)));
    assert!(d.weight_snapshot.as_ref().is_some_and(|w| w.is_object()));
    let t = d.routing_time_ms.expect("routing_time_ms");
    assert!(t.is_finite() && t >= 0.0, "{t}");
    assert_eq!(d.router_confidence, Some(r.router.confidence));
    assert_eq!(d.tiebreaker_used, r.router.tiebreaker_used);
    assert_eq!(d.pre_routed, r.router.pre_routed);
    let expected_fallback = (!r.fallbacks.is_empty()).then(|| r.fallbacks.join(","));
    assert_eq!(d.fallback, expected_fallback);
    assert!(d.reasoning.as_deref().is_some_and(|s| !s.is_empty()));
    let logged = h.interactions().await;
    let mine: Vec<&Value> = logged.iter().filter(|(x, _)| *x == r.exchange_id).map(|(_, p)| p).collect();
    assert_eq!(mine.len(), 1, "one system_response row per turn");
    assert_eq!(mine[0]["mode"], r.mode.as_str());
    assert_eq!(mine[0]["reply_mode"], r.reply_mode.as_str());
}

/// The triage row of a non-social turn: one, with this source and fallback reason.
async fn assert_triage_row(h: &Harness, r: &TurnReport, source: &str, fallback: Option<&str>) {
    let rows = h.triage_rows(&r.exchange_id).await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].source, source);
    assert_eq!(rows[0].fallback_reason.as_deref(), fallback);
    assert_eq!(rows[0].routed_mode, r.mode.as_str());
    assert_eq!(r.triage.fallback.as_deref(), fallback);
}

// ───────────────────────────── the five modes ─────────────────────────────

#[tokio::test]
async fn a_greeting_is_acknowledged_without_triage() {
    let h = start(vec![Reply::text("Good morning! Lovely to hear from you. What is on your mind today?")]).await;
    let r = h.say("t", "hey, good morning!").await;
    assert_eq!((r.mode, r.reply_mode), (Mode::Acknowledge, Mode::Acknowledge));
    assert_eq!(h.calls(), [Call::Generation(Mode::Acknowledge)], "the social exit skips triage");
    assert_eq!(r.response, "Good morning! Lovely to hear from you.", "held to two sentences");
    assert_eq!(r.social.as_deref(), Some("greeting"));
    assert!(r.router.pre_routed);
    assert_eq!(r.triage.result.source, TriageSource::Social);
    assert!(h.triage_rows(&r.exchange_id).await.is_empty(), "social exits are not triage calibration data");
    assert!(r.fallbacks.is_empty(), "{:?}", r.fallbacks);
    assert_audited(&h, &r).await;
}

#[tokio::test]
async fn a_factual_question_is_answered_with_the_models_text() {
    let h = start(vec![triage_reply("RESPOND", &[]), Reply::text("Paris is the capital of France.")]).await;
    let r = h.say("t", "What is the capital of France?").await;
    assert_eq!((r.mode, r.reply_mode), (Mode::Respond, Mode::Respond));
    assert_eq!(h.calls(), [Call::Triage, Call::Generation(Mode::Respond)]);
    assert_eq!(r.response, "Paris is the capital of France.");
    assert_eq!(r.router.tiebreaker_candidates, None);
    assert_eq!(r.triage.result.source, TriageSource::Model);
    assert!(r.fallbacks.is_empty(), "{:?}", r.fallbacks);
    assert!(r.failed.is_none() && !r.cancelled);
    assert!(r.tokens_out > 0);
    // The generation request ends with the user's message.
    let gen_req = &h.double.chat_requests()[1];
    let msgs = gen_req.body["messages"].as_array().unwrap();
    assert_eq!(msgs.last().unwrap()["content"], "What is the capital of France?");
    assert_eq!(gen_req.body["max_tokens"], 512);
    assert_audited(&h, &r).await;
    assert_triage_row(&h, &r, "llm", None).await;
}

#[tokio::test]
async fn a_vague_first_message_gets_one_clarifying_question() {
    let h = start(vec![
        triage_reply("CLARIFY", &[]),
        Reply::text("Happy to help. Which thing should I fix? I could also look at your logs."),
    ])
    .await;
    let r = h.say("fresh", "can you fix it?").await;
    assert_eq!((r.mode, r.reply_mode), (Mode::Clarify, Mode::Clarify));
    assert_eq!(h.calls(), [Call::Triage, Call::Generation(Mode::Clarify)]);
    assert_eq!(r.response, "Happy to help. Which thing should I fix?", "held to its first question");
    assert!(r.fallbacks.is_empty(), "{:?}", r.fallbacks);
    assert!(r.topic.is_new_topic);
    assert_audited(&h, &r).await;
    assert_triage_row(&h, &r, "llm", None).await;
}

#[tokio::test]
async fn a_clarification_without_a_question_is_replaced_by_a_deterministic_one() {
    let h = start(vec![triage_reply("CLARIFY", &[]), Reply::text("I am a helpful assistant.")]).await;
    let r = h.say("fresh", "can you fix it?").await;
    assert_eq!(r.mode, Mode::Clarify);
    assert!(r.response.contains('?'), "{}", r.response);
    assert!(!r.response.contains("helpful assistant"), "{}", r.response);
    assert_eq!(r.response, "What are you referring to? Tell me a little more and I'll take it from there.");
    assert_eq!(r.fallbacks, ["clarify_no_question"]);
    assert_audited(&h, &r).await;
    assert_eq!(h.decision(&r.exchange_id).await.fallback.as_deref(), Some("clarify_no_question"));
    assert_triage_row(&h, &r, "llm", None).await;
}

#[tokio::test]
async fn a_request_without_its_object_is_clarified_mid_thread() {
    // One exchange about a phrase, then a request about code that was never shown: working
    // memory holds no code, so the pointer stays unresolved (before: RESPOND, no such signal).
    let h = start_heuristic(vec![
        Reply::text("You would say: à bientôt."),
        Reply::text("Happy to. Which code do you mean? Paste it here."),
    ])
    .await;
    h.say("t", "how do I say 'see you soon' in French?").await;
    let r = h.say("t", "fix my code").await;
    assert_eq!(r.mode, Mode::Clarify, "{:?}", r.router.scores);
    let s = &r.router.signals;
    assert_eq!((s["missing_object"].as_bool(), s["referent_support"].as_f64()), (Some(true), Some(0.0)), "{s}");
    assert_eq!(s["derived"]["unresolved_reference"].as_f64(), Some(1.0));
    assert_eq!(s["correction"], "none");
    assert_audited(&h, &r).await;
}

#[tokio::test]
async fn a_skill_request_routes_to_act() {
    // The model's plan is prose: the deterministic planner stands in (the `act` module
    // covers the loop itself).
    let prose = || Reply::text("Sure, I'll add eggs and milk.");
    let h = start(vec![triage_reply("ACT", &["list"]), prose(), prose(), prose()]).await;
    let r = h.say("t", "add eggs and milk to my shopping list").await;
    assert_eq!(r.mode, Mode::Act, "{}", r.router.reason);
    assert_eq!(r.router.scored_mode, Mode::Act, "the router itself chose ACT");
    assert_eq!(h.calls()[0], Call::Triage);
    assert_eq!(r.response, "Added eggs and milk to shopping.");
    assert_eq!(r.reply_mode, Mode::Ignore, "a card-only ACT turn generates no text");
    assert_eq!(r.act_iterations.len(), 1);
    assert_eq!(r.act_iterations[0].planner, "deterministic");
    assert!(r.failed.is_none());
    assert_audited(&h, &r).await;
    assert_triage_row(&h, &r, "llm", None).await;
    assert_eq!(h.triage_rows(&r.exchange_id).await[0].mode, "ACT");
    assert_eq!(h.decision(&r.exchange_id).await.fallback.as_deref(), Some("act_plan_invalid_output"));
}

#[tokio::test]
async fn an_empty_message_is_ignored_without_any_model_call() {
    let h = start(vec![]).await;
    let r = h.say("t", "   ").await;
    assert_eq!((r.mode, r.reply_mode), (Mode::Ignore, Mode::Ignore));
    assert_eq!(r.response, "");
    assert!(h.double.requests().is_empty(), "no chat and no embedding: {:?}", h.double.requests());
    assert!(r.router.pre_routed);
    assert!(h.triage_rows(&r.exchange_id).await.is_empty());
    assert_audited(&h, &r).await;
    let history = h.history("t").await;
    assert_eq!(history.len(), 1, "no reply line for IGNORE: {history:?}");
    assert_eq!(history[0].2.as_deref(), Some("IGNORE"));
    assert!(h.working_memory("t").await.is_empty());
    assert!(h.jobs("encode").await.is_empty(), "nothing to remember");
}

#[tokio::test]
async fn withdrawing_a_request_is_acknowledged_without_any_chat_call() {
    let h = start(vec![]).await;
    let mut rx = h.bus.subscribe();
    let r = h.say("t", "never mind").await;
    assert_eq!(r.mode, Mode::Acknowledge);
    assert_eq!(r.social.as_deref(), Some("cancel"));
    assert_eq!(r.response, chalie::cognition::pipeline::CANCEL_REPLY);
    assert!(h.double.chat_requests().is_empty(), "a deterministic reply");
    let chunks: Vec<EngineEvent> =
        drain(&mut rx).into_iter().filter(|e| matches!(e, EngineEvent::ReplyChunk { .. })).collect();
    assert_eq!(chunks.len(), 1, "{chunks:?}");
    assert!(h.triage_rows(&r.exchange_id).await.is_empty());
    assert_audited(&h, &r).await;
    assert_eq!(h.history("t").await[1].1, chalie::cognition::pipeline::CANCEL_REPLY);
}

// ───────────────────────────── tie-breaker ─────────────────────────────

/// A message whose scores fall within the effective margin on a fresh thread.
const CLOSE_CALL: &str = "what was that";

#[tokio::test]
async fn a_close_call_asks_the_tie_breaker_and_applies_its_choice() {
    use chalie::cognition::context::ContextSignals;
    use chalie::cognition::router::{RouterState, RouterWeights, route_text};
    let d =
        route_text(CLOSE_CALL, &ContextSignals::default(), &RouterWeights::default(), &RouterState::default(), true);
    assert_eq!(d.tiebreak, Some((Mode::Clarify, Mode::Respond)), "the pinned message needs a tie-break");

    let h = start(vec![
        triage_reply("CLARIFY", &[]),
        Reply::text(r#"{"choice": "B"}"#),
        Reply::text("It was the chime of a new message."),
    ])
    .await;
    let r = h.say("fresh", CLOSE_CALL).await;
    assert_eq!(r.router.tiebreaker_candidates, Some([Mode::Clarify, Mode::Respond]));
    assert_eq!(h.calls(), [Call::Triage, Call::Tiebreak, Call::Generation(Mode::Respond)]);
    assert!(r.router.tiebreaker_used);
    assert_eq!(r.router.scored_mode, Mode::Clarify);
    assert_eq!(r.mode, Mode::Respond, "B is the runner-up");
    assert!(r.router.reason.contains("tie-breaker chose RESPOND"), "{}", r.router.reason);
    assert!(r.fallbacks.is_empty(), "{:?}", r.fallbacks);
    // The tie-breaker is shown both candidates.
    let tb = &h.double.chat_requests()[1];
    let context: Value = serde_json::from_str(tb.body["messages"][1]["content"].as_str().unwrap()).unwrap();
    assert_eq!(context["message"], CLOSE_CALL);
    assert!(context["A"].as_str().unwrap().starts_with("CLARIFY"));
    assert!(context["B"].as_str().unwrap().starts_with("RESPOND"));
    assert_audited(&h, &r).await;
    let row = h.decision(&r.exchange_id).await;
    assert_eq!(row.tiebreaker_candidates, Some(serde_json::json!(["CLARIFY", "RESPOND"])));
}

// ───────────────────────────── Phase D ─────────────────────────────

#[tokio::test]
async fn phase_d_commits_history_working_memory_log_and_encode_jobs() {
    let h = start_heuristic(vec![
        Reply::text("Paris is the capital of France."),
        Reply::text("Madrid is the capital of Spain."),
        Reply::text("Rome is the capital of Italy."),
    ])
    .await;
    let r1 = h.say("t", "What is the capital of France?").await;
    let r2 = h.say("t", "And what is the capital of Spain?").await;
    let wm = h.working_memory("t").await;
    let expected = [
        ("user", "What is the capital of France?"),
        ("assistant", "Paris is the capital of France."),
        ("user", "And what is the capital of Spain?"),
        ("assistant", "Madrid is the capital of Spain."),
    ];
    assert_eq!(wm, expected.map(|(a, b)| (a.to_string(), b.to_string())));

    // The second turn's generation saw the first exchange as turns, after the persona and
    // before the message; a server gets the turn's instructions merged into the one system
    // message, after the persona.
    let gen2 = &h.double.chat_requests()[1];
    let msgs = gen2.body["messages"].as_array().unwrap();
    let roles: Vec<&str> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
    let contents: Vec<&str> = msgs.iter().map(|m| m["content"].as_str().unwrap()).collect();
    assert_eq!(contents[1..], [expected[0].1, expected[1].1, expected[2].1]);
    let respond = format!("\n\n{}", chalie::cognition::pipeline::prompts::RESPOND.trim());
    assert!(contents[0].starts_with(chalie::cognition::pipeline::prompts::SOUL.trim()), "{}", contents[0]);
    assert!(contents[0].contains(&respond), "{}", contents[0]);

    let ignored = h.say("t", "  ").await;
    let r3 = h.say("t", "What is the capital of Italy?").await;
    assert_eq!(h.calls().len(), 3, "no triage call in heuristic mode: {:?}", h.calls());
    let wm = h.working_memory("t").await;
    assert_eq!(wm.len(), 6, "working memory grows to eight entries before it drops any: {wm:?}");
    assert_eq!(wm[..4], expected.map(|(a, b)| (a.to_string(), b.to_string())));
    assert_eq!(wm[4], ("user".to_string(), "What is the capital of Italy?".to_string()));
    assert_eq!(wm[5], ("assistant".to_string(), "Rome is the capital of Italy.".to_string()));
    assert!(h.working_memory("other").await.is_empty(), "working memory is per thread");

    // interaction_log: one system_response per turn, empty ones included.
    let log: Vec<String> = h.interactions().await.into_iter().map(|(x, _)| x).collect();
    let all = [&r1, &r2, &ignored, &r3];
    assert_eq!(log, all.map(|r| r.exchange_id.clone()));

    // One encode job per non-empty message, with the turn in its payload.
    let jobs = h.jobs("encode").await;
    assert_eq!(jobs.len(), 3, "{jobs:?}");
    for (job, r) in jobs.iter().zip([&r1, &r2, &r3]) {
        assert_eq!(job["thread_id"], "t");
        assert_eq!(job["exchange_id"], r.exchange_id.as_str());
        assert_eq!(job["topic"], r.topic.name.as_str());
        assert_eq!(job["response"], r.response.as_str());
        assert_eq!(job["mode"], r.mode.as_str());
        assert!(job["user_text"].as_str().is_some_and(|s| s.contains("capital")));
        assert!(job["created_at"].as_i64().is_some_and(|t| t > 0));
    }

    // The user rows got their mode and topic; each reply follows its message.
    let history = h.history("t").await;
    assert_eq!(history.len(), 7, "{history:?}");
    let users: Vec<_> = history.iter().filter(|m| m.0 == "user").collect();
    for (row, r) in users.iter().zip(all) {
        assert_eq!(row.2.as_deref(), Some(r.mode.as_str()));
        assert_eq!(row.3.as_deref(), Some(r.topic.name.as_str()));
    }
    assert_eq!(
        history[1],
        ("assistant".into(), r1.response.clone(), Some("RESPOND".into()), Some(r1.topic.name.clone()))
    );
    for r in all {
        assert_audited(&h, r).await;
    }
    for r in [&r1, &r2, &r3] {
        assert_triage_row(&h, r, "heuristic", None).await;
    }
    assert!(h.triage_rows(&ignored.exchange_id).await.is_empty(), "the empty message took the social exit");
}

#[tokio::test]
async fn the_identity_hook_stores_the_name_and_later_turns_use_it() {
    let h = start(vec![
        triage_reply("ACT", &["memorize"]),
        Reply::text("Nice to meet you, Ada!"),
        triage_reply("RESPOND", &[]),
        Reply::text("Paris, Ada."),
    ])
    .await;
    let mut rx = h.bus.subscribe();
    let r = h.say("t", "Hi, my name is Ada").await;
    assert_eq!(r.identity.as_deref(), Some("Ada"));
    assert_eq!(r.mode, Mode::Acknowledge, "nothing left to act on: {}", r.router.reason);
    assert_eq!(r.response, "Nice to meet you, Ada!");
    let events = drain(&mut rx);
    assert!(events.contains(&EngineEvent::IdentityLearned { name: "Ada".into() }), "{events:?}");

    let traits: Vec<(String, String, String, String)> = h
        .read(|c| {
            let mut s = c.prepare("SELECT trait_key, trait_value, source, category FROM user_traits")?;
            let rows = s.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await;
    assert_eq!(traits, [("name".into(), "Ada".into(), "explicit".into(), "core".into())]);

    let reqs = h.double.chat_requests();
    assert_eq!(h.calls(), [Call::Triage, Call::Generation(Mode::Acknowledge)]);
    let system = system_prompt(&reqs[1]);
    assert!(system.contains("Ada"), "{system}");
    assert!(system.contains("their name: Ada"), "{system}");

    let r2 = h.say("t", "What is the capital of France?").await;
    assert_eq!(r2.mode, Mode::Respond);
    assert_eq!(r2.identity, None);
    assert_eq!(h.calls()[2..], [Call::Triage, Call::Generation(Mode::Respond)]);
    let system = system_prompt(&h.double.chat_requests()[3]);
    assert!(system.contains("name: Ada"), "traits reach later turns: {system}");
    assert!(!system.contains("just told you their name"), "{system}");
    assert_audited(&h, &r).await;
    assert_audited(&h, &r2).await;
}

// ───────────────────────────── events and cancel ─────────────────────────────

#[tokio::test]
async fn events_go_routed_then_chunks_then_done() {
    let h = start(vec![triage_reply("RESPOND", &[]), Reply::text("Paris is the capital of France.")]).await;
    let mut rx = h.bus.subscribe();
    let r = h.say("t", "What is the capital of France?").await;
    let x = r.exchange_id.clone();
    let mine: Vec<EngineEvent> = drain(&mut rx)
        .into_iter()
        .filter(|e| match e {
            EngineEvent::Routed { exchange_id, .. }
            | EngineEvent::ReplyChunk { exchange_id, .. }
            | EngineEvent::ReplyDone { exchange_id, .. } => *exchange_id == x,
            _ => false,
        })
        .collect();
    let Some(EngineEvent::Routed { mode, router, triage, fallbacks, thread_id, .. }) = mine.first() else {
        panic!("Routed comes first: {mine:?}")
    };
    assert_eq!((*mode, thread_id.as_str()), (Mode::Respond, "t"));
    assert_eq!(**router, r.router);
    assert_eq!(**triage, r.triage);
    assert!(fallbacks.is_empty());
    let Some(EngineEvent::ReplyDone { text, mode, cancelled, failed, .. }) = mine.last() else {
        panic!("ReplyDone comes last: {mine:?}")
    };
    assert_eq!((text.as_str(), *mode, *cancelled, failed), (r.response.as_str(), Mode::Respond, false, &None));
    let chunks: Vec<&str> = mine[1..mine.len() - 1]
        .iter()
        .map(|e| match e {
            EngineEvent::ReplyChunk { text, .. } => text.as_str(),
            other => panic!("only chunks between Routed and ReplyDone: {other:?}"),
        })
        .collect();
    assert!(chunks.len() >= 2, "streamed: {chunks:?}");
    assert_eq!(chunks.concat(), "Paris is the capital of France.");
}

#[tokio::test]
async fn cancelling_keeps_and_commits_the_partial_reply() {
    let words = ["Paris ", "is ", "the ", "capital ", "and ", "largest ", "city ", "of ", "France."];
    let h = start(vec![
        triage_reply("RESPOND", &[]),
        Reply::Text { chunks: words.map(String::from).to_vec(), delay_ms: 400, logprobs: None },
    ])
    .await;
    let cancel = CancellationToken::new();
    let mut rx = h.bus.subscribe();
    let stop = cancel.clone();
    let watcher = tokio::spawn(async move {
        while let Ok(e) = rx.recv().await {
            if let EngineEvent::ReplyChunk { text, .. } = e.event
                && !text.is_empty()
            {
                stop.cancel();
                return text;
            }
        }
        String::new()
    });
    let r = tokio::time::timeout(Duration::from_secs(20), h.say_with("t", "What is the capital of France?", &cancel))
        .await
        .expect("a cancelled turn ends");
    assert_eq!(watcher.await.unwrap(), "Paris ");
    assert!(r.cancelled);
    assert!(r.failed.is_none());
    assert!(r.response.starts_with("Paris"), "{:?}", r.response);
    assert_ne!(r.response, words.concat(), "the reply was cut short");
    let history = h.history("t").await;
    assert_eq!(history.len(), 2, "{history:?}");
    assert_eq!((history[1].0.as_str(), history[1].1.as_str()), ("assistant", r.response.as_str()));
    let log = h.interactions().await;
    assert_eq!(log[0].1["cancelled"], true);
    assert_audited(&h, &r).await;
}
