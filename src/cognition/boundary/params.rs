//! The detector's constants: the published set (docs/cognition.md §5.4) and the calibrated defaults.

use serde::{Deserialize, Serialize};

use super::FocusLevel;

// The real-chat defaults below were swept with `cargo run --example topic_eval --
// --chitchat-sweep`. "Chit-chat dev" figures come from the 30 even-numbered sessions among the
// first 60 of the chit-chat file, "chatterbot dev" from the even half of the chatterbot
// sessions. The method, the trade-off between the two data sets and the full history of the
// figures are in docs/cognition.md §5.5.

/// Default [`BoundaryParams::floor_min_weight`]: 0.75, so a question without a content word
/// (weight 0.5: "what about you?") never opens a topic by the floor alone; every other line that
/// passes the gate weighs 1 with the default classifier. On the grid, 0.5 and 1 moved chit-chat
/// dev Pk by less than 0.005.
const FLOOR_MIN_WEIGHT: f64 = 0.75;
/// Default [`BoundaryParams::refractory_msgs`]: 0. One message took chit-chat dev Pk 0.370 →
/// 0.353 but chatterbot dev Pk 0.170 → 0.188 (chatterbot segments can be one user message).
const REFRACTORY_MSGS: u32 = 0;
/// Default [`BoundaryParams::block_left`]: 8, against 6 before the adaptive refractory period
/// (first 60 sessions: chit-chat dev Pk 0.379 with 6/3 < 0.25, 0.38–0.43 with 4/2 or 4/3).
/// Chit-chat segments are 8–16 lines; eight is most of one. With the refractory period adapted
/// (all 150 even sessions, `--chitchat-sweep`, Pk / F1): 6/3 < 0.25 → 0.360 / 0.456; 8/2 < 0.25
/// → 0.352 / 0.471; 10/2 < 0.3 → 0.351 / 0.475 (tied, but it needs twelve lines of the current
/// topic and misses the join of session 38 in `tests/it/topic_chitchat.rs`); 12/2 < 0.3 → 0.358 /
/// 0.445; 4/2 < 0.2 → 0.368 / 0.503 with chatterbot dev Pk 0.184. Chatterbot dev with 8/2 < 0.25:
/// Pk 0.169, F1 0.803 (0.170 / 0.813 before).
const BLOCK_LEFT: u32 = 8;
/// Default [`BoundaryParams::block_right`]: 2. A boundary found this way comes at most one
/// message late, inside the ±2 of the F1.
const BLOCK_RIGHT: u32 = 2;
/// Default [`BoundaryParams::block_floor`]: 0.25 (see `BLOCK_LEFT`; 8/2 < 0.2 → 0.367 / 0.437,
/// < 0.3 → 0.357 / 0.479). Same-prompt blocks of chat average a cosine of about 0.43, a block
/// across a join about 0.26 (first 60 sessions, 6 lines against 3).
const BLOCK_FLOOR: Option<f64> = Some(0.25);
/// Default [`BoundaryParams::long_line_words`]: 9 words per message. Chit-chat lines average
/// 9.3 words, the chatterbot user lines 5.6, so the thread's mean tells a conversation between
/// people from a run of short questions within a few messages. All 150 even chit-chat sessions
/// with the chatterbot dev half beside them (`--chitchat-sweep`), 8/2 blocks at 0.25,
/// refractory 4, chit-chat Pk / F1, chatterbot Pk / F1: 7 words → 0.332 / 0.502, 0.174 / 0.779
/// (some quiz threads have long questions); 8 → 0.336 / 0.498, 0.174 / 0.793; 9 → 0.338 / 0.497,
/// 0.172 / 0.803; 10 → 0.347 / 0.486, 0.170 / 0.807 (chatterbot dev without it: 0.170 / 0.813).
const LONG_LINE_WORDS: f64 = 9.0;
/// Default [`BoundaryParams::long_refractory_msgs`]: 4, a quarter to half of a chit-chat segment
/// (8–16 lines). At 9 words (same grid): 3 → 0.345 / 0.494, 0.178 / 0.800; 4 → 0.338 / 0.497,
/// 0.172 / 0.803; 6 → 0.342 / 0.481, 0.171 / 0.804. First found with 6/3 blocks and an EMA of
/// the length (1 → 0.371 / 0.444, 4 → 0.360 / 0.456, 8 → 0.347 / 0.456 but chatterbot 0.177 /
/// 0.799).
const LONG_REFRACTORY_MSGS: u32 = 2;
/// Default [`BoundaryParams::long_init_sim_ema`]: see the sweep in docs/cognition.md §5.5.
const LONG_INIT_SIM_EMA: Option<f64> = Some(0.1);
/// Default [`BoundaryParams::long_base`]: see docs/cognition.md §5.5.
const LONG_BASE: Option<f64> = None;
/// Default [`BoundaryParams::long_sim_floor`]: see docs/cognition.md §5.5.
const LONG_SIM_FLOOR: Option<f64> = None;
/// Default [`BoundaryParams::talk_first_person_share`]: 0.3. Over whole sessions, lines of 6
/// words or more on average of which at least 0.3 speak in the first person mark 87 % of the
/// chit-chat sessions and 2 % of the chatterbot ones (the 9-word test alone: 48 % and 8 %).
/// Even chit-chat sessions with the other talk defaults (Pk / F1; chatterbot dev Pk / F1):
/// 0.25 → 0.233 / 0.613, 0.170 / 0.793; 0.3 → 0.236 / 0.611, 0.165 / 0.801; 0.35 → 0.238 /
/// 0.618, 0.165 / 0.801 (`--chitchat-try`; docs/cognition.md §5.5).
const TALK_FIRST_PERSON_SHARE: f64 = 0.3;
/// Default [`BoundaryParams::talk_line_words`]: 6 (before the talk block floor: 5 → 0.251 /
/// 0.575 with chatterbot dev 0.167 / 0.795; 6 → 0.251 / 0.574; 7 → 0.254 / 0.572).
const TALK_LINE_WORDS: f64 = 6.0;
/// Default [`BoundaryParams::talk_min_lines`]: 4. 3 → 0.231 / 0.622 but chatterbot dev 0.172 /
/// 0.796; 5 → 0.237 / 0.610.
const TALK_MIN_LINES: u32 = 4;
/// Default [`BoundaryParams::talk_min_topic`]: 12 messages, most of a chit-chat segment (743 of
/// the 929 segments hold 16 lines). With the talk block floor: 10 → 0.288 / 0.541; 11 → 0.253
/// / 0.583; 12 → 0.236 / 0.611; 13 → 0.245 / 0.594. Without it: 8 → 0.287 / 0.532, 12 → 0.251
/// / 0.574, 14 → 0.272 / 0.522.
const TALK_MIN_TOPIC: u32 = 12;
/// Default [`BoundaryParams::talk_block_floor`]: 0.3. 0.2 → 0.262 / 0.551; 0.25 (as
/// `block_floor`) → 0.251 / 0.574; 0.28 → 0.245 / 0.591; 0.3 → 0.236 / 0.611; 0.32 → 0.240 /
/// 0.601; 0.35 → 0.255 / 0.582; 0.4 → 0.274 / 0.559.
const TALK_BLOCK_FLOOR: Option<f64> = Some(0.3);

