//! The adaptive topic-boundary detector (docs/cognition.md §5.3), calibrated on real chat (docs/cognition.md §5.5).
//!
//! Per thread, three layers turn each message's embedding and its best topic similarity into a
//! boundary decision:
//! 1. **NEWMA**: a fast and a slow EWMA of the embeddings; their squared distance (the drift) is
//!    z-scored against its own running mean and variance.
//! 2. **Surprise**: the drop of the best similarity below its running mean, z-scored the same way.
//! 3. **Leaky accumulator**: a weighted sum of both (positive parts) leaks and integrates; a
//!    boundary fires when it crosses a bound that rises with the thread's usual drift and with
//!    focus. One outlier leaks away; a sustained change crosses.
//!
//! [`BoundaryParams::published`] is the published detector, kept for comparison: on chat it
//! hardly fires. [`BoundaryParams::default`] is the calibrated set: statistics start from
//! priors measured on chat instead of warming up from zero, the bound does not grow with the
//! drift level, the surprise term weighs more than NEWMA, the leak is lower, and a similarity
//! floor catches plain non-sequiturs. One message that has nothing in common with the thread
//! fires on its own, as the first message of a new topic must for the topic to open on time;
//! the next on-topic message then returns to the old topic without firing. How each value was
//! measured, and what the published set does on the same data: docs/cognition.md §5.4–§5.5.
//!
//! Short contentless messages ("lol", "ok") are kept out by the caller: the topic classifier's
//! content gate calls [`BoundaryState::hold`] instead of [`BoundaryState::update`] for them, which
//! leaves every statistic frozen. Messages that pass the gate carry a content weight
//! ([`BoundaryState::update_weighted`]) that scales the evidence they bring.
//!
//! Real chat (docs/cognition.md §5.5; `examples/topic_eval.rs --chitchat`): two people's short lines sit at middling
//! similarity to any topic, so one line says little. The block rule (after TextTiling) compares
//! the last two messages with the eight before them and fires when the two blocks have little in
//! common, at most one message late. It only runs once the current topic holds both blocks, so
//! on the chatterbot sessions, whose segments are a few messages, it stays out of the way.
//! The refractory period adapts to the thread: once its mean line length so far reaches
//! [`BoundaryParams::long_line_words`] (people talking, not a quiz of short questions) a topic
//! holds for [`BoundaryParams::long_refractory_msgs`] lines before the accumulator or the
//! similarity floor may close it; a thread of short questions can still change topic at every
//! message.
//! A thread whose middling lines often speak in the first person is people talking about
//! themselves ([`BoundaryState::talking`]; questions to an assistant rarely say "I"): there a
//! topic holds [`BoundaryParams::talk_min_topic`] messages before the similarity rules may close
//! it, and the block rule fires at [`BoundaryParams::talk_block_floor`].
//!
//! Pure: no clock, no I/O. The state serialises to JSON, its vectors as base64 (`packed`); the
//! store keeps it per thread (TTL 86 400 s) with the vectors beside the JSON, the window one
//! row a message ([`BoundaryState::recent_seq`], `store::BoundaryRow`);
//! the tunables are configuration and are not part of it, see [`BoundaryState::with_params`].

use serde::{Deserialize, Serialize};

mod packed;
mod params;

pub use params::BoundaryParams;

/// How strongly the person is focused on the current topic; raises the bound (docs/cognition.md §5.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FocusLevel {
    /// No focus: modifier 0.
    #[default]
    None,
    /// Inferred after 5 consecutive same-topic exchanges: [`BoundaryParams::focus_inferred`].
    Inferred,
    /// Declared by the person: [`BoundaryParams::focus_explicit`].
    Explicit,
}

