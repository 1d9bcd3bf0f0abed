//! Short fixed replies for the turns a template answers better than a small model:
//! acknowledgements that say back what was just learned ("Nice to meet you, Ada — noted that
//! you're allergic to peanuts."), greetings, thanks, goodbyes, and a few questions about the
//! assistant itself. Each has several wordings, picked by the message text so a conversation
//! does not repeat itself while a replay reproduces it.

use super::pick;
use crate::memory::traits::{Source, TraitObservation};
use crate::text::{find_phrase, has_any, normalize, words};

/// What the user said of themselves in this message, in the second person ("you're allergic
/// to peanuts"), in the order stated. Inferred traits ("my wife" → married) are left out: a
/// reply should not announce a guess.
pub fn learned_phrases(traits: &[TraitObservation]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    // Lists said in one breath ("peanuts and shellfish", "hiking and jazz") are said back as one.
    let grouped = |prefix: &str, verb: Option<&str>| -> Vec<&str> {
        traits
            .iter()
            .filter(|t| t.key.starts_with(prefix))
            .filter_map(|t| match verb {
                Some(v) => t.value.strip_prefix(v).map(str::trim),
                None => Some(t.value.as_str()),
            })
            .collect()
    };
    let groups = [
        ("allergy_", None, "you're allergic to"),
        ("preference_", Some("likes "), "you like"),
        ("preference_", Some("dislikes "), "you don't like"),
    ];
    let mut said = [false; 3];
    for t in traits.iter().filter(|t| t.source == Source::Explicit && t.key != "name") {
        let group = groups
            .iter()
            .position(|(prefix, verb, _)| t.key.starts_with(prefix) && verb.is_none_or(|v| t.value.starts_with(v)));
        let phrase = match group {
            Some(g) if said[g] => continue,
            Some(g) => {
                said[g] = true;
                let (prefix, verb, lead) = groups[g];
                Some(format!("{lead} {}", join_and(&grouped(prefix, verb))))
            }
            None => second_person(t),
        };
        if let Some(p) = phrase.filter(|p| !out.contains(p)) {
            out.push(p);
        }
    }
    out
}

/// One trait, said back to its owner.
fn second_person(t: &TraitObservation) -> Option<String> {
    said_back(&t.key, &t.value)
}

/// What the message taught: the extractor's traits, then the personal slots the uncertainty
/// rules read in it ("my gym is Fitness First", "I go to Iron Works now") that the extractor
/// does not know, so a slot statement is acknowledged on the built-in model too.
pub fn taught(text: &str) -> Vec<String> {
    let extracted = crate::memory::extract::extract(text).traits;
    let mut out = learned_phrases(&extracted);
    for claim in crate::memory::uncertainty::rules::claims(text) {
        if claim.past || extracted.iter().any(|t| t.key == claim.slot) {
            continue;
        }
        if let Some(p) = said_back(&claim.slot, &claim.value).filter(|p| !out.contains(p)) {
            out.push(p);
        }
    }
    out
}

/// The acknowledgement of values the user said have changed: the new value as current, the
/// old one only as past ("Noted — Iron Works now, not Fitness First any more.").
pub fn noted_changes(changes: &[crate::memory::uncertainty::ingest::Change]) -> String {
    let parts: Vec<String> =
        changes.iter().map(|c| format!("{} now, not {} any more", c.new.trim(), c.old.trim())).collect();
    match parts.split_last() {
        None => "Noted.".to_string(),
        Some((last, [])) => format!("Noted — {last}."),
        Some((last, rest)) => format!("Noted — {}, and {last}.", rest.join(", ")),
    }
}

/// A `key` with its value `v`, said back to its owner.
fn said_back(key: &str, v: &str) -> Option<String> {
    let v = v.trim();
    if v.is_empty() {
        return None;
    }
    let phrase = match key {
        "location" => format!("you live in {v}"),
        "hometown" => format!("you're from {v}"),
        "occupation" => format!("you work as {}", with_article(v)),
        "employer" => format!("you work at {v}"),
        "age" => format!("you're {v}"),
        "diet" => format!("you're {v}"),
        "reading" => format!("you're reading {v}"),
        "learning" => format!("you're learning {v}"),
        "response_length" => "you'd like short answers".to_string(),
        "format" => format!("you'd like {v}"),
        "emoji" => "you'd rather not see emojis".to_string(),
        _ if key.starts_with("preference_") => {
            let (verb, rest) = v.split_once(' ').unwrap_or((v, ""));
            match verb {
                "likes" => format!("you like {rest}"),
                "dislikes" => format!("you don't like {rest}"),
                "prefers" => format!("you prefer {rest}"),
                _ => format!("you {v}"),
            }
        }
        _ if key.starts_with("pet_") => format!("you {}", v.replacen("has", "have", 1)),
        _ => match key.strip_suffix("_name") {
            Some(owner) if !owner.is_empty() => format!("your {}'s name is {v}", owner.replace('_', " ")),
            _ => format!("your {} is {v}", key.replace('_', " ")),
        },
    };
    Some(phrase)
}

