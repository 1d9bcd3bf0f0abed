//! COMMUNICATE's manners (docs/cognition.md §14.6): the idle window, the breaker and the
//! backoff. A message the user does not answer within [`ANSWER_WITHIN_S`] is a failure; each
//! failure doubles the wait before the next message (at most ×[`MAX_BACKOFF`]), an answer resets
//! it, and [`BREAKER_FAILURES`] failures within [`BREAKER_WINDOW_S`] pause messages for
//! [`PAUSE_S`]. Kept in `kv_state` as JSON.

use serde::{Deserialize, Serialize};

pub const IDLE_MIN_S: i64 = 1800;
pub const IDLE_MAX_S: i64 = 86_400;
pub const ANSWER_WITHIN_S: i64 = 4 * 3600;
pub const BREAKER_FAILURES: usize = 2;
pub const BREAKER_WINDOW_S: i64 = 4 * 3600;
pub const PAUSE_S: i64 = 8 * 3600;
pub const MAX_BACKOFF: i64 = 16;
/// A deferred message is dropped after this long (seconds).
pub const DEFER_TTL_S: i64 = 48 * 3600;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CommState {
    /// Messages sent and not yet answered or judged failed.
    #[serde(default)]
    pub pending: Vec<i64>,
    /// When each recent failure was judged.
    #[serde(default)]
    pub failures: Vec<i64>,
    #[serde(default)]
    pub paused_until: Option<i64>,
    /// Backoff doublings (0 = none).
    #[serde(default)]
    pub level: u32,
    #[serde(default)]
    pub last_sent_at: Option<i64>,
}

impl CommState {
    /// Judge the pending messages against the user's last message, and trip the breaker.
    pub fn settle(&mut self, last_user_at: Option<i64>, now: i64) {
        let mut keep = Vec::new();
        for &s in &self.pending {
            if last_user_at.is_some_and(|u| u > s) {
                self.level = 0;
            } else if now - s >= ANSWER_WITHIN_S {
                self.failures.push(s + ANSWER_WITHIN_S);
                self.level = (self.level + 1).min(MAX_BACKOFF.ilog2());
            } else {
                keep.push(s);
            }
        }
        self.pending = keep;
        self.failures.retain(|f| *f > now - BREAKER_WINDOW_S);
        if self.failures.len() >= BREAKER_FAILURES {
            self.paused_until = Some(now + PAUSE_S);
            self.failures.clear();
        }
    }

    pub fn breaker_open(&self, now: i64) -> bool {
        self.paused_until.is_some_and(|p| p > now)
    }

    /// The earliest next message: the idle minimum × 2^level after the last one.
    pub fn backoff_until(&self) -> Option<i64> {
        self.last_sent_at.map(|t| t + IDLE_MIN_S * (1i64 << self.level.min(MAX_BACKOFF.ilog2())))
    }

    pub fn record_sent(&mut self, now: i64) {
        self.pending.push(now);
        self.last_sent_at = Some(now);
    }
}

/// Whether the user has been idle long enough, and not too long, for a message.
pub fn in_idle_window(idle_s: Option<i64>) -> bool {
    idle_s.is_some_and(|s| (IDLE_MIN_S..=IDLE_MAX_S).contains(&s))
}
