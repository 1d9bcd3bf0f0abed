//! The uncertainty engine (seed 002, docs/cognition.md §10): when two memories disagree, keep the
//! current truth in front and ask at the right moment.
//!
//! - [`rules`]: the deterministic detector (slots, temporal markers, negation), pure;
//! - [`ingest`]: the check a turn runs on the user's message, and what it writes;
//! - [`classifier`]: the lightweight model's strict-JSON classification of ≤ 3 pairs;
//! - [`reconcile`]: RECONCILE, the drift engine's pass over similar memory pairs;
//! - this file: the seed's vocabulary (classes, verdicts, severity, reliability rank,
//!   tolerance) as plain functions.
//!
//! Records name memories by `(type, id)`; their text is read where it is shown, never copied.

pub mod answer;
pub mod classifier;
pub mod ingest;
pub mod reconcile;
pub mod resolve;
pub mod rules;
pub mod surface;
mod words;

use serde::{Deserialize, Serialize};

/// The classifier's classes (docs/cognition.md §10.4): can both statements hold for the same person
/// at once?
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    TemporalChange,
    TrueContradiction,
    ContextDependent,
    Figurative,
    Compatible,
}

impl Class {
    /// A class worth a record (the first such result of a check wins).
    pub fn is_hit(self) -> bool {
        !matches!(self, Class::Compatible | Class::Figurative)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Class::TemporalChange => "temporal_change",
            Class::TrueContradiction => "true_contradiction",
            Class::ContextDependent => "context_dependent",
            Class::Figurative => "figurative",
            Class::Compatible => "compatible",
        }
    }
}

/// What the class recommends doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Recommended {
    AutoSupersede,
    FlagResponse,
    BackgroundQueue,
    Ignore,
}

/// One classification, in the seed's output shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub classification: Class,
    pub confidence: f64,
    pub temporal_signal: bool,
    /// One sentence; never quotes the memories (records must not copy user text).
    pub reasoning: String,
    /// When to raise it (true contradictions and context-dependent ones only).
    pub surface_context: Option<String>,
    pub recommended_resolution: Recommended,
}

impl Verdict {
    pub fn new(classification: Class, confidence: f64, temporal_signal: bool, reasoning: String) -> Verdict {
        Verdict {
            classification,
            confidence,
            temporal_signal,
            reasoning,
            surface_context: None,
            recommended_resolution: recommended(classification),
        }
    }

    pub fn with_surface(mut self, surface: String) -> Verdict {
        if matches!(self.classification, Class::TrueContradiction | Class::ContextDependent) {
            self.surface_context = Some(surface);
        }
        self
    }

    /// The record type a hit opens: a contradiction, or ambiguous for a context-dependent one.
    pub fn record_kind(&self) -> &'static str {
        match self.classification {
            Class::ContextDependent | Class::Figurative => "ambiguous",
            _ => "contradiction",
        }
    }
}

/// The resolution a class implies (docs/cognition.md §10.4).
pub fn recommended(c: Class) -> Recommended {
    match c {
        Class::TemporalChange => Recommended::AutoSupersede,
        Class::TrueContradiction | Class::ContextDependent => Recommended::FlagResponse,
        Class::Figurative | Class::Compatible => Recommended::Ignore,
    }
}

/// Severity by the seed's pair rule: trait–trait critical; concept–trait and concept–concept
/// high; episode–trait and episode–concept medium; anything else (episode–episode, solo) low.
/// Facts and gists carry user statements like traits do, so they rank as traits.
pub fn severity(a: &str, b: Option<&str>) -> &'static str {
    fn norm(k: &str) -> &str {
        match k {
            "fact" | "gist" | "trait" => "trait",
            other => other,
        }
    }
    let Some(b) = b else { return "low" };
    let mut pair = [norm(a), norm(b)];
    pair.sort_unstable();
    match pair {
        ["trait", "trait"] => "critical",
        ["concept", "trait"] | ["concept", "concept"] => "high",
        ["episode", "trait"] | ["concept", "episode"] => "medium",
        _ => "low",
    }
}

/// Reliability rank (docs/cognition.md §10.1): reliable 4, uncertain 3, contradicted 2, superseded 1.
pub fn rank(state: &str) -> u8 {
    match state {
        "reliable" => 4,
        "uncertain" => 3,
        "contradicted" => 2,
        _ => 1,
    }
}

/// The rank guard: an ordinary update may only lower the rank; a resolution forces it.
pub fn may_set(current: &str, new: &str, resolution: bool) -> bool {
    resolution || rank(new) < rank(current)
}

pub use crate::memory::decay::reliability_multiplier as decay_multiplier;

/// Chalie's uncertainty tolerance (identity trait): baseline, range and nudges.
pub mod tolerance {
    pub const NAME: &str = "uncertainty_tolerance";
    pub const BASELINE: f64 = 0.5;
    pub const MIN: f64 = 0.2;
    pub const MAX: f64 = 0.8;
    /// Each user correction of a trait: surface earlier, clarify more.
    pub const ON_CORRECTION: f64 = -0.03;
    /// Each reinforcement: resolve more silently.
    pub const ON_REINFORCEMENT: f64 = 0.01;

    pub fn nudge(current: f64, delta: f64) -> f64 {
        let c = if current.is_finite() { current } else { BASELINE };
        (c + delta).clamp(MIN, MAX)
    }

    /// The lowest severity raised in a reply: at the baseline high and critical; a low
    /// tolerance (a user who corrects often) raises medium ones too, a high one only critical.
    pub fn surfacing_min_severity(t: f64) -> &'static str {
        if t < 0.4 {
            "medium"
        } else if t > 0.65 {
            "critical"
        } else {
            "high"
        }
    }

    /// The classifier confidence from which a temporal change is resolved without asking:
    /// 0.80 at the baseline (docs/cognition.md §10.4), lower when tolerance is high.
    pub fn auto_resolve_confidence(t: f64) -> f64 {
        (0.80 - (t - BASELINE) * 0.5).clamp(0.65, 0.95)
    }

    /// RECONCILE's pair budget per pass: 5 at the baseline, 3–7 across the range.
    pub fn reconcile_budget(t: f64) -> usize {
        (5.0 + (t - BASELINE) * 6.7).round().clamp(3.0, 7.0) as usize
    }
}

/// Severity order for comparisons: critical 3 … low 0.
pub fn severity_rank(s: &str) -> u8 {
    match s {
        "critical" => 3,
        "high" => 2,
        "medium" => 1,
        _ => 0,
    }
}

#[cfg(test)]
mod tests;