/// What one message did to the detector; the `diagnostics` of a classification.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct BoundaryOutcome {
    pub is_boundary: bool,
    /// min(1, acc/bound); in cold start best_sim on a boundary, else 1 − best_sim (as published);
    /// 1 − best_sim when fired by the similarity floor.
    pub confidence: f32,
    /// The accumulator after this message (before the reset that follows a boundary).
    pub acc: f32,
    /// The bound it was compared with.
    pub bound: f32,
    /// NEWMA z-score of this message's drift.
    pub newma: f32,
    /// Surprise z-score of this message's similarity drop.
    pub surprise: f32,
    /// The statistics were reset by a gap longer than `stale_gap_s` before this message.
    pub just_reset: bool,
    /// Decided by the static cold-start rule.
    pub cold_start: bool,
    /// Fired by [`BoundaryParams::sim_floor`] (whatever the accumulator said).
    pub below_floor: bool,
    /// The message was gated as contentless: nothing was updated ([`BoundaryState::hold`]).
    pub held: bool,
}

/// One thread's detector state. Serialises to JSON; the params are configuration and are
/// skipped, so a loaded state runs with the defaults until [`BoundaryState::with_params`].
/// A missing or unreadable state is a cold start: [`BoundaryState::new`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BoundaryState {
    pub msg_count: u32,
    #[serde(with = "packed::option")]
    pub ewma_fast: Option<Vec<f32>>,
    #[serde(with = "packed::option")]
    pub ewma_slow: Option<Vec<f32>>,
    pub drift_ema: f64,
    pub drift_var: f64,
    pub sim_ema: f64,
    pub drop_ema: f64,
    pub drop_var: f64,
    pub acc: f64,
    pub last_ts: Option<i64>,
    /// The last `block_left + block_right` messages, oldest first: content weight and unit
    /// embedding (the block rule).
    #[serde(with = "packed::weighted")]
    pub recent: Vec<(f32, Vec<f32>)>,
    /// The sequence number of `recent`'s first message. Each message the window takes in gets
    /// the next number and a cleared window moves past its numbers, so within one state a
    /// number always names the same message: a store keeps the window as numbered rows and
    /// writes only the messages new since (`store::BoundaryWindow`).
    pub recent_seq: u64,
    /// Messages since the last boundary (or the first message); saturates.
    pub since_boundary: u32,
    /// Mean words per message over the thread so far ([`BoundaryState::observe_words`]).
    pub mean_words: f64,
    /// Messages counted in `mean_words`; saturates.
    pub words_seen: u32,
    /// The thread has counted as one of long lines at least once, and the chat prior
    /// ([`BoundaryParams::long_init_sim_ema`]) was applied.
    pub chat_prior_applied: bool,
    /// Messages counted in `words_seen` that speak in the first person
    /// ([`BoundaryState::observe_line`]); saturates.
    pub first_person_lines: u32,
    #[serde(skip)]
    params: BoundaryParams,
}

impl Default for BoundaryState {
    fn default() -> Self {
        BoundaryState::new(BoundaryParams::default())
    }
}

impl BoundaryState {
    /// A cold-start state (docs/cognition.md §5.4, with the params' priors).
    pub fn new(params: BoundaryParams) -> Self {
        BoundaryState {
            msg_count: 0,
            ewma_fast: None,
            ewma_slow: None,
            drift_ema: params.init_drift_ema,
            drift_var: params.init_drift_var,
            sim_ema: params.init_sim_ema,
            drop_ema: params.init_drop_ema,
            drop_var: params.init_drop_var,
            acc: 0.0,
            last_ts: None,
            recent: Vec::new(),
            recent_seq: 0,
            since_boundary: u32::MAX,
            mean_words: 0.0,
            words_seen: 0,
            chat_prior_applied: false,
            first_person_lines: 0,
            params,
        }
    }

    /// Whether a persisted state has outlived `state_ttl_s` since its last message; the caller
    /// then starts cold. A state that never saw a message does not expire.
    pub fn expired(&self, now_unix_s: i64) -> bool {
        self.last_ts.is_some_and(|last| now_unix_s - last > self.params.state_ttl_s)
    }

    /// The same state run with other params (after loading, or when the regulator retunes).
    pub fn with_params(mut self, params: BoundaryParams) -> Self {
        self.params = params;
        self
    }