/// The detector's constants. The four regulator-owned tunables (`fast_window`, `slow_window`,
/// `leak`, `base`) have bounds in [`BoundaryParams::clamped`]; the rest are fixed per version.
///
/// "Calibration" figures come from `cargo run --release --example topic_eval -- --sweep` (and
/// `--try field=value` for single changes): a grid of 56 700 configurations run on the
/// even-numbered (dev) half of the chatterbot sessions, user messages only, one thread per
/// session, ranked by Pk (window k = 1) averaged with the configurations one grid step away;
/// "profile" quotes that smoothed dev Pk at each value of one parameter with the others at their
/// best. Never-fires scores 0.265 on the dev half; these defaults 0.169 (0.199 smoothed). The
/// odd-numbered half was held out for the final table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BoundaryParams {
    /// N_f, fast EWMA window (α = 2/(N+1)). Seed: 4 (bounds 2–8). Kept: 3 with its own drift
    /// priors scored dev Pk 0.191 against 0.169.
    pub fast_window: u32,
    /// N_s, slow EWMA window; also the α of every running statistic. Seed: 18 (bounds 10–30).
    /// Calibration: 10, the bottom of the seed bounds (profile: 10 → 0.199, 14 → 0.210,
    /// 18 → 0.216, 30 → 0.218); topics in chat last a few messages.
    pub slow_window: u32,
    /// Fraction of the accumulator lost per message. Seed: 0.4 (bounds 0.2–0.7). Calibration:
    /// 0.3 (profile: 0.2 → 0.204, 0.3 → 0.199, 0.4 → 0.201, 0.5 → 0.205, 0.7 → 0.213). Evidence
    /// from the previous message still counts 0.7, so a slow fall in similarity adds up.
    pub leak: f64,
    /// Base of the dynamic bound. Seed: 2.5 (bounds 1.5–4.0). Calibration: 2.0 (profile:
    /// 1.5 → 0.206, 2.0 → 0.199, 2.5 → 0.218, 3.0 → 0.236). What matters is its ratio to
    /// `surprise_weight`: one message fires alone when its surprise z-score reaches about
    /// 2.0/1.3 ≈ 1.5 (a z-score that includes its own message cannot exceed (1−α)/√α ≈ 1.9 at
    /// N_s = 10).
    pub base: f64,
    /// Lowest bound. Seed: 1.5.
    pub bound_min: f64,
    /// Highest bound before the focus modifier. Seed: 5.0.
    pub bound_max: f64,
    /// Weight of drift_ema/std in the bound. Seed: 0.5. Calibration: 0 (profile: 0 → 0.199,
    /// 0.25 → 0.210, 0.5 → 0.225). The drift is a squared distance, always positive, so
    /// drift_ema/std sits well above 1 on any thread and lifted the published bound to 2.9–5.0,
    /// out of the accumulator's reach (docs/cognition.md §5.5).
    pub drift_ratio_weight: f64,
    /// Weight of the NEWMA z-score in the accumulator input. Seed: 0.6. Calibration: 0.6 kept
    /// (profile: 0.3 → 0.204, 0.6 → 0.199, 0.9 → 0.206). On short chat lines the drift is mostly
    /// noise; with these weights a drift at constant similarity no longer fires on its own.
    pub newma_weight: f64,
    /// Weight of the surprise z-score in the accumulator input. Seed: 0.4. Calibration: 1.3
    /// (profile: 0.7 → 0.225, 1.0 → 0.206, 1.3 → 0.199). On short chat lines the similarity
    /// drop is the sharper signal: a change shows at once in the similarity, while the fast EWMA
    /// needs several messages to move.
    pub surprise_weight: f64,
    /// Accumulator cap as a multiple of the bound. Seed: 1.2.
    pub acc_cap: f64,
    /// Messages decided by the static cold-start rule: those with msg_count < this. Seed: 5.
    /// Calibration: 2, the first message only (5 scored dev Pk 0.248, or 0.313 with the seed's
    /// 0.55). The statistics start from data-calibrated priors (below) instead of zero, so there
    /// is nothing to warm up; with the seed's priors the first z-scores were ±10 and the detector
    /// fired in bursts while warming (docs/cognition.md §5.5).
    pub cold_start_msgs: u32,
    /// Cold-start rule: best_sim below this is a boundary. Seed: 0.55. Calibration: 0.18, the
    /// level of `sim_floor`. MiniLM puts most same-topic chat lines below 0.55 from their topic
    /// (same-topic median 0.51 with the recency bonus, dev half, `--stats`), so 0.55 fired on
    /// over half of them.
    pub cold_start_threshold: f64,
    /// A gap longer than this resets the statistics (dishabituation). Seed: 2700 s.
    pub stale_gap_s: i64,
    /// How long a persisted state stays valid ([`BoundaryState::expired`]). Seed: 86 400 s.
    pub state_ttl_s: i64,
    /// Bound modifier for inferred focus. Seed: 0.5.
    pub focus_inferred: f64,
    /// Bound modifier for explicit focus. Seed: 1.0.
    pub focus_explicit: f64,
    /// Starting sim_ema. Seed: 0.5. Kept (second grid over 0.4/0.5/0.6: 0.5 best).
    pub init_sim_ema: f64,
    /// Starting drift_ema. Seed: 0. Calibration: 0.1104, the mean raw drift ‖fast − slow‖² from the
    /// 6th message of a dev session on (N_f 4, N_s 10; `--stats`).
    pub init_drift_ema: f64,
    /// Starting drift variance. Seed: 1e-4. Calibration: 0.0324², the spread of that raw drift.
    pub init_drift_var: f64,
    /// Starting drop_ema. Seed: 0. Calibration: 0.03, the best of a second grid over the three
    /// similarity priors (`--priors`: dev Pk 0.169, against 0.232 with the measured raw-drop mean
    /// 0.106 and sd 0.124; the two dev quarters rank that grid alike, correlation 0.90).
    pub init_drop_ema: f64,
    /// Starting drop variance. Seed: 1e-4. Calibration: 0.10², same grid as `init_drop_ema`.
    pub init_drop_var: f64,
    /// Floor of the drift std. Seed: 1e-6. Default 0.02: a thread of near-identical messages has
    /// its drift variance decay towards zero, and then any tiny wobble is a large z-score. Free
    /// on the chatterbot data (dev Pk 0.169 with 1e-6 or 0.02; 0.03 → 0.170).
    pub std_floor: f64,
    /// Floor of the drop std. Seed: 1e-6. Default 0.08, free on the chatterbot data (dev Pk 0.169
    /// for every floor from 1e-6 to 0.10; 0.12 → 0.181), so that after a run of steady messages a
    /// modest dip in similarity (0.92 → 0.80) is no surprise.
    pub drop_std_floor: f64,
    /// Past the cold start, a best_sim below this is a boundary on its own: the cold-start rule
    /// kept on at a calibrated level. Seed: none. Calibration: 0.18 (profile: none → 0.210,
    /// 0.12 → 0.207, 0.16 → 0.205, 0.18 → 0.199, 0.20 → 0.208, 0.22 → 0.216).
    pub sim_floor: Option<f64>,
    /// `sim_floor` fires only for a message whose content weight (see
    /// [`BoundaryState::update_weighted`](super::BoundaryState::update_weighted)) is at least this.
    /// Seed: none (0). Real chat is full of short lines ("I agree.", "same here") that embed far
    /// from everything and would each open a topic on their own.
    pub floor_min_weight: f64,
    /// Messages after a boundary that cannot fire again (a new topic's centroid is one message
    /// and every next line looks far from it). Seed: none (0).
    pub refractory_msgs: u32,
    /// The block rule (after TextTiling): the content-weighted mean of the last `block_right`
    /// messages against that of the `block_left` before them; when their cosine is below
    /// `block_floor` a boundary fires (up to `block_right − 1` messages after it happened). One
    /// chat line says little; a few in a row unlike the few before say the topic changed. Only
    /// once the current topic holds both blocks. 0 turns it off. Seed: none.
    pub block_left: u32,
    /// See `block_left`. Seed: none.
    pub block_right: u32,
    /// See `block_left`. Seed: none.
    pub block_floor: Option<f64>,
    /// The adaptive refractory period: once the thread's mean message length so far (words, see
    /// [`BoundaryState::observe_words`](super::BoundaryState::observe_words))
    /// reaches this, `long_refractory_msgs` replaces `refractory_msgs`. A thread of long lines is
    /// two people talking, whose topics run for many lines; a thread of short questions is a quiz
    /// whose topic can change at every message. 0 turns it off. Seed: none.
    pub long_line_words: f64,
    /// See `long_line_words`. Seed: none.
    pub long_refractory_msgs: u32,
    /// When a thread first counts as one of long lines ([`BoundaryParams::long_line_words`]),
    /// the running mean similarity drops to at most this: two people's lines sit far lower on
    /// every topic than an assistant user's questions do, and measured against the quiz prior
    /// (`init_sim_ema`) every early line of a conversation looks like a surprise. None: kept.
    /// Seed: none.
    pub long_init_sim_ema: Option<f64>,
    /// `base` in a thread of long lines: one line of a conversation is weak evidence, so the
    /// accumulator needs more of it there. None: `base`. Seed: none.
    pub long_base: Option<f64>,
    /// `sim_floor` in a thread of long lines. None: `sim_floor`. Seed: none.
    pub long_sim_floor: Option<f64>,
    /// A thread is a conversation between people
    /// ([`BoundaryState::talking`](super::BoundaryState::talking)), and counts as one of long
    /// lines too, once at least this share of its lines speak in the first person, with
    /// `talk_line_words` words a line on average over at least `talk_min_lines` lines. 0 turns
    /// it off. Seed: none.
    pub talk_first_person_share: f64,
    /// See `talk_first_person_share`.
    pub talk_line_words: f64,
    /// See `talk_first_person_share`.
    pub talk_min_lines: u32,
    /// In a conversation ([`BoundaryState::talking`](super::BoundaryState::talking)) neither
    /// the accumulator, the floor nor the block rule fire before the current topic has held
    /// this many messages. 0: off. Seed: none.
    pub talk_min_topic: u32,
    /// `block_floor` in a conversation. None: `block_floor`. Seed: none.
    pub talk_block_floor: Option<f64>,
}

