//! Degradation, never failure: every model call of a turn can hang, answer junk or be
//! unreachable, and the turn still commits, with the audit row naming the fallback that fired.

use crate::support::harness::*;
use crate::support::openai_double::Reply;
use chalie::cognition::context::ContextSignals;
use chalie::cognition::intent::{TriageMode as Triaged, TriageSource};
use chalie::cognition::router::{Mode, RouterState, RouterWeights, route_text};
use chalie::config::{ModelUse, Role};
use chalie::events::EngineEvent;

const QUESTION: &str = "What is the capital of France?";
/// Scores within the effective margin on a fresh thread (pinned below).
const CLOSE_CALL: &str = "what was that";

#[tokio::test]
async fn a_hanging_triage_times_out_and_the_keyword_fallback_decides() {
    let h = start(vec![Reply::Hang, Reply::text("Paris.")]).await;
    let r = h.say("t", QUESTION).await;
    assert_eq!(h.calls(), [Call::Triage, Call::Generation(Mode::Respond)]);
    assert_eq!(r.triage.fallback.as_deref(), Some("triage_timeout"));
    assert_eq!(r.triage.result.source, TriageSource::Heuristic);
    assert_eq!(r.triage.result.mode, Triaged::Respond);
    assert!(r.triage.result.reasoning.starts_with("heuristic"), "{}", r.triage.result.reasoning);
    assert_eq!(r.fallbacks, ["triage_timeout"]);
    assert_eq!((r.mode, r.response.as_str()), (Mode::Respond, "Paris."));
    let d = h.decision(&r.exchange_id).await;
    assert_eq!(d.fallback.as_deref(), Some("triage_timeout"));
    let rows = h.triage_rows(&r.exchange_id).await;
    assert_eq!(rows.len(), 1);
    assert_eq!((rows[0].source.as_str(), rows[0].fallback_reason.as_deref()), ("heuristic", Some("triage_timeout")));
    assert_eq!(rows[0].mode, "RESPOND");
}

#[tokio::test]
async fn a_triage_stream_of_junk_is_invalid_output() {
    let h = start(vec![Reply::Junk, Reply::text("Paris.")]).await;
    let r = h.say("t", QUESTION).await;
    assert_eq!(h.calls(), [Call::Triage, Call::Generation(Mode::Respond)]);
    assert_eq!(r.fallbacks, ["triage_invalid_output"]);
    assert_eq!(r.triage.result.source, TriageSource::Heuristic);
    assert_eq!((r.mode, r.response.as_str()), (Mode::Respond, "Paris."));
    assert_eq!(h.decision(&r.exchange_id).await.fallback.as_deref(), Some("triage_invalid_output"));
    let rows = h.triage_rows(&r.exchange_id).await;
    assert_eq!(
        (rows[0].source.as_str(), rows[0].fallback_reason.as_deref()),
        ("heuristic", Some("triage_invalid_output"))
    );
}

