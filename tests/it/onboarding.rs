//! Onboarding against the scripted double (docs/cognition.md §4.9): the reply model is asked to
//! introduce a capability from the third exchange on, each one once, spaced out, and the
//! counted state is stored; a capability counts as introduced only when the sent reply
//! mentions it.

use crate::support::harness::*;
use crate::support::openai_double::Reply;
use chalie::cognition::onboarding::{KEY, NAMESPACE, SparkState};
use chalie::cognition::router::Mode;
use chalie::store::TurnRepo;

const QUESTIONS: [&str; 6] = [
    "What is the capital of France?",
    "How tall is the Eiffel Tower?",
    "Why is the sky blue?",
    "What is the boiling point of water?",
    "Who wrote Don Quixote?",
    "How far away is the Moon?",
];

#[tokio::test]
async fn capabilities_are_introduced_once_in_the_first_conversations() {
    // Only the third reply takes up its note; the sixth lets it pass.
    let reply = |i: usize| if i == 2 { "An answer. I can also keep lists for you." } else { "An answer." };
    let script = (0..QUESTIONS.len()).flat_map(|i| [triage_reply("RESPOND", &[]), Reply::text(reply(i))]).collect();
    let h = start(script).await;
    for q in QUESTIONS {
        let r = h.say("t", q).await;
        assert_eq!(r.mode, Mode::Respond, "{q}");
    }
    let generations: Vec<String> =
        h.double.chat_requests().iter().filter(|r| matches!(kind(r), Call::Generation(_))).map(system_prompt).collect();
    assert_eq!(generations.len(), QUESTIONS.len());
    let introduces = |s: &String, what: &str| s.contains("one of your first conversations") && s.contains(what);
    let lists: Vec<usize> = (0..generations.len()).filter(|i| introduces(&generations[*i], "keep lists")).collect();
    let reminders: Vec<usize> =
        (0..generations.len()).filter(|i| introduces(&generations[*i], "set reminders")).collect();
    assert_eq!(lists, [2], "introduced once, on the third exchange");
    assert_eq!(reminders, [5], "the next one three exchanges later");
    for i in [0, 1, 3, 4] {
        assert!(!generations[i].contains("one of your first conversations"), "exchange {i}");
    }
    let stored = h.read(|c| TurnRepo(c).kv_get(NAMESPACE, KEY)).await;
    let s = SparkState::from_json(stored);
    assert_eq!(s.exchanges, 6);
    assert_eq!(s.introduced, ["lists"], "reminders were suggested but the sent reply never mentioned them");
    assert_eq!(s.last_intro_at, Some(2));
    assert!(s.milestones.contains_key("first_exchange"));
}
