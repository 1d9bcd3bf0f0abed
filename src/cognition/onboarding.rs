//! Onboarding (`spark_state`, docs/cognition.md §4.9): how far the assistant and the user have
//! come, so that the first conversations introduce what the assistant can do, each capability
//! once, spaced out, and then stop. A capability the user has already used needs no
//! introduction.
//!
//! Pure: the stored state, the turn's mode and skills in; the note for the reply model and the
//! next state out. The state lives in `kv_state` under [`NAMESPACE`]/[`KEY`].

use crate::cognition::router::Mode;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const NAMESPACE: &str = "onboarding";
pub const KEY: &str = "spark_state";
/// Introductions happen only within the user's first this-many exchanges.
pub const ONBOARDING_EXCHANGES: u32 = 15;
/// Not on the very first exchanges: the user came with something to say.
pub const FIRST_INTRO_AT: u32 = 2;
/// Exchanges between two introductions.
pub const INTRO_GAP: u32 = 3;

/// What the assistant can do, in the order it introduces it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Capability {
    pub key: &'static str,
    /// Using any of these skills counts as knowing the capability.
    pub skills: &'static [&'static str],
    pub says: &'static str,
    /// A reply that holds one of these words has mentioned the capability.
    pub cues: &'static [&'static str],
}

pub const CAPABILITIES: [Capability; 4] = [
    Capability {
        key: "lists",
        skills: &["list"],
        says: "you can keep lists for the user (\"add eggs to my shopping list\")",
        cues: &["list", "lists"],
    },
    Capability {
        key: "reminders",
        skills: &["schedule"],
        says: "you can set reminders (\"remind me to call mum tomorrow at 9\")",
        cues: &["remind", "reminder", "reminders"],
    },
    Capability {
        key: "memory",
        skills: &["memorize", "recall", "forget", "introspect"],
        says: "you remember what the user tells you about themselves and forget it when asked (\"forget my work email\")",
        cues: &["remember", "remembers", "forget", "memory"],
    },
    Capability {
        key: "focus",
        skills: &["focus"],
        says: "you can hold a focus session (\"focus on the report for 45 minutes\")",
        cues: &["focus", "focused"],
    },
];

/// The stored onboarding state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SparkState {
    /// Exchanges so far, every thread.
    pub exchanges: u32,
    pub first_at: Option<i64>,
    /// Capabilities introduced, by key.
    pub introduced: Vec<String>,
    /// Skills the user has used.
    pub used: Vec<String>,
    /// The exchange number of the last introduction.
    pub last_intro_at: Option<u32>,
    /// Milestone → when it was reached (`first_exchange`, `first_list`, `onboarding_done`, …).
    pub milestones: BTreeMap<String, i64>,
}

impl SparkState {
    /// The stored JSON, or a fresh state when there is none or it does not parse.
    pub fn from_json(v: Option<serde_json::Value>) -> SparkState {
        v.and_then(|v| serde_json::from_value(v).ok()).unwrap_or_default()
    }

    pub fn done(&self) -> bool {
        self.exchanges >= ONBOARDING_EXCHANGES
    }
}

/// The capability this turn's reply should introduce: only a full answer written by an
/// endpoint model (a template cannot weave it in), within the first exchanges, spaced out,
/// never one already introduced or used.
pub fn intro(s: &SparkState, mode: Mode, model_writes: bool) -> Option<&'static Capability> {
    if !model_writes || mode != Mode::Respond || s.exchanges < FIRST_INTRO_AT || s.done() {
        return None;
    }
    if s.last_intro_at.is_some_and(|l| s.exchanges < l + INTRO_GAP) {
        return None;
    }
    CAPABILITIES
        .iter()
        .find(|c| !s.introduced.iter().any(|k| k == c.key) && !c.skills.iter().any(|k| s.used.iter().any(|u| u == k)))
}

/// Whether the reply that was sent mentions `c`: only then is it introduced (a model that let
/// the note pass has introduced nothing, and the next exchange may try again).
pub fn mentions(c: &Capability, reply: &str) -> bool {
    let lower = crate::text::normalize(reply);
    crate::text::words(&lower).iter().any(|w| c.cues.contains(w))
}

