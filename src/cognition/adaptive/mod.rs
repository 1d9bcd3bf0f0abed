//! The adaptive layer (docs/cognition.md §18): the communication-style profile the chunker
//! keeps (§9.6), the user's explicit format requests and the moment's signals, turned into a
//! few short directives for the reply prompt.
//!
//! Everything that decides is a pure function over plain values ([`plan`], [`micro::detect`],
//! the functions of [`signals`]); [`state`] is the one place that reads and writes the store.
//! Precedence, strongest first: the identity voice (soul + identity core, which every
//! directive is worded within, see [`identity_guard`]), then micro-preferences, then the
//! moment (cognitive load, energy), then the inferred profile. A slot holds one directive, so a
//! stronger source silences a weaker one on the same slot.

pub mod micro;
pub mod signals;
pub mod state;
#[cfg(test)]
mod tests;

use crate::memory::style::{DIMENSIONS, Style, StyleProfile};
use serde::{Deserialize, Serialize};
use signals::Load;

/// A dimension at or below this asks for its low-side directive (parameters §7).
pub const LOW: f64 = 4.0;
/// A dimension at or above this asks for its high-side directive.
pub const HIGH: f64 = 7.0;
/// The profile says nothing until it holds this many observations.
pub const MIN_OBSERVATIONS: u32 = 2;
/// The cognitive dimensions furthest from neutral get this many slots (they limit bias).
pub const COGNITIVE_SLOTS: usize = 2;
/// The emotional directive needs `|v − 5.5|` above this.
pub const EMOTIONAL_SALIENCE: f64 = 1.5;
const NEUTRAL: f64 = 5.5;
/// The built-in model's prompt gets at most this many directives (its context is small and
/// each line costs it attention).
pub const BUILTIN_MAX_DIRECTIVES: usize = 3;

/// Where a directive goes in the reply; one directive per slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Slot {
    Load,
    Length,
    Directness,
    Formality,
    Abstraction,
    Warmth,
    Challenge,
    Depth,
    Pacing,
    Format,
    Emojis,
    Fork,
}

/// Which side of a dimension a directive pushes toward.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    Low,
    High,
}

/// What produced a directive, strongest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    Micro,
    Load,
    Energy,
    Profile,
    Fork,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Directive {
    pub slot: Slot,
    pub side: Option<Side>,
    pub origin: Origin,
    pub text: String,
}

/// A dimension the profile can turn into a directive: its slot and one line per side.
struct Dimension {
    name: &'static str,
    slot: Slot,
    low: &'static str,
    high: &'static str,
}

/// The eight dimensions that reach the prompt (certainty_level describes how the user hedges,
/// not how they want to be answered, so it stays in the profile only).
const PROFILE: [Dimension; 8] = [
    Dimension {
        name: "verbosity",
        slot: Slot::Length,
        low: "Keep replies brief: a few sentences.",
        high: "Fuller answers are welcome: include helpful detail.",
    },
    Dimension {
        name: "directness",
        slot: Slot::Directness,
        low: "Phrase suggestions gently, as options.",
        high: "Be direct: lead with the answer, no preamble.",
    },
    Dimension {
        name: "formality",
        slot: Slot::Formality,
        low: "Use a casual, relaxed tone.",
        high: "Use a polite, formal tone.",
    },
    Dimension {
        name: "abstraction_level",
        slot: Slot::Abstraction,
        low: "Stay concrete: examples and steps, not theory.",
        high: "Engage with the ideas and principles behind things.",
    },
    Dimension {
        name: "emotional_valence",
        slot: Slot::Warmth,
        low: "Stay factual and logical.",
        high: "Acknowledge feelings warmly before the facts.",
    },
    Dimension {
        name: "challenge_appetite",
        slot: Slot::Challenge,
        low: "Be supportive; raise problems only when they matter.",
        high: "Offer counterpoints and question weak assumptions.",
    },
    Dimension {
        name: "depth_preference",
        slot: Slot::Depth,
        low: "Stay practical: what to do, not the theory.",
        high: "Explore the why and the trade-offs.",
    },
    Dimension {
        name: "pacing",
        slot: Slot::Pacing,
        low: "One point at a time, in short messages.",
        high: "Take your time: a structured, deliberate reply is fine.",
    },
];

/// Everything one turn's directives are computed from.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    pub profile: Option<StyleProfile>,
    /// Stored micro-preferences `(key, value)`, strongest first (see [`micro`]).
    pub micro: Vec<(String, String)>,
    pub load: Load,
    /// The message's own verbosity against the profile's (see [`signals::energy`]).
    pub energy: Option<Side>,
    /// The challenge tolerance learned from how pushback landed (see [`signals::update_tolerance`]).
    pub tolerance: f64,
    /// The fork to offer this turn, if its cooldown allows (see [`signals::fork`]).
    pub fork: Option<&'static str>,
}

/// The directives for one turn, in prompt order, and what they were computed from (the
/// audit shows both).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Applied {
    pub directives: Vec<Directive>,
    pub load: Load,
    #[serde(default)]
    pub energy: Option<Side>,
    /// `min(appetite, tolerance)`, when the profile speaks.
    #[serde(default)]
    pub challenge: Option<f64>,
    pub observations: u32,
}

