//! Routing a thought to one action (docs/cognition.md §14.6): every action is scored as the
//! seed's table says, an ineligible one is kept with the gate that rejected it, the highest
//! eligible score wins and a tie goes to the higher priority. NOTHING is always eligible.

use super::comm::{self, CommState};
use crate::vocab::drift::ActionScore;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Communicate,
    Suggest,
    Nurture,
    Plan,
    SeedThread,
    Reflect,
    Reconcile,
    Nothing,
}

impl Action {
    pub const ALL: [Action; 8] = [
        Action::Communicate,
        Action::Suggest,
        Action::Nurture,
        Action::Plan,
        Action::SeedThread,
        Action::Reflect,
        Action::Reconcile,
        Action::Nothing,
    ];
    pub const fn name(self) -> &'static str {
        match self {
            Action::Communicate => "COMMUNICATE",
            Action::Suggest => "SUGGEST",
            Action::Nurture => "NURTURE",
            Action::Plan => "PLAN",
            Action::SeedThread => "SEED_THREAD",
            Action::Reflect => "REFLECT",
            Action::Reconcile => "RECONCILE",
            Action::Nothing => "NOTHING",
        }
    }
    pub const fn priority(self) -> u8 {
        match self {
            Action::Communicate => 10,
            Action::Suggest => 8,
            Action::Nurture | Action::Plan => 7,
            Action::SeedThread => 6,
            Action::Reflect => 5,
            Action::Reconcile => 4,
            Action::Nothing => 0,
        }
    }
}

/// reflection | question | hypothesis | insight
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Reflection,
    Question,
    Hypothesis,
    Insight,
}

impl Kind {
    pub const ALL: [Kind; 4] = [Kind::Reflection, Kind::Question, Kind::Hypothesis, Kind::Insight];
    pub const fn name(self) -> &'static str {
        match self {
            Kind::Reflection => "reflection",
            Kind::Question => "question",
            Kind::Hypothesis => "hypothesis",
            Kind::Insight => "insight",
        }
    }
    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == s)
    }
    fn communicate_bonus(self) -> f64 {
        match self {
            Kind::Question => 1.3,
            Kind::Hypothesis => 1.2,
            Kind::Insight => 1.4,
            Kind::Reflection => 0.8,
        }
    }
    fn reflect_bonus(self) -> f64 {
        match self {
            Kind::Reflection => 1.3,
            Kind::Hypothesis => 1.2,
            Kind::Question => 0.9,
            Kind::Insight => 1.0,
        }
    }
}

pub const COMMUNICATE_RELEVANCE: f64 = 0.4;
pub const COMMUNICATE_NOVELTY: f64 = 0.7;
pub const SUGGEST_RELEVANCE: f64 = 0.35;
pub const NURTURE_SCORE: f64 = 0.35;
pub const PLAN_ACTIVATION: f64 = 0.7;
pub const PLAN_SIGNALS: usize = 2;
pub const PLAN_MAX_TASKS: usize = 5;
pub const PLAN_COOLDOWN_S: i64 = 48 * 3600;
/// A tool suggested once is not suggested again for this long (parameters §8's per-tool
/// cooldown of the ambient tool action, applied to SUGGEST).
pub const TOOL_COOLDOWN_S: i64 = 12 * 3600;
pub const REFLECT_ENERGY: f64 = 0.35;
pub const REFLECT_REPEAT_DECAY: f64 = 0.8;
pub const REFLECT_NOVELTY: f64 = 0.75;
pub const REFLECT_FATIGUE_FRACTION: f64 = 0.4;
pub const RECONCILE_ENERGY: f64 = 0.25;
pub const RECONCILE_COOLDOWN_S: i64 = 30 * 60;

/// Everything the scores and gates read about one thought at `now`.
#[derive(Debug, Clone, PartialEq)]
pub struct Inputs {
    pub now: i64,
    pub kind: Kind,
    pub energy: f64,
    /// How much the grounding episode matters now (§14.6), 0–1.
    pub relevance: f64,
    /// 1 − the largest word overlap with the recent thoughts.
    pub novelty: f64,
    /// Seconds since the user's last message.
    pub idle_s: Option<i64>,
    pub comm: CommState,
    /// Activated concepts with activation ≥ 0.5 (PLAN's signals).
    pub strong_signals: usize,
    pub active_tasks: usize,
    pub last_plan_at: Option<i64>,
    /// A skill the activated concepts point at (SUGGEST), e.g. "reminder".
    pub tool_hint: Option<String>,
    /// When the hinted tool was last suggested.
    pub tool_suggested_at: Option<i64>,
    /// An open curiosity thread on the seed already exists.
    pub thread_open: bool,
    /// Same-kind thoughts stored as REFLECT in the last day (the repeat decay's exponent).
    pub same_kind_reflected: u32,
    /// Fatigue spent / budget.
    pub fatigue_fraction: f64,
    pub last_reconcile_at: Option<i64>,
}

fn gate(ok: bool, why: impl FnOnce() -> String) -> Option<String> {
    if ok { None } else { Some(why()) }
}

