//! Seed selection (docs/cognition.md §14.3): a strategy drawn by weight, a concept drawn by
//! that strategy, and up to [`RETRIES`] more draws when the concept is cooling down or the
//! strategy has nothing.

use super::gate::cooling;
use crate::SplitMix64;
use std::collections::HashMap;

pub const RETRIES: usize = 3;
/// Episodes each episode-based strategy looks at.
const EPISODES: usize = 20;
const WEEK_S: i64 = 7 * 86_400;
/// Insight seeds at most once per this many intervals.
const INSIGHT_EVERY: u64 = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Strategy {
    Decaying,
    Recent,
    Salient,
    Insight,
    Random,
    Temporal,
}

impl Strategy {
    pub const fn name(self) -> &'static str {
        match self {
            Strategy::Decaying => "decaying",
            Strategy::Recent => "recent",
            Strategy::Salient => "salient",
            Strategy::Insight => "insight",
            Strategy::Random => "random",
            Strategy::Temporal => "temporal",
        }
    }
}

/// The shipped weights (parameters §8, design B). Temporal has no weight there; it runs when
/// drawn explicitly (the tests) and is kept so a config can give it one.
pub const WEIGHTS: [(Strategy, f64); 6] = [
    (Strategy::Decaying, 0.35),
    (Strategy::Recent, 0.25),
    (Strategy::Salient, 0.15),
    (Strategy::Insight, 0.15),
    (Strategy::Random, 0.10),
    (Strategy::Temporal, 0.0),
];

/// A concept as seeding reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Concept {
    pub id: i64,
    pub name: String,
    pub strength: f64,
    pub confidence: f64,
    pub last_reinforced_at: i64,
    /// The episodes it was consolidated from.
    pub sources: Vec<i64>,
}

/// An episode as seeding and grounding read it.
#[derive(Debug, Clone, PartialEq)]
pub struct Episode {
    pub id: i64,
    pub gist: String,
    pub topic: Option<String>,
    /// 1–10.
    pub salience: f64,
    pub created_at: i64,
}

/// What the strategies draw from.
#[derive(Debug, Clone, Default)]
pub struct Pool {
    pub concepts: Vec<Concept>,
    /// The last 7 days' episodes, newest first.
    pub episodes: Vec<Episode>,
    /// Topics with their interaction count over the last 7 days.
    pub topics: Vec<(String, u32)>,
    pub last_insight_at: Option<i64>,
    pub interval_s: u64,
    /// Seconds east of UTC, for the temporal strategy's hour of day.
    pub utc_offset_s: i64,
}

/// The seed drawn, how, and what was passed over.
#[derive(Debug, Clone, PartialEq)]
pub struct Pick {
    pub concept: i64,
    pub strategy: Strategy,
    /// Concepts drawn but cooling down.
    pub passed_over: Vec<i64>,
}

fn weighted<T: Copy>(items: &[(T, f64)], rng: &mut SplitMix64) -> Option<T> {
    let total: f64 = items.iter().map(|(_, w)| w.max(0.0)).sum();
    if total <= 0.0 {
        return None;
    }
    let mut x = rng.next_f64() * total;
    for (t, w) in items {
        let w = w.max(0.0);
        if x < w {
            return Some(*t);
        }
        x -= w;
    }
    items.iter().rev().find(|(_, w)| *w > 0.0).map(|(t, _)| *t)
}

pub fn draw_strategy(rng: &mut SplitMix64) -> Strategy {
    weighted(&WEIGHTS, rng).unwrap_or(Strategy::Random)
}

fn age_h(now: i64, at: i64) -> f64 {
    (now - at).max(0) as f64 / 3600.0
}

/// Concepts sourced from episode `ep`, strongest first, at most 5.
fn sourced_from(pool: &Pool, eps: &[i64]) -> Vec<i64> {
    let mut v: Vec<&Concept> = pool.concepts.iter().filter(|c| c.sources.iter().any(|s| eps.contains(s))).collect();
    v.sort_by(|a, b| b.strength.total_cmp(&a.strength).then(a.id.cmp(&b.id)));
    v.into_iter().take(5).map(|c| c.id).collect()
}

/// Whether every word of `name` is one of `words` (ASCII case folded, no allocation: this
/// runs over every concept).
fn named_in(name: &str, words: &[&str]) -> bool {
    let mut any = false;
    for w in name.split(|c: char| !(c.is_alphanumeric() || c == '\'')).filter(|w| !w.is_empty()) {
        any = true;
        if !words.iter().any(|g| g.eq_ignore_ascii_case(w)) {
            return false;
        }
    }
    any
}