/// The line for the reply model's notes.
pub fn note(c: &Capability) -> String {
    format!(
        "This is one of your first conversations: if it fits, mention once, in one short sentence, that {}.",
        c.says
    )
}

/// The state after this exchange: counted, the skills it used noted, the introduction it made
/// recorded, milestones stamped.
pub fn advance(mut s: SparkState, now: i64, skills_used: &[String], introduced: Option<&Capability>) -> SparkState {
    s.first_at.get_or_insert(now);
    if let Some(c) = introduced {
        s.introduced.push(c.key.to_string());
        s.last_intro_at = Some(s.exchanges);
    }
    s.exchanges = s.exchanges.saturating_add(1);
    let mut stamp = |m: String| {
        s.milestones.entry(m).or_insert(now);
    };
    stamp("first_exchange".into());
    for k in skills_used {
        stamp(format!("first_{k}"));
    }
    if s.exchanges >= ONBOARDING_EXCHANGES {
        stamp("onboarding_done".into());
    }
    for k in skills_used {
        if !s.used.contains(k) {
            s.used.push(k.clone());
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(exchanges: u32, used_at: &[(u32, &str)]) -> (SparkState, Vec<(u32, &'static str)>) {
        let mut s = SparkState::default();
        let mut intros = Vec::new();
        for i in 0..exchanges {
            let c = intro(&s, Mode::Respond, true);
            if let Some(c) = c {
                intros.push((i, c.key));
            }
            let used: Vec<String> = used_at.iter().filter(|(at, _)| *at == i).map(|(_, k)| k.to_string()).collect();
            s = advance(s, 100 + i64::from(i), &used, c);
        }
        (s, intros)
    }

    #[test]
    fn each_capability_is_introduced_once_spaced_out_and_then_it_stops() {
        let (s, intros) = run(40, &[]);
        assert_eq!(intros, [(2, "lists"), (5, "reminders"), (8, "memory"), (11, "focus")]);
        assert_eq!(s.exchanges, 40);
        assert_eq!(s.milestones.get("onboarding_done"), Some(&(100 + 14)));
        assert_eq!(s.first_at, Some(100));
    }

    #[test]
    fn a_capability_already_used_is_not_introduced() {
        let (s, intros) = run(40, &[(0, "list"), (1, "recall")]);
        assert_eq!(intros, [(2, "reminders"), (5, "focus")]);
        assert_eq!(s.milestones.get("first_list"), Some(&100));
        assert_eq!(s.used, ["list", "recall"]);
    }

    #[test]
    fn a_capability_counts_only_when_the_reply_mentions_it() {
        let [lists, reminders, memory, focus] = &CAPABILITIES;
        assert!(mentions(lists, "Paris. By the way, I can keep lists for you."));
        assert!(!mentions(lists, "Paris is the capital; listen to the bells."), "a word, not a prefix");
        assert!(mentions(reminders, "I can set a Reminder for that."));
        assert!(mentions(memory, "I'll remember that."));
        assert!(!mentions(focus, "Paris is the capital of France."));
    }

    #[test]
    fn only_a_model_written_full_answer_introduces() {
        let s = SparkState { exchanges: 3, ..SparkState::default() };
        assert!(intro(&s, Mode::Respond, true).is_some());
        assert!(intro(&s, Mode::Respond, false).is_none(), "templates cannot weave it in");
        assert!(intro(&s, Mode::Clarify, true).is_none());
        assert!(intro(&s, Mode::Act, true).is_none());
        let fresh = SparkState::default();
        assert!(intro(&fresh, Mode::Respond, true).is_none(), "not on the first exchange");
        assert_eq!(SparkState::from_json(Some(serde_json::json!("junk"))), SparkState::default());
        let back = SparkState::from_json(Some(serde_json::to_value(&s).unwrap()));
        assert_eq!(back, s);
    }
}