#[tokio::test]
async fn triage_prose_is_repaired_twice_then_given_up() {
    // A generous time box so all three rounds fit: the outcome must not depend on speed.
    let mut s = settings(ModelUse::Llm);
    s.triage_timeout_ms = 10_000;
    let prose = "I think you should just respond to this one.";
    let h = start_custom(
        vec![Reply::text(prose), Reply::text(prose), Reply::text("{\"mode\": \"maybe\"}"), Reply::text("Paris.")],
        s,
        &[],
    )
    .await;
    let r = h.say("t", QUESTION).await;
    assert_eq!(h.calls(), [Call::Triage, Call::Triage, Call::Triage, Call::Generation(Mode::Respond)]);
    let repair = &h.double.chat_requests()[1];
    let last = repair.body["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_string();
    assert!(last.contains("not usable"), "the repair round says what was wrong: {last}");
    assert_eq!(r.fallbacks, ["triage_invalid_output"]);
    assert_eq!(r.triage.result.source, TriageSource::Heuristic);
    assert_eq!(r.response, "Paris.");
    assert_eq!(h.decision(&r.exchange_id).await.fallback.as_deref(), Some("triage_invalid_output"));
}

#[tokio::test]
async fn a_failing_primary_model_still_commits_an_honest_system_line() {
    let h = start(vec![triage_reply("RESPOND", &[]), Reply::Status { code: 500, body: "model crashed".into() }]).await;
    let mut rx = h.bus.subscribe();
    let r = h.say("t", QUESTION).await;
    assert_eq!(h.calls(), [Call::Triage, Call::Generation(Mode::Respond)]);
    assert!(r.failed.is_some(), "{r:?}");
    assert_eq!(r.fallbacks, ["generation_error"]);
    assert!(r.response.starts_with("No reply this time"), "{}", r.response);
    assert!(r.response.contains("double/m"), "names the model: {}", r.response);
    assert_failure_committed(&h, &r).await;
    let events = drain(&mut rx);
    assert!(
        events.iter().any(|e| matches!(e, EngineEvent::ReplyDone { failed: Some(_), text, .. } if *text == r.response)),
        "{events:?}"
    );
    assert!(!events.iter().any(|e| matches!(e, EngineEvent::ReplyChunk { .. })), "nothing was streamed");
}

#[tokio::test]
async fn a_reply_cut_off_mid_stream_keeps_what_the_user_already_read() {
    let chunks: Vec<String> = ["Paris ", "is the ", "capital ", "of France."].map(String::from).into();
    let h = start(vec![triage_reply("RESPOND", &[]), Reply::CutAfter { chunks, after: 2 }]).await;
    let mut rx = h.bus.subscribe();
    let r = h.say("t", QUESTION).await;
    assert_eq!(h.calls(), [Call::Triage, Call::Generation(Mode::Respond)], "never retried once tokens showed");
    assert_eq!(r.response, "Paris is the");
    assert!(r.failed.is_none(), "{r:?}");
    assert_eq!(r.fallbacks, ["generation_cut_off"]);
    let history = h.history("t").await;
    assert_eq!((history[1].0.as_str(), history[1].1.as_str()), ("assistant", "Paris is the"));
    assert_eq!(h.decision(&r.exchange_id).await.fallback.as_deref(), Some("generation_cut_off"));
    let events = drain(&mut rx);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, EngineEvent::Notice { message, .. } if message.starts_with("the reply was cut off"))),
        "the UI says why it stopped: {events:?}"
    );
}

#[tokio::test]
async fn an_unreachable_primary_model_still_commits_an_honest_system_line() {
    let h = start_custom(vec![triage_reply("RESPOND", &[])], settings(ModelUse::Llm), &[Role::Primary]).await;
    let r = h.say("t", QUESTION).await;
    assert_eq!(h.calls(), [Call::Triage], "triage and embeddings still use the double");
    assert!(r.failed.is_some());
    assert_eq!(r.fallbacks, ["generation_unavailable"]);
    assert!(r.response.starts_with("No reply this time"), "{}", r.response);
    assert_failure_committed(&h, &r).await;
}

/// The failed turn is committed like any other, its explanation stored as a `system` line
/// that working memory does not take.
async fn assert_failure_committed(h: &Harness, r: &chalie::cognition::pipeline::TurnReport) {
    let history = h.history("t").await;
    assert_eq!(history.len(), 2, "{history:?}");
    assert_eq!((history[0].0.as_str(), history[0].2.as_deref()), ("user", Some("RESPOND")));
    assert_eq!((history[1].0.as_str(), history[1].1.as_str()), ("system", r.response.as_str()));
    assert_eq!(h.working_memory("t").await, [("user".to_string(), QUESTION.to_string())]);
    let d = h.decision(&r.exchange_id).await;
    assert_eq!(d.selected_mode, "RESPOND");
    assert_eq!(d.fallback, Some(r.fallbacks.join(",")));
    assert_eq!(h.triage_rows(&r.exchange_id).await.len(), 1);
    assert_eq!(h.jobs("encode").await.len(), 1, "the message is still remembered");
}

