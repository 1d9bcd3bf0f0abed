//! Post-routing feedback (docs/cognition.md §13.5): what the user's next message says about the
//! last reply. Pure: the previous exchange and the new message in, one label out. The label is
//! stored with the last routing decision, and its quality and correction flag feed the
//! regulator; the routing-learning and drift engines may read the same [`Feedback`].

use super::keywords::is_keyword;
use crate::text::{find_phrase, normalize, starts_with_any, words};
use crate::vocab::Mode;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// What the next message says about the last reply, most telling first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FeedbackLabel {
    /// The user said the reply was bad.
    Complaint,
    /// The user said the reply was wrong or not what they asked.
    Correction,
    /// The user had to explain what they meant: the turn should have asked.
    MissedClarify,
    /// The user repeated a request that should have been carried out.
    MissedAct,
    /// The user wants more ("and?", "go on"): the reply was too thin.
    UnderEngagement,
    /// The user thanked.
    Thanks,
    /// The user moved on: nothing says the route was wrong.
    CorrectRoute,
}

impl FeedbackLabel {
    pub fn as_str(self) -> &'static str {
        match self {
            FeedbackLabel::Complaint => "complaint",
            FeedbackLabel::Correction => "correction",
            FeedbackLabel::MissedClarify => "missed_clarify",
            FeedbackLabel::MissedAct => "missed_act",
            FeedbackLabel::UnderEngagement => "under_engagement",
            FeedbackLabel::Thanks => "thanks",
            FeedbackLabel::CorrectRoute => "correct_route",
        }
    }

    /// The reply's quality as this label judges it, in [0, 1]; below 0.5 is poor.
    pub fn quality(self) -> f64 {
        match self {
            FeedbackLabel::Thanks => 1.0,
            FeedbackLabel::CorrectRoute => 0.7,
            FeedbackLabel::UnderEngagement => 0.4,
            FeedbackLabel::MissedClarify | FeedbackLabel::MissedAct => 0.3,
            FeedbackLabel::Correction => 0.2,
            FeedbackLabel::Complaint => 0.1,
        }
    }
}

/// The verdict on one reply, as stored in `routing_decisions.feedback`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Feedback {
    pub label: FeedbackLabel,
    /// In [0, 1] (see [`FeedbackLabel::quality`]).
    pub quality: f64,
    /// The message corrects the reply (a procedural-memory record for its cluster).
    pub correction: bool,
    /// The cue that decided, for the audit ("that's wrong", "repeat 0.83").
    pub cue: String,
}

/// The exchange being judged and the message that judges it.
#[derive(Debug, Clone, Copy)]
pub struct Exchange<'a> {
    pub user: &'a str,
    pub mode: Mode,
    pub next: &'a str,
}

const COMPLAINTS: &[&str] = &[
    "that's useless",
    "that is useless",
    "not helpful",
    "unhelpful",
    "doesn't help",
    "does not help",
    "didn't help",
    "makes no sense",
    "that's nonsense",
    "terrible answer",
    "bad answer",
    "you're not listening",
    "you are not listening",
    "you're useless",
    "stupid answer",
    "waste of time",
];
const CORRECTIONS: &[&str] = &[
    "that's wrong",
    "that is wrong",
    "thats wrong",
    "that's not right",
    "that is not right",
    "that's incorrect",
    "that is incorrect",
    "not what i asked",
    "not what i meant",
    "not what i said",
    "that's not what",
    "you're wrong",
    "you are wrong",
    "wrong answer",
    "i didn't ask",
    "i did not ask",
    "i never said",
    "i asked for",
];
/// At the start of a message: a reply being set right. (A bare "no" or "nope" is usually an
/// answer to a question, not a correction.)
/// A bare "wrong" opener is not one either ("Wrong button, I meant…").
const CORRECTION_OPENERS: &[&str] = &["no i meant", "no i mean", "no i said", "i said"];
/// At the start of a message: the user explaining what they meant. "I mean" alone is filler in
/// real chat ("I mean, it's hard to say"), so only the past tense and explicit forms count.
const CLARIFY_OPENERS: &[&str] = &[
    "i meant",
    "what i meant",
    "what i mean is",
    "to clarify",
    "let me rephrase",
    "let me clarify",
    "in other words",
    "i was asking",
    "i was talking about",
];
const ACT_REPEATS: &[&str] = &[
    "i asked you to",
    "i told you to",
    "you didn't do",
    "you did not do",
    "just do it",
    "do it please",
    "please do it",
    "can you actually",
    "did you do it",
    "still not done",
    "you haven't done",
];
const MORE: &[&str] = &[
    "and",
    "and?",
    "go on",
    "more",
    "more detail",
    "more details",
    "tell me more",
    "continue",
    "keep going",
    "elaborate",
    "what else",
    "anything else",
    "and then",
    "so",
    "so?",
    "and then?",
    "say more",
    "expand",
];
const THANKS: &[&str] = &[
    "thanks",
    "thank you",
    "thank u",
    "thx",
    "cheers",
    "much appreciated",
    "appreciate it",
    "that helps",
    "that helped",
    "that's helpful",
    "very helpful",
];
/// Praise that thanks only as the whole message ("Perfect!", not "perfect weather today").
const PRAISE: &[&str] = &["perfect", "great", "awesome", "excellent", "ty", "nice one", "spot on"];

