//! The deterministic mode router (docs/cognition.md §6).
//!
//! `score[mode] = base + Σ weight·signal` over observable signals, the highest score wins; an
//! ambiguous result (relative margin below the effective margin) asks the pipeline for a
//! lightweight-model tie-break between the top two. Everything here is a pure function: the
//! caller keeps the per-topic [`RouterHistory`], measures `routing_time_ms`, runs the tie-break
//! model, and logs the [`RoutingDecision`] (delivered mode, all five scores, snapshots).
//!
//! The scorer only proposes: the turn's mode is settled in one place, [`decide`] (social exit,
//! identity hook, triage override, tie-break, and after ACT the reply's mode), with typed
//! [`Reason`]s for the audit.
//!
//! # Calibrated defaults
//! [`RouterWeights::default`] (version 2) keeps the published structure and every signal, and
//! moves numbers so that CLARIFY answers ambiguity rather than a lack of memory, ACT answers
//! skill and tool requests, and ACKNOWLEDGE only wholly social turns. It adds terms over
//! derived signals (`unresolved_reference`, `bare_negative_feedback`, `bare_correction`,
//! `social_intent`, the action intent on RESPOND). The published weights
//! ([`RouterWeights::published`]) send every cold first message to CLARIFY. Each change, with
//! the message that motivated it: docs/cognition.md §6.9.
//!
//! Ties (scores within 1e-9) resolve by the fixed order RESPOND > CLARIFY > ACT > ACKNOWLEDGE >
//! IGNORE ([`Mode::ALL`]).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub use crate::vocab::snapshot::LazyJson;

use super::context::ContextSignals;
use super::intent::{Complexity, IntentResult, IntentType};
use super::signals::reference::ReferentNeed;
use super::signals::{Correction, Feedback, TextSignals};

// ───────────────────────────── modes and scores ─────────────────────────────

pub use crate::vocab::mode::{Mode, ModeScores, TIE_EPSILON};

/// The healthy share of a mode over a conversation (docs/cognition.md §6.8), in percent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HealthyRange {
    pub label: &'static str,
    pub low: f64,
    pub high: f64,
    /// Below this (when above 0) or above `flag_high` is a red flag.
    pub flag_low: f64,
    pub flag_high: f64,
}

impl HealthyRange {
    pub fn of(mode: Mode) -> HealthyRange {
        let (label, low, high, flag_low, flag_high) = match mode {
            Mode::Respond => ("50–75 % (flag > 85 or < 40)", 50.0, 75.0, 40.0, 85.0),
            Mode::Clarify => ("8–20 % (flag > 30 or < 3)", 8.0, 20.0, 3.0, 30.0),
            Mode::Act => ("5–15 % (flag > 25 or < 2)", 5.0, 15.0, 2.0, 25.0),
            Mode::Acknowledge => ("3–12 % (flag > 20 or < 1)", 3.0, 12.0, 1.0, 20.0),
            Mode::Ignore => ("< 2 % (flag > 5)", 0.0, 2.0, 0.0, 5.0),
        };
        HealthyRange { label, low, high, flag_low, flag_high }
    }

    /// "healthy", "outside healthy" or "RED FLAG" for a share in percent.
    pub fn verdict(&self, percent: f64) -> &'static str {
        if percent > self.flag_high || (self.flag_low > 0.0 && percent < self.flag_low) {
            "RED FLAG"
        } else if percent < self.low || percent > self.high {
            "outside healthy"
        } else {
            "healthy"
        }
    }
}

// ───────────────────────────── signals ─────────────────────────────