/// "nurse" → "a nurse", "engineer" → "an engineer"; a value that already has a determiner,
/// or a plural, is left alone.
pub fn with_article(v: &str) -> String {
    let first = v.split_whitespace().next().unwrap_or_default().to_lowercase();
    if matches!(first.as_str(), "a" | "an" | "the" | "my" | "our") || first.ends_with('s') || first.is_empty() {
        return v.to_string();
    }
    let article = if first.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" };
    format!("{article} {v}")
}

/// "a", "a and b", "a, b and c".
pub fn join_and(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The kind of social turn being acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Occasion {
    Greeting,
    Thanks,
    Goodbye,
    /// "ok", "got it", a statement that needs no answer.
    Plain,
}

impl Occasion {
    /// From the social filter's reason and the words themselves (the filter files "bye" and
    /// "good night" under greetings).
    pub fn of(text: &str, social_reason: Option<&str>) -> Occasion {
        let lower = normalize(text);
        let ws = words(&lower);
        if is_farewell(text) {
            return Occasion::Goodbye;
        }
        match social_reason {
            Some("greeting") => Occasion::Greeting,
            Some("thanks") => Occasion::Thanks,
            _ if has_any(&ws, &["thanks", "thank you", "thx", "cheers"]) => Occasion::Thanks,
            _ if ws.first().is_some_and(|w| matches!(*w, "hi" | "hello" | "hey" | "hiya" | "howdy")) => {
                Occasion::Greeting
            }
            _ => Occasion::Plain,
        }
    }
}

/// The acknowledgement of a message: greet, thank or note, then say back what was learned.
pub fn acknowledge(text: &str, occasion: Occasion, name: Option<&str>, learned: &[String]) -> String {
    let lower = normalize(text);
    let ws = words(&lower);
    let part_of_day = ["morning", "afternoon", "evening"].into_iter().find(|p| find_phrase(&ws, p).is_some());
    let noted = (!learned.is_empty()).then(|| join_and(&learned.iter().map(String::as_str).collect::<Vec<_>>()));
    let choose = |options: &[&str], salt: u64| options[pick(text, salt, options.len())].to_string();

    match (name, noted) {
        (Some(n), Some(noted)) => {
            let lead =
                choose(&["Nice to meet you, {n} — noted that", "Hi {n}, good to meet you. I'll remember that"], 1);
            format!("{} {noted}.", lead.replace("{n}", n))
        }
        (Some(n), None) => {
            choose(&["Nice to meet you, {n}! What can I do for you?", "Hi {n}, good to meet you. How can I help?"], 2)
                .replace("{n}", n)
        }
        (None, Some(noted)) => {
            let lead = match occasion {
                Occasion::Greeting => "Hi! Noted that",
                Occasion::Thanks => "You're welcome — and noted that",
                _ => &choose(&["Got it:", "Noted:", "Thanks, I'll remember that", "Good to know:"], 3),
            };
            format!("{lead} {noted}.")
        }
        (None, None) => match occasion {
            Occasion::Greeting => match part_of_day {
                Some(p) => {
                    choose(&["Good {p}! What can I do for you?", "Good {p}! What's on your mind?"], 4).replace("{p}", p)
                }
                None => {
                    choose(&["Hi! What can I do for you?", "Hello! How can I help?", "Hey! What's on your mind?"], 5)
                }
            },
            Occasion::Thanks => choose(&["You're welcome!", "Happy to help.", "Anytime!", "Glad it helped."], 6),
            Occasion::Goodbye => choose(&["Bye for now!", "Talk soon!", "Take care — talk later."], 7),
            Occasion::Plain => choose(&["Got it.", "Okay, noted.", "Understood.", "All right."], 8),
        },
    }
}

/// Words that make a message more than a statement about oneself: a request or a question.
const ASKING: &[&str] = &[
    "help",
    "can",
    "could",
    "would",
    "please",
    "how",
    "what",
    "why",
    "when",
    "where",
    "which",
    "who",
    "should",
    "recommend",
    "suggest",
    "tell",
    "explain",
    "need",
    "want",
    "but",
    "though",
    "any",
    "ideas",
];

/// Whether `text` only tells something about its writer ("I live in Porto", "I'm vegetarian")
/// — something was learned, and nothing is asked.
pub fn is_self_statement(text: &str, learned: &[String]) -> bool {
    let lower = normalize(text);
    let ws = words(&lower);
    !learned.is_empty() && !text.contains('?') && ws.len() <= 16 && !ws.iter().any(|w| ASKING.contains(w))
}

/// Words a goodbye is made of ("ok bye!", "see you later", "good night").
const FAREWELL: &[&str] = &[
    "bye",
    "goodbye",
    "byebye",
    "night",
    "goodnight",
    "see",
    "you",
    "ya",
    "later",
    "talk",
    "soon",
    "tomorrow",
    "ok",
    "okay",
    "good",
    "for",
    "now",
    "cya",
    "ttyl",
    "take",
    "care",
    "then",
    "thanks",
    "and",
];

/// Whether `text` is only a goodbye.
pub fn is_farewell(text: &str) -> bool {
    let lower = normalize(text);
    let ws = words(&lower);
    !ws.is_empty()
        && ws.len() <= 6
        && has_any(
            &ws,
            &[
                "bye",
                "goodbye",
                "good night",
                "goodnight",
                "night night",
                "see you",
                "see ya",
                "cya",
                "ttyl",
                "talk soon",
            ],
        )
        && ws.iter().all(|w| FAREWELL.contains(w))
}

/// A fixed answer to a question about the assistant itself ("how are you?", "who are you?",
/// "what can you do?"), which a small model answers with an invented persona.
pub fn about_me(text: &str) -> Option<String> {
    let lower = normalize(text);
    let ws = words(&lower);
    if ws.len() > 8 {
        return None;
    }
    let is = |phrases: &[&str]| phrases.iter().any(|p| find_phrase(&ws, p) == Some(0) || lower.trim() == *p);
    let choose = |options: &[&str], salt: u64| options[pick(text, salt, options.len())].to_string();
    if is(&["how are you", "how are you doing", "how's it going", "how is it going", "how are things", "how you doing"])
    {
        return Some(choose(
            &[
                "I'm doing well, thanks for asking! How about you?",
                "All good here, thanks. How are you doing?",
                "Pretty good, thanks! What's on your mind?",
            ],
            11,
        ));
    }
    if is(&["what's up", "whats up", "sup", "what's new"]) {
        return Some(choose(
            &["Not much, just here to help. What's up with you?", "All quiet here. What's new with you?"],
            12,
        ));
    }
    if is(&[
        "who made you",
        "who built you",
        "who created you",
        "who are you",
        "what are you",
        "what's your name",
        "what is your name",
        "are you a bot",
        "are you a robot",
        "are you human",
        "are you an ai",
    ]) {
        return Some(
            "I'm Chalie, an assistant that runs in your terminal. I keep notes on what you tell me, manage your lists, \
             reminders and focus sessions, and answer questions."
                .to_string(),
        );
    }
    if is(&["what can you do", "what can you help with", "what do you do", "how can you help", "what are you good at"])
    {
        return Some(
            "I can keep lists (\"add milk to my shopping list\"), set and cancel reminders, run focus sessions, remember \
             what you tell me about yourself and recall it later, and answer questions."
                .to_string(),
        );
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::extract::extract;

    fn learned(text: &str) -> Vec<String> {
        learned_phrases(&extract(text).traits)
    }

    #[test]
    fn a_change_is_noted_with_the_old_value_only_as_past() {
        use crate::memory::uncertainty::ingest::Change;
        let ch = |slot: &str, old: &str, new: &str| Change { slot: slot.into(), old: old.into(), new: new.into() };
        assert_eq!(noted_changes(&[ch("gym", "Gold's", "Iron Works")]), "Noted — Iron Works now, not Gold's any more.");
        assert_eq!(
            noted_changes(&[ch("location", "Porto", "Lisbon"), ch("employer", "Acme", "Globex")]),
            "Noted — Lisbon now, not Porto any more, and Globex now, not Acme any more."
        );
    }

    #[test]
    fn a_slot_statement_the_extractor_misses_is_still_said_back() {
        assert!(learned("My gym is Fitness First on Main Street").is_empty(), "the extractor has no gym");
        let t = taught("My gym is Fitness First on Main Street");
        assert!(t.iter().any(|p| p.contains("gym is Fitness First")), "{t:?}");
        assert!(is_self_statement("My gym is Fitness First on Main Street", &t));
        assert_eq!(taught("I'm reading Dune"), ["you're reading Dune"]);
        // What the extractor knows is said once, its way.
        assert_eq!(taught("I live in Porto"), learned("I live in Porto"));
        // A past value is not news to acknowledge as current.
        assert!(!taught("I used to go to Iron Works").iter().any(|p| p.contains("Iron Works")));
    }

    #[test]
    fn what_was_learned_is_said_back_in_the_second_person() {
        assert_eq!(learned("Hi! My name is Ada and I'm allergic to peanuts."), ["you're allergic to peanuts"]);
        assert_eq!(learned("I'm allergic to peanuts and shellfish"), ["you're allergic to peanuts and shellfish"]);
        assert_eq!(learned("I live in Porto"), ["you live in Porto"]);
        assert_eq!(learned("My sister's name is Ana"), ["your sister's name is Ana"]);
        assert_eq!(learned("I love jazz"), ["you like jazz"]);
        assert_eq!(learned("I love hiking and jazz"), ["you like hiking and jazz"]);
        assert_eq!(learned("I work as a nurse"), ["you work as a nurse"]);
        assert_eq!(with_article("engineer at Bosch"), "an engineer at Bosch");
        assert_eq!(with_article("the night manager"), "the night manager");
        assert_eq!(learned("I have a dog named Biscuit"), ["you have a dog", "your dog's name is Biscuit"]);
        assert!(learned("my wife says hi").is_empty(), "an inferred trait is not announced");
        assert!(learned("what's the weather like?").is_empty());
    }

    #[test]
    fn an_introduction_with_a_fact_greets_by_name_and_notes_the_fact() {
        let text = "Hi! My name is Ada and I'm allergic to peanuts.";
        let reply = acknowledge(text, Occasion::of(text, Some("greeting")), Some("Ada"), &learned(text));
        assert!(reply.contains("Ada"), "{reply}");
        assert!(reply.contains("allergic to peanuts"), "{reply}");
        assert!(!reply.to_lowercase().contains("sorry"), "{reply}");
    }

    #[test]
    fn occasions_get_their_own_words() {
        let thanks = acknowledge("thanks!", Occasion::of("thanks!", Some("thanks")), None, &[]);
        assert!(["welcome", "help", "Anytime"].iter().any(|w| thanks.contains(w)), "{thanks}");
        let morning = acknowledge("good morning", Occasion::of("good morning", Some("greeting")), None, &[]);
        assert!(morning.starts_with("Good morning"), "{morning}");
        assert_eq!(Occasion::of("ok bye", Some("greeting")), Occasion::Goodbye);
        let bye = acknowledge("bye!", Occasion::Goodbye, None, &[]);
        assert!(["Bye", "Talk", "Take care"].iter().any(|w| bye.contains(w)), "{bye}");
        assert_eq!(Occasion::of("ok got it", Some("acknowledgement")), Occasion::Plain);
    }

    #[test]
    fn wordings_vary_across_messages_but_not_across_runs() {
        let a = acknowledge("thanks a lot", Occasion::Thanks, None, &[]);
        assert_eq!(a, acknowledge("thanks a lot", Occasion::Thanks, None, &[]));
        let distinct: std::collections::HashSet<String> =
            ["thanks", "thank you", "thx", "cheers", "thanks a lot", "ty"]
                .iter()
                .map(|t| acknowledge(t, Occasion::Thanks, None, &[]))
                .collect();
        assert!(distinct.len() >= 2, "{distinct:?}");
    }

    #[test]
    fn self_statements_are_told_from_requests() {
        let yes = |t: &str| is_self_statement(t, &learned(t));
        assert!(yes("I live in Porto"));
        assert!(yes("I'm vegetarian."));
        assert!(yes("I work as a nurse at the city hospital"));
        assert!(!yes("I live in Porto, can you recommend a restaurant?"));
        assert!(!yes("I'm vegetarian but I need protein ideas"));
        assert!(!yes("the weather is nice"), "nothing learned about the writer");
    }

    #[test]
    fn questions_about_the_assistant_have_fixed_answers_and_others_do_not() {
        assert!(
            about_me("How are you?").is_some_and(|r| r.contains("well") || r.contains("good") || r.contains("All"))
        );
        assert!(about_me("who are you?").is_some_and(|r| r.contains("Chalie")));
        assert!(about_me("what can you do").is_some_and(|r| r.contains("lists")));
        assert!(about_me("how are you going to fix the heater in my car?").is_none());
        assert!(is_farewell("bye!") && is_farewell("ok, see you tomorrow") && is_farewell("good night"));
        assert!(is_farewell("night night"));
        assert!(!is_farewell("goodbye to the old job, I start a new one Monday"));
        assert!(about_me("what is the capital of France?").is_none());
    }
}
