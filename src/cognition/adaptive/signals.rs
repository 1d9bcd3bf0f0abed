//! The moment's signals (docs/cognition.md §18.3–§18.7): cognitive load, energy mirroring,
//! challenge calibration, interaction forks and growth. Each is a small pure function; the
//! turn feeds them what it already read (the message, the last reply, the stored state).

use super::{HIGH, LOW, Side};
use crate::memory::style::{DIMENSIONS, Style};
use serde::{Deserialize, Serialize};

/// How much the user can take in right now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Load {
    #[default]
    Normal,
    /// A terse reply to a long answer: the answer was probably too much.
    High,
    /// The user said so.
    Overload,
}

/// A reply at least this long, answered in [`TERSE_WORDS`] words or fewer, reads as too much.
pub const LONG_REPLY_WORDS: usize = 120;
pub const TERSE_WORDS: usize = 4;
const OVERLOAD: &[&str] = &[
    "overwhelmed",
    "overwhelming",
    "too much",
    "i'm lost",
    "im lost",
    "i am lost",
    "confused",
    "confusing",
    "slow down",
    "that's a lot",
    "thats a lot",
    "can't follow",
    "cant follow",
    "don't follow",
    "my head is spinning",
    "too long",
    "tl dr",
    "tldr",
];

/// Overload when the message says so; high when a long reply got a terse answer (a question
/// is not terse: "why?" asks for more, not less).
pub fn cognitive_load(text: &str, last_reply_words: Option<usize>) -> Load {
    let lower = crate::text::normalize(text);
    if crate::text::has_any(&crate::text::words(&lower), OVERLOAD) {
        return Load::Overload;
    }
    let words = text.split_whitespace().count();
    let terse = words > 0 && words <= TERSE_WORDS && !text.contains('?');
    if terse && last_reply_words.is_some_and(|w| w >= LONG_REPLY_WORDS) { Load::High } else { Load::Normal }
}

pub fn load_directive(load: Load) -> Option<&'static str> {
    match load {
        Load::Normal => None,
        Load::High => Some("Keep this reply short and simple."),
        Load::Overload => Some("The user is overloaded: two or three short sentences, plain words."),
    }
}

/// A message this far below or above the profile's verbosity changes the reply's length for
/// this turn.
pub const ENERGY_GAP: f64 = 3.0;

/// Energy mirroring: the message's verbosity against the baseline (the profile's).
pub fn energy(message_verbosity: f64, baseline_verbosity: f64) -> Option<Side> {
    let gap = message_verbosity - baseline_verbosity;
    if gap <= -ENERGY_GAP {
        Some(Side::Low)
    } else if gap >= ENERGY_GAP {
        Some(Side::High)
    } else {
        None
    }
}

pub fn energy_line(side: Side) -> &'static str {
    match side {
        Side::Low => "They wrote much less than usual: answer shorter.",
        Side::High => "They wrote more than usual: a fuller reply fits.",
    }
}

/// Where the tolerance starts: at the high threshold, so an appetite for counterpoints is
/// served until pushback lands badly.
pub const START_TOLERANCE: f64 = HIGH;
/// Taken well raises the tolerance by this; taken badly lowers it by [`TOLERANCE_DOWN`].
pub const TOLERANCE_UP: f64 = 0.5;
/// A bad reaction weighs more than a good one: a user annoyed twice should not be pushed a third time.
pub const TOLERANCE_DOWN: f64 = 1.5;

/// How the user took the last reply's pushback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reaction {
    Well,
    Badly,
}

const TAKEN_WELL: &[&str] = &[
    "good point",
    "fair point",
    "fair enough",
    "you're right",
    "youre right",
    "hadn't thought",
    "hadnt thought",
    "didn't think of",
    "that's true",
    "makes sense",
    "interesting point",
];
const TAKEN_BADLY: &[&str] = &[
    "stop arguing",
    "just answer",
    "i didn't ask",
    "not what i asked",
    "whatever",
    "not helpful",
    "annoying",
    "stop lecturing",
    "don't lecture",
    "leave it",
];

/// The user's reaction to pushback, if the message shows one.
pub fn reaction(text: &str) -> Option<Reaction> {
    let lower = crate::text::normalize(text);
    let ws = crate::text::words(&lower);
    let has = |list: &[&str]| crate::text::has_any(&ws, list);
    if has(TAKEN_BADLY) {
        Some(Reaction::Badly)
    } else if has(TAKEN_WELL) {
        Some(Reaction::Well)
    } else {
        None
    }
}

/// The tolerance after a reaction, on 1–10.
pub fn update_tolerance(tolerance: f64, r: Reaction) -> f64 {
    let t = match r {
        Reaction::Well => tolerance + TOLERANCE_UP,
        Reaction::Badly => tolerance - TOLERANCE_DOWN,
    };
    t.clamp(1.0, 10.0)
}

