//! The self-model (docs/cognition.md §4.8): the assistant's noteworthy state items, each with
//! a severity on 0–1, and `self_constraint`, the highest of them. The router reads the
//! constraint (a constrained assistant leans to CLARIFY over RESPOND, §6.2); introspect shows
//! the items.
//!
//! Pure: the stored readings and the regulator's break in, the items out.

use crate::store::SelfReadings;
use serde::Serialize;

/// A model role counts as failing when at least this share of the recent turns fell back.
pub const FAILING_SHARE_MIN: f64 = 0.3;
/// Memory is "still cold" below this many durable memories (traits + episodes)…
pub const COLD_MEMORY_BELOW: i64 = 5;
/// …once the user has said this much: before it, a cold memory is what a new acquaintance
/// has, and warmth already tells the router so (§4.1); after it, memory that stays cold
/// means learning is not keeping up, which the assistant should know about itself.
pub const COLD_AFTER_MESSAGES: i64 = 20;
// The store counts durable memories only up to its cap; the cold test must sit below it.
const _: () = assert!(COLD_MEMORY_BELOW < crate::store::DURABLE_COUNT_CAP);
pub const COLD_MEMORY_SEVERITY: f64 = 0.3;
/// The routing regulator's break (issue 17's regulator supplies it).
pub const REGULATOR_BREAK_SEVERITY: f64 = 0.5;
/// Fatigue is noteworthy from half the ACT budget on.
pub const FATIGUE_NOTEWORTHY_SHARE: f64 = 0.5;

/// One thing about itself the assistant should take into account.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SelfItem {
    /// `model_failing`, `memory_cold`, `regulator_break`, `contradiction`, `fatigue`.
    pub kind: &'static str,
    pub severity: f64,
    /// One line a user can read.
    pub detail: String,
}

/// The noteworthy items, most severe first. `fatigue_budget` is the ACT loop's (§7.1).
pub fn assess(r: &SelfReadings, regulator_break: Option<&str>, fatigue_budget: f64) -> Vec<SelfItem> {
    let mut items = Vec::new();
    let turns = r.recent_fallbacks.len();
    // A rerun's call with no recording (`<stage>_unrecorded`) never reached a model, so it is
    // not evidence that one is failing (docs/cognition.md §15.5).
    let failed_names = |f: &'_ String| -> Vec<String> {
        f.split(',').map(str::trim).filter(|n| !n.is_empty() && !is_unrecorded(n)).map(String::from).collect()
    };
    let failed: Vec<Vec<String>> =
        r.recent_fallbacks.iter().flatten().map(failed_names).filter(|n| !n.is_empty()).collect();
    if turns > 0 {
        let share = failed.len() as f64 / turns as f64;
        if share >= FAILING_SHARE_MIN {
            let mut names: Vec<&str> = failed.iter().flatten().map(String::as_str).collect();
            names.sort_unstable();
            names.dedup();
            items.push(SelfItem {
                kind: "model_failing",
                severity: share.min(1.0),
                detail: format!("{} of the last {turns} turns fell back ({})", failed.len(), names.join(", ")),
            });
        }
    }
    if r.durable_memories < COLD_MEMORY_BELOW && r.user_messages >= COLD_AFTER_MESSAGES {
        items.push(SelfItem {
            kind: "memory_cold",
            severity: COLD_MEMORY_SEVERITY,
            detail: format!(
                "memory is still cold ({} durable memories after {} messages)",
                r.durable_memories, r.user_messages
            ),
        });
    }
    if let Some(why) = regulator_break {
        items.push(SelfItem {
            kind: "regulator_break",
            severity: REGULATOR_BREAK_SEVERITY,
            detail: format!("the routing regulator is on a break: {why}"),
        });
    }
    if let Some(worst) = r.open_contradictions.iter().map(|s| contradiction_severity(s)).reduce(f64::max) {
        items.push(SelfItem {
            kind: "contradiction",
            severity: worst,
            detail: format!("{} contradiction(s) in memory not yet resolved", r.open_contradictions.len()),
        });
    }
    if let Some(f) = r.recent_fatigue.filter(|_| fatigue_budget > 0.0) {
        let share = (f / fatigue_budget).clamp(0.0, 1.0);
        if share >= FATIGUE_NOTEWORTHY_SHARE {
            items.push(SelfItem {
                kind: "fatigue",
                severity: share,
                detail: format!("the last action loop spent {f:.1} of its {fatigue_budget:.0} fatigue budget"),
            });
        }
    }
    items.sort_by(|a, b| b.severity.total_cmp(&a.severity));
    items
}

