//! The user's communication style (docs/cognition.md §9.6): nine dimensions on 1–10, observed per
//! message and merged into one profile by an exponential moving average.
//!
//! The model path gets the nine numbers from the lightweight model; the deterministic path
//! ([`observe`]) reads them off measurable features of the message, so the adaptive layer has a
//! profile even with the built-in 135M model. Each dimension starts at the neutral 5.5 and moves
//! by counted cues; a message without cues for a dimension observes it as neutral, which the
//! EMA then weighs like any other observation (a single message says little; many say more).
//!
//! The profile lives in `kv_state` (namespace [`KV_NAMESPACE`], key [`KV_KEY`]) as
//! `{"observations": n, "dimensions": {name: value}}`: one row, read whole by the adaptive
//! layer, so no table of its own.

use crate::store::{StoreError, TurnRepo};
use crate::text::{has_any, normalize, words};
use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// The nine dimensions, in the order of [`Style::values`].
pub const DIMENSIONS: [&str; 9] = [
    "verbosity",
    "directness",
    "formality",
    "abstraction_level",
    "emotional_valence",
    "certainty_level",
    "challenge_appetite",
    "depth_preference",
    "pacing",
];
/// The first this many observations merge at 0.5/0.5 (cold start), later ones at 0.3/0.7.
pub const COLD_START_OBSERVATIONS: u32 = 5;
pub const KV_NAMESPACE: &str = "adaptive";
pub const KV_KEY: &str = "communication_style";
/// Where a dimension sits before any cue moves it: the middle of 1–10.
const NEUTRAL: f64 = 5.5;

/// One observation or the merged profile's values, each on 1–10, in [`DIMENSIONS`] order.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Style {
    pub values: [f64; 9],
}

impl Style {
    pub fn neutral() -> Style {
        Style { values: [NEUTRAL; 9] }
    }

    /// From `{name: number}` (the model's `style` object); `None` unless all nine are numbers.
    /// Values are clamped to 1–10.
    pub fn from_json(v: &Value) -> Option<Style> {
        let mut values = [NEUTRAL; 9];
        for (slot, name) in values.iter_mut().zip(DIMENSIONS) {
            *slot = v.get(name)?.as_f64().filter(|x| x.is_finite())?.clamp(1.0, 10.0);
        }
        Some(Style { values })
    }

    pub fn to_json(&self) -> Value {
        let map: Map<String, Value> = DIMENSIONS
            .iter()
            .zip(self.values)
            .map(|(k, v)| (k.to_string(), json!((v * 100.0).round() / 100.0)))
            .collect();
        Value::Object(map)
    }

    pub fn get(&self, name: &str) -> Option<f64> {
        DIMENSIONS.iter().position(|d| *d == name).map(|i| self.values[i])
    }
}

/// The merged profile and how many observations went into it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StyleProfile {
    pub style: Style,
    pub observations: u32,
}

/// The EMA weight of the next observation, given how many the profile already holds: the first
/// [`COLD_START_OBSERVATIONS`] move it fast so a new user's style shows early.
pub fn ema_weight(observations_before: u32) -> f64 {
    if observations_before < COLD_START_OBSERVATIONS { 0.5 } else { 0.3 }
}

/// Merge one observation into the profile. The first observation is taken as is (there is no
/// old value to average with); the next ones follow [`ema_weight`].
pub fn merge(profile: Option<StyleProfile>, observed: &Style) -> StyleProfile {
    let Some(p) = profile.filter(|p| p.observations > 0) else {
        return StyleProfile { style: *observed, observations: 1 };
    };
    let w = ema_weight(p.observations);
    let mut values = p.style.values;
    for (old, new) in values.iter_mut().zip(observed.values) {
        *old = (w * new + (1.0 - w) * *old).clamp(1.0, 10.0);
    }
    StyleProfile { style: Style { values }, observations: p.observations.saturating_add(1) }
}

