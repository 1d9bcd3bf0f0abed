//! Router weights: the versioned numbers the routing stability regulator owns.

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RespondWeights {
    pub base: f64,
    /// × warmth
    pub warmth_boost: f64,
    /// × fact_density
    pub fact_density: f64,
    /// × gist_density
    pub gist_density: f64,
    /// + if question and warmth > 0.4
    pub question_warm: f64,
    /// − if cold
    pub cold_penalty: f64,
    /// + if question and cold
    pub question_cold: f64,
    /// − × self_constraint
    pub self_constraint_penalty: f64,
    /// − if greeting_pattern
    pub greeting_penalty: f64,
    /// − if positive feedback
    pub positive_feedback_penalty: f64,
    /// Addition: − if the whole message is social (intent greeting / positive feedback).
    pub social_intent_penalty: f64,
    /// Addition: − if intent_type = action (RESPOND cannot perform a skill request).
    pub action_intent_penalty: f64,
    /// Addition: − if a bare correction: another answer from the same reading misses again.
    pub correction_penalty: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClarifyWeights {
    pub base: f64,
    /// + (1 − warmth) × w if cold
    pub cold_boost: f64,
    /// + if question and cold
    pub question_cold: f64,
    /// − if warm
    pub warm_penalty: f64,
    /// + if question and fact_count = 0
    pub question_no_facts: f64,
    /// + if new topic and question
    pub new_topic_question: f64,
    /// + × self_constraint
    pub self_constraint: f64,
    /// Addition: + × unresolved_reference if vague_reference (1 − how far working memory can
    /// supply the referent).
    pub vague_reference: f64,
    /// Addition: + if negative feedback carrying no correction.
    pub bare_negative_feedback: f64,
    /// Addition: + × unresolved_reference if missing_object (a request whose object is a pointer).
    pub missing_object: f64,
    /// Addition: + if a correction says the answer missed the point but not what was meant.
    pub correction: f64,
    /// Addition: + if a request to make something gives none of the details it needs.
    pub underspecified_request: f64,
    /// Addition: + × dangling_reference if cold: a short ask whose pronoun names nothing
    /// ("is it worth it?") on a topic nothing is known about (docs/cognition.md §15.7).
    pub dangling_reference: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ActWeights {
    pub base: f64,
    /// + if question and 0.3 ≤ warmth ≤ 0.7
    pub question_moderate_context: f64,
    /// + if interrogative and fact_count < 3
    pub interrogative_fact_gap: f64,
    /// + if implicit_reference
    pub implicit_reference: f64,
    /// − if warmth < 0.15
    pub very_cold_penalty: f64,
    /// − if warm and fact_density > 0.5
    pub warm_facts_penalty: f64,
    /// + if intent_type = action
    pub action_intent: f64,
    /// + if (interrogative or `?`) and memory_confidence < 0.15
    pub memory_confidence_very_low: f64,
    /// … otherwise + if memory_confidence < 0.30
    pub memory_confidence_low: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AcknowledgeWeights {
    pub base: f64,
    /// − if question, unless the whole message is social (a pleasantry such as "how are you?" is a
    /// question that still wants a brief social reply; the published formula penalised it too).
    pub question_penalty: f64,
    /// + if greeting_pattern
    pub greeting: f64,
    /// + if positive feedback
    pub positive_feedback: f64,
    /// Addition: + if the whole message is social (intent greeting, or positive feedback intent).
    pub social_intent: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct IgnoreWeights {
    pub base: f64,
    /// + if the input is empty
    pub empty_input: f64,
}

/// docs/cognition.md §6.4 per-request adjustments (weights are not changed).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AntiOscillationWeights {
    /// Previous mode ACT → ACT − this.
    pub act_after_act_penalty: f64,
    /// Previous mode CLARIFY → RESPOND + this (design value; the later impl's 0.15/−0.20 is not used).
    pub respond_after_clarify_boost: f64,
}

/// docs/cognition.md §6.5 margins.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TiebreakerWeights {
    /// Effective margin at warmth 0.
    pub base_margin: f64,
    /// Effective margin at warmth 1.
    pub min_margin: f64,
    /// + if implicit_reference
    pub implicit_reference_uncertainty: f64,
    /// + if information_density < 0.3
    pub low_density_uncertainty: f64,
    /// + if interrogative words but no `?`
    pub interrogative_no_mark_uncertainty: f64,
    /// Margin widening on a low-confidence streak of the topic.
    pub hysteresis_widening: f64,
    /// A confidence below this counts toward the streak.
    pub hysteresis_threshold: f64,
}

/// The versioned router configuration the routing stability regulator owns (docs/cognition.md §6.7). Every base and
/// weight is a named field; [`RouterWeights::get`] / [`RouterWeights::set`] address them as
/// `"group.field"` (e.g. `"clarify.cold_boost"`), and [`RouterWeights::bounds`] lists the ones the
/// regulator may move, with their limits.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RouterWeights {
    pub version: u32,
    pub respond: RespondWeights,
    pub clarify: ClarifyWeights,
    pub act: ActWeights,
    pub acknowledge: AcknowledgeWeights,
    pub ignore: IgnoreWeights,
    pub anti_oscillation: AntiOscillationWeights,
    pub tiebreaker: TiebreakerWeights,
}

/// `clarify.dangling_reference` of the defaults, calibrated on the even threads of the routing
/// replay session and the even items of the labelled set (docs/cognition.md §15.7).
pub const DANGLING_REFERENCE_DEFAULT: f64 = 0.30;

/// Version of [`RouterWeights::default`].
pub const DEFAULT_WEIGHTS_VERSION: u32 = 2;

impl Default for RouterWeights {
    /// The calibrated defaults (see the module documentation for each change and why).
    fn default() -> RouterWeights {
        let p = RouterWeights::published();
        RouterWeights {
            version: DEFAULT_WEIGHTS_VERSION,
            respond: RespondWeights {
                cold_penalty: 0.05,
                greeting_penalty: 0.05,
                positive_feedback_penalty: 0.05,
                social_intent_penalty: 0.45,
                action_intent_penalty: 0.30,
                correction_penalty: 0.20,
                ..p.respond
            },
            clarify: ClarifyWeights {
                base: 0.25,
                cold_boost: 0.10,
                question_cold: 0.0,
                question_no_facts: 0.0,
                new_topic_question: 0.0,
                vague_reference: 0.40,
                bare_negative_feedback: 0.30,
                missing_object: 0.40,
                correction: 0.20,
                underspecified_request: 0.35,
                dangling_reference: DANGLING_REFERENCE_DEFAULT,
                ..p.clarify
            },
            act: ActWeights {
                question_moderate_context: 0.10,
                interrogative_fact_gap: 0.05,
                implicit_reference: 0.10,
                action_intent: 0.70,
                memory_confidence_very_low: 0.03,
                memory_confidence_low: 0.02,
                ..p.act
            },
            acknowledge: AcknowledgeWeights {
                greeting: 0.25,
                positive_feedback: 0.20,
                social_intent: 0.55,
                ..p.acknowledge
            },
            ignore: IgnoreWeights { empty_input: 1.60, ..p.ignore },
            ..p
        }
    }
}

// A hand-edited file may omit single fields: they take the calibrated defaults.
impl Default for RespondWeights {
    fn default() -> RespondWeights {
        RouterWeights::default().respond
    }
}

impl Default for ClarifyWeights {
    fn default() -> ClarifyWeights {
        RouterWeights::default().clarify
    }
}

impl Default for ActWeights {
    fn default() -> ActWeights {
        RouterWeights::default().act
    }
}

impl Default for AcknowledgeWeights {
    fn default() -> AcknowledgeWeights {
        RouterWeights::default().acknowledge
    }
}

impl Default for IgnoreWeights {
    fn default() -> IgnoreWeights {
        RouterWeights::default().ignore
    }
}

impl Default for AntiOscillationWeights {
    fn default() -> AntiOscillationWeights {
        RouterWeights::default().anti_oscillation
    }
}

impl Default for TiebreakerWeights {
    fn default() -> TiebreakerWeights {
        RouterWeights::default().tiebreaker
    }
}

/// A parameter the regulator may adjust, with its hard limits.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct WeightBound {
    pub name: &'static str,
    pub min: f64,
    pub max: f64,
}