/// The challenge the reply gets: the appetite is the ceiling, the tolerance what has landed.
pub fn calibrated_challenge(appetite: f64, tolerance: f64) -> f64 {
    appetite.min(tolerance)
}

/// No fork is offered within this many exchanges of the last one.
pub const FORK_COOLDOWN: u32 = 5;

/// The dimensions a fork can ask about, with the offer's wording.
const FORKS: [(&str, &str); 3] = [
    ("verbosity", "If it fits, end by offering: the short version, or more detail."),
    ("depth_preference", "If it fits, end by offering: the practical steps, or the why behind them."),
    ("abstraction_level", "If it fits, end by offering: a concrete example, or the general idea."),
];

/// An interaction fork: when a dimension sits in the undecided mid-range (LOW, HIGH), let the
/// user choose, at most once per [`FORK_COOLDOWN`] exchanges. The most undecided dimension
/// (nearest 5.5) is asked about.
pub fn fork(style: &Style, exchanges_since_fork: Option<u32>) -> Option<(&'static str, &'static str)> {
    if exchanges_since_fork.is_some_and(|n| n < FORK_COOLDOWN) {
        return None;
    }
    FORKS
        .iter()
        .filter_map(|(dim, line)| style.get(dim).map(|v| (*dim, *line, v)))
        .filter(|(_, _, v)| *v > LOW && *v < HIGH)
        .min_by(|a, b| (a.2 - 5.5).abs().total_cmp(&(b.2 - 5.5).abs()))
        .map(|(dim, line, _)| (dim, line))
}

/// Growth (parameters §7): every cycle compares the profile with a slow baseline; a shift of
/// at least [`GROWTH_SHIFT`] the same way for [`GROWTH_CYCLES`] cycles is a growth signal.
pub const GROWTH_SHIFT: f64 = 1.5;
pub const GROWTH_CYCLES: i32 = 3;
/// A cycle runs at most this often.
pub const GROWTH_INTERVAL_S: i64 = 1_800;
/// The slow baseline's EMA weight per cycle.
pub const BASELINE_WEIGHT: f64 = 0.05;
/// A growth reflection is due at most once in this long.
pub const REFLECTION_COOLDOWN_S: i64 = 86_400;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Growth {
    /// The slow baseline, in [`DIMENSIONS`] order; empty until the first cycle.
    #[serde(default)]
    pub baseline: Vec<f64>,
    /// Per dimension: consecutive cycles shifted up (positive) or down (negative).
    #[serde(default)]
    pub streak: Vec<i32>,
    #[serde(default)]
    pub last_cycle_at: i64,
    #[serde(default)]
    pub last_reflection_at: Option<i64>,
    /// `growth_signal[dim]`: +1 grown toward the high side, −1 toward the low.
    #[serde(default)]
    pub signals: std::collections::BTreeMap<String, i32>,
}

/// One growth cycle, if [`GROWTH_INTERVAL_S`] has passed. Returns the dimensions that became
/// growth signals this cycle and whether a reflection on them is due (cooldown permitting).
pub fn growth_cycle(g: &mut Growth, current: &Style, now: i64) -> (Vec<&'static str>, bool) {
    if g.baseline.len() != DIMENSIONS.len() || g.streak.len() != DIMENSIONS.len() {
        g.baseline = current.values.to_vec();
        g.streak = vec![0; DIMENSIONS.len()];
        g.last_cycle_at = now;
        return (Vec::new(), false);
    }
    if now - g.last_cycle_at < GROWTH_INTERVAL_S {
        return (Vec::new(), false);
    }
    g.last_cycle_at = now;
    let mut new = Vec::new();
    for (i, dim) in DIMENSIONS.iter().enumerate() {
        let shift = current.values[i] - g.baseline[i];
        let dir = if shift >= GROWTH_SHIFT {
            1
        } else if shift <= -GROWTH_SHIFT {
            -1
        } else {
            0
        };
        g.streak[i] = if dir != 0 && g.streak[i].signum() == dir { g.streak[i] + dir } else { dir };
        if g.streak[i].abs() >= GROWTH_CYCLES && g.signals.get(*dim) != Some(&dir) {
            g.signals.insert(dim.to_string(), dir);
            new.push(*dim);
        }
        g.baseline[i] += BASELINE_WEIGHT * (current.values[i] - g.baseline[i]);
    }
    let reflect = !new.is_empty() && g.last_reflection_at.is_none_or(|t| now - t >= REFLECTION_COOLDOWN_S);
    if reflect {
        g.last_reflection_at = Some(now);
    }
    (new, reflect)
}
