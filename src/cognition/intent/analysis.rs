//! One reading of a message that every stage of a turn shares. The social filter, the text
//! signals, the intent classifier, triage, the mode decision and the ACT skill selection all
//! scan the same words; reading them once keeps the stages from disagreeing about what the
//! message said and keeps the per-turn scanning cost to one pass.

use super::detect_skills_in;
use crate::cognition::signals::{TextSignals, extract_from};
use crate::cognition::social::{SocialMatch, social_match_in};
use crate::text::words;

/// A message read once: its normalized text and words, the text signals, the skills it names
/// by keyword and its social-filter match.
#[derive(Debug, Clone, PartialEq)]
pub struct Analysis<'a> {
    /// The message as the user wrote it.
    pub text: &'a str,
    /// [`crate::text::normalize`] of `text`.
    pub lower: &'a str,
    /// [`crate::text::words`] of `lower`.
    pub words: Vec<&'a str>,
    pub signals: TextSignals,
    /// The innate skills the message names by keyword ([`super::detect_skills`]).
    pub skills: Vec<&'static str>,
    /// The message holds an http(s) or www URL ([`super::contains_url`]).
    pub url: bool,
    /// The social filter's verdict; `None`: not social, triage decides.
    pub social: Option<SocialMatch>,
}

impl<'a> Analysis<'a> {
    /// Read `text`, whose normalized form the caller keeps alive as `lower`
    /// (`lower` must be [`crate::text::normalize`] of `text`).
    pub fn new(text: &'a str, lower: &'a str) -> Analysis<'a> {
        let ws = words(lower);
        let signals = extract_from(text, lower, &ws);
        Analysis::with_signals(text, lower, ws, signals)
    }

    /// The same with signals the caller already extracted from `text`.
    pub(super) fn with_signals(
        text: &'a str,
        lower: &'a str,
        words: Vec<&'a str>,
        signals: TextSignals,
    ) -> Analysis<'a> {
        let url = super::contains_url(text);
        let skills = detect_skills_in(&words, url);
        let social = social_match_in(text, &words);
        Analysis { text, lower, words, signals, skills, url, social }
    }

    /// Whether the message names `skill` by keyword.
    pub fn names_skill(&self, skill: &str) -> bool {
        self.skills.contains(&skill)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cognition::signals::extract;
    use crate::cognition::social::social_match;
    use crate::text::normalize;

    #[test]
    fn one_reading_agrees_with_each_stage_run_alone() {
        for text in ["add eggs to my shopping list", "hey, good morning!", "read https://x.org", "   ", "fix it?"] {
            let lower = normalize(text);
            let a = Analysis::new(text, &lower);
            assert_eq!(a.signals, extract(text), "{text}");
            assert_eq!(a.skills, super::super::detect_skills(text), "{text}");
            assert_eq!(a.social, social_match(text), "{text}");
            assert_eq!(a.words, words(&lower), "{text}");
        }
    }
}