/// Every docs/cognition.md §6.1 router signal (text, intent, context). Derived signals: [`RouterSignals::derived`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouterSignals {
    /// docs/cognition.md §1.1 text signals (+ the two additions of `TextSignals`), flattened into the snapshot.
    #[serde(flatten)]
    pub text: TextSignals,
    // docs/cognition.md §3.1 intent
    pub intent_type: IntentType,
    pub intent_complexity: Complexity,
    pub intent_confidence: f64,
    // context
    pub context_warmth: f64,
    pub working_memory_turns: usize,
    /// Real gists only.
    pub gist_count: usize,
    pub fact_count: usize,
    pub world_state_present: bool,
    pub topic_confidence: f64,
    pub is_new_topic: bool,
    /// FOK of the topic, 0–5.
    pub fok_score: f64,
    pub session_exchange_count: usize,
    pub memory_confidence: f64,
    pub self_constraint: f64,
    /// The message left the topic of an open focus session. Recorded for the audit and the
    /// stability regulator; no weight uses it yet.
    #[serde(default)]
    pub focus_distraction: bool,
    /// How far working memory can supply an unnamed referent, 0–1 ([`ContextSignals::referent_support`]).
    #[serde(default)]
    pub referent_support: f64,
}

/// docs/cognition.md §6.1 derived signals.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DerivedSignals {
    /// `min(fact_count/10, 1)`
    pub fact_density: f64,
    /// `min(gist_count/5, 1)`
    pub gist_density: f64,
    /// `has_question_mark || interrogative_words`
    pub question: bool,
    /// `warmth < 0.3`
    pub cold: bool,
    /// `warmth > 0.6`
    pub warm: bool,
    /// `prompt_token_count == 0`
    pub empty: bool,
    /// Addition: working memory is empty, so a vague reference has nothing to refer to.
    pub no_antecedent: bool,
    /// Addition: negative feedback with at most one content word (no correction in it), on an
    /// answer that exists (working memory not empty).
    pub bare_negative_feedback: bool,
    /// Addition: intent greeting, or intent feedback with positive feedback (a wholly social turn).
    pub social_intent: bool,
    /// Addition: the message leans on a referent (`vague_reference`, `missing_object`, or a
    /// `referent_need` of a proposal or options) and this is how much of it working memory
    /// cannot supply: `1 − referent_support`, else 0.
    #[serde(default)]
    pub unresolved_reference: f64,
    /// Addition: a correction that does not say what was meant, on an answer that exists.
    #[serde(default)]
    pub bare_correction: bool,
    /// Addition: the message's pronoun has no antecedent in it (`dangling_reference`), and this
    /// is how much of one working memory cannot supply: `1 − referent_support`, else 0. Scored
    /// on a cold topic only (docs/cognition.md §15.7).
    #[serde(default)]
    pub dangling_reference: f64,
}

/// docs/cognition.md §6.1 thresholds of the derived signals and conditions (fixed, not regulated).
pub const COLD_BELOW: f64 = 0.3;
pub const WARM_ABOVE: f64 = 0.6;
pub const QUESTION_WARM_ABOVE: f64 = 0.4;
pub const MODERATE_CONTEXT: (f64, f64) = (0.3, 0.7);
pub const VERY_COLD_BELOW: f64 = 0.15;
pub const DENSE_FACTS_ABOVE: f64 = 0.5;
pub const FACT_GAP_BELOW: usize = 3;
pub const MEMORY_CONFIDENCE_VERY_LOW: f64 = 0.15;
pub const MEMORY_CONFIDENCE_LOW: f64 = 0.30;
pub const LOW_DENSITY_BELOW: f64 = 0.3;
/// Hysteresis window: the topic's most recent confidences.
pub const HYSTERESIS_WINDOW: usize = 3;

impl RouterSignals {
    pub fn new(text: &TextSignals, intent: &IntentResult, ctx: &ContextSignals) -> RouterSignals {
        RouterSignals {
            text: text.clone(),
            intent_type: intent.intent_type,
            intent_complexity: intent.complexity,
            intent_confidence: intent.confidence,
            context_warmth: ctx.warmth(),
            working_memory_turns: ctx.working_memory_turns,
            gist_count: ctx.gist_count,
            fact_count: ctx.fact_count,
            world_state_present: ctx.world_state_present,
            topic_confidence: ctx.topic_confidence,
            is_new_topic: ctx.is_new_topic,
            fok_score: ctx.fok_score,
            session_exchange_count: ctx.session_exchange_count,
            memory_confidence: ctx.memory_confidence(),
            self_constraint: ctx.self_constraint,
            focus_distraction: ctx.focus_distraction,
            referent_support: ctx.referent_support(),
        }
    }

