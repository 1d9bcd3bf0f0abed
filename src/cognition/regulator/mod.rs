//! The regulator (seed 003, docs/cognition.md §13): it reads what a turn's model calls did
//! (tokens with log-probabilities, cost, the reply) and what the user said next (thanks,
//! complaints, corrections, a misroute), and decides whether the turn goes on, stops spending,
//! drifted from the request, repeats a mistake the user corrected before, or has stretches the
//! model was unsure of.
//!
//! Everything here is pure: [`Regulator`] is a state machine over plain events, `decide()`
//! reads it without changing it, and the pipeline does the I/O (loading and saving the state,
//! feeding events, acting on the decision).

pub mod confidence;
pub mod cost;
mod decide;
pub mod feedback;
pub mod keywords;
pub mod scope;
pub mod state;

#[cfg(test)]
mod tests;

pub use decide::{Break, Decision};
pub use feedback::{Exchange, Feedback, FeedbackLabel, detect as detect_feedback};
pub use state::RegulatorState;

use confidence::{Token, Window};
use cost::Spend;
use keywords::TaskBag;
use std::collections::BTreeMap;

/// The regulator's settings; none is persisted (they come from the config each start).
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Output tokens (all of a user's turns since the last cost break) after which poor
    /// quality stops spending.
    pub token_cap: u64,
    /// Drift at or above this warns; values outside [0, 1] keep the default.
    pub drift_threshold: f64,
    /// A drift candidate warns only when the request/reply cosine is below this (§13.2).
    pub similarity_threshold: f64,
    /// A new message on the same cluster this soon after a reply counts as a correction of it
    /// (§13.5's implicit window); `None` (the default) counts only explicit corrections, since
    /// a quick follow-up is usually not one.
    pub implicit_window_ms: Option<u64>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            token_cap: cost::DEFAULT_TOKEN_CAP,
            drift_threshold: scope::DEFAULT_THRESHOLD,
            similarity_threshold: scope::DEFAULT_SIMILARITY,
            implicit_window_ms: None,
        }
    }
}

/// One thing that happened in a turn, in the order it happened.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A user's message starts a turn; `at_ms` is a clock for the implicit-correction window.
    TurnStart { user_message: String, at_ms: u64 },
    /// One streamed token of the reply (the reply's model call only).
    Token { text: String, logprob: Option<f64> },
    /// The reply as shown.
    TurnComplete { response: String, at_ms: u64 },
    /// The cosine between the request's and the reply's embeddings, when both were embedded.
    ReplySimilarity { cosine: f64 },
    /// One model call of this turn finished, in any role.
    Cost { role: String, tokens_in: u32, tokens_out: u32, wall_ms: u64 },
    /// The ACT loop ran a skill.
    ToolCall { name: String },
    /// The reply failed or was cut off: its quality is known now (0 failed, 0.2 cut off).
    ReplyFailed { cut_off: bool },
}

/// What a turn has seen so far; cleared by each TurnStart.
#[derive(Debug, Clone, Default)]
struct Turn {
    task: TaskBag,
    cluster: String,
    window: Window,
    tokens: Vec<Token>,
    response: Option<String>,
    similarity: Option<f64>,
    spend: BTreeMap<String, Spend>,
    tools: Vec<String>,
    /// Quality known at the end of the turn itself (a failed or cut-off reply).
    own_quality: Option<f64>,
}

/// One user's regulator.
#[derive(Debug, Clone)]
pub struct Regulator {
    settings: Settings,
    state: RegulatorState,
    turn: Turn,
    last_complete_ms: Option<u64>,
    /// The next message corrects the last reply, so it continues that reply's task: its turn
    /// keeps the corrected cluster ("No, I meant only the parser" is still the refactor).
    continues_last: bool,
}

impl Regulator {
    pub fn new(settings: Settings, state: RegulatorState) -> Regulator {
        let mut settings = settings;
        if !(0.0..=1.0).contains(&settings.drift_threshold) {
            settings.drift_threshold = scope::DEFAULT_THRESHOLD;
        }
        if !(-1.0..=f64::INFINITY).contains(&settings.similarity_threshold) {
            settings.similarity_threshold = scope::DEFAULT_SIMILARITY;
        }
        Regulator { settings, state, turn: Turn::default(), last_complete_ms: None, continues_last: false }
    }