    pub fn params(&self) -> &BoundaryParams {
        &self.params
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("the boundary state always serialises")
    }

    /// The sequence numbers of the window's messages ([`BoundaryState::recent_seq`]).
    pub fn recent_seqs(&self) -> std::ops::Range<u64> {
        self.recent_seq..self.recent_seq.saturating_add(self.recent.len() as u64)
    }

    /// Loads a persisted state; `None` on anything unreadable (the caller then cold-starts).
    pub fn from_json(json: &str, params: BoundaryParams) -> Option<Self> {
        serde_json::from_str::<BoundaryState>(json).ok().map(|s| s.with_params(params))
    }

    /// Takes in the length of the message about to be decided (the topic classifier calls this
    /// before [`BoundaryState::update_weighted`]); it sets the adaptive refractory period.
    pub fn observe_words(&mut self, words: usize) {
        // A plain mean, not an EMA: chit-chat has runs of short lines ("haha yes", "me too")
        // that would tip an EMA at the slow α back to a quiz-like thread for a while (chit-chat
        // dev Pk 0.352 with the EMA, 0.338 with the mean; chatterbot dev alike).
        self.words_seen = self.words_seen.saturating_add(1);
        self.mean_words += (words as f64 - self.mean_words) / f64::from(self.words_seen);
        if self.long_lines() && !self.chat_prior_applied {
            self.chat_prior_applied = true;
            if let Some(prior) = self.params.long_init_sim_ema {
                self.sim_ema = self.sim_ema.min(prior);
            }
        }
    }

    /// [`BoundaryState::observe_words`] with whether the line speaks in the first person ("I",
    /// "my"): people telling each other about themselves, which questions to an assistant
    /// rarely do ([`BoundaryParams::talk_first_person_share`]).
    pub fn observe_line(&mut self, words: usize, first_person: bool) {
        self.first_person_lines = self.first_person_lines.saturating_add(u32::from(first_person));
        self.observe_words(words);
    }

    /// Whether the thread so far is one of long lines ([`BoundaryParams::long_line_words`]) or
    /// a conversation between people ([`BoundaryState::talking`]).
    pub fn long_lines(&self) -> bool {
        let p = &self.params;
        (p.long_line_words > 0.0 && self.mean_words >= p.long_line_words) || self.talking()
    }

    /// Whether the thread so far reads as people talking about themselves: middling lines that
    /// often speak in the first person ([`BoundaryParams::talk_first_person_share`]). Questions
    /// and requests to an assistant, however long, rarely do.
    pub fn talking(&self) -> bool {
        let p = &self.params;
        let share = f64::from(self.first_person_lines) / f64::from(self.words_seen.max(1));
        p.talk_first_person_share > 0.0
            && self.words_seen >= p.talk_min_lines
            && self.mean_words >= p.talk_line_words
            && share >= p.talk_first_person_share
    }

    /// Messages after a boundary that cannot fire again, for this thread so far.
    pub fn refractory_msgs(&self) -> u32 {
        let p = &self.params;
        if self.long_lines() { p.long_refractory_msgs } else { p.refractory_msgs }
    }

    /// The bound the accumulator is compared with, from the current statistics.
    pub fn bound(&self, focus: FocusLevel) -> f64 {
        let p = &self.params;
        let focus_mod = p.focus_modifier(focus);
        let base = if self.long_lines() { p.long_base.unwrap_or(p.base) } else { p.base };
        let std = self.drift_var.sqrt().max(p.std_floor);
        // As published: a std at the floor counts as a ratio of 1.
        let ratio = if std > p.std_floor { self.drift_ema / std } else { 1.0 };
        (base + p.drift_ratio_weight * ratio + focus_mod).clamp(p.bound_min, p.bound_max + focus_mod)
    }

    /// A message that must not move the statistics (contentless): nothing changes, not even
    /// the clock, so a later gap is still measured from the last real message. Never a boundary.
    pub fn hold(&self, focus: FocusLevel) -> BoundaryOutcome {
        let bound = self.bound(focus);
        BoundaryOutcome {
            is_boundary: false,
            confidence: (self.acc / bound).min(1.0) as f32,
            acc: self.acc as f32,
            bound: bound as f32,
            held: true,
            ..BoundaryOutcome::default()
        }
    }