fn is_unrecorded(fallback: &str) -> bool {
    fallback.strip_suffix(crate::cognition::pipeline::fallback::UNRECORDED).is_some_and(|stage| stage.ends_with('_'))
}

/// `self_constraint` = the highest severity, 0 with nothing noteworthy.
pub fn self_constraint(items: &[SelfItem]) -> f64 {
    items.iter().map(|i| i.severity).fold(0.0, f64::max).clamp(0.0, 1.0)
}

/// An uncertainty record's severity word on 0–1.
pub fn contradiction_severity(word: &str) -> f64 {
    match word {
        "critical" => 0.8,
        "high" => 0.6,
        "medium" => 0.4,
        _ => 0.2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warm() -> SelfReadings {
        SelfReadings { durable_memories: 40, recent_fallbacks: vec![None; 10], ..SelfReadings::default() }
    }

    #[test]
    fn a_healthy_assistant_is_unconstrained() {
        let items = assess(&warm(), None, 10.0);
        assert!(items.is_empty(), "{items:?}");
        assert_eq!(self_constraint(&items), 0.0);
    }

    #[test]
    fn the_constraint_is_the_highest_severity() {
        let mut r = warm();
        r.durable_memories = 2;
        r.user_messages = 25;
        r.recent_fallbacks[0] = Some("triage_timeout".into());
        r.recent_fallbacks[3] = Some("triage_timeout,reply_error".into());
        r.recent_fallbacks[5] = Some("reply_error".into());
        r.open_contradictions = vec!["low".into(), "high".into()];
        r.recent_fatigue = Some(7.0);
        let items = assess(&r, Some("oscillating"), 10.0);
        let kinds: Vec<&str> = items.iter().map(|i| i.kind).collect();
        assert_eq!(kinds, ["fatigue", "contradiction", "regulator_break", "model_failing", "memory_cold"]);
        assert_eq!(items[3].detail, "3 of the last 10 turns fell back (reply_error, triage_timeout)");
        assert!((self_constraint(&items) - 0.7).abs() < 1e-12);
        assert!((items[1].severity - 0.6).abs() < 1e-12, "the worst contradiction");
    }

    #[test]
    fn below_the_thresholds_nothing_is_noteworthy() {
        let mut r = warm();
        r.recent_fallbacks[0] = Some("triage_timeout".into());
        r.recent_fallbacks[1] = Some("triage_timeout".into());
        r.recent_fatigue = Some(4.9);
        assert!(assess(&r, None, 10.0).is_empty(), "2 of 10 fallbacks and fatigue under half the budget");
        // A rerun's missing recordings are not model failures, however many turns had them.
        let mut rerun = r.clone();
        rerun.recent_fallbacks = vec![Some("generation_unrecorded".into()); 10];
        rerun.recent_fallbacks[4] = Some("embedding_unrecorded,triage_unrecorded".into());
        assert!(assess(&rerun, None, 10.0).is_empty(), "{:?}", assess(&rerun, None, 10.0));
        for f in &mut rerun.recent_fallbacks[..3] {
            *f = Some("generation_unrecorded,triage_timeout".into());
        }
        let items = assess(&rerun, None, 10.0);
        assert_eq!(items.len(), 1, "{items:?}");
        assert!(items[0].detail.contains("3 of the last 10") && items[0].detail.ends_with("(triage_timeout)"));
        r.recent_fallbacks.clear();
        assert!(assess(&r, None, 10.0).is_empty(), "no turns yet is not a failing role");
        r.durable_memories = 0;
        r.user_messages = COLD_AFTER_MESSAGES - 1;
        assert!(assess(&r, None, 10.0).is_empty(), "a new acquaintance's memory is expected to be cold");
        r.user_messages = COLD_AFTER_MESSAGES;
        assert_eq!(assess(&r, None, 10.0)[0].kind, "memory_cold");
    }
}