/// docs/cognition.md §6.7 bounds (the first ten, names mapped: `RESPOND.base` → `respond.base`,
/// `tiebreaker_base_margin` → `tiebreaker.base_margin`), plus bounds for the parameters this
/// implementation added.
pub const WEIGHT_BOUNDS: &[WeightBound] = &[
    WeightBound { name: "respond.base", min: 0.30, max: 0.70 },
    WeightBound { name: "clarify.base", min: 0.10, max: 0.50 },
    WeightBound { name: "act.base", min: 0.05, max: 0.40 },
    WeightBound { name: "respond.warmth_boost", min: 0.05, max: 0.40 },
    WeightBound { name: "respond.cold_penalty", min: 0.05, max: 0.30 },
    WeightBound { name: "clarify.cold_boost", min: 0.10, max: 0.40 },
    WeightBound { name: "clarify.warm_penalty", min: 0.05, max: 0.35 },
    WeightBound { name: "act.question_moderate_context", min: 0.05, max: 0.35 },
    WeightBound { name: "act.implicit_reference", min: 0.05, max: 0.30 },
    WeightBound { name: "tiebreaker.base_margin", min: 0.05, max: 0.30 },
    // additions
    WeightBound { name: "clarify.vague_reference", min: 0.10, max: 0.60 },
    WeightBound { name: "clarify.bare_negative_feedback", min: 0.0, max: 0.50 },
    WeightBound { name: "clarify.missing_object", min: 0.0, max: 0.60 },
    WeightBound { name: "clarify.correction", min: 0.0, max: 0.50 },
    WeightBound { name: "clarify.underspecified_request", min: 0.0, max: 0.50 },
    WeightBound { name: "clarify.dangling_reference", min: 0.0, max: 0.50 },
    WeightBound { name: "act.action_intent", min: 0.20, max: 0.90 },
    WeightBound { name: "respond.social_intent_penalty", min: 0.0, max: 0.50 },
    WeightBound { name: "respond.action_intent_penalty", min: 0.0, max: 0.50 },
    WeightBound { name: "respond.correction_penalty", min: 0.0, max: 0.50 },
    WeightBound { name: "acknowledge.social_intent", min: 0.0, max: 0.60 },
];

