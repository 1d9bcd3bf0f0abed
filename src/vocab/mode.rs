//! The five engagement modes and their scores: what the router decides, the audit stores, the
//! events carry and `--mode` filters on.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The five engagement modes. The declaration order is the tie order (earlier wins an exact tie).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Mode {
    Respond,
    Clarify,
    Act,
    Acknowledge,
    Ignore,
}

impl Mode {
    /// All modes in tie order.
    pub const ALL: [Mode; 5] = [Mode::Respond, Mode::Clarify, Mode::Act, Mode::Acknowledge, Mode::Ignore];

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Respond => "RESPOND",
            Mode::Clarify => "CLARIFY",
            Mode::Act => "ACT",
            Mode::Acknowledge => "ACKNOWLEDGE",
            Mode::Ignore => "IGNORE",
        }
    }

    /// One line for the tie-break prompt.
    pub fn description(self) -> &'static str {
        match self {
            Mode::Respond => "Answer the user with available context and knowledge",
            Mode::Clarify => "Ask one clarifying question to build understanding",
            Mode::Act => "Use skills and tools (memory lookup, reminders, lists, search) before responding",
            Mode::Acknowledge => "Reply briefly to a greeting, thanks or other social message",
            Mode::Ignore => "No response needed (empty or irrelevant input)",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Mode, String> {
        let up = s.trim().to_ascii_uppercase();
        Mode::ALL.into_iter().find(|m| m.as_str() == up).ok_or_else(|| format!("unknown mode `{s}`"))
    }
}

/// Two scores closer than this are a tie (resolved by [`Mode::ALL`] order).
pub const TIE_EPSILON: f64 = 1e-9;

/// The five scores, serialized as `{"RESPOND": …, "CLARIFY": …, …}`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ModeScores {
    #[serde(rename = "RESPOND")]
    pub respond: f64,
    #[serde(rename = "CLARIFY")]
    pub clarify: f64,
    #[serde(rename = "ACT")]
    pub act: f64,
    #[serde(rename = "ACKNOWLEDGE")]
    pub acknowledge: f64,
    #[serde(rename = "IGNORE")]
    pub ignore: f64,
}

impl ModeScores {
    pub fn get(&self, mode: Mode) -> f64 {
        match mode {
            Mode::Respond => self.respond,
            Mode::Clarify => self.clarify,
            Mode::Act => self.act,
            Mode::Acknowledge => self.acknowledge,
            Mode::Ignore => self.ignore,
        }
    }

    pub fn get_mut(&mut self, mode: Mode) -> &mut f64 {
        match mode {
            Mode::Respond => &mut self.respond,
            Mode::Clarify => &mut self.clarify,
            Mode::Act => &mut self.act,
            Mode::Acknowledge => &mut self.acknowledge,
            Mode::Ignore => &mut self.ignore,
        }
    }

    /// Modes from highest to lowest score; ties (within [`TIE_EPSILON`]) in [`Mode::ALL`] order.
    pub fn ranked(&self) -> [(Mode, f64); 5] {
        let mut r = Mode::ALL.map(|m| (m, self.get(m)));
        r.sort_by(
            |(ma, a), (mb, b)| {
                if (a - b).abs() <= TIE_EPSILON { ma.index().cmp(&mb.index()) } else { b.total_cmp(a) }
            },
        );
        r
    }
}