/// The stored profile, if any (a malformed row reads as none: the next observation restarts it).
pub fn load(c: &Connection) -> Result<Option<StyleProfile>, StoreError> {
    let Some(v) = TurnRepo(c).kv_get(KV_NAMESPACE, KV_KEY)? else { return Ok(None) };
    let observations = v["observations"].as_u64().unwrap_or(0).min(u64::from(u32::MAX)) as u32;
    Ok(Style::from_json(&v["dimensions"]).map(|style| StyleProfile { style, observations }))
}

/// Merge `observed` into the stored profile and write it back (in the caller's transaction).
pub fn observe_and_save(c: &Connection, observed: &Style) -> Result<StyleProfile, StoreError> {
    let merged = merge(load(c)?, observed);
    let value = json!({"observations": merged.observations, "dimensions": merged.style.to_json()});
    TurnRepo(c).kv_set(KV_NAMESPACE, KV_KEY, &value)?;
    Ok(merged)
}

const HEDGES: &str = "maybe|perhaps|i think|i guess|not sure|i'm not sure|probably|might|kind of|sort of|possibly|i suppose|i don't know|unsure|seems|somewhat";
const BOOSTERS: &str = "definitely|certainly|clearly|absolutely|obviously|always|never|sure|must|exactly";
const INDIRECT: &str =
    "i was wondering|would it be possible|if you don't mind|could you maybe|if possible|would you mind|i wonder";
const IMPERATIVE_HEADS: &str =
    "give|tell|show|make|fix|write|list|explain|do|stop|use|add|remove|send|find|set|remind|summarize|summarise|help";
const FORMAL: &str =
    "please|would you|could you|kindly|thank you|regards|sincerely|furthermore|however|therefore|appreciate";
const CASUAL: &str = "lol|gonna|wanna|gotta|hey|yeah|yep|nope|btw|omg|haha|cool|dude|thx|pls|ok|kinda|sorta|ya|u";
const ABSTRACT: &str = "concept|theory|idea|principle|meaning|general|philosophy|abstract|pattern|framework|implication|implications|nature|essence|why|underlying";
const CONCRETE: &str = "step|steps|example|specific|exactly|command|code|how to|list|number|price";
const EMOTION: &str = "feel|feeling|love|happy|sad|angry|upset|worried|anxious|excited|scared|afraid|frustrated|stressed|lonely|hurt|glad|proud|grateful|hate|miss|overwhelmed|hope";
const LOGICAL: &str = "because|therefore|data|evidence|logically|analysis|reason|cost|compare|efficient|metric|fact";
const SEEKS_VALIDATION: &str = "am i right|does that make sense|right?|agree|is that ok|is that okay|good idea";
const SEEKS_CHALLENGE: &str = "challenge|push back|devil's advocate|counterpoint|counterargument|what's wrong with|criticize|critique|flaws|disagree|convince me|be honest|poke holes";
const DEEP: &str =
    "why|explore|deep dive|in depth|understand|details|detail|thoroughly|how does|underlying|history|tradeoffs";
const SHALLOW: &str = "quick|quickly|just|tldr|short|briefly|simply|only need|asap";

/// Count how many of `cues` (`|`-separated) occur: whole words, or raw text for a cue ending in `?`.
fn count(ws: &[&str], lower: &str, cues: &str) -> f64 {
    cues.split('|').filter(|c| if c.ends_with('?') { lower.contains(c) } else { has_any(ws, &[c]) }).count() as f64
}