impl Default for BoundaryParams {
    /// The calibrated set: [`BoundaryParams::chatterbot`] plus the rules for real chat.
    fn default() -> Self {
        BoundaryParams {
            floor_min_weight: FLOOR_MIN_WEIGHT,
            refractory_msgs: REFRACTORY_MSGS,
            block_left: BLOCK_LEFT,
            block_right: BLOCK_RIGHT,
            block_floor: BLOCK_FLOOR,
            long_line_words: LONG_LINE_WORDS,
            long_refractory_msgs: LONG_REFRACTORY_MSGS,
            long_init_sim_ema: LONG_INIT_SIM_EMA,
            long_base: LONG_BASE,
            long_sim_floor: LONG_SIM_FLOOR,
            talk_first_person_share: TALK_FIRST_PERSON_SHARE,
            talk_line_words: TALK_LINE_WORDS,
            talk_min_lines: TALK_MIN_LINES,
            talk_min_topic: TALK_MIN_TOPIC,
            talk_block_floor: TALK_BLOCK_FLOOR,
            ..BoundaryParams::chatterbot()
        }
    }
}

impl BoundaryParams {
    /// The previous defaults, calibrated on the chatterbot joins alone (see each field); without
    /// the real-chat rules. Kept for comparison (`examples/topic_eval.rs`).
    pub fn chatterbot() -> Self {
        BoundaryParams {
            fast_window: 4,
            slow_window: 10,
            leak: 0.3,
            base: 2.0,
            drift_ratio_weight: 0.0,
            newma_weight: 0.6,
            surprise_weight: 1.3,
            cold_start_msgs: 2,
            cold_start_threshold: 0.18,
            init_drift_ema: 0.1104,
            init_drift_var: 0.0324 * 0.0324,
            init_drop_ema: 0.03,
            init_drop_var: 0.1 * 0.1,
            std_floor: 0.02,
            drop_std_floor: 0.08,
            sim_floor: Some(0.18),
            ..BoundaryParams::published()
        }
    }

