//! A labelled set of realistic messages with their context, for calibrating and regression-testing
//! router weights: what a user expects, not what a formula produces. Used by the tests, by
//! `examples/mode_distribution.rs`, and available to the regulator for replay checks.

use super::{Mode, RouterSignals, RouterState, RouterWeights, route};
use crate::cognition::context::ContextSignals;

/// One labelled message.
#[derive(Debug, Clone, PartialEq)]
pub struct Labelled {
    pub text: &'static str,
    pub context: ContextSignals,
    /// The topic's previous mode (anti-oscillation), if any.
    pub previous_mode: Option<Mode>,
    pub expected: Mode,
    /// Why this label.
    pub note: &'static str,
}

/// First message of a session: nothing in memory, new topic.
pub fn cold() -> ContextSignals {
    ContextSignals::default()
}

/// One or two exchanges in: a little working memory, no gists or facts yet.
pub fn early() -> ContextSignals {
    ContextSignals { working_memory_turns: 2, is_new_topic: false, session_exchange_count: 2, ..cold() }
}

/// Mid-conversation on the topic (warmth ≈ 0.47).
pub fn mid() -> ContextSignals {
    ContextSignals {
        working_memory_turns: 4,
        gist_count: 2,
        fact_count: 1,
        is_new_topic: false,
        session_exchange_count: 5,
        ..cold()
    }
}

/// A long-running topic with rich memory (warmth 1).
pub fn warm() -> ContextSignals {
    ContextSignals {
        working_memory_turns: 4,
        gist_count: 5,
        fact_count: 6,
        world_state_present: true,
        fok_score: 1.0,
        is_new_topic: false,
        session_exchange_count: 12,
        ..cold()
    }
}

/// A new topic inside a running session: working memory bridges from the previous topic.
pub fn switched() -> ContextSignals {
    ContextSignals { working_memory_turns: 4, is_new_topic: true, session_exchange_count: 6, ..cold() }
}

fn l(text: &'static str, context: ContextSignals, expected: Mode, note: &'static str) -> Labelled {
    Labelled { text, context, previous_mode: None, expected, note }
}

fn after(previous: Mode, mut x: Labelled) -> Labelled {
    x.previous_mode = Some(previous);
    x
}