#[tokio::test]
async fn a_junk_tie_breaker_keeps_the_higher_score() {
    let d =
        route_text(CLOSE_CALL, &ContextSignals::default(), &RouterWeights::default(), &RouterState::default(), true);
    assert_eq!(d.tiebreak, Some((Mode::Clarify, Mode::Respond)), "the pinned message needs a tie-break");

    let h = start(vec![triage_reply("CLARIFY", &[]), Reply::Junk, Reply::text("What do you mean by that?")]).await;
    let r = h.say("fresh", CLOSE_CALL).await;
    assert_eq!(r.router.tiebreaker_candidates, Some([Mode::Clarify, Mode::Respond]));
    assert_eq!(h.calls(), [Call::Triage, Call::Tiebreak, Call::Generation(Mode::Clarify)]);
    assert!(!r.router.tiebreaker_used);
    assert_eq!(r.mode, Mode::Clarify);
    assert_eq!(r.fallbacks, ["tiebreaker_invalid_output"]);
    assert_eq!(r.response, "What do you mean by that?");
    let row = h.decision(&r.exchange_id).await;
    assert_eq!(row.fallback.as_deref(), Some("tiebreaker_invalid_output"));
    assert!(!row.tiebreaker_used);
    assert_eq!(row.tiebreaker_candidates, Some(serde_json::json!(["CLARIFY", "RESPOND"])));
}

#[tokio::test]
async fn a_hanging_tie_breaker_times_out() {
    let h = start(vec![triage_reply("CLARIFY", &[]), Reply::Hang, Reply::text("What do you mean by that?")]).await;
    let r = h.say("fresh", CLOSE_CALL).await;
    assert_eq!(h.calls(), [Call::Triage, Call::Tiebreak, Call::Generation(Mode::Clarify)]);
    assert_eq!(r.fallbacks, ["tiebreaker_timeout"]);
    assert_eq!(r.mode, Mode::Clarify);
    assert_eq!(h.decision(&r.exchange_id).await.fallback.as_deref(), Some("tiebreaker_timeout"));
}

#[tokio::test]
async fn heuristic_pre_routing_makes_no_call_before_generation() {
    let h = start_heuristic(vec![Reply::text("Which one do you mean?"), Reply::text("Noted.")]).await;
    assert!(!h.engine.model_pre_routing());
    let r = h.say("fresh", CLOSE_CALL).await;
    assert_eq!(r.router.tiebreaker_candidates, Some([Mode::Clarify, Mode::Respond]), "a tie-break was due");
    assert_eq!(h.calls(), [Call::Generation(Mode::Clarify)], "neither triage nor tie-breaker asked the model");
    assert!(!r.router.tiebreaker_used);
    assert_eq!(r.triage.result.source, TriageSource::Heuristic);
    assert!(r.fallbacks.is_empty(), "choosing heuristics is not a fallback: {:?}", r.fallbacks);
    let rows = h.triage_rows(&r.exchange_id).await;
    assert_eq!((rows[0].source.as_str(), rows[0].fallback_reason.as_deref()), ("heuristic", None));
    assert_eq!(h.decision(&r.exchange_id).await.fallback, None);

    let r = h.say("t2", QUESTION).await;
    assert_eq!(r.mode, Mode::Respond);
    assert_eq!(h.calls(), [Call::Generation(Mode::Clarify), Call::Generation(Mode::Respond)]);
}

#[tokio::test]
async fn a_failing_embedding_keeps_the_topic_and_names_the_fallback() {
    // Only the embedding role points at a dead address.
    let h = start_custom(
        vec![triage_reply("RESPOND", &[]), Reply::text("Paris.")],
        settings(ModelUse::Llm),
        &[Role::Embedding],
    )
    .await;
    let r = h.say("t", QUESTION).await;
    assert!(r.topic.degraded, "{:?}", r.topic);
    assert_eq!(r.fallbacks, ["embedding_unavailable"]);
    assert_eq!((r.mode, r.response.as_str()), (Mode::Respond, "Paris."));
    assert_eq!(h.decision(&r.exchange_id).await.fallback.as_deref(), Some("embedding_unavailable"));
}
