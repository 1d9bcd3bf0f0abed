//! The deterministic extraction of one exchange: gists, facts, traits and the style
//! observation, from the user's message alone (the reply says what the assistant thinks, not
//! what the user is). It is the default with the built-in model and the fallback whenever the
//! lightweight model fails, so it aims to be useful rather than complete:
//!
//! - traits and facts come from first-person statements ([`super::patterns`]); a question
//!   ("do I like tea?"), a hypothetical ("if I lived in Rome") or a negation ("my name is not
//!   important") states nothing;
//! - each sentence becomes at most one gist, typed by its cue words (decision before
//!   uncertainty before commitment before intent before preference; a plain statement is a
//!   `fact`), its confidence set by how strong the cue is;
//! - the style observation is [`super::style::observe`].

use super::patterns::{Sentence, sentences, statements};
use super::shortterm::{FactDraft, GistDraft};
use super::style::{Style, observe};
use super::traits::{Source, TraitObservation};
use crate::text::{find_phrase, is_content_word};
use serde::Serialize;

/// Everything one exchange yields, before the store rules run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Extraction {
    pub gists: Vec<GistDraft>,
    pub facts: Vec<FactDraft>,
    pub traits: Vec<TraitObservation>,
    pub style: Option<Style>,
}

/// Gist content is kept up to this many characters.
pub const MAX_GIST_CHARS: usize = 240;

/// Cue phrases per gist type with the confidence (0–10) a match gives, in precedence order.
const GIST_CUES: &[(&str, f64, &[&str])] = &[
    (
        "decision",
        8.0,
        &[
            "i decided",
            "i've decided",
            "i have decided",
            "we decided",
            "we've decided",
            "let's go with",
            "lets go with",
            "i'll go with",
            "we'll go with",
            "i'm going with",
            "we're going with",
            "i chose",
            "i've chosen",
            "i picked",
            "decided to",
        ],
    ),
    ("uncertainty", 7.0, &["not sure", "i don't know", "unsure", "can't decide", "undecided", "torn between"]),
    ("uncertainty", 6.0, &["maybe", "perhaps", "i wonder", "might", "i guess"]),
    (
        "commitment",
        8.0,
        &[
            "i will",
            "i'll",
            "remind me",
            "i promise",
            "i'm going to",
            "i am going to",
            "i have to",
            "i must",
            "don't let me forget",
            "we will",
            "we'll",
        ],
    ),
    (
        "intent",
        7.0,
        &[
            "i want to",
            "i'd like to",
            "i would like to",
            "i'm trying to",
            "i am trying to",
            "i plan to",
            "i'm planning",
            "i am planning",
            "i need to",
            "i hope to",
            "help me",
            "i'm looking for",
            "i am looking for",
        ],
    ),
    (
        "preference",
        7.0,
        &[
            "i prefer",
            "i like",
            "i love",
            "i hate",
            "i don't like",
            "i'd rather",
            "my favorite",
            "my favourite",
            "i enjoy",
            "i can't stand",
            "i dislike",
        ],
    ),
];

/// Extract from one exchange's user message.
pub fn extract(user_text: &str) -> Extraction {
    let mut out = Extraction { style: observe(user_text), ..Extraction::default() };
    for s in sentences(user_text) {
        let found = statements(&s);
        for st in &found {
            if let Some(t) = &st.trait_ {
                if !out.traits.iter().any(|o| o.key == t.key) {
                    out.traits.push(t.clone());
                }
                if t.source == Source::Explicit && !out.facts.iter().any(|f| f.key == t.key) {
                    out.facts.push(FactDraft { key: t.key.clone(), value: t.value.clone(), confidence: t.confidence });
                }
            }
            if let Some(f) = &st.fact
                && !out.facts.iter().any(|o| o.key == f.key)
            {
                out.facts.push(f.clone());
            }
        }
        if let Some(g) = gist_of(&s, !found.is_empty()) {
            out.gists.push(g);
        }
    }
    out
}