/// Read the nine dimensions off one user message. `None` for a message with no words.
pub fn observe(text: &str) -> Option<Style> {
    let lower = normalize(text);
    let ws = words(&lower);
    if ws.is_empty() {
        return None;
    }
    let n = ws.len() as f64;
    let question = text.contains('?');
    let sentences =
        text.split(['.', '!', '?', '\n']).filter(|s| s.split_whitespace().count() > 1).count().max(1) as f64;
    let paragraphs = text.split("\n\n").filter(|p| !p.trim().is_empty()).count() as f64;
    let list_lines = text.lines().filter(|l| l.trim_start().starts_with(['-', '*', '•'])).count() as f64;
    let contractions = ws.iter().filter(|w| w.contains('\'')).count() as f64;

    // Short ↔ long: log of the word count, 1 word → 1, 120+ words → 10.
    let verbosity = 1.0 + 9.0 * (n.ln() / 120f64.ln()).min(1.0);
    let hedges = count(&ws, &lower, HEDGES);
    let imperative = ws.first().is_some_and(|w| IMPERATIVE_HEADS.split('|').any(|h| h == *w));
    let directness = NEUTRAL + 2.0 * f64::from(u8::from(imperative)) - 1.5 * count(&ws, &lower, INDIRECT) - hedges
        + if question || hedges > 0.0 { 0.0 } else { 1.0 };
    let capitalised = text.trim_start().chars().next().is_some_and(char::is_uppercase);
    let all_lower = !text.chars().any(char::is_uppercase);
    let formality = NEUTRAL + 1.5 * count(&ws, &lower, FORMAL) - 1.5 * count(&ws, &lower, CASUAL)
        + if capitalised { 0.5 } else { 0.0 }
        - if all_lower && n > 2.0 { 1.0 } else { 0.0 }
        - (contractions / n * 6.0).min(1.5)
        - if text.contains("!!") { 1.0 } else { 0.0 };
    let digits = f64::from(u8::from(text.chars().any(|c| c.is_ascii_digit())));
    let abstraction = NEUTRAL + 1.5 * count(&ws, &lower, ABSTRACT) - 1.5 * count(&ws, &lower, CONCRETE) - digits;
    let exclaim = f64::from(u8::from(text.contains('!')));
    let emotional = NEUTRAL + 1.5 * count(&ws, &lower, EMOTION) + exclaim - 1.5 * count(&ws, &lower, LOGICAL);
    let certainty =
        NEUTRAL + 0.5 - 1.5 * hedges + 1.5 * count(&ws, &lower, BOOSTERS) - if question { 1.5 } else { 0.0 };
    let challenge = NEUTRAL + 2.0 * count(&ws, &lower, SEEKS_CHALLENGE) - 2.0 * count(&ws, &lower, SEEKS_VALIDATION);
    let depth = NEUTRAL + 1.5 * count(&ws, &lower, DEEP) - 1.5 * count(&ws, &lower, SHALLOW);
    // Rapid short messages ↔ slow deliberate ones: sentences, paragraphs and list structure.
    let pacing =
        1.0 + 1.5 * sentences + 1.5 * (paragraphs - 1.0).max(0.0) + 0.5 * list_lines - if n < 4.0 { 0.5 } else { 0.0 };
    let values = [verbosity, directness, formality, abstraction, emotional, certainty, challenge, depth, pacing]
        .map(|v| (v.clamp(1.0, 10.0) * 100.0).round() / 100.0);
    Some(Style { values })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(v: f64) -> Style {
        Style { values: [v; 9] }
    }

    #[test]
    fn ema_schedule_is_half_for_five_then_three_tenths() {
        let mut p = merge(None, &at(8.0));
        assert_eq!((p.style.values[0], p.observations), (8.0, 1), "the first observation is taken as is");
        let mut expected = 8.0;
        for k in 2..=5 {
            p = merge(Some(p), &at(2.0));
            expected = 0.5 * 2.0 + 0.5 * expected;
            assert!((p.style.values[0] - expected).abs() < 1e-12, "observation {k}");
        }
        assert_eq!(p.observations, 5);
        p = merge(Some(p), &at(10.0));
        expected = 0.3 * 10.0 + 0.7 * expected;
        assert!((p.style.values[3] - expected).abs() < 1e-12, "the sixth is stable-state EMA");
        assert_eq!(p.observations, 6);
        assert_eq!(ema_weight(4), 0.5);
        assert_eq!(ema_weight(5), 0.3);
    }

    #[test]
    fn json_round_trip_needs_all_nine() {
        let s = Style { values: [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0] };
        assert_eq!(Style::from_json(&s.to_json()), Some(s));
        let mut partial = s.to_json();
        partial.as_object_mut().unwrap().remove("pacing");
        assert_eq!(Style::from_json(&partial), None);
        let wild = json!({"verbosity": 40, "directness": -3, "formality": 5, "abstraction_level": 5,
            "emotional_valence": 5, "certainty_level": 5, "challenge_appetite": 5, "depth_preference": 5, "pacing": 5});
        let w = Style::from_json(&wild).unwrap();
        assert_eq!((w.get("verbosity"), w.get("directness")), (Some(10.0), Some(1.0)), "clamped");
    }

    #[test]
    fn observed_dimensions_follow_their_cues() {
        let short = observe("ok").unwrap();
        let long = observe(&"I have been thinking about the way we plan our weeks and ".repeat(8)).unwrap();
        assert!(short.get("verbosity") < Some(2.0) && long.get("verbosity") > Some(8.0), "{short:?} {long:?}");
        let hedgy = observe("maybe we could perhaps try it, I'm not sure?").unwrap();
        let sure = observe("This is definitely the right plan.").unwrap();
        assert!(hedgy.get("certainty_level").unwrap() < 3.0, "{hedgy:?}");
        assert!(sure.get("certainty_level").unwrap() > 6.5, "{sure:?}");
        let casual = observe("hey lol gonna grab food, u want some??").unwrap();
        let formal = observe("Could you please send me the quarterly report? Thank you.").unwrap();
        assert!(casual.get("formality").unwrap() < 3.0 && formal.get("formality").unwrap() > 8.0);
        let feel = observe("I feel so sad and lonely today!").unwrap();
        let logic = observe("Compare the cost data because the analysis needs evidence.").unwrap();
        assert!(feel.get("emotional_valence").unwrap() > 8.0 && logic.get("emotional_valence").unwrap() < 2.0);
        let challenge = observe("Be honest and push back: what's wrong with my plan?").unwrap();
        let validate = observe("Good idea, right? Does that make sense?").unwrap();
        assert!(challenge.get("challenge_appetite").unwrap() > 8.0);
        assert!(validate.get("challenge_appetite").unwrap() < 2.0);
        let deep = observe("Why does it work? I want to understand the underlying details.").unwrap();
        let quick = observe("just a quick answer, briefly").unwrap();
        assert!(deep.get("depth_preference").unwrap() > 8.0 && quick.get("depth_preference").unwrap() < 2.0);
        let direct = observe("Give me the list.").unwrap();
        let indirect = observe("I was wondering if you don't mind maybe looking at this?").unwrap();
        assert!(direct.get("directness").unwrap() > 7.5 && indirect.get("directness").unwrap() < 2.0);
        let abstract_ = observe("What is the underlying principle and the general idea?").unwrap();
        let concrete = observe("Give me an example command with exactly 3 steps").unwrap();
        assert!(abstract_.get("abstraction_level").unwrap() > 8.0);
        assert!(concrete.get("abstraction_level").unwrap() < 2.0);
        let paced = observe("First point here.\n\nSecond point, with care.\n- one item\n- two items").unwrap();
        assert!(short.get("pacing").unwrap() <= 2.0 && paced.get("pacing").unwrap() > 6.0, "{paced:?}");
        assert!(observe("  ... ").is_none());
    }

    #[test]
    fn profile_persists_in_kv_state() {
        let c = crate::store::open_in_memory().unwrap();
        assert_eq!(load(&c).unwrap(), None);
        observe_and_save(&c, &at(9.0)).unwrap();
        let p = observe_and_save(&c, &at(3.0)).unwrap();
        assert_eq!(p.observations, 2);
        assert_eq!(load(&c).unwrap(), Some(p));
        assert!((p.style.values[8] - 6.0).abs() < 1e-9);
    }
}