/// The candidates one strategy offers at `now`, best first (at most 5; the draw is random
/// among them).
pub fn candidates(s: Strategy, pool: &Pool, now: i64, rng: &mut SplitMix64) -> Vec<i64> {
    let recent = |within: i64| pool.episodes.iter().filter(move |e| e.created_at >= now - within).take(EPISODES);
    match s {
        Strategy::Decaying => {
            let mut v: Vec<&Concept> = pool.concepts.iter().filter(|c| c.strength > 0.2 && c.strength < 2.0).collect();
            let by = |a: &&Concept, b: &&Concept| {
                a.strength
                    .total_cmp(&b.strength)
                    .then(a.last_reinforced_at.cmp(&b.last_reinforced_at))
                    .then(a.id.cmp(&b.id))
            };
            if v.len() > 5 {
                v.select_nth_unstable_by(4, by);
                v.truncate(5);
            }
            v.sort_by(by);
            v.into_iter().map(|c| c.id).collect()
        }
        Strategy::Recent => {
            let w: Vec<(i64, f64)> =
                recent(super::RECENT_EPISODE_S).map(|e| (e.id, (-0.02 * age_h(now, e.created_at)).exp())).collect();
            weighted(&w, rng).map_or_else(Vec::new, |ep| sourced_from(pool, &[ep]))
        }
        Strategy::Salient => {
            let w: Vec<(usize, f64)> = recent(WEEK_S)
                .enumerate()
                .map(|(i, e)| (i, e.salience * (-0.02 * age_h(now, e.created_at)).exp()))
                .collect();
            let Some(i) = weighted(&w, rng) else { return Vec::new() };
            let Some(ep) = pool.episodes.iter().filter(|e| e.created_at >= now - WEEK_S).nth(i) else {
                return Vec::new();
            };
            let lower = crate::text::normalize(&ep.gist);
            let gist = crate::text::words(&lower);
            let mut v: Vec<&Concept> = pool.concepts.iter().filter(|c| named_in(&c.name, &gist)).collect();
            v.sort_by(|a, b| b.strength.total_cmp(&a.strength).then(a.id.cmp(&b.id)));
            v.into_iter().take(5).map(|c| c.id).collect()
        }
        Strategy::Insight => {
            let every = (INSIGHT_EVERY * pool.interval_s) as i64;
            if pool.last_insight_at.is_some_and(|t| now - t < every) {
                return Vec::new();
            }
            let w: Vec<(usize, f64)> =
                pool.topics.iter().enumerate().filter(|(_, t)| t.1 >= 3).map(|(i, t)| (i, f64::from(t.1))).collect();
            let Some(i) = weighted(&w, rng) else { return Vec::new() };
            let topic = &pool.topics[i].0;
            let eps: Vec<i64> =
                pool.episodes.iter().filter(|e| e.topic.as_deref() == Some(topic.as_str())).map(|e| e.id).collect();
            sourced_from(pool, &eps)
        }
        Strategy::Random => {
            let eligible: Vec<i64> = pool.concepts.iter().filter(|c| c.confidence >= 0.4).map(|c| c.id).collect();
            if eligible.is_empty() { Vec::new() } else { vec![eligible[rng.below(eligible.len())]] }
        }
        Strategy::Temporal => {
            let hour = |t: i64| (t + pool.utc_offset_s).rem_euclid(86_400) / 3600;
            let eps: Vec<i64> = recent(WEEK_S)
                .filter(|e| now - e.created_at > 12 * 3600 && hour(e.created_at) == hour(now))
                .map(|e| e.id)
                .collect();
            sourced_from(pool, &eps)
        }
    }
}

/// Draw a seed: strategy by weight, concept at random among its candidates; a draw that lands
/// on a cooling concept, or a strategy with nothing, is retried up to [`RETRIES`] times.
/// `first` forces the first draw's strategy (tests, `--strategy`).
pub fn choose(
    pool: &Pool,
    cooldowns: &HashMap<i64, i64>,
    now: i64,
    rng: &mut SplitMix64,
    first: Option<Strategy>,
) -> Result<Pick, usize> {
    let mut passed_over = Vec::new();
    for attempt in 0..=RETRIES {
        let strategy = match (attempt, first) {
            (0, Some(s)) => s,
            _ => draw_strategy(rng),
        };
        let c = candidates(strategy, pool, now, rng);
        if c.is_empty() {
            continue;
        }
        let concept = c[rng.below(c.len())];
        if cooling(cooldowns, concept, now) {
            passed_over.push(concept);
            continue;
        }
        return Ok(Pick { concept, strategy, passed_over });
    }
    Err(RETRIES + 1)
}