    /// The first message of a thread that has no topic to compare it with: the clock, the count
    /// and the EWMAs take it in (with the silence reset of step 1), the similarity statistics are
    /// left alone. Never a boundary (the caller opens the first topic anyway).
    pub fn prime(&mut self, embedding: &[f32], now_unix_s: i64, focus: FocusLevel) -> BoundaryOutcome {
        let p = self.params.clone();
        let e = normalised(embedding);
        let just_reset = self.last_ts.is_some_and(|last| now_unix_s - last > p.stale_gap_s);
        if just_reset {
            let sim_ema = self.sim_ema;
            self.reset(&e, sim_ema);
        }
        self.last_ts = Some(now_unix_s);
        self.msg_count = self.msg_count.saturating_add(1);
        // The first message opens a topic: the refractory period and the window start here.
        self.since_boundary = 0;
        self.remember(1.0, &e);
        match (&mut self.ewma_fast, &mut self.ewma_slow) {
            (Some(fast), Some(slow)) if fast.len() == e.len() && slow.len() == e.len() => {
                blend(fast, &e, p.alpha_fast());
                blend(slow, &e, p.alpha_slow());
            }
            _ => {
                self.ewma_fast = Some(e.clone());
                self.ewma_slow = Some(e);
            }
        }
        BoundaryOutcome { just_reset, cold_start: self.msg_count < p.cold_start_msgs, held: false, ..self.hold(focus) }
    }

    /// A boundary decided outside the detector (a greeting after a settled topic,
    /// [`crate::cognition::topic::ClassifierParams::greeting_restart_after`]): the message opens
    /// the topic as the first one does ([`BoundaryState::prime`]), and the evidence gathered
    /// against the old topic is dropped.
    pub fn restart(&mut self, embedding: &[f32], now_unix_s: i64, focus: FocusLevel) -> BoundaryOutcome {
        self.acc = 0.0;
        BoundaryOutcome { is_boundary: true, ..self.prime(embedding, now_unix_s, focus) }
    }

    /// Step 1's reset: both EWMAs on `e`, the statistics back to their priors, sim_ema = `s`.
    fn reset(&mut self, e: &[f32], s: f64) {
        let p = &self.params;
        self.ewma_fast = Some(e.to_vec());
        self.ewma_slow = Some(e.to_vec());
        self.drift_ema = p.init_drift_ema;
        self.drift_var = p.init_drift_var;
        self.sim_ema = s;
        self.drop_ema = p.init_drop_ema;
        self.drop_var = p.init_drop_var;
        self.acc = 0.0;
        self.clear_recent();
    }

    /// Empties the window; its numbers are not given out again.
    fn clear_recent(&mut self) {
        self.recent_seq = self.recent_seq.saturating_add(self.recent.len() as u64);
        self.recent.clear();
    }

    /// Keeps `e` among the last `block_left + block_right` messages.
    fn remember(&mut self, weight: f64, e: &[f32]) {
        let keep = (self.params.block_left + self.params.block_right) as usize;
        if keep == 0 {
            return;
        }
        if self.recent.first().is_some_and(|(_, v)| v.len() != e.len()) {
            self.clear_recent();
        }
        self.recent.push((weight as f32, e.to_vec()));
        let excess = self.recent.len().saturating_sub(keep);
        self.recent.drain(..excess);
        self.recent_seq = self.recent_seq.saturating_add(excess as u64);
    }

    /// The block rule's cosine, once the current topic holds both blocks.
    fn block_similarity(&self) -> Option<f64> {
        let p = &self.params;
        let (left, right) = (p.block_left as usize, p.block_right as usize);
        if left == 0
            || right == 0
            || self.recent.len() < left + right
            || (self.since_boundary as usize) < left + right - 1
        {
            return None;
        }
        let (a, b) = self.recent.split_at(left);
        let (a, b) = (weighted_mean(a), weighted_mean(b));
        let (na, nb) = (norm(&a), norm(&b));
        (na > 0.0 && nb > 0.0)
            .then(|| a.iter().zip(&b).map(|(&x, &y)| f64::from(x) * f64::from(y)).sum::<f64>() / (na * nb))
    }