/// How much of one message's keywords the other repeats (Jaccard over keyword sets); zero
/// unless at least two are shared ("good how are you" twice is small talk, not a request).
fn overlap(a: &[&str], b: &[&str]) -> f64 {
    let a: BTreeSet<&str> = a.iter().copied().filter(|w| is_keyword(w)).collect();
    let b: BTreeSet<&str> = b.iter().copied().filter(|w| is_keyword(w)).collect();
    let shared = a.intersection(&b).count();
    if shared < 2 {
        return 0.0;
    }
    shared as f64 / a.union(&b).count() as f64
}

fn verdict(label: FeedbackLabel, correction: bool, cue: impl Into<String>) -> Feedback {
    Feedback { label, quality: label.quality(), correction, cue: cue.into() }
}

/// Judge the last reply from the next message.
pub fn detect(ex: Exchange<'_>) -> Feedback {
    let lower = normalize(ex.next);
    let ws = words(&lower);
    let hit = |list: &[&'static str]| list.iter().find(|p| find_phrase(&ws, p).is_some()).copied();
    let opens = |list: &[&'static str]| list.iter().find(|p| starts_with_any(&ws, &[**p]).is_some()).copied();
    if let Some(cue) = hit(COMPLAINTS) {
        return verdict(FeedbackLabel::Complaint, false, cue);
    }
    if let Some(cue) = opens(CORRECTION_OPENERS).or_else(|| hit(CORRECTIONS)) {
        return verdict(FeedbackLabel::Correction, true, cue);
    }
    if ex.mode != Mode::Clarify
        && let Some(cue) = opens(CLARIFY_OPENERS)
    {
        return verdict(FeedbackLabel::MissedClarify, true, cue);
    }
    if ex.mode != Mode::Act {
        if let Some(cue) = hit(ACT_REPEATS) {
            return verdict(FeedbackLabel::MissedAct, false, cue);
        }
        let prev_lower = normalize(ex.user);
        let repeat = overlap(&words(&prev_lower), &ws);
        if repeat >= 0.6 && ws.len() >= 3 {
            return verdict(FeedbackLabel::MissedAct, false, format!("repeat {repeat:.2}"));
        }
    }
    // Short messages only: "more" inside a long sentence is not a request for more.
    if ws.len() <= 4 {
        let whole = ws.join(" ");
        let bare = lower.trim().trim_end_matches(['.', '!']);
        if let Some(cue) = MORE.iter().find(|p| **p == whole || **p == bare) {
            return verdict(FeedbackLabel::UnderEngagement, false, *cue);
        }
    }
    if ws.len() <= 8
        && let Some(cue) = hit(THANKS)
    {
        return verdict(FeedbackLabel::Thanks, false, cue);
    }
    let whole = ws.join(" ");
    if let Some(cue) = PRAISE.iter().find(|p| **p == whole) {
        return verdict(FeedbackLabel::Thanks, false, *cue);
    }
    verdict(FeedbackLabel::CorrectRoute, false, "")
}
