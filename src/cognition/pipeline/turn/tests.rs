//! The turn's pure phases on their own: no database, no model.

use super::finish::commit_rows;
use super::*;
use crate::cognition::boundary::FocusLevel;
use crate::cognition::intent::{IntentType, TriageMode};
use crate::cognition::pipeline::TopicReport;
use crate::cognition::pipeline::model::Generated;
use crate::cognition::reply::ReplySource;
use crate::cognition::router::{Mode, RouterState, RouterWeights};
use crate::store::{TopicContext, WmEntry};
use crate::text::normalize;

fn stage(name: &str, is_new: bool, focus_on: Option<&str>) -> TopicStage {
    TopicStage {
        report: TopicReport::new(name, is_new),
        context: TopicContext::default(),
        router_state: RouterState::default(),
        focus: FocusLevel::default(),
        focus_on: focus_on.map(str::to_string),
    }
}

fn phase_a(turns: &[&str]) -> PhaseA {
    let conversation =
        turns.iter().map(|c| WmEntry { role: "user".into(), content: c.to_string(), created_at: 0 }).collect();
    PhaseA { conversation, session_exchanges: turns.len(), ..PhaseA::default() }
}

#[test]
fn understanding_reads_the_one_analysis_and_the_context() {
    let text = "add eggs to my shopping list";
    let lower = normalize(text);
    let msg = Analysis::new(text, &lower);
    let u = understand(&msg, &phase_a(&[]), &stage("groceries", true, None));
    assert_eq!(u.intent.intent_type, IntentType::Action);
    assert_eq!(u.ctx.working_memory_turns, 0);
    assert!(u.ctx.is_new_topic && !u.ctx.focus_distraction);
    // The same figures as the text-only path the benches and calibration use.
    assert_eq!(u.signals, RouterSignals::from_text(text, &u.ctx));

    let text = "what is the capital of France?";
    let lower = normalize(text);
    let msg = Analysis::new(text, &lower);
    let u = understand(&msg, &phase_a(&["taxes are due", "which form?"]), &stage("capital", true, Some("taxes")));
    assert_eq!(u.ctx.working_memory_turns, 2);
    assert_eq!(u.ctx.session_exchange_count, 2);
    assert!(u.ctx.focus_distraction, "a new topic during a focus session");
    assert!(u.ctx.referent_support.is_some());
}

#[test]
fn the_self_model_constrains_the_router() {
    let text = "tell me about my week";
    let lower = normalize(text);
    let msg = Analysis::new(text, &lower);
    let topic = stage("week", false, None);
    let calm = understand(&msg, &phase_a(&["a", "b"]), &topic);
    assert_eq!(calm.ctx.self_constraint, 0.0);
    let mut a = phase_a(&["a", "b"]);
    a.self_items = crate::cognition::self_model::assess(
        &crate::store::SelfReadings {
            durable_memories: 50,
            recent_fatigue: Some(8.0),
            ..crate::store::SelfReadings::default()
        },
        None,
        10.0,
    );
    let tired = understand(&msg, &a, &topic);
    assert!((tired.ctx.self_constraint - 0.8).abs() < 1e-12);
    let w = RouterWeights::default();
    let (c, t) = (
        score(&calm.signals, &w, &RouterState::default(), true),
        score(&tired.signals, &w, &RouterState::default(), true),
    );
    let s = |d: &RoutingDecision, m: Mode| d.scores.get(m);
    assert!(s(&t, Mode::Clarify) > s(&c, Mode::Clarify) && s(&t, Mode::Respond) < s(&c, Mode::Respond));
}

fn settled_for(text: &str, social: bool) -> (RoutingDecision, Decision, TriageResult) {
    let lower = normalize(text);
    let msg = Analysis::new(text, &lower);
    let u = understand(&msg, &phase_a(&[]), &stage("t", true, None));
    let routing = score(&u.signals, &RouterWeights::default(), &RouterState::default(), !social);
    let triage = TriageResult::new(TriageMode::Respond, TriageSource::Heuristic, "h");
    let settled = decide(&Evidence {
        routed: &routing,
        social: msg.social.filter(|_| social),
        triage: &triage,
        named_skills: &msg.skills,
        identity_stored: false,
        sequel: Sequel::default(),
    });
    (routing, settled, triage)
}

#[test]
fn the_router_report_carries_the_scores_and_the_reason() {
    let (routing, settled, _) = settled_for("hey, good morning!", true);
    let r = router_report(&routing, &settled, 1.5);
    assert_eq!((r.pre_routed, r.reason.as_str(), r.routing_time_ms), (true, "social exit (greeting)", 1.5));
    assert_eq!(r.scores, routing.scores);
    assert_eq!(r.scored_mode, routing.scored_mode());
    assert_eq!(r.signals, routing.signal_snapshot);
}

#[test]
fn phase_d_rows_record_the_delivered_mode_and_every_fallback() {
    let text = "what is the capital of France?";
    let (routing, settled, triage) = settled_for(text, false);
    let report = router_report(&routing, &settled, 0.2);
    let delivered = Delivered { routing: routing.clone(), settled: settled.clone(), report };
    let replied = Replied {
        settled,
        generated: Generated { text: "Paris.".into(), source: ReplySource::Model, ..Generated::default() },
        memory_answer: None,
        run: None,
    };
    let header =
        Header { thread_id: "t", exchange_id: "x", routing_id: "r", user_text: text, now: 1_000, weights_version: 2 };
    let triage = TriageReport { result: triage, latency_ms: 1.0, fallback: None, sanity_rules: Vec::new() };
    let fallbacks = [Fallback::Model(Stage::Triage, Failure::Timeout), Fallback::ClarifyNoQuestion];
    let topic = stage("capital", true, None);
    let rows = commit_rows(&header, &Timings::default(), &topic, &triage, &delivered, &replied, &fallbacks);
    assert_eq!(rows.mode, routing.mode.as_str());
    assert_eq!(rows.routing.fallback.as_deref(), Some("triage_timeout,clarify_no_question"));
    assert_eq!(rows.routing.reasoning.as_deref(), Some(format!("highest score ({})", routing.mode).as_str()));
    assert_eq!(rows.interaction["fallbacks"], serde_json::json!(["triage_timeout", "clarify_no_question"]));
    assert_eq!(rows.reply.as_deref(), Some("Paris."));
    assert_eq!(rows.reply_role, "assistant");
    assert!(rows.encode.is_some() && rows.triage.is_some());
    let (key, state) = rows.router_state.expect("the topic's router state");
    assert_eq!(key, "t/capital");
    assert_eq!(state["previous_mode"], routing.mode.as_str());
    assert_eq!(routing.mode, Mode::Respond);
}