    /// docs/cognition.md §5.4 exactly as published (the Python original's defaults).
    pub fn published() -> Self {
        BoundaryParams {
            fast_window: 4,
            slow_window: 18,
            leak: 0.4,
            base: 2.5,
            bound_min: 1.5,
            bound_max: 5.0,
            drift_ratio_weight: 0.5,
            newma_weight: 0.6,
            surprise_weight: 0.4,
            acc_cap: 1.2,
            cold_start_msgs: 5,
            cold_start_threshold: 0.55,
            stale_gap_s: 2700,
            state_ttl_s: 86_400,
            focus_inferred: 0.5,
            focus_explicit: 1.0,
            init_sim_ema: 0.5,
            init_drift_ema: 0.0,
            init_drift_var: 1e-4,
            init_drop_ema: 0.0,
            init_drop_var: 1e-4,
            std_floor: 1e-6,
            drop_std_floor: 1e-6,
            sim_floor: None,
            floor_min_weight: 0.0,
            refractory_msgs: 0,
            block_left: 0,
            block_right: 0,
            block_floor: None,
            long_line_words: 0.0,
            long_refractory_msgs: 0,
            long_init_sim_ema: None,
            long_base: None,
            long_sim_floor: None,
            talk_first_person_share: 0.0,
            talk_line_words: 0.0,
            talk_min_lines: 0,
            talk_min_topic: 0,
            talk_block_floor: None,
        }
    }

