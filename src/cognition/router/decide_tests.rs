use super::*;
use crate::cognition::intent::{TriageSource, detect_skills, normalize_skills};
use crate::cognition::router::{RouterSignals, RouterState, RouterWeights, route};
use crate::cognition::social::SocialExit;

fn routed(text: &str) -> RoutingDecision {
    route(
        &RouterSignals::from_text(text, &Default::default()),
        &RouterWeights::default(),
        &RouterState::default(),
        false,
    )
}

fn act(skills: &[&str]) -> TriageResult {
    let mut r = TriageResult::new(TriageMode::Act, TriageSource::Model, "m");
    r.skills = normalize_skills(skills, true);
    r
}

fn respond() -> TriageResult {
    TriageResult::new(TriageMode::Respond, TriageSource::Model, "m")
}

/// Decide for `text` as routed from its own signals, with nothing after delivery.
fn decide_for(text: &str, d: &RoutingDecision, triage: &TriageResult, identity_stored: bool) -> Decision {
    let named = detect_skills(text);
    decide(&Evidence {
        routed: d,
        social: None,
        triage,
        named_skills: &named,
        identity_stored,
        sequel: Sequel::default(),
    })
}

const QUESTION: &str = "what is the capital of France?";

#[test]
fn a_social_exit_comes_first_and_a_cancel_is_acknowledged() {
    let d = routed(QUESTION);
    for (exit, rule, mode) in [
        (SocialExit::Acknowledge, "greeting", Mode::Acknowledge),
        (SocialExit::Cancel, "cancel", Mode::Acknowledge),
        (SocialExit::Ignore, "self_resolved", Mode::Ignore),
    ] {
        let t = act(&["list"]);
        let e = Evidence {
            routed: &d,
            social: Some(SocialMatch { exit, reason: rule }),
            triage: &t,
            named_skills: &["list"],
            identity_stored: true,
            sequel: Sequel::default(),
        };
        let got = decide(&e);
        assert_eq!((got.mode, got.pre_routed, got.reply_mode), (mode, true, mode));
        assert_eq!(got.why, Reason::SocialExit { rule });
        assert_eq!(got.why.to_string(), format!("social exit ({rule})"));
    }
}

#[test]
fn a_stored_name_leaves_nothing_to_act_on() {
    let text = "my name is Ada";
    let d = routed(text);
    let got = decide_for(text, &d, &act(&["memorize"]), true);
    assert_eq!(got.mode, Mode::Acknowledge);
    assert_eq!(got.why, Reason::IdentityStored { router: d.mode });
    assert!(got.why.to_string().starts_with("identity hook stored the name; nothing left to act on (router had"));
    assert_ne!(decide_for(text, &d, &act(&["memorize"]), false).mode, Mode::Acknowledge, "no name stored");
}

#[test]
fn triage_act_overrides_only_with_keyword_support() {
    let list = "put eggs on my shopping list";
    let mut d = routed(list);
    d.mode = Mode::Respond;
    let got = decide_for(list, &d, &act(&["list"]), false);
    assert_eq!(got.mode, Mode::Act);
    assert_eq!(got.why, Reason::TriageAct { skills: vec!["list".into()], router: d.mode });
    assert_eq!(got.why.to_string(), format!("triage chose ACT for list (named in the message); router had {}", d.mode));
    let q = routed(QUESTION);
    assert_eq!(decide_for(QUESTION, &q, &act(&["schedule"]), false).mode, q.mode, "unsupported ACT");
}

#[test]
fn without_overrides_the_router_decides_and_says_how() {
    let mut d = routed(QUESTION);
    let got = decide_for(QUESTION, &d, &respond(), false);
    assert_eq!((got.mode, got.reply_mode, got.reply_why.clone()), (d.mode, d.mode, None));
    assert_eq!(got.why.to_string(), format!("highest score ({})", d.mode));

    d.tiebreak = Some((Mode::Respond, Mode::Clarify));
    d.resolve_tiebreak(Some(TieChoice::B));
    let got = decide_for(QUESTION, &d, &respond(), false);
    assert_eq!(got.mode, Mode::Clarify);
    assert_eq!(got.why.to_string(), "tie-breaker chose CLARIFY between RESPOND and CLARIFY");

    let mut d = routed(QUESTION);
    d.tiebreak = Some((Mode::Respond, Mode::Clarify));
    d.resolve_tiebreak(None);
    let got = decide_for(QUESTION, &d, &respond(), false);
    assert_eq!(got.mode, Mode::Respond);
    assert_eq!(got.why.to_string(), "RESPOND and CLARIFY within the margin; the higher score kept");
}

#[test]
fn the_reply_mode_follows_memory_then_act_results_then_the_reroute() {
    let list = "put eggs on my shopping list";
    let d = routed(list);
    let t = act(&["list"]);
    let named = detect_skills(list);
    let with = |sequel| {
        decide(&Evidence { routed: &d, social: None, triage: &t, named_skills: &named, identity_stored: false, sequel })
    };
    let forced = Some(ActSequel { forced: Some(Mode::Clarify), rerouted: Mode::Respond });
    let memory = with(Sequel { memory_answered: true, act: forced });
    assert_eq!(
        (memory.mode, memory.reply_mode, memory.reply_why),
        (Mode::Act, Mode::Respond, Some(Reason::MemoryAnswered))
    );
    let got = with(Sequel { memory_answered: false, act: forced });
    assert_eq!((got.reply_mode, got.reply_why), (Mode::Clarify, Some(Reason::ActResults { mode: Mode::Clarify })));
    let got = with(Sequel { memory_answered: false, act: Some(ActSequel { forced: None, rerouted: Mode::Ignore }) });
    assert_eq!(got.reply_mode, Mode::Ignore);
    assert_eq!(got.reasons().count(), 2, "delivery, then the re-route");
}

#[test]
fn triage_act_needs_keyword_support() {
    let named = |t: &str| detect_skills(t);
    let eggs = "add eggs to my shopping list";
    assert_eq!(triage_act_confirmed(&act(&["list"]), &named(eggs)), Some(vec!["list".into()]));
    assert_eq!(triage_act_confirmed(&act(&["schedule"]), &named(QUESTION)), None);
    assert_eq!(triage_act_confirmed(&respond(), &named(eggs)), None);
}