    /// One message (docs/cognition.md §5.3 steps 1–6) of full content weight. `embedding` is re-normalised here;
    /// `best_sim` is the best topic similarity including any recency bonus.
    pub fn update(&mut self, embedding: &[f32], best_sim: f32, now_unix_s: i64, focus: FocusLevel) -> BoundaryOutcome {
        self.update_weighted(embedding, best_sim, 1.0, now_unix_s, focus)
    }

    /// [`BoundaryState::update`] for a message of content `weight` in 0–1 (how much topic it can
    /// carry: the topic classifier derives it from the number of content words). The statistics
    /// learn from every message alike; the evidence the message brings (its accumulator input,
    /// its pull on the window rule, whether the similarity floor may fire on it) is scaled by
    /// the weight, so "yeah same" or "what about you?" lean on the decision less than a sentence.
    pub fn update_weighted(
        &mut self,
        embedding: &[f32],
        best_sim: f32,
        weight: f32,
        now_unix_s: i64,
        focus: FocusLevel,
    ) -> BoundaryOutcome {
        let p = self.params.clone();
        let w = f64::from(weight).clamp(0.0, 1.0);
        self.since_boundary = self.since_boundary.saturating_add(1);
        let e = normalised(embedding);
        let s = f64::from(best_sim);
        let (af, as_) = (p.alpha_fast(), p.alpha_slow());

        // 1. Dishabituation after a long silence.
        let mut just_reset = false;
        if self.last_ts.is_some_and(|last| now_unix_s - last > p.stale_gap_s) {
            self.reset(&e, s);
            just_reset = true;
        }
        // 2. Clock and count.
        self.last_ts = Some(now_unix_s);
        self.msg_count = self.msg_count.saturating_add(1);

        // A state whose EWMAs were lost (or whose dimension changed) starts them here.
        let fresh = match &self.ewma_fast {
            Some(f) => f.len() != e.len() || self.ewma_slow.as_ref().is_none_or(|s| s.len() != e.len()),
            None => true,
        };

        // 3. Cold start: warm the EWMAs, decide by the static rule.
        if self.msg_count < p.cold_start_msgs {
            if fresh {
                self.ewma_fast = Some(e.clone());
                self.ewma_slow = Some(e);
                self.sim_ema = s;
            } else {
                blend(self.ewma_fast.as_mut().expect("checked"), &e, af);
                blend(self.ewma_slow.as_mut().expect("checked"), &e, as_);
                self.sim_ema = (1.0 - as_) * self.sim_ema + as_ * s;
            }
            let is_boundary = s < p.cold_start_threshold;
            if is_boundary {
                self.since_boundary = 0;
            }
            return BoundaryOutcome {
                is_boundary,
                confidence: if is_boundary { s } else { 1.0 - s } as f32,
                acc: 0.0,
                bound: p.bound_max as f32,
                just_reset,
                cold_start: true,
                ..BoundaryOutcome::default()
            };
        }
        if fresh {
            self.ewma_fast = Some(e.clone());
            self.ewma_slow = Some(e.clone());
        }

        // 4. NEWMA.
        let fast = self.ewma_fast.as_mut().expect("set above");
        blend(fast, &e, af);
        let slow = self.ewma_slow.as_mut().expect("set above");
        blend(slow, &e, as_);
        let drift: f64 = fast.iter().zip(slow.iter()).map(|(&a, &b)| f64::from(a - b).powi(2)).sum();
        let d = drift - self.drift_ema;
        self.drift_ema += as_ * d;
        self.drift_var = (1.0 - as_) * self.drift_var + as_ * d * d;
        let drift_std = self.drift_var.sqrt().max(p.std_floor);
        let newma = (drift - self.drift_ema) / drift_std;

        // 5. Surprise: the drop of the similarity below its running mean.
        let drop = (self.sim_ema - s).max(0.0);
        let dd = drop - self.drop_ema;
        self.drop_ema += as_ * dd;
        self.drop_var = (1.0 - as_) * self.drop_var + as_ * dd * dd;
        let drop_std = self.drop_var.sqrt().max(p.drop_std_floor);
        let surprise = (drop - self.drop_ema) / drop_std;
        self.sim_ema = (1.0 - as_) * self.sim_ema + as_ * s;

        // 6. Leaky accumulator against the dynamic bound, fed in proportion to the content.
        let input = w * (p.newma_weight * newma.max(0.0) + p.surprise_weight * surprise.max(0.0));
        let bound = self.bound(focus);
        let acc = ((1.0 - p.leak) * self.acc + input).max(0.0).min(p.acc_cap * bound);
        // 7. The block rule: the last few messages against the few before them.
        self.remember(w, &e);
        // In a conversation a topic lasts: the similarity rules wait for it to hold a while, and
        // then two lines unlike the eight before them are enough.
        let talking = self.talking();
        let block_floor = if talking { p.talk_block_floor.or(p.block_floor) } else { p.block_floor };
        let young = talking && self.since_boundary < p.talk_min_topic;
        let below_block = !young && block_floor.is_some_and(|floor| self.block_similarity().is_some_and(|b| b < floor));
        let sim_floor = if self.long_lines() { p.long_sim_floor.or(p.sim_floor) } else { p.sim_floor };
        let below_floor = w >= p.floor_min_weight && sim_floor.is_some_and(|floor| s < floor);
        // A message nothing like its topic (below the absolute floor) still opens a new one in a
        // young conversation topic: the minimum holds back drifting evidence, not a clear break.
        let settling = self.since_boundary <= self.refractory_msgs();
        let refractory = settling || young;
        let is_boundary = below_block || (!refractory && acc >= bound) || (!settling && below_floor);
        // Evidence gathered against a topic still in its refractory period is not carried over.
        self.acc = if is_boundary || refractory { 0.0 } else { acc };
        if is_boundary {
            self.since_boundary = 0;
        }
        let confidence = if below_floor { (1.0 - s).clamp(0.0, 1.0) } else { (acc / bound).min(1.0) };

        BoundaryOutcome {
            is_boundary,
            confidence: confidence as f32,
            acc: acc as f32,
            bound: bound as f32,
            newma: newma as f32,
            surprise: surprise as f32,
            just_reset,
            cold_start: false,
            below_floor: below_floor && is_boundary,
            held: false,
        }
    }
}

