//! "Why did you answer like that?" and "what have you been doing?" typed in chat, end to end
//! against the scripted endpoint (docs/cognition.md §7.6): each routes to ACT, runs
//! `introspect` with the right `about`, and the reply is written from the stored truth: the
//! previous decision's own reason, and what the assistant did on its own.

use crate::support::harness::{self, Call, start_heuristic};
use crate::support::openai_double::Reply;
use chalie::cognition::router::Mode;
use chalie::store::{NewReminder, RemindersRepo};
use serde_json::json;

#[tokio::test]
async fn why_and_what_have_you_been_doing_are_answered_from_stored_data() {
    // The planner's replies are prose: the deterministic planner maps both questions.
    let prose = || vec![Reply::text("Let me think about that."); 3];
    let script = [
        vec![Reply::text("Paris is the capital of France.")],
        prose(),
        vec![Reply::text("Because it was a plain factual question.")],
        prose(),
        vec![Reply::text("I reminded you to water the plants.")],
    ]
    .concat();
    let h = start_heuristic(script).await;
    let first = h.say("t", "What is the capital of France?").await;
    assert_eq!(first.mode, Mode::Respond);
    let reason = h.decision(&first.exchange_id).await.reasoning.expect("the router says why");
    assert!(!reason.is_empty());

    let why = h.say("t", "why did you answer like that?").await;
    assert_eq!(why.mode, Mode::Act, "{} {:?}", why.router.reason, why.fallbacks);
    let step = &why.act_iterations[0];
    assert_eq!(
        (step.actions[0].kind.as_str(), &step.actions[0].params["about"]),
        ("introspect", &json!("last_answer"))
    );
    let said = &step.results[0].summary;
    assert!(said.starts_with("I answered your last message in RESPOND mode because "), "{said}");
    assert!(said.contains(&reason), "the previous decision's own reason: {said} / {reason}");
    assert_eq!(why.response, "Because it was a plain factual question.");
    let generation = h.double.chat_requests().last().cloned().unwrap();
    assert!(matches!(harness::kind(&generation), Call::Generation(_)));
    assert!(harness::system_prompt(&generation).contains(said.as_str()), "the reply is written from it");

    // Something the assistant did on its own: a reminder that fired an hour ago.
    let now = chrono::Local::now().timestamp();
    h.read(move |c| {
        let r = NewReminder {
            message: "water the plants",
            due_at: "2026-01-01T09:00",
            due_ts: now - 3_600,
            item_type: "notification",
            recurrence: None,
            thread_id: Some("t"),
        };
        let id = RemindersRepo(c).insert(&r, now - 7_200)?;
        RemindersRepo(c).mark_fired(id, now - 3_600)
    })
    .await;
    let doing = h.say("t", "what have you been doing?").await;
    assert_eq!(doing.mode, Mode::Act, "{}", doing.router.reason);
    let step = &doing.act_iterations[0];
    assert_eq!(step.actions[0].params["about"], "activity");
    let said = &step.results[0].summary;
    assert!(
        said.starts_with("In the last day, on my own: ") && said.contains("reminded you: water the plants (1 h ago)"),
        "{said}"
    );
    let generation = h.double.chat_requests().last().cloned().unwrap();
    assert!(harness::system_prompt(&generation).contains("reminded you: water the plants"));
    assert_eq!(doing.response, "I reminded you to water the plants.");
}