    /// The tunables forced into their docs/cognition.md §5.4 bounds: fast window 2–8, slow window 10–30, leak
    /// 0.2–0.7, base 1.5–4.0. The stability regulator must go through this.
    pub fn clamped(mut self) -> Self {
        self.fast_window = self.fast_window.clamp(2, 8);
        self.slow_window = self.slow_window.clamp(10, 30);
        self.leak = self.leak.clamp(0.2, 0.7);
        self.base = self.base.clamp(1.5, 4.0);
        self
    }

    /// α = 2/(N+1) of the fast EWMA.
    pub fn alpha_fast(&self) -> f64 {
        window_alpha(self.fast_window)
    }

    /// α = 2/(N+1) of the slow EWMA and of the running statistics.
    pub fn alpha_slow(&self) -> f64 {
        window_alpha(self.slow_window)
    }

    /// The bound modifier for a focus level.
    pub fn focus_modifier(&self, focus: FocusLevel) -> f64 {
        match focus {
            FocusLevel::None => 0.0,
            FocusLevel::Inferred => self.focus_inferred,
            FocusLevel::Explicit => self.focus_explicit,
        }
    }
}

pub(super) fn window_alpha(n: u32) -> f64 {
    2.0 / (f64::from(n.max(1)) + 1.0)
}