/// The gist of one sentence, if it says anything.
fn gist_of(s: &Sentence, stated: bool) -> Option<GistDraft> {
    let lower: Vec<&str> = s.tokens.iter().map(|t| t.lower.as_str()).collect();
    let content = lower.iter().filter(|w| is_content_word(w)).count();
    let cue = GIST_CUES.iter().find(|(_, _, cues)| cues.iter().any(|c| find_phrase(&lower, c).is_some()));
    let (kind, confidence) = match cue {
        Some((kind, conf, _)) => (*kind, *conf),
        None if s.question && content >= 2 => ("intent", 5.0),
        None if stated => ("fact", 7.0),
        None if content >= 3 => ("fact", 5.0),
        None if content >= 1 => ("fact", 3.0),
        None => return None,
    };
    let text = s.text.trim();
    let content = crate::text::clip::clip(text, MAX_GIST_CHARS);
    Some(GistDraft { gist_type: kind.into(), content, confidence })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn traits(text: &str) -> Vec<(String, String, String, Source)> {
        extract(text).traits.into_iter().map(|t| (t.key, t.value, t.category, t.source)).collect()
    }

    fn kv(text: &str) -> Vec<(String, String)> {
        extract(text).traits.into_iter().map(|t| (t.key, t.value)).collect()
    }

    fn pair(k: &str, v: &str) -> (String, String) {
        (k.to_string(), v.to_string())
    }

    #[test]
    fn names_and_places() {
        assert_eq!(kv("Hi! My name is Ada Lovelace."), [pair("name", "Ada Lovelace")]);
        assert_eq!(kv("you can call me Sam, please"), [pair("name", "Sam")]);
        assert_eq!(
            kv("I live in Porto, and I work as a nurse."),
            [pair("location", "Porto"), pair("occupation", "nurse")]
        );
        assert_eq!(kv("I work at Acme Corp"), [pair("employer", "Acme Corp")]);
        assert_eq!(kv("I'm from Brazil"), [pair("hometown", "Brazil")]);
        let t = traits("My name is Ada");
        assert_eq!((t[0].2.as_str(), t[0].3), ("core", Source::Explicit));
    }

    #[test]
    fn my_x_is_y() {
        let t = traits("My sister is Ana and my birthday is on March 3rd.");
        assert_eq!(t[0], ("sister".into(), "Ana".into(), "relationship".into(), Source::Explicit));
        assert!(t.contains(&("birthday".into(), "March 3rd".into(), "core".into(), Source::Explicit)), "{t:?}");
        assert_eq!(t.len(), 2, "a sister implies nothing more: {t:?}");
        assert_eq!(kv("my favourite colour is dark green"), [pair("favourite_colour", "dark green")]);
        assert_eq!(kv("My dog's name is Rex."), [pair("dog_name", "Rex"), pair("pet_dog", "has a dog")]);
        assert_eq!(traits("My dog's name is Rex.")[1].3, Source::Inferred);
        // A passing state is a topic fact, not a trait.
        let e = extract("my phone is broken again");
        assert!(e.traits.is_empty(), "{:?}", e.traits);
        assert_eq!(e.facts, [FactDraft { key: "phone".into(), value: "broken again".into(), confidence: 0.7 }]);
    }

    #[test]
    fn allergies_preferences_pets_and_more() {
        assert_eq!(
            kv("I'm allergic to peanuts and shellfish"),
            [pair("allergy_peanuts", "peanuts"), pair("allergy_shellfish", "shellfish")]
        );
        assert_eq!(traits("I'm allergic to cats")[0].2, "physical");
        let two_clauses = kv("I'm allergic to peanuts and my sister Ana lives in Porto.");
        let allergies: Vec<_> = two_clauses.iter().filter(|(k, _)| k.starts_with("allergy_")).collect();
        assert_eq!(allergies, [&pair("allergy_peanuts", "peanuts")], "the second clause is not an allergy");
        assert_eq!(
            kv("I love hiking in the mountains"),
            [pair("preference_hiking_mountains", "likes hiking in the mountains")]
        );
        assert_eq!(kv("I hate cilantro."), [pair("preference_cilantro", "dislikes cilantro")]);
        assert_eq!(kv("I don't like horror movies"), [pair("preference_horror_movies", "dislikes horror movies")]);
        assert_eq!(kv("I prefer tea over coffee"), [pair("preference_tea", "prefers tea over coffee")]);
        assert_eq!(kv("I have a dog named Biscuit"), [pair("pet_dog", "has a dog"), pair("dog_name", "Biscuit")]);
        assert_eq!(kv("I'm 34 years old"), [pair("age", "34")]);
        assert_eq!(kv("I am vegetarian"), [pair("diet", "vegetarian")]);
        assert_eq!(kv("Please keep it short."), [pair("response_length", "short")]);
        let wife = traits("My wife Carla loves jazz");
        assert!(wife.contains(&(
            "relationship_status".into(),
            "married".into(),
            "relationship".into(),
            Source::Inferred
        )));
    }

    #[test]
    fn questions_negations_and_hypotheticals_state_nothing() {
        for text in [
            "my name is not important",
            "Do I like jazz?",
            "what is my name?",
            "I like it",
            "I love you",
            "If I lived in Rome I would eat pasta daily",
            "Am I allergic to anything?",
            "I don't hate cilantro",
            "my sister is not here",
            "I used to live in Paris",
            "call me later",
        ] {
            assert!(extract(text).traits.is_empty(), "{text}: {:?}", extract(text).traits);
        }
    }

    #[test]
    fn gists_are_typed_by_cue() {
        let kinds = |text: &str| -> Vec<(String, f64)> {
            extract(text).gists.into_iter().map(|g| (g.gist_type, g.confidence)).collect()
        };
        assert_eq!(kinds("I decided to take the job in Berlin."), [("decision".into(), 8.0)]);
        assert_eq!(kinds("Let's go with the blue one"), [("decision".into(), 8.0)]);
        assert_eq!(kinds("Remind me to call the bank"), [("commitment".into(), 8.0)]);
        assert_eq!(kinds("I will finish the report tonight"), [("commitment".into(), 8.0)]);
        assert_eq!(
            kinds("I'm not sure I will make it"),
            [("uncertainty".into(), 7.0)],
            "doubt outranks the commitment"
        );
        assert_eq!(kinds("maybe we try the other road"), [("uncertainty".into(), 6.0)]);
        assert_eq!(kinds("I want to learn Rust this year"), [("intent".into(), 7.0)]);
        assert_eq!(kinds("I prefer window seats"), [("preference".into(), 7.0)]);
        assert_eq!(kinds("The meeting moved to Thursday afternoon"), [("fact".into(), 5.0)]);
        assert_eq!(kinds("How do transformers handle long context?"), [("intent".into(), 5.0)]);
        assert_eq!(kinds("ok"), Vec::<(String, f64)>::new());
        let two = extract("I live in Porto. I decided to buy a bike!");
        assert_eq!(two.gists.len(), 2);
        assert_eq!(
            two.gists[0],
            GistDraft { gist_type: "fact".into(), content: "I live in Porto.".into(), confidence: 7.0 }
        );
        assert!(extract(&"word ".repeat(200)).gists[0].content.chars().count() == MAX_GIST_CHARS);
    }

    #[test]
    fn explicit_traits_are_also_topic_facts_and_style_is_observed() {
        let e = extract("My name is Ada. The deadline is Friday.");
        let keys: Vec<&str> = e.facts.iter().map(|f| f.key.as_str()).collect();
        assert_eq!(keys, ["name", "deadline"]);
        assert!(e.facts.iter().all(|f| f.confidence >= 0.5));
        assert!(e.style.is_some());
        assert!(extract("").style.is_none());
    }
}