/// The labelled set (≥ 60 messages).
pub fn labelled_set() -> Vec<Labelled> {
    use Mode::*;
    vec![
        // RESPOND: self-contained questions and requests, cold or warm.
        l("What is the capital of France?", cold(), Respond, "self-contained factual question"),
        l("How do I reverse a linked list in Python?", cold(), Respond, "self-contained how-to"),
        l("Can you explain how photosynthesis works?", cold(), Respond, "explanation request"),
        l("Why is the sky blue?", cold(), Respond, "self-contained why"),
        l("What's the difference between TCP and UDP?", cold(), Respond, "comparison question"),
        l("Write a haiku about autumn", cold(), Respond, "generative command"),
        l("Tell me a joke", cold(), Respond, "generative command"),
        l("My printer is not printing.", cold(), Respond, "problem statement (contains `is`)"),
        l("I'm feeling a bit stressed about my exam tomorrow", cold(), Respond, "personal statement"),
        l("Who wrote Pride and Prejudice?", cold(), Respond, "trivia"),
        l("Are you sentient?", cold(), Respond, "question about the assistant"),
        l("What was the name of the first man on the moon?", cold(), Respond, "`what was` is not a memory lookup"),
        l("How many hearts does an octopus have?", cold(), Respond, "trivia"),
        l("Give me three ideas for a birthday present for a 10 year old", cold(), Respond, "generative"),
        l("Is it safe to eat raw cookie dough?", cold(), Respond, "yes/no factual"),
        l("I just finished reading Dune and loved it", cold(), Respond, "chat statement"),
        l("Convert 5 miles to kilometres", cold(), Respond, "calculation"),
        l("What should I cook for dinner tonight?", cold(), Respond, "advice"),
        l("Do you know basketball?", cold(), Respond, "question about the assistant"),
        l("Translate good night into Spanish", cold(), Respond, "`good` is not praise here"),
        l("Is this a good time to buy a house?", cold(), Respond, "`good`/`this` inside a real question"),
        l("can you write a factorial in TypeScript?", cold(), Respond, "coding request"),
        l("Explain the difference between a list and a tuple", mid(), Respond, "explanation, mid-topic"),
        l("And how would that work with async code?", mid(), Respond, "follow-up with an antecedent"),
        l("What about the second option?", mid(), Respond, "follow-up with an antecedent"),
        l("Can you make it shorter?", mid(), Respond, "edit request on the last answer"),
        l("Why?", mid(), Respond, "bare why with an antecedent"),
        l("I think I'll go with the red one", mid(), Respond, "decision statement"),
        l("That makes sense. What are the downsides?", warm(), Respond, "follow-up, warm"),
        l("How does it compare to the previous version?", warm(), Respond, "follow-up, warm"),
        l("Could you summarise what you just said in one sentence?", warm(), Respond, "refers to working memory"),
        l("What is a closure in JavaScript?", switched(), Respond, "new topic mid-session"),
        l("Recommend a good sci-fi novel", switched(), Respond, "recommendation, new topic"),
        after(Clarify, l("The blue one", early(), Respond, "answer to a clarifying question")),
        after(Clarify, l("I meant the Python version", early(), Respond, "answer to a clarifying question")),
        after(Act, l("ok, and what does that mean for my trip?", mid(), Respond, "follow-up after ACT")),
        // CLARIFY: vague references with nothing to refer to.
        l("What about that one?", cold(), Clarify, "vague referent, cold start"),
        l("Do it again", cold(), Clarify, "vague referent, cold start"),
        l("Why?", cold(), Clarify, "bare why, cold start"),
        l("Can you fix it?", cold(), Clarify, "vague referent, cold start"),
        l("What does that mean?", cold(), Clarify, "vague referent, cold start"),
        l("Tell me more", cold(), Clarify, "nothing to continue"),
        l("Is this correct?", cold(), Clarify, "`this` with nothing shown"),
        l("the other one", cold(), Clarify, "vague referent, cold start"),
        l("Same as before please", cold(), Clarify, "vague referent, cold start"),
        l("How about those?", cold(), Clarify, "vague referent, cold start"),
        l("Explain that", cold(), Clarify, "vague referent, cold start"),
        l("That's not what I meant", early(), Clarify, "bare negative feedback (cognition.md §6.8 example)"),
        l("This doesn't work", early(), Clarify, "bare negative feedback"),
        // Requests whose object is only a pointer, and corrections (issue 14, item 5).
        l("Can you proofread my essay?", cold(), Clarify, "missing object: nothing pasted"),
        l("translate this into German", cold(), Clarify, "missing object, cold"),
        l("fix my code", early(), Clarify, "missing object: one exchange in, no code in it"),
        l("You misunderstood me", mid(), Clarify, "bare correction mid-topic"),
        l("translate 'where is the train station' into Portuguese", cold(), Respond, "the object is quoted"),
        l("Review this function for bugs: fn add(a: i32) -> i32 { a + 1 }", cold(), Respond, "code pasted"),
        l("no, I meant the one with the blue cover", mid(), Respond, "correction that says what was meant"),
        // Requests to make something without the details only the user has.
        l("can you help me plan my week?", cold(), Clarify, "underspecified: no events, no constraints"),
        l("I need to write a letter to my bank", cold(), Clarify, "underspecified: a recipient, nothing to say"),
        l("I'm choosing between two apartments", mid(), Clarify, "a decision whose options are not given"),
        l("help me plan a 3-day trip to Rome in May on a $500 budget", cold(), Respond, "specified request"),
        l("write an email to my landlord about the broken heater", cold(), Respond, "says what the email is about"),
        // ACT: explicit skill requests.
        l("Add milk to my shopping list", cold(), Act, "list"),
        l("Remind me to call mum at 5pm", cold(), Act, "schedule"),
        l("What did I tell you about my sister?", cold(), Act, "recall"),
        l("Can you remind me to water the plants tomorrow morning?", mid(), Act, "schedule, polite question form"),
        l("Set a timer for 10 minutes", cold(), Act, "schedule"),
        l("Remember that my sister's birthday is on June 3rd", mid(), Act, "memorize"),
        l("What's on my shopping list?", cold(), Act, "list"),
        l("Do you remember my name?", cold(), Act, "recall"),
        l("What did we talk about yesterday?", cold(), Act, "recall (cognition.md §6.8 example)"),
        l("You mentioned something about weather last time", mid(), Act, "recall (cognition.md §6.8 example)"),
        l("hey, check my shopping list", cold(), Act, "greeting prefix on a request"),
        l("thanks, now remind me at 5 to leave", mid(), Act, "thanks prefix on a request"),
        l("Put eggs and bread on the grocery list", cold(), Act, "list"),
        l("Schedule a dentist appointment for next Tuesday at 3", cold(), Act, "schedule"),
        l("Start a focus session for 25 minutes", cold(), Act, "focus"),
        l("Cancel my 5pm reminder", mid(), Act, "schedule (not a social cancel)"),
        l("Note that I prefer window seats", mid(), Act, "memorize"),
        l("What do you know about me?", cold(), Act, "autobiography"),
        l("Look up the opening hours of the city library", cold(), Act, "tool request"),
        l("What's my wifi password again?", warm(), Act, "recall, warm"),
        // ACKNOWLEDGE: greetings and thanks.
        l("hi!", cold(), Acknowledge, "greeting"),
        l("How are you?", warm(), Acknowledge, "pleasantry, warm"),
        l("how are you today?", cold(), Acknowledge, "pleasantry without a greeting word"),
        l("thanks!", warm(), Acknowledge, "thanks, warm"),
        l("You are never nice", cold(), Respond, "negated praise is not thanks"),
        l("What book starts with the line Call me Ishmael?", cold(), Respond, "`call me` inside a quote"),
        l("Hello", cold(), Acknowledge, "greeting"),
        l("Good morning!", cold(), Acknowledge, "greeting"),
        l("thanks!", mid(), Acknowledge, "thanks"),
        l("Thank you so much", warm(), Acknowledge, "thanks"),
        l("Hi, how are you?", cold(), Acknowledge, "greeting with a pleasantry"),
        l("perfect, thanks", warm(), Acknowledge, "thanks"),
        l("hey there", cold(), Acknowledge, "greeting"),
        l("awesome", mid(), Acknowledge, "praise"),
        l("Thanks, that's really helpful", warm(), Acknowledge, "thanks"),
        after(Act, l("great, thank you", mid(), Acknowledge, "thanks after an ACT")),
        // IGNORE: empty input.
        l("", cold(), Ignore, "empty"),
        l("   ", mid(), Ignore, "whitespace"),
        after(Respond, l("", warm(), Ignore, "empty, warm")),
    ]
}