/// Why a weight could not be set.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WeightError {
    #[error("unknown router weight `{0}`")]
    Unknown(String),
    #[error("router weight `{0}` must be a finite number")]
    NotFinite(String),
}

macro_rules! weight_params {
    ($($group:ident . $field:ident),* $(,)?) => {
        impl RouterWeights {
            /// Every weight's name, `"group.field"`.
            pub const PARAMS: &'static [&'static str] =
                &[$(concat!(stringify!($group), ".", stringify!($field))),*];

            /// A weight by name.
            pub fn get(&self, name: &str) -> Option<f64> {
                match name {
                    $(concat!(stringify!($group), ".", stringify!($field)) => Some(self.$group.$field),)*
                    _ => None,
                }
            }

            pub(super) fn slot(&mut self, name: &str) -> Option<&mut f64> {
                match name {
                    $(concat!(stringify!($group), ".", stringify!($field)) => Some(&mut self.$group.$field),)*
                    _ => None,
                }
            }
        }
    };
}

weight_params!(
    respond.base,
    respond.warmth_boost,
    respond.fact_density,
    respond.gist_density,
    respond.question_warm,
    respond.cold_penalty,
    respond.question_cold,
    respond.self_constraint_penalty,
    respond.greeting_penalty,
    respond.positive_feedback_penalty,
    respond.social_intent_penalty,
    respond.action_intent_penalty,
    respond.correction_penalty,
    clarify.base,
    clarify.cold_boost,
    clarify.question_cold,
    clarify.warm_penalty,
    clarify.question_no_facts,
    clarify.new_topic_question,
    clarify.self_constraint,
    clarify.vague_reference,
    clarify.bare_negative_feedback,
    clarify.missing_object,
    clarify.correction,
    clarify.underspecified_request,
    clarify.dangling_reference,
    act.base,
    act.question_moderate_context,
    act.interrogative_fact_gap,
    act.implicit_reference,
    act.very_cold_penalty,
    act.warm_facts_penalty,
    act.action_intent,
    act.memory_confidence_very_low,
    act.memory_confidence_low,
    acknowledge.base,
    acknowledge.question_penalty,
    acknowledge.greeting,
    acknowledge.positive_feedback,
    acknowledge.social_intent,
    ignore.base,
    ignore.empty_input,
    anti_oscillation.act_after_act_penalty,
    anti_oscillation.respond_after_clarify_boost,
    tiebreaker.base_margin,
    tiebreaker.min_margin,
    tiebreaker.implicit_reference_uncertainty,
    tiebreaker.low_density_uncertainty,
    tiebreaker.interrogative_no_mark_uncertainty,
    tiebreaker.hysteresis_widening,
    tiebreaker.hysteresis_threshold,
);

