//! Context formulas of Phase A (docs/cognition.md §4): context warmth, memory confidence, the
//! feeling-of-knowing (FOK) count, memory-type weights and the reliability-weighted assembly
//! weight. Plus [`ContextSignals`], the per-message context snapshot the router reads.

use serde::{Deserialize, Serialize};

pub use crate::memory::warmth::{WARMTH_GISTS_FULL, WARMTH_WM_FULL, warmth};

/// FOK is a count of partial matches on 0–5.
pub const FOK_MAX: f64 = 5.0;
/// A recall hit below this confidence is a "partial match" for FOK.
pub const FOK_PARTIAL_BELOW: f64 = 0.5;
/// Gists + facts at which the density term of memory confidence saturates.
pub const MEMORY_DENSITY_FULL: f64 = 6.0;
/// Memory confidence is scaled by this on a new topic.
pub const NEW_TOPIC_FACTOR: f64 = 0.7;
/// Floor of the reliability factor in [`assembly_weight`].
pub const RELIABILITY_FLOOR: f64 = 0.3;

/// `round3(0.4·min(1, FOK/5) + 0.4·warmth + 0.2·min(1, (gists+facts)/6))`, ×0.7 on a new
/// topic (docs/cognition.md §4.2). FOK is divided by 5 first (⚠ the design's raw 0–5 FOK could push the result past
/// 1). The ×0.7 is applied before rounding so the result always has three decimals. Inputs are
/// clamped (FOK to 0–5, warmth to 0–1).
pub fn memory_confidence(fok: f64, warmth: f64, gists: usize, facts: usize, is_new_topic: bool) -> f64 {
    let fok = if fok.is_finite() { (fok / FOK_MAX).clamp(0.0, 1.0) } else { 0.0 };
    let warmth = if warmth.is_finite() { warmth.clamp(0.0, 1.0) } else { 0.0 };
    let density = ((gists + facts) as f64 / MEMORY_DENSITY_FULL).min(1.0);
    let mut c = 0.4 * fok + 0.4 * warmth + 0.2 * density;
    if is_new_topic {
        c *= NEW_TOPIC_FACTOR;
    }
    round3(c)
}

/// Round to three decimals.
pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// FOK after a recall: the number of hits with confidence below 0.5, capped at 5 (docs/cognition.md §4.2).
pub fn fok_from_hits(hit_confidences: &[f64]) -> f64 {
    hit_confidences.iter().filter(|c| **c < FOK_PARTIAL_BELOW).count().min(FOK_MAX as usize) as f64
}

/// Memory layers in context assembly, with their docs/cognition.md §4.3 type weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryKind {
    WorkingMemory,
    Moment,
    Fact,
    Gist,
    Episode,
    Procedural,
    Concept,
}

impl MemoryKind {
    /// docs/cognition.md §4.3 type weight; over budget the lowest-weighted kind is cut first.
    pub fn type_weight(self) -> f64 {
        match self {
            MemoryKind::WorkingMemory => 1.0,
            MemoryKind::Moment => 0.95,
            MemoryKind::Fact => 0.90,
            MemoryKind::Gist => 0.80,
            MemoryKind::Episode => 0.70,
            MemoryKind::Procedural => 0.65,
            MemoryKind::Concept => 0.60,
        }
    }
}

/// docs/cognition.md §4.3 reliability states and their assembly factors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Reliability {
    #[default]
    Reliable,
    Uncertain,
    Contradicted,
    Superseded,
}

impl Reliability {
    pub fn assembly_factor(self) -> f64 {
        match self {
            Reliability::Reliable => 1.0,
            Reliability::Uncertain => 0.6,
            Reliability::Contradicted => 0.4,
            Reliability::Superseded => 0.2,
        }
    }
}

/// `assembly_weight = base_type_weight × importance × max(0.3, reliability_factor)` (docs/cognition.md §4.3). The
/// floor lets an important contradicted memory still surface (flagged).
pub fn assembly_weight(base_type_weight: f64, importance: f64, reliability_factor: f64) -> f64 {
    base_type_weight * importance * reliability_factor.max(RELIABILITY_FLOOR)
}

/// [`assembly_weight`] from a memory kind and a reliability state.
pub fn assembly_weight_for(kind: MemoryKind, importance: f64, reliability: Reliability) -> f64 {
    assembly_weight(kind.type_weight(), importance, reliability.assembly_factor())
}

