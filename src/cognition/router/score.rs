//! Scoring (docs/cognition.md §6.2) and routing: the five scores over the signals and weights,
//! anti-oscillation, the margin test that asks for a tie-break, and the post-ACT re-route.

use super::*;

use crate::vocab::snapshot::ToSnapshot;
use std::sync::Arc;

/// What the signal snapshot is written from, kept as plain data until the audit reads it.
#[derive(Serialize)]
struct SignalSnapshot {
    #[serde(flatten)]
    signals: RouterSignals,
    derived: DerivedSignals,
}

impl ToSnapshot for SignalSnapshot {
    fn to_snapshot(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl ToSnapshot for RouterWeights {
    fn to_snapshot(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

// ───────────────────────────── scoring ─────────────────────────────

/// The message asks something, leans on a referent it does not name, or is a bare request or
/// correction: the only turns a lack of memory can make unclear. A cold statement ("they named
/// her Iris") gives information, so the cold boost does not apply to it; with the boost it tied
/// RESPOND exactly on every such turn and the regulator's smallest step on
/// `clarify.cold_boost` flipped them all at once (docs/cognition.md §15.5).
pub fn asks_or_points(s: &RouterSignals, d: &DerivedSignals) -> bool {
    d.question
        || d.unresolved_reference > 0.0
        || s.text.underspecified_request
        || d.bare_negative_feedback
        || d.bare_correction
        || d.dangling_reference > 0.0
}

/// The raw docs/cognition.md §6.2 scores (before anti-oscillation).
pub fn score_modes(s: &RouterSignals, w: &RouterWeights) -> ModeScores {
    let d = s.derived();
    score_with(s, &d, w)
}

fn score_with(s: &RouterSignals, d: &DerivedSignals, w: &RouterWeights) -> ModeScores {
    let warmth = s.warmth();
    let on = |c: bool, x: f64| if c { x } else { 0.0 };
    let self_constraint = if s.self_constraint.is_finite() { s.self_constraint.clamp(0.0, 1.0) } else { 0.0 };
    let positive = s.text.explicit_feedback == Feedback::Positive;

    let r = &w.respond;
    let respond = r.base
        + r.warmth_boost * warmth
        + r.fact_density * d.fact_density
        + r.gist_density * d.gist_density
        + on(d.question && warmth > QUESTION_WARM_ABOVE, r.question_warm)
        - on(d.cold, r.cold_penalty)
        + on(d.question && d.cold, r.question_cold)
        - r.self_constraint_penalty * self_constraint
        - on(s.text.greeting_pattern, r.greeting_penalty)
        - on(positive, r.positive_feedback_penalty)
        - on(d.social_intent, r.social_intent_penalty)
        - on(s.intent_type == IntentType::Action, r.action_intent_penalty)
        - on(d.bare_correction, r.correction_penalty);

    let c = &w.clarify;
    let clarify = c.base
        + on(d.cold && asks_or_points(s, d), (1.0 - warmth) * c.cold_boost)
        + on(d.question && d.cold, c.question_cold)
        - on(d.warm, c.warm_penalty)
        + on(d.question && s.fact_count == 0, c.question_no_facts)
        + on(s.is_new_topic && d.question, c.new_topic_question)
        + c.self_constraint * self_constraint
        + d.unresolved_reference * pointer_weight(s, c)
        + on(d.bare_negative_feedback, c.bare_negative_feedback)
        + on(d.bare_correction, c.correction)
        + on(s.text.underspecified_request, c.underspecified_request)
        + on(d.cold, c.dangling_reference * d.dangling_reference);

    let a = &w.act;
    let asks = s.text.interrogative_words || s.text.has_question_mark;
    let memory = if asks && s.memory_confidence < MEMORY_CONFIDENCE_VERY_LOW {
        a.memory_confidence_very_low
    } else if asks && s.memory_confidence < MEMORY_CONFIDENCE_LOW {
        a.memory_confidence_low
    } else {
        0.0
    };
    let act = a.base
        + on(d.question && (MODERATE_CONTEXT.0..=MODERATE_CONTEXT.1).contains(&warmth), a.question_moderate_context)
        + on(s.text.interrogative_words && s.fact_count < FACT_GAP_BELOW, a.interrogative_fact_gap)
        + on(s.text.implicit_reference, a.implicit_reference)
        - on(warmth < VERY_COLD_BELOW, a.very_cold_penalty)
        - on(d.warm && d.fact_density > DENSE_FACTS_ABOVE, a.warm_facts_penalty)
        + on(s.intent_type == IntentType::Action, a.action_intent)
        + memory;

    let k = &w.acknowledge;
    let acknowledge = k.base - on(d.question && !d.social_intent, k.question_penalty)
        + on(s.text.greeting_pattern, k.greeting)
        + on(positive, k.positive_feedback)
        + on(d.social_intent, k.social_intent);

    let ignore = w.ignore.base + on(d.empty, w.ignore.empty_input);

    ModeScores { respond, clarify, act, acknowledge, ignore }
}

/// The CLARIFY weight of an unnamed referent: a vague reference ("what about that one?") takes
/// `vague_reference` (so does a pointer to a proposal or to options: "do it", "which is
/// better?"), a request with a pointer for its object ("fix my code") `missing_object`;
/// one message with both counts once, at the larger.
fn pointer_weight(s: &RouterSignals, c: &ClarifyWeights) -> f64 {
    // "do it" with nothing proposed, "which is better?" with no options: vague references too.
    let pointing = matches!(s.text.referent_need, ReferentNeed::Proposal | ReferentNeed::Options);
    let vague = if s.text.vague_reference || pointing { c.vague_reference } else { 0.0 };
    let missing = if s.text.missing_object { c.missing_object } else { 0.0 };
    vague.max(missing)
}

/// `base − (base − min)·warmth + semantic_uncertainty` (docs/cognition.md §6.5), without hysteresis.
pub fn effective_margin(s: &RouterSignals, w: &RouterWeights) -> f64 {
    let t = &w.tiebreaker;
    let warmth = s.warmth();
    let mut m = t.base_margin - (t.base_margin - t.min_margin) * warmth;
    if s.text.implicit_reference {
        m += t.implicit_reference_uncertainty;
    }
    if s.text.information_density < LOW_DENSITY_BELOW {
        m += t.low_density_uncertainty;
    }
    if s.text.interrogative_words && !s.text.has_question_mark {
        m += t.interrogative_no_mark_uncertainty;
    }
    m
}

/// `(top − second) / max(|top|, 0.001)`.
pub fn router_confidence(top: f64, second: f64) -> f64 {
    (top - second) / top.abs().max(0.001)
}

/// Route one message. `state` is the topic's [`RouterState`]; `allow_tiebreak = false` skips the
/// tie-break (the post-ACT re-route, or a pipeline with no model).
pub fn route(
    signals: &RouterSignals,
    weights: &RouterWeights,
    state: &RouterState,
    allow_tiebreak: bool,
) -> RoutingDecision {
    let derived = signals.derived();
    let mut scores = score_with(signals, &derived, weights);

    let mut suppressions = Vec::new();
    match state.previous_mode {
        Some(Mode::Act) => {
            let delta = -weights.anti_oscillation.act_after_act_penalty;
            scores.act += delta;
            suppressions.push(Suppression {
                previous_mode: Mode::Act,
                adjusted_mode: Mode::Act,
                delta,
                reason: "ACT just ran: suppress re-selecting ACT".to_string(),
            });
        }
        Some(Mode::Clarify) => {
            let delta = weights.anti_oscillation.respond_after_clarify_boost;
            scores.respond += delta;
            suppressions.push(Suppression {
                previous_mode: Mode::Clarify,
                adjusted_mode: Mode::Respond,
                delta,
                reason: "the user answered a clarification: favour RESPOND".to_string(),
            });
        }
        _ => {}
    }

    let ranked = scores.ranked();
    let (top, top_score) = ranked[0];
    let (second, second_score) = ranked[1];
    let confidence = router_confidence(top_score, second_score);
    let hysteresis = state.low_confidence_streak(weights.tiebreaker.hysteresis_threshold);
    let mut eff = effective_margin(signals, weights);
    if hysteresis {
        eff += weights.tiebreaker.hysteresis_widening;
    }
    let tiebreak = (allow_tiebreak && top != Mode::Ignore && confidence < eff).then_some((top, second));

    RoutingDecision {
        mode: top,
        scores,
        router_confidence: confidence,
        margin: confidence,
        effective_margin: eff,
        hysteresis_widened: hysteresis,
        tiebreak,
        tiebreaker_used: false,
        tiebreak_choice: None,
        tiebreak_resolved: false,
        previous_mode: state.previous_mode,
        suppressions,
        override_reason: None,
        signal_snapshot: LazyJson::deferred(Arc::new(SignalSnapshot { signals: signals.clone(), derived })),
        weight_snapshot: LazyJson::deferred(Arc::new(*weights)),
    }
}

/// What the ACT loop produced, for the re-route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ActOutcome {
    /// At least one action returned a substantive result.
    pub substantive: bool,
    /// Every action produced a card (the text reply is skipped).
    pub all_cards: bool,
}

/// The re-route after the ACT loop (docs/cognition.md §6.6): previous mode ACT, no tie-break. Every action a card →
/// IGNORE (skip the text); an ACT result → RESPOND; IGNORE → RESPOND when the actions produced
/// substantive results.
pub fn reroute_after_act(
    signals: &RouterSignals,
    weights: &RouterWeights,
    state: &RouterState,
    outcome: ActOutcome,
) -> RoutingDecision {
    let st = RouterState { previous_mode: Some(Mode::Act), recent_confidences: state.recent_confidences.clone() };
    let mut d = route(signals, weights, &st, false);
    let (mode, why) = if outcome.all_cards {
        (Mode::Ignore, "post-ACT: every action produced a card, no text")
    } else if d.mode == Mode::Act {
        (Mode::Respond, "post-ACT: ACT becomes RESPOND")
    } else if d.mode == Mode::Ignore && outcome.substantive {
        (Mode::Respond, "post-ACT: IGNORE becomes RESPOND after substantive results")
    } else {
        return d;
    };
    if mode != d.mode {
        d.mode = mode;
        d.override_reason = Some(why.to_string());
    }
    d
}

/// Text → signals → intent → route, for callers that have the context assembled.
pub fn route_text(
    text: &str,
    ctx: &ContextSignals,
    weights: &RouterWeights,
    state: &RouterState,
    allow_tiebreak: bool,
) -> RoutingDecision {
    let signals = RouterSignals::from_text(text, ctx);
    route(&signals, weights, state, allow_tiebreak)
}

impl RouterSignals {
    /// Extract the text signals, classify the intent and combine them with `ctx`.
    pub fn from_text(text: &str, ctx: &ContextSignals) -> RouterSignals {
        // One lowercase pass and one word list for the signals and the intent both.
        let lower = crate::text::normalize(text);
        let msg = crate::cognition::intent::Analysis::new(text, &lower);
        let ictx = crate::cognition::intent::IntentContext {
            warmth: ctx.warmth(),
            memory_confidence: ctx.memory_confidence(),
            working_memory_turns: ctx.working_memory_turns,
        };
        let intent = crate::cognition::intent::classify(&msg, &ictx);
        RouterSignals::new(&msg.signals, &intent, ctx)
    }
}