/// The weighted mean of some unit vectors (zero when all weights are).
fn weighted_mean(items: &[(f32, Vec<f32>)]) -> Vec<f32> {
    let dim = items.first().map_or(0, |(_, v)| v.len());
    let mut out = vec![0.0f32; dim];
    for (w, v) in items {
        for (o, &x) in out.iter_mut().zip(v) {
            *o += w * x;
        }
    }
    out
}

fn norm(v: &[f32]) -> f64 {
    v.iter().map(|&x| f64::from(x).powi(2)).sum::<f64>().sqrt()
}

/// `v ← (1−α)·v + α·e`.
fn blend(v: &mut [f32], e: &[f32], alpha: f64) {
    let (keep, take) = ((1.0 - alpha) as f32, alpha as f32);
    for (x, &y) in v.iter_mut().zip(e) {
        *x = keep * *x + take * y;
    }
}

/// The unit vector along `v` (the zero vector stays zero), as docs/cognition.md §5.3 re-normalises defensively.
fn normalised(v: &[f32]) -> Vec<f32> {
    let norm = v.iter().map(|&x| f64::from(x).powi(2)).sum::<f64>().sqrt();
    let scale = (1.0 / (norm + 1e-8)) as f32;
    v.iter().map(|&x| x * scale).collect()
}

#[cfg(test)]
mod tests;