    fn support(&self) -> f64 {
        if self.referent_support.is_finite() { self.referent_support.clamp(0.0, 1.0) } else { 0.0 }
    }

    fn warmth(&self) -> f64 {
        if self.context_warmth.is_finite() { self.context_warmth.clamp(0.0, 1.0) } else { 0.0 }
    }

    pub fn derived(&self) -> DerivedSignals {
        let w = self.warmth();
        DerivedSignals {
            fact_density: (self.fact_count as f64 / 10.0).min(1.0),
            gist_density: (self.gist_count as f64 / 5.0).min(1.0),
            question: self.text.has_question_mark || self.text.interrogative_words,
            cold: w < COLD_BELOW,
            warm: w > WARM_ABOVE,
            empty: self.text.prompt_token_count == 0,
            no_antecedent: self.working_memory_turns == 0,
            bare_negative_feedback: self.text.explicit_feedback == Feedback::Negative
                && self.text.content_word_count <= 1
                && self.working_memory_turns > 0,
            social_intent: self.intent_type == IntentType::Greeting
                || (self.intent_type == IntentType::Feedback && self.text.explicit_feedback == Feedback::Positive),
            unresolved_reference: if self.text.vague_reference
                || self.text.missing_object
                || matches!(self.text.referent_need, ReferentNeed::Proposal | ReferentNeed::Options)
            {
                1.0 - self.support()
            } else {
                0.0
            },
            bare_correction: self.text.correction == Correction::Bare && self.working_memory_turns > 0,
            dangling_reference: if self.text.dangling_reference { 1.0 - self.support() } else { 0.0 },
        }
    }
}

pub mod calibration;
pub mod config_check;
mod decide;
pub mod overrides;
mod score;
pub mod stats;
mod tiebreak;
mod weights;

pub use decide::{ActSequel, Decision, Evidence, Reason, Sequel, decide, triage_act_confirmed};
pub use score::*;
pub use tiebreak::*;
pub use weights::*;

// ───────────────────────────── state and history ─────────────────────────────

/// What the router needs to know about the topic's recent routing.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RouterState {
    /// The topic's previous delivered mode (anti-oscillation).
    pub previous_mode: Option<Mode>,
    /// The topic's most recent router confidences, oldest first (at most [`HYSTERESIS_WINDOW`]).
    pub recent_confidences: Vec<f64>,
}

impl RouterState {
    /// The last [`HYSTERESIS_WINDOW`] confidences exist and are all below `threshold`.
    pub fn low_confidence_streak(&self, threshold: f64) -> bool {
        let n = self.recent_confidences.len();
        n >= HYSTERESIS_WINDOW && self.recent_confidences[n - HYSTERESIS_WINDOW..].iter().all(|c| *c < threshold)
    }

    /// Remember a delivered decision.
    pub fn record(&mut self, decision: &RoutingDecision) {
        self.previous_mode = Some(decision.mode);
        self.recent_confidences.push(decision.router_confidence);
        let n = self.recent_confidences.len();
        if n > HYSTERESIS_WINDOW {
            self.recent_confidences.drain(..n - HYSTERESIS_WINDOW);
        }
    }
}

/// Per-topic routing history, keyed by the real topic id (⚠ the original never set the key, so
/// one global history served every topic). Serializable so the pipeline can persist it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RouterHistory {
    topics: HashMap<String, RouterState>,
}

impl RouterHistory {
    pub fn new() -> RouterHistory {
        RouterHistory::default()
    }

    /// The topic's state (a fresh one for an unknown topic).
    pub fn state(&self, topic: &str) -> RouterState {
        self.topics.get(topic).cloned().unwrap_or_default()
    }