impl Reliability {
    /// The stored state's name; anything unknown counts as uncertain.
    pub fn parse(state: &str) -> Reliability {
        match state {
            "reliable" => Reliability::Reliable,
            "contradicted" => Reliability::Contradicted,
            "superseded" => Reliability::Superseded,
            _ => Reliability::Uncertain,
        }
    }
}

/// Order memories for the prompt by [`assembly_weight_for`], heaviest first; superseded ones
/// (shown only as past) always after the rest. Stable, so equal weights keep their order.
pub fn order_for_assembly<T>(items: &mut [T], weigh: impl Fn(&T) -> (MemoryKind, f64, Reliability)) {
    let key = |t: &T| {
        let (kind, importance, r) = weigh(t);
        (r == Reliability::Superseded, -assembly_weight_for(kind, importance, r))
    };
    items.sort_by(|a, b| {
        let (ka, kb) = (key(a), key(b));
        ka.0.cmp(&kb.0).then(ka.1.total_cmp(&kb.1))
    });
}

/// The context half of the router's signals (docs/cognition.md §6.1), as Phase A assembled it for one message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextSignals {
    /// Working-memory entries of the thread (the warmth term saturates at 4).
    pub working_memory_turns: usize,
    /// Real gists of the topic (cold-start gists excluded).
    pub gist_count: usize,
    pub fact_count: usize,
    pub world_state_present: bool,
    /// FOK of the topic, 0–5.
    pub fok_score: f64,
    pub topic_confidence: f64,
    pub is_new_topic: bool,
    pub session_exchange_count: usize,
    /// Highest severity (0–1) among the self-model's noteworthy items.
    pub self_constraint: f64,
    /// A focus session is open and this message left its topic (the focus skill's
    /// distraction check).
    #[serde(default)]
    pub focus_distraction: bool,
    /// How far working memory can supply what the message points at without naming it, 0–1
    /// ([`crate::cognition::signals::reference::referent_support`], which reads its content).
    /// `None` (callers without working memory's text):
    /// [`crate::cognition::signals::reference::fullness_support`].
    #[serde(default)]
    pub referent_support: Option<f64>,
}

impl Default for ContextSignals {
    /// A cold start: nothing in memory, a brand-new topic.
    fn default() -> ContextSignals {
        ContextSignals {
            working_memory_turns: 0,
            gist_count: 0,
            fact_count: 0,
            world_state_present: false,
            fok_score: 0.0,
            topic_confidence: 1.0,
            is_new_topic: true,
            session_exchange_count: 0,
            self_constraint: 0.0,
            focus_distraction: false,
            referent_support: None,
        }
    }
}

impl ContextSignals {
    pub fn warmth(&self) -> f64 {
        warmth(self.working_memory_turns, self.gist_count, self.world_state_present)
    }

    pub fn memory_confidence(&self) -> f64 {
        memory_confidence(self.fok_score, self.warmth(), self.gist_count, self.fact_count, self.is_new_topic)
    }

