//! What the reply after an ACT loop should be, decided from the loop's results alone (pure:
//! the router's [`crate::cognition::router::decide`] takes the mode it forces, if any).

use super::act::ActRun;
use super::fallback::Fallback;
use crate::cognition::act::dispatch::ActionResult;
use crate::cognition::router::{ActOutcome, Mode};

/// What the reply after an ACT loop should be, decided from the loop's results alone.
#[derive(Debug, Clone, PartialEq)]
pub struct AfterAct {
    /// A mode forced by the results (CLARIFY to confirm, IGNORE when the cards are the reply);
    /// `None`: the router's post-ACT re-route decides.
    pub mode: Option<Mode>,
    pub outcome: ActOutcome,
    /// The reply itself when every action produced a card.
    pub cards: Vec<String>,
    /// Lines for the reply's system prompt.
    pub notes: Vec<String>,
    pub fallback: Option<Fallback>,
}

/// A doubtful memory → ask first; an ambiguous reference → the skill's question is the reply,
/// as CLARIFY; all cards → the cards are the reply; nothing ran → say so
/// (deterministically on the built-in model, which tends to echo an earlier confirmation
/// instead); otherwise the model answers from the results.
pub fn after_act(run: &ActRun, builtin_primary: bool) -> AfterAct {
    // What the critic replaced (and the taking back of it) stays in the audit, not the reply.
    let results: Vec<&ActionResult> =
        run.results().filter(|r| r.data["critic"]["hidden"].as_bool() != Some(true)).collect();
    let outcome = ActOutcome {
        substantive: results.iter().any(|r| r.ok),
        all_cards: !results.is_empty() && results.iter().all(|r| r.card),
    };
    let mut after = AfterAct { mode: None, outcome, cards: Vec::new(), notes: Vec::new(), fallback: None };
    if let Some(basis) = &run.confirm {
        after.mode = Some(Mode::Clarify);
        after.fallback = Some(Fallback::ReliabilityCheck);
        after.notes.push(format!(
            "Do not act yet. The request relies on a memory marked doubtful: {basis}. Ask the user to confirm it \
             in one short question."
        ));
    } else if let Some(question) = &run.critic_ask {
        // The critic doubts a consequential action: its question is the reply, as CLARIFY.
        after.mode = Some(Mode::Clarify);
        after.cards.push(question.clone());
    } else if results.iter().any(|r| !r.choices.is_empty()) {
        // A reference that fits several things: the skill's question is the reply, and the
        // turn is delivered as CLARIFY so the next message is read as the answer.
        after.mode = Some(Mode::Clarify);
        after.cards = results.iter().filter(|r| r.card || !r.choices.is_empty()).map(|r| r.summary.clone()).collect();
    } else if outcome.all_cards {
        after.cards = results.iter().map(|r| r.summary.clone()).collect();
    } else if results.is_empty() && builtin_primary {
        after.mode = Some(Mode::Ignore);
        after.cards.push(NO_PLAN_REPLY.to_string());
    } else if results.is_empty() {
        after.notes.push(
            "You could not work out an action for this request. Say so in one sentence and ask what exactly the \
             user wants done."
                .to_string(),
        );
    } else {
        after.notes.push("You took these actions; answer the user from their results:".to_string());
        after.notes.extend(results.iter().map(|r| format!("{}: {}", r.kind, r.summary)));
    }
    after
}

/// What an ACT turn with no workable plan says on the built-in model.
pub const NO_PLAN_REPLY: &str = "I couldn't turn that into an action. I can add to or read your lists, set, list or \
    cancel reminders, run focus sessions and recall what you've told me. Could you phrase it as one of those?";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cognition::act::plan::Termination;
    use crate::cognition::pipeline::act::Iteration;
    use serde_json::json;

    fn run(results: Vec<ActionResult>, confirm: Option<&str>) -> ActRun {
        ActRun {
            iterations: vec![Iteration {
                iteration: 0,
                planner: "model".into(),
                actions: Vec::new(),
                results,
                ms: 0.0,
                fatigue: 0.0,
                cost: 0.0,
            }],
            termination: Termination::EmptyPlan,
            planner_fallback: None,
            confirm: confirm.map(str::to_string),
            critic_ask: None,
            critic_fallbacks: Vec::new(),
            tool_fallback: None,
        }
    }

    fn result(kind: &str, ok: bool, card: bool) -> ActionResult {
        ActionResult {
            kind: kind.into(),
            ok,
            summary: format!("{kind} done"),
            data: json!({}),
            ms: 0.0,
            card,
            choices: Vec::new(),
        }
    }

    #[test]
    fn what_follows_the_loop() {
        let cards = after_act(&run(vec![result("list", true, true), result("focus", false, true)], None), false);
        assert_eq!((cards.mode, cards.cards.len()), (None, 2));
        assert!(cards.outcome.all_cards && cards.outcome.substantive);
        let recall = after_act(&run(vec![result("recall", true, false)], None), false);
        assert!(recall.cards.is_empty() && recall.notes[1] == "recall: recall done");
        let ask = after_act(&run(vec![result("recall", true, false)], Some("x (uncertain)")), false);
        let wire = ask.fallback.map(|f| f.to_string());
        assert_eq!((ask.mode, wire.as_deref()), (Some(Mode::Clarify), Some("reliability_check")));
        let mut which = result("list", true, true);
        which.summary = "Which one: oat milk or almond milk?".into();
        which.choices = vec!["oat milk".into(), "almond milk".into()];
        let ask = after_act(&run(vec![result("list", true, true), which], None), true);
        assert_eq!(ask.mode, Some(Mode::Clarify));
        assert_eq!(ask.cards, ["list done", "Which one: oat milk or almond milk?"]);
        let nothing = after_act(&run(vec![], None), true);
        assert_eq!((nothing.mode, nothing.cards), (Some(Mode::Ignore), vec![NO_PLAN_REPLY.to_string()]));
        let nothing = after_act(&run(vec![], None), false);
        assert_eq!(nothing.mode, None);
        assert_eq!(nothing.notes.len(), 1);
    }
}