/// A second labelled set written after the defaults were tuned on [`labelled_set`], never tuned
/// on; its agreement is the honest estimate.
pub fn holdout_set() -> Vec<Labelled> {
    use Mode::*;
    vec![
        l("How long should I boil an egg?", cold(), Respond, "how-to"),
        l("What's a good name for a golden retriever?", cold(), Respond, "advice, contains `good`"),
        l("Summarize the plot of Hamlet in two sentences", cold(), Respond, "generative"),
        l("I can't decide between learning Rust or Go", cold(), Respond, "statement seeking advice"),
        l("What causes inflation?", switched(), Respond, "new topic mid-session"),
        l("Could you give me an example?", mid(), Respond, "follow-up"),
        l("Is 17 a prime number?", cold(), Respond, "yes/no factual"),
        l("Which one is faster?", mid(), Respond, "follow-up with an antecedent"),
        l("Okay so how do I install it on Windows?", mid(), Respond, "follow-up"),
        l("My internet is not working.", cold(), Respond, "problem statement"),
        l("What do you think about remote work?", cold(), Respond, "opinion"),
        l("Help me write a cover letter for a barista job", cold(), Respond, "generative"),
        l("that sounds great, can you add more detail to step 2?", warm(), Respond, "edit request, praise prefix"),
        l("What year did the Berlin Wall fall?", switched(), Respond, "trivia"),
        l("Hello, what's the tallest mountain in Africa?", cold(), Respond, "greeting prefix on a question"),
        l("What's wrong with it?", cold(), Clarify, "vague referent, cold"),
        l("Can you do that for me?", cold(), Clarify, "vague referent, cold"),
        l("how so?", cold(), Clarify, "bare follow-up, cold"),
        l("Which one?", cold(), Clarify, "vague referent, cold"),
        l("Make it better", cold(), Clarify, "vague referent, cold"),
        l("No, that's wrong", early(), Clarify, "bare negative feedback"),
        l("What did they say?", cold(), Clarify, "vague referent, cold"),
        l("Could you translate that to Italian?", cold(), Clarify, "missing object, cold"),
        l("can you edit my paragraph so it flows better?", cold(), Clarify, "missing object: nothing pasted"),
        l("Nope, that's not what I asked", mid(), Clarify, "bare correction mid-topic"),
        l("I meant the vegetarian version", mid(), Respond, "correction that says what was meant"),
        l("translate 'see you tomorrow' into Dutch", cold(), Respond, "the object is quoted"),
        l("Can you rewrite it to sound more formal?", mid(), Respond, "the last answer is there to rewrite"),
        l("Add bananas to the shopping list", warm(), Act, "list, warm"),
        l("Remind me every morning at 8 to take my vitamins", cold(), Act, "schedule"),
        l("What did I say my dog's name was?", mid(), Act, "recall"),
        l("Please remember that I'm allergic to peanuts", warm(), Act, "memorize, warm"),
        l("Delete eggs from my shopping list", mid(), Act, "list"),
        l("Set an alarm for 6:30 tomorrow", cold(), Act, "schedule"),
        l("Did I tell you about my new job?", cold(), Act, "recall"),
        l("Search for cheap flights to Lisbon in May", cold(), Act, "tool request"),
        l("Can you check my to-do list?", warm(), Act, "list, warm"),
        l("What's on my calendar for Friday?", cold(), Act, "schedule lookup"),
        l("hello there!", cold(), Acknowledge, "greeting"),
        l("Thanks a lot!", warm(), Acknowledge, "thanks"),
        l("good evening", mid(), Acknowledge, "greeting"),
        l("cheers, that's perfect", warm(), Acknowledge, "thanks"),
        l("Hey, how's it going?", cold(), Acknowledge, "greeting with a pleasantry"),
        l("nice, thank you!", mid(), Acknowledge, "thanks"),
        l("", switched(), Ignore, "empty"),
        l("\n", cold(), Ignore, "newline only"),
    ]
}

/// Agreement of `weights` with the labels, routing without a tie-break (the higher score
/// wins). Returns (agreeing, total, the disagreements as (text, expected, got)).
pub fn agreement(weights: &RouterWeights, set: &[Labelled]) -> (usize, usize, Vec<(&'static str, Mode, Mode)>) {
    let mut misses = Vec::new();
    for x in set {
        let signals = RouterSignals::from_text(x.text, &x.context);
        let state = RouterState { previous_mode: x.previous_mode, recent_confidences: Vec::new() };
        let got = route(&signals, weights, &state, false).mode;
        if got != x.expected {
            misses.push((x.text, x.expected, got));
        }
    }
    (set.len() - misses.len(), set.len(), misses)
}

/// Share of the set where the router would ask for a tie-break.
pub fn tiebreak_rate(weights: &RouterWeights, set: &[Labelled]) -> f64 {
    let n = set
        .iter()
        .filter(|x| {
            let signals = RouterSignals::from_text(x.text, &x.context);
            let state = RouterState { previous_mode: x.previous_mode, recent_confidences: Vec::new() };
            route(&signals, weights, &state, true).tiebreak.is_some()
        })
        .count();
    n as f64 / set.len().max(1) as f64
}