    /// [`ContextSignals::referent_support`], or what working memory's size says of it when it
    /// was not measured; clamped to 0–1.
    pub fn referent_support(&self) -> f64 {
        let s = self.referent_support.unwrap_or_else(|| {
            crate::cognition::signals::reference::fullness_support(self.working_memory_turns, self.is_new_topic)
        });
        if s.is_finite() { s.clamp(0.0, 1.0) } else { 0.0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn context_warmth_terms_and_saturation() {
        assert!(close(warmth(0, 0, false), 0.0));
        assert!(close(warmth(2, 0, false), 0.5 / 3.0));
        assert!(close(warmth(0, 5, false), 1.0 / 3.0));
        assert!(close(warmth(0, 0, true), 1.0 / 3.0));
        assert!(close(warmth(4, 5, true), 1.0));
        assert!(close(warmth(40, 50, true), 1.0), "each term saturates at 1");
        assert!(close(warmth(1, 2, false), (0.25 + 0.4) / 3.0));
    }

    #[test]
    fn context_memory_confidence_formula() {
        // 0.4·(2.5/5) + 0.4·0.5 + 0.2·(3/6) = 0.2 + 0.2 + 0.1
        assert!(close(memory_confidence(2.5, 0.5, 2, 1, false), 0.5));
        // Same, new topic: ×0.7.
        assert!(close(memory_confidence(2.5, 0.5, 2, 1, true), 0.35));
        // Everything saturated stays at 1 (FOK is divided by 5 first).
        assert!(close(memory_confidence(5.0, 1.0, 10, 10, false), 1.0));
        assert!(close(memory_confidence(50.0, 3.0, 10, 10, false), 1.0), "inputs are clamped");
        assert!(close(memory_confidence(0.0, 0.0, 0, 0, true), 0.0));
        assert!(close(memory_confidence(f64::NAN, f64::NAN, 0, 0, false), 0.0));
    }

    #[test]
    fn context_memory_confidence_rounds_to_three_decimals() {
        // 0.4·(1/5) + 0.4·(1/3) + 0.2·(1/6) = 0.08 + 0.1333… + 0.0333… = 0.24666…
        assert!(close(memory_confidence(1.0, 1.0 / 3.0, 1, 0, false), 0.247));
        // ×0.7 before rounding: 0.24666…·0.7 = 0.172666… → 0.173
        assert!(close(memory_confidence(1.0, 1.0 / 3.0, 1, 0, true), 0.173));
    }

    #[test]
    fn context_fok_counts_partial_matches_capped_at_five() {
        assert_eq!(fok_from_hits(&[]), 0.0);
        assert_eq!(fok_from_hits(&[0.9, 0.49, 0.5, 0.1]), 2.0);
        assert_eq!(fok_from_hits(&[0.1; 9]), 5.0);
    }

    #[test]
    fn context_type_weights_and_assembly_weight() {
        assert_eq!(MemoryKind::WorkingMemory.type_weight(), 1.0);
        assert_eq!(MemoryKind::Concept.type_weight(), 0.60);
        let mut kinds = [
            MemoryKind::Concept,
            MemoryKind::Fact,
            MemoryKind::WorkingMemory,
            MemoryKind::Episode,
            MemoryKind::Gist,
            MemoryKind::Moment,
            MemoryKind::Procedural,
        ];
        kinds.sort_by(|a, b| b.type_weight().total_cmp(&a.type_weight()));
        assert_eq!(kinds[0], MemoryKind::WorkingMemory);
        assert_eq!(kinds[6], MemoryKind::Concept);
        assert!(close(assembly_weight(0.9, 0.5, 1.0), 0.45));
        // Floor at 0.3: superseded (0.2) counts as 0.3.
        assert!(close(assembly_weight(1.0, 1.0, 0.2), 0.3));
        assert!(close(assembly_weight_for(MemoryKind::Episode, 0.8, Reliability::Uncertain), 0.7 * 0.8 * 0.6));
        let mut items = [
            ("past", 1.0, "superseded"),
            ("doubt", 0.9, "contradicted"),
            ("weak", 0.5, "reliable"),
            ("now", 0.9, "reliable"),
        ];
        order_for_assembly(&mut items, |t| (MemoryKind::Fact, t.1, Reliability::parse(t.2)));
        let order: Vec<&str> = items.iter().map(|t| t.0).collect();
        assert_eq!(
            order,
            ["now", "weak", "doubt", "past"],
            "0.9 > 0.5 > 0.9·0.4 (floored at 0.3: 0.36); the past last"
        );
        assert!(close(assembly_weight_for(MemoryKind::Fact, 1.0, Reliability::Superseded), 0.9 * 0.3));
        assert!(close(assembly_weight_for(MemoryKind::Fact, 1.0, Reliability::Contradicted), 0.9 * 0.4));
    }

    #[test]
    fn context_signals_cold_default_and_helpers() {
        let c = ContextSignals::default();
        assert!(c.is_new_topic);
        assert_eq!(c.warmth(), 0.0);
        assert_eq!(c.memory_confidence(), 0.0);
        let warm = ContextSignals {
            working_memory_turns: 4,
            gist_count: 5,
            fact_count: 6,
            world_state_present: true,
            fok_score: 0.0,
            is_new_topic: false,
            ..ContextSignals::default()
        };
        assert!(close(warm.warmth(), 1.0));
        assert!(close(warm.memory_confidence(), 0.6));
    }
}