    /// Record the delivered decision for `topic`.
    pub fn record(&mut self, topic: &str, decision: &RoutingDecision) {
        self.topics.entry(topic.to_string()).or_default().record(decision);
    }

    pub fn forget(&mut self, topic: &str) {
        self.topics.remove(topic);
    }

    pub fn len(&self) -> usize {
        self.topics.len()
    }

    pub fn is_empty(&self) -> bool {
        self.topics.is_empty()
    }
}

// ───────────────────────────── decision ─────────────────────────────

/// One anti-oscillation adjustment (logged as a `routing_anti_oscillation` event).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Suppression {
    pub previous_mode: Mode,
    pub adjusted_mode: Mode,
    pub delta: f64,
    pub reason: String,
}

/// The tie-breaker's answer: A = the higher-scoring candidate, B = the runner-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TieChoice {
    A,
    B,
}

/// The router's output (docs/cognition.md §6.5 fields; `routing_time_ms` is the caller's measurement).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoutingDecision {
    /// The delivered mode (after a tie-break or a post-ACT override).
    pub mode: Mode,
    /// All five scores, after anti-oscillation.
    pub scores: ModeScores,
    /// `(top − second) / max(|top|, 0.001)`.
    pub router_confidence: f64,
    /// The ratio the tie-break test compares (the same value as `router_confidence`).
    pub margin: f64,
    /// `base − (base − min)·warmth + semantic_uncertainty (+ hysteresis widening)`.
    pub effective_margin: f64,
    /// Whether the topic's low-confidence streak widened the margin.
    pub hysteresis_widened: bool,
    /// Tie-break candidates `(A, B)` = `(top, second)` when one is needed; the pipeline asks the
    /// lightweight model and calls [`RoutingDecision::resolve_tiebreak`].
    pub tiebreak: Option<(Mode, Mode)>,
    /// The model answered and its choice was applied.
    pub tiebreaker_used: bool,
    pub tiebreak_choice: Option<TieChoice>,
    /// [`RoutingDecision::resolve_tiebreak`] has run (with or without an answer).
    pub tiebreak_resolved: bool,
    pub previous_mode: Option<Mode>,
    pub suppressions: Vec<Suppression>,
    /// Set when the post-ACT re-route replaced the scored mode.
    pub override_reason: Option<String>,
    /// Every signal, derived ones under `derived`; built on first read (the row or the log).
    pub signal_snapshot: LazyJson,
    /// The weights the scores came from; built on first read.
    pub weight_snapshot: LazyJson,
}

impl RoutingDecision {
    /// The highest-scoring mode (what the router chose before any tie-break or override).
    pub fn scored_mode(&self) -> Mode {
        self.scores.ranked()[0].0
    }

    /// A tie-break is needed and has not been resolved yet.
    pub fn tiebreak_pending(&self) -> bool {
        self.tiebreak.is_some() && !self.tiebreak_resolved
    }

    /// Apply the tie-breaker's answer. `None` (no answer, unparseable reply, timeout) keeps the
    /// higher score. Returns the delivered mode. A no-op without pending candidates.
    pub fn resolve_tiebreak(&mut self, choice: Option<TieChoice>) -> Mode {
        if let Some((a, b)) = self.tiebreak
            && !self.tiebreak_resolved
        {
            self.tiebreak_resolved = true;
            self.tiebreak_choice = choice;
            self.tiebreaker_used = choice.is_some();
            self.mode = match choice {
                Some(TieChoice::B) => b,
                Some(TieChoice::A) | None => a,
            };
        }
        self.mode
    }

    /// Parse a tie-breaker reply ([`parse_tiebreak_for`]) and apply it.
    pub fn resolve_tiebreak_reply(&mut self, reply: &str) -> Mode {
        let choice = self.tiebreak.and_then(|(a, b)| parse_tiebreak_for(reply, a, b));
        self.resolve_tiebreak(choice)
    }
}

#[cfg(test)]
mod tests;