fn score_one(a: Action, i: &Inputs) -> (f64, Option<String>) {
    let now = i.now;
    match a {
        Action::Communicate => {
            let score = i.energy * i.kind.communicate_bonus() * i.relevance;
            let why = gate(i.relevance >= COMMUNICATE_RELEVANCE, || {
                format!("relevance {:.2} < {COMMUNICATE_RELEVANCE}", i.relevance)
            })
            .or_else(|| {
                gate(i.novelty >= COMMUNICATE_NOVELTY, || format!("novelty {:.2} < {COMMUNICATE_NOVELTY}", i.novelty))
            })
            .or_else(|| {
                gate(comm::in_idle_window(i.idle_s), || match i.idle_s {
                    Some(s) => format!("idle {s} s outside {}–{} s", comm::IDLE_MIN_S, comm::IDLE_MAX_S),
                    None => "the user has never written".into(),
                })
            })
            .or_else(|| gate(!i.comm.breaker_open(now), || "breaker open (2 unanswered in 4 h)".into()))
            .or_else(|| {
                gate(i.comm.backoff_until().is_none_or(|t| t <= now), || format!("backoff ×{}", 1 << i.comm.level))
            });
            (score, why)
        }
        Action::Suggest => (
            i.relevance * i.energy,
            gate(i.tool_hint.is_some(), || "no tool fits".into())
                .or_else(|| {
                    gate(i.tool_suggested_at.is_none_or(|t| now - t >= TOOL_COOLDOWN_S), || {
                        format!("12 h cooldown on {}", i.tool_hint.as_deref().unwrap_or("the tool"))
                    })
                })
                .or_else(|| {
                    gate(i.relevance >= SUGGEST_RELEVANCE, || {
                        format!("relevance {:.2} < {SUGGEST_RELEVANCE}", i.relevance)
                    })
                }),
        ),
        Action::Nurture => (
            NURTURE_SCORE,
            gate(i.idle_s.is_some_and(|s| s > comm::IDLE_MAX_S), || "the user was here within a day".into())
                .or_else(|| gate(!i.comm.breaker_open(now), || "breaker open".into())),
        ),
        Action::Plan => (
            i.energy * 0.7,
            gate(i.energy >= PLAN_ACTIVATION, || format!("activation {:.2} < {PLAN_ACTIVATION}", i.energy))
                .or_else(|| {
                    gate(i.strong_signals >= PLAN_SIGNALS, || format!("{} signals < {PLAN_SIGNALS}", i.strong_signals))
                })
                .or_else(|| gate(i.active_tasks < PLAN_MAX_TASKS, || format!("{} active tasks", i.active_tasks)))
                .or_else(|| {
                    gate(i.last_plan_at.is_none_or(|t| now - t >= PLAN_COOLDOWN_S), || "48 h plan cooldown".into())
                }),
        ),
        Action::SeedThread => (
            i.energy * 0.8,
            gate(i.kind == Kind::Question, || "not a question".into())
                .or_else(|| gate(!i.thread_open, || "a thread on the seed is open".into())),
        ),
        Action::Reflect => {
            let decay = REFLECT_REPEAT_DECAY.powi(i.same_kind_reflected as i32);
            let score = i.energy * i.kind.reflect_bonus() * decay * i.relevance;
            let why = gate(i.energy >= REFLECT_ENERGY, || format!("energy {:.2} < {REFLECT_ENERGY}", i.energy))
                .or_else(|| {
                    gate(i.novelty >= REFLECT_NOVELTY, || format!("novelty {:.2} < {REFLECT_NOVELTY}", i.novelty))
                })
                .or_else(|| {
                    gate(i.fatigue_fraction < REFLECT_FATIGUE_FRACTION, || {
                        format!("fatigue {:.2} ≥ {REFLECT_FATIGUE_FRACTION}", i.fatigue_fraction)
                    })
                });
            (score, why)
        }
        Action::Reconcile => (
            0.3 + 0.1 * i.energy,
            gate(i.energy >= RECONCILE_ENERGY, || format!("energy {:.2} < {RECONCILE_ENERGY}", i.energy)).or_else(
                || {
                    gate(i.last_reconcile_at.is_none_or(|t| now - t >= RECONCILE_COOLDOWN_S), || {
                        "30 min reconcile cooldown".into()
                    })
                },
            ),
        ),
        Action::Nothing => (0.0, None),
    }
}

/// Every action scored; the chosen one first, then the eligible by rank, then the rejected.
pub fn route(i: &Inputs) -> (Action, Vec<ActionScore>) {
    let mut all: Vec<(Action, f64, Option<String>)> =
        Action::ALL.iter().map(|&a| (a, score_one(a, i))).map(|(a, (s, w))| (a, s, w)).collect();
    all.sort_by(|x, y| {
        x.2.is_some().cmp(&y.2.is_some()).then(y.1.total_cmp(&x.1)).then(y.0.priority().cmp(&x.0.priority()))
    });
    let chosen = all.first().map_or(Action::Nothing, |x| x.0);
    let scores = all
        .into_iter()
        .map(|(a, s, w)| ActionScore { action: a.name().into(), score: (s * 1000.0).round() / 1000.0, rejected_by: w })
        .collect();
    (chosen, scores)
}

/// 1 − the largest Jaccard overlap of `text`'s words with any of `recent`.
pub fn novelty(text: &str, recent: &[String]) -> f64 {
    use std::collections::HashSet;
    let bag = |s: &str| -> HashSet<String> {
        crate::text::words(&crate::text::normalize(s)).into_iter().map(str::to_string).collect()
    };
    let a = bag(text);
    let mut worst = 0.0f64;
    for r in recent {
        let b = bag(r);
        let union = a.union(&b).count();
        if union > 0 {
            worst = worst.max(a.intersection(&b).count() as f64 / union as f64);
        }
    }
    1.0 - worst
}

/// §14.6 relevance: half the grounding episode's salience (1–10 → 0.1–1), half its recency
/// (exp(−age/7 days)); 0 without a grounding episode.
pub fn relevance(salience: Option<f64>, age_s: Option<i64>) -> f64 {
    match (salience, age_s) {
        (Some(s), Some(age)) => {
            0.5 * (s / 10.0).clamp(0.0, 1.0) + 0.5 * (-(age.max(0) as f64) / (7.0 * 86_400.0)).exp()
        }
        _ => 0.0,
    }
}