    pub fn for_user(user_id: &str) -> Regulator {
        Regulator::new(Settings::default(), RegulatorState::for_user(user_id))
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Take the stored state as it is now (a forget may have rewritten it since the last turn),
    /// keeping what only lives in memory (the implicit-correction clock).
    pub fn set_state(&mut self, state: RegulatorState) {
        self.state = state;
    }

    /// The state to persist (what survives a restart).
    pub fn export(&self) -> &RegulatorState {
        &self.state
    }

    /// The cluster the current turn's request belongs to.
    pub fn cluster(&self) -> &str {
        &self.turn.cluster
    }

    /// Take in the next message's verdict on the last reply: its quality, and a correction
    /// filed under the last reply's cluster. Call before that message's TurnStart.
    pub fn on_feedback(&mut self, feedback: &Feedback, message: &str, now_s: i64) {
        let cluster = self.state.last_cluster.clone();
        if !self.state.last_sampled {
            self.state.judge(&cluster, feedback.quality);
            self.state.last_sampled = true;
        }
        if feedback.correction {
            self.state.add_correction(&cluster, message, now_s);
        }
        self.continues_last = feedback.correction;
    }

    pub fn on_event(&mut self, event: Event) {
        match event {
            Event::TurnStart { user_message, at_ms } => {
                let task = keywords::task_bag(&user_message);
                let own = keywords::cluster(&task);
                let continues = std::mem::take(&mut self.continues_last) && !self.state.last_cluster.is_empty();
                let cluster = if continues { self.state.last_cluster.clone() } else { own };
                let implicit = match (self.settings.implicit_window_ms, self.last_complete_ms) {
                    (Some(window), Some(done)) => at_ms.saturating_sub(done) <= window,
                    _ => false,
                };
                if implicit && !cluster.is_empty() && cluster == self.state.last_cluster {
                    self.state.add_correction(&cluster, &user_message, (at_ms / 1000) as i64);
                }
                self.turn = Turn { task, cluster, ..Turn::default() };
            }
            Event::Token { text, logprob } => {
                if let Some(lp) = logprob {
                    self.turn.window.push(lp);
                }
                self.turn.tokens.push(Token { text, logprob });
            }
            Event::TurnComplete { response, at_ms } => {
                self.turn.response = Some(response);
                self.last_complete_ms = Some(at_ms);
            }
            Event::ReplySimilarity { cosine } => self.turn.similarity = Some(cosine),
            Event::Cost { role, tokens_in, tokens_out, wall_ms } => {
                self.turn.spend.entry(role).or_default().add(tokens_in, tokens_out, wall_ms)
            }
            Event::ToolCall { name } => self.turn.tools.push(name),
            Event::ReplyFailed { cut_off } => self.turn.own_quality = Some(if cut_off { 0.2 } else { 0.0 }),
        }
    }

    /// Close the turn: add its cost to the history, score a failed reply, and reset what a
    /// break it ended with has acted on, so the next message starts afresh instead of being
    /// stopped by the same numbers again.
    pub fn finish_turn(&mut self, decision: &Decision) {
        let turn_cost = self.turn_cost();
        self.state.spend(turn_cost);
        self.state.last_cluster = self.turn.cluster.clone();
        self.state.last_sampled = false;
        if let Some(q) = self.turn.own_quality {
            let cluster = self.turn.cluster.clone();
            self.state.judge(&cluster, q);
            self.state.last_sampled = true;
        }
        if let Decision::CircuitBreak(b) = decision {
            match b {
                Break::CostCap { .. } => {
                    self.state.tokens_out_spent = 0;
                    self.state.qualities.0.clear();
                }
                Break::QualityDecline { .. } => self.state.qualities.0.clear(),
                Break::RepeatedFailure { cluster, .. } => {
                    if let Some(rec) = self.state.clusters.get_mut(cluster) {
                        rec.failures_in_a_row = 0;
                    }
                }
                Break::ToolLoop { .. } => {}
            }
        }
    }

    /// Every role's spend this turn, summed.
    pub fn turn_cost(&self) -> state::TurnCost {
        self.turn.spend.values().fold(state::TurnCost::default(), |mut c, s| {
            c.tokens_in += s.tokens_in;
            c.tokens_out += s.tokens_out;
            c.wall_ms += s.wall_ms;
            c
        })
    }

    /// This turn's spend per role.
    pub fn spend_by_role(&self) -> &BTreeMap<String, Spend> {
        &self.turn.spend
    }

    /// Confidence of the reply so far.
    pub fn confidence(&self) -> f64 {
        self.turn.window.confidence(self.turn.response.as_deref().unwrap_or(""))
    }

    /// The low-confidence spans of the finished reply.
    pub fn spans(&self) -> Vec<confidence::Span> {
        self.turn.response.as_deref().map(|r| confidence::spans(&self.turn.tokens, r)).unwrap_or_default()
    }

    /// The finished reply's drift from its request.
    pub fn drift(&self) -> Option<scope::Drift> {
        self.turn.response.as_deref().and_then(|r| scope::drift(&self.turn.task, r))
    }

    /// The reply's keyword drift when it reaches the threshold, before the similarity check:
    /// the pipeline embeds the reply only then.
    pub fn drift_candidate(&self) -> Option<scope::Drift> {
        self.drift().filter(|d| d.score >= self.settings.drift_threshold)
    }

    /// The drift the user is warned of: keyword drift the embeddings do not contradict.
    pub fn drift_warning(&self) -> Option<scope::Drift> {
        let s = &self.settings;
        self.drift().filter(|d| scope::warns(d, self.turn.similarity, s.drift_threshold, s.similarity_threshold))
    }

    /// The past corrections to put before the next generation, while the decision is a
    /// procedural warning (a break stops the turn; no reply yet means no drift to mask it).
    pub fn prelude(&self) -> Option<String> {
        let Decision::ProceduralWarning { cluster, corrections } = self.decide() else {
            return None;
        };
        let mut out = format!(
            "The user has corrected earlier replies about {} ({} times). Their words, newest first; avoid repeating those mistakes:\n",
            cluster.replace('+', " and "),
            self.state.corrections.get(&cluster).map_or(0, |c| c.len())
        );
        for c in corrections {
            out.push_str("- ");
            out.push_str(&c);
            out.push('\n');
        }
        Some(out)
    }
}
