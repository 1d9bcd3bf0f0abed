//! The one place a turn's mode is settled. The scorer ([`super::route`]) and the tie-breaker
//! only propose; [`decide`] weighs their proposal against the social filter, the identity
//! hook, triage and, once they happened, memory's answer and the ACT loop's results, and says
//! why in typed [`Reason`]s that the report and the audit row print.

use super::{Mode, RoutingDecision, TieChoice};
use crate::cognition::intent::{TriageMode, TriageResult};
use crate::cognition::social::SocialMatch;
use std::fmt;

/// Everything the mode depends on. `routed` is the scorer's decision with any tie-break
/// already resolved; `sequel` is empty until the reply stage (what happened after delivery).
#[derive(Debug, Clone, Copy)]
pub struct Evidence<'a> {
    pub routed: &'a RoutingDecision,
    pub social: Option<SocialMatch>,
    pub triage: &'a TriageResult,
    /// The innate skills the message names by keyword.
    pub named_skills: &'a [&'static str],
    /// The identity hook stored a name the message declared.
    pub identity_stored: bool,
    pub sequel: Sequel,
}

/// What happened between delivering the mode and writing the reply.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Sequel {
    /// Memory holds the answer: the reply is written as RESPOND from it.
    pub memory_answered: bool,
    /// The ACT loop ran.
    pub act: Option<ActSequel>,
}

/// The ACT loop's bearing on the reply: a mode its results force (CLARIFY to confirm,
/// IGNORE when its cards are the reply), else the router's post-ACT re-route.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ActSequel {
    pub forced: Option<Mode>,
    /// [`super::reroute_after_act`]'s mode.
    pub rerouted: Mode,
}

/// Why a mode was chosen. `Display` is the sentence the report's `router.reason` and the
/// audit row's `reasoning` carry.
#[derive(Debug, Clone, PartialEq)]
pub enum Reason {
    /// The social filter matched (`rule`: "greeting", "cancel", …) before the scorer mattered.
    SocialExit {
        rule: &'static str,
    },
    /// The identity hook already stored the declared name; an ACT that would only memorize it
    /// has nothing left to do.
    IdentityStored {
        router: Mode,
    },
    /// Triage asked for ACT with skills the message names by keyword.
    TriageAct {
        skills: Vec<String>,
        router: Mode,
    },
    /// The tie-breaker picked `chose` out of the two candidates.
    TieBreak {
        chose: Mode,
        between: (Mode, Mode),
    },
    /// A tie-break was due but gave no answer: the higher score stands.
    TieKept {
        between: (Mode, Mode),
    },
    HighestScore {
        mode: Mode,
    },
    /// Reply stage: memory answered.
    MemoryAnswered,
    /// Reply stage: the ACT loop's results forced the mode.
    ActResults {
        mode: Mode,
    },
    /// Reply stage: the router's post-ACT re-route.
    PostActReroute {
        mode: Mode,
    },
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::SocialExit { rule } => write!(f, "social exit ({rule})"),
            Reason::IdentityStored { router } => {
                write!(f, "identity hook stored the name; nothing left to act on (router had {router})")
            }
            Reason::TriageAct { skills, router } => {
                write!(f, "triage chose ACT for {} (named in the message); router had {router}", skills.join(", "))
            }
            Reason::TieBreak { chose, between: (a, b) } => write!(f, "tie-breaker chose {chose} between {a} and {b}"),
            Reason::TieKept { between: (a, b) } => write!(f, "{a} and {b} within the margin; the higher score kept"),
            Reason::HighestScore { mode } => write!(f, "highest score ({mode})"),
            Reason::MemoryAnswered => f.write_str("memory answered: RESPOND"),
            Reason::ActResults { mode } => write!(f, "the ACT results call for {mode}"),
            Reason::PostActReroute { mode } => write!(f, "post-ACT re-route: {mode}"),
        }
    }
}

/// The settled modes of one turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The delivered mode: what the turn is routed as (and the ACT loop runs on).
    pub mode: Mode,
    /// The social filter decided before the scorer.
    pub pre_routed: bool,
    pub why: Reason,
    /// The mode the reply is written in.
    pub reply_mode: Mode,
    /// Why `reply_mode` came from something after delivery; `None`: it is the delivered mode.
    pub reply_why: Option<Reason>,
}

impl Decision {
    /// Every reason, delivery first.
    pub fn reasons(&self) -> impl Iterator<Item = &Reason> {
        std::iter::once(&self.why).chain(self.reply_why.as_ref())
    }
}

/// Settle the mode. Delivery: a social exit, then the identity hook, then a confirmed
/// triage ACT, then the router (its tie-break included). Reply: memory's answer, then what
/// the ACT loop's results force, then the post-ACT re-route; otherwise the delivered mode.
pub fn decide(e: &Evidence) -> Decision {
    let (mode, pre_routed, why) = deliver(e);
    let (reply_mode, reply_why) = match e.sequel {
        Sequel { memory_answered: true, .. } => (Mode::Respond, Some(Reason::MemoryAnswered)),
        Sequel { act: Some(ActSequel { forced: Some(m), .. }), .. } => (m, Some(Reason::ActResults { mode: m })),
        Sequel { act: Some(ActSequel { rerouted, .. }), .. } => {
            (rerouted, Some(Reason::PostActReroute { mode: rerouted }))
        }
        Sequel { act: None, .. } => (mode, None),
    };
    Decision { mode, pre_routed, why, reply_mode, reply_why }
}

fn deliver(e: &Evidence) -> (Mode, bool, Reason) {
    let d = e.routed;
    if let Some(s) = e.social {
        return (s.exit.mode(), true, Reason::SocialExit { rule: s.reason });
    }
    if e.identity_stored && (d.mode == Mode::Act || e.triage.mode == TriageMode::Act) && e.named_skills == ["memorize"]
    {
        return (Mode::Acknowledge, false, Reason::IdentityStored { router: d.mode });
    }
    if d.mode != Mode::Act
        && let Some(skills) = triage_act_confirmed(e.triage, e.named_skills)
    {
        return (Mode::Act, false, Reason::TriageAct { skills, router: d.mode });
    }
    let why = match (d.tiebreak, d.tiebreak_choice) {
        (Some((a, b)), Some(c)) => Reason::TieBreak { chose: if c == TieChoice::A { a } else { b }, between: (a, b) },
        (Some(between), None) => Reason::TieKept { between },
        (None, _) => Reason::HighestScore { mode: d.mode },
    };
    (d.mode, false, why)
}

/// Whether triage's ACT stands: the model (or the keyword fallback) asked for a contextual
/// skill that the message itself names by keyword (`named`), or kept an MCP tool the message
/// names. A small model's unsupported ACT
/// may not override the router (the sanity check's "heuristics can override" rule).
pub fn triage_act_confirmed(triage: &TriageResult, named: &[&str]) -> Option<Vec<String>> {
    if triage.mode != TriageMode::Act {
        return None;
    }
    // The sanity check keeps an MCP tool only when the message names it, so one left in
    // `tools` is the message's own request, as a keyword-named skill is.
    let tools = triage.tools.iter().filter(|t| t.starts_with("mcp."));
    let agreed: Vec<String> =
        triage.skills.iter().filter(|s| named.contains(&s.as_str())).chain(tools).cloned().collect();
    (!agreed.is_empty()).then_some(agreed)
}

#[cfg(test)]
#[path = "decide_tests.rs"]
mod tests;