impl RouterWeights {
    /// The published code defaults (docs/cognition.md §6.3 "Default" column; version 1). Kept for comparison and
    /// for replaying old audit rows; the additions of this implementation are 0 here.
    pub fn published() -> RouterWeights {
        RouterWeights {
            version: 1,
            respond: RespondWeights {
                base: 0.50,
                warmth_boost: 0.20,
                fact_density: 0.15,
                gist_density: 0.10,
                question_warm: 0.15,
                cold_penalty: 0.15,
                question_cold: 0.10,
                self_constraint_penalty: 0.05,
                greeting_penalty: 0.20,
                positive_feedback_penalty: 0.15,
                social_intent_penalty: 0.0,
                action_intent_penalty: 0.0,
                correction_penalty: 0.0,
            },
            clarify: ClarifyWeights {
                base: 0.30,
                cold_boost: 0.12,
                question_cold: 0.05,
                warm_penalty: 0.20,
                question_no_facts: 0.08,
                new_topic_question: 0.05,
                self_constraint: 0.10,
                vague_reference: 0.0,
                bare_negative_feedback: 0.0,
                missing_object: 0.0,
                correction: 0.0,
                underspecified_request: 0.0,
                dangling_reference: 0.0,
            },
            act: ActWeights {
                base: 0.20,
                question_moderate_context: 0.20,
                interrogative_fact_gap: 0.15,
                implicit_reference: 0.15,
                very_cold_penalty: 0.10,
                warm_facts_penalty: 0.10,
                action_intent: 0.40,
                memory_confidence_very_low: 0.10,
                memory_confidence_low: 0.05,
            },
            acknowledge: AcknowledgeWeights {
                base: 0.10,
                question_penalty: 0.30,
                greeting: 0.60,
                positive_feedback: 0.40,
                social_intent: 0.0,
            },
            ignore: IgnoreWeights { base: -0.50, empty_input: 1.00 },
            anti_oscillation: AntiOscillationWeights { act_after_act_penalty: 0.15, respond_after_clarify_boost: 0.05 },
            tiebreaker: TiebreakerWeights {
                base_margin: 0.20,
                min_margin: 0.08,
                implicit_reference_uncertainty: 0.05,
                low_density_uncertainty: 0.03,
                interrogative_no_mark_uncertainty: 0.03,
                hysteresis_widening: 0.05,
                hysteresis_threshold: 0.15,
            },
        }
    }

    /// Chalie's shipped tuned file (docs/cognition.md §6.3 "Config" column), for comparison only.
    pub fn published_config() -> RouterWeights {
        let p = RouterWeights::published();
        RouterWeights {
            respond: RespondWeights { base: 0.40, question_cold: 0.0, self_constraint_penalty: 0.0, ..p.respond },
            clarify: ClarifyWeights {
                cold_boost: 0.25,
                question_no_facts: 0.20,
                new_topic_question: 0.10,
                self_constraint: 0.0,
                ..p.clarify
            },
            act: ActWeights { memory_confidence_very_low: 0.20, memory_confidence_low: 0.10, ..p.act },
            acknowledge: AcknowledgeWeights { greeting: 0.80, positive_feedback: 0.55, ..p.acknowledge },
            ..p
        }
    }

    /// The regulated parameters and their limits.
    pub fn bounds() -> &'static [WeightBound] {
        WEIGHT_BOUNDS
    }

    /// The limits of one parameter, if the regulator may move it.
    pub fn bound(name: &str) -> Option<(f64, f64)> {
        WEIGHT_BOUNDS.iter().find(|b| b.name == name).map(|b| (b.min, b.max))
    }

    /// Set a weight by name; a bounded one is clamped into its bounds. Returns the stored value.
    pub fn set(&mut self, name: &str, value: f64) -> Result<f64, WeightError> {
        if !value.is_finite() {
            return Err(WeightError::NotFinite(name.to_string()));
        }
        let stored = match RouterWeights::bound(name) {
            Some((lo, hi)) => value.clamp(lo, hi),
            None => value,
        };
        *self.slot(name).ok_or_else(|| WeightError::Unknown(name.to_string()))? = stored;
        Ok(stored)
    }

    /// Clamp every bounded parameter into its bounds (after loading a hand-edited file).
    pub fn clamp_to_bounds(&mut self) {
        for b in WEIGHT_BOUNDS {
            if let Some(slot) = self.slot(b.name) {
                *slot = slot.clamp(b.min, b.max);
            }
        }
    }

    /// Every weight finite, bounded ones within bounds, `min_margin ≤ base_margin`.
    pub fn validate(&self) -> Result<(), String> {
        for name in RouterWeights::PARAMS {
            let v = self.get(name).unwrap_or(f64::NAN);
            if !v.is_finite() {
                return Err(format!("{name} is not a finite number"));
            }
            if let Some((lo, hi)) = RouterWeights::bound(name)
                && !(lo..=hi).contains(&v)
            {
                return Err(format!("{name} = {v} is outside {lo}..={hi}"));
            }
        }
        if self.tiebreaker.min_margin > self.tiebreaker.base_margin {
            return Err("tiebreaker.min_margin exceeds tiebreaker.base_margin".to_string());
        }
        Ok(())
    }
}