impl Applied {
    /// The prompt's lines, strongest first, at most `limit` (the built-in model's budget); a
    /// fork only in a reply that answers in full.
    pub fn lines_for(&self, answers: bool, limit: usize) -> Vec<String> {
        let keep = |d: &&Directive| answers || d.slot != Slot::Fork;
        self.directives.iter().filter(keep).take(limit).map(|d| d.text.clone()).collect()
    }
}

/// Profile, micro-preferences and the moment → directives (docs/cognition.md §18.1). Slot
/// order follows parameters §7: load first, then pacing, the two cognitive dimensions furthest
/// from neutral, an emotional directive when salient; micro-preferences take their slots
/// ahead of all of it, and a fork goes last.
pub fn plan(i: &Inputs) -> Applied {
    let mut out: Vec<Directive> = Vec::new();
    let put = |d: Directive, out: &mut Vec<Directive>| {
        if !out.iter().any(|o| o.slot == d.slot) {
            out.push(identity_guard(d));
        }
    };
    let mut stated: Vec<&(String, String)> = i.micro.iter().collect();
    // The table's order, length and format first: what a budget cut keeps.
    stated.sort_by_key(|(k, _)| micro::rank(k));
    for (key, value) in stated {
        if let Some(d) = micro::directive(key, value) {
            put(d, &mut out);
        }
    }
    if let Some(text) = signals::load_directive(i.load) {
        put(Directive { slot: Slot::Load, side: Some(Side::Low), origin: Origin::Load, text: text.into() }, &mut out);
    }
    if let Some(side) = i.energy {
        put(
            Directive {
                slot: Slot::Length,
                side: Some(side),
                origin: Origin::Energy,
                text: signals::energy_line(side).into(),
            },
            &mut out,
        );
    }
    let profile = i.profile.filter(|p| p.observations >= MIN_OBSERVATIONS);
    let mut challenge = None;
    if let Some(p) = profile {
        let mut style = p.style;
        // Challenge calibration: the appetite is the ceiling, the tolerance what landed well.
        if let Some(ix) = DIMENSIONS.iter().position(|d| *d == "challenge_appetite") {
            style.values[ix] = signals::calibrated_challenge(style.values[ix], i.tolerance);
            challenge = Some(style.values[ix]);
        }
        for d in profile_directives(&style) {
            // Under load nothing may ask for more: a longer, deeper or slower reply waits.
            let more = d.side == Some(Side::High) && matches!(d.slot, Slot::Length | Slot::Depth | Slot::Pacing);
            if i.load != Load::Normal && more {
                continue;
            }
            put(d, &mut out);
        }
    }
    if let (Some(text), Load::Normal) = (i.fork, i.load) {
        put(Directive { slot: Slot::Fork, side: None, origin: Origin::Fork, text: text.into() }, &mut out);
    }
    Applied {
        directives: out,
        load: i.load,
        energy: i.energy,
        challenge,
        observations: i.profile.map_or(0, |p| p.observations),
    }
}

/// The profile's own directives, in slot order: pacing, then the [`COGNITIVE_SLOTS`]
/// cognitive dimensions furthest from neutral, then warmth when salient. A dimension inside
/// (LOW, HIGH) says nothing.
pub fn profile_directives(style: &Style) -> Vec<Directive> {
    let side = |v: f64| {
        if v <= LOW {
            Some(Side::Low)
        } else if v >= HIGH {
            Some(Side::High)
        } else {
            None
        }
    };
    let directive = |d: &Dimension, v: f64| {
        side(v).map(|s| Directive {
            slot: d.slot,
            side: Some(s),
            origin: Origin::Profile,
            text: if s == Side::Low { d.low } else { d.high }.into(),
        })
    };
    let value = |d: &Dimension| style.get(d.name).unwrap_or(NEUTRAL);
    let mut out = Vec::new();
    let pacing = PROFILE.iter().find(|d| d.slot == Slot::Pacing);
    out.extend(pacing.and_then(|d| directive(d, value(d))));
    let mut cognitive: Vec<&Dimension> =
        PROFILE.iter().filter(|d| !matches!(d.slot, Slot::Pacing | Slot::Warmth)).collect();
    // Furthest from neutral first; ties keep the table's order (the sort is stable).
    cognitive.sort_by(|a, b| (value(b) - NEUTRAL).abs().total_cmp(&(value(a) - NEUTRAL).abs()));
    out.extend(cognitive.iter().filter_map(|d| directive(d, value(d))).take(COGNITIVE_SLOTS));
    if let Some(d) = PROFILE.iter().find(|d| d.slot == Slot::Warmth)
        && (value(d) - NEUTRAL).abs() > EMOTIONAL_SALIENCE
    {
        out.extend(directive(d, value(d)));
    }
    out
}

/// The identity voice outranks every directive (parameters §7): Chalie is warm, direct and
/// honest, so a directive that leans away from one of those keeps it explicitly.
pub fn identity_guard(mut d: Directive) -> Directive {
    let keep = match (d.slot, d.side) {
        (Slot::Directness, Some(Side::Low)) => Some("still say plainly what you know"),
        (Slot::Warmth, Some(Side::Low)) => Some("stay kind"),
        (Slot::Challenge, Some(Side::Low)) => Some("never agree with something false"),
        _ => None,
    };
    if let Some(k) = keep {
        let base = d.text.trim_end_matches('.');
        d.text = format!("{base}, but {k}.");
    }
    d
}
