//! Layer 1 and the deterministic half of layer 2 of Phase B (docs/cognition.md §3).
//!
//! - [`classify_intent`]: the deterministic intent classifier `{intent_type, complexity,
//!   confidence}`. Action keywords are tested before question keywords, so "Can you remind me…"
//!   is an action.
//! - Cognitive triage, everything except the model call: [`TriageResult`] and its JSON
//!   post-processing ([`TriageResult::from_reply`]), the reply schema ([`triage_schema`]), the
//!   self-check rules R1–R6 ([`sanity_check`]) and the keyword fallback used on any triage error
//!   ([`heuristic_triage`]).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::router::Mode;
use super::signals::{Feedback, TextSignals};
use super::social::SocialExit;
use crate::text::{PhraseSet, has_any, normalize, phrase_at, words};

mod analysis;
mod triage;
pub use analysis::Analysis;
pub use triage::*;

// ───────────────────────────── intent classifier ─────────────────────────────

/// docs/cognition.md §3.1 intent types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IntentType {
    Empty,
    Greeting,
    Feedback,
    /// A request to produce something in words: "explain…", "write…", "tell me a joke", a cancel.
    Command,
    /// A request to *do* something with a skill or tool: remind, list, remember, recall, search.
    Action,
    Question,
    /// A follow-up that leans on the conversation: "and for Python?", "what about that one?".
    Continuation,
    #[default]
    Statement,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Complexity {
    #[default]
    Simple,
    Moderate,
    Complex,
}

/// docs/cognition.md §3.1 output.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct IntentResult {
    pub intent_type: IntentType,
    pub complexity: Complexity,
    pub confidence: f64,
}

/// The context inputs of docs/cognition.md §3.1 (the topic itself does not change the classification).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct IntentContext {
    pub warmth: f64,
    pub memory_confidence: f64,
    pub working_memory_turns: usize,
}

/// Leading politeness and discourse words stripped before looking for an imperative verb
/// ("could you please explain…" → "explain…").
const POLITE_PREFIXES: &PhraseSet = &PhraseSet::new(&[
    "would you mind",
    "i want you to",
    "i need you to",
    "i'd like you to",
    "i would like you to",
    "can you",
    "could you",
    "would you",
    "will you",
    "can u",
    "could u",
    "please",
    "pls",
    "kindly",
    "hey",
    "hi",
    "hello",
    "ok",
    "okay",
    "alright",
    "so",
    "now",
    "also",
    "and",
    "then",
    "chalie",
    "just",
    "thanks",
    "thank you",
    "great",
    "cool",
]);

/// Verbs that ask for words, not actions (a [`IntentType::Command`]).
const COMMAND_VERBS: &PhraseSet = &PhraseSet::new(&[
    "tell",
    "explain",
    "write",
    "show",
    "give",
    "describe",
    "summarize",
    "summarise",
    "translate",
    "list",
    "calculate",
    "compute",
    "compare",
    "define",
    "suggest",
    "recommend",
    "make",
    "create",
    "generate",
    "draft",
    "fix",
    "debug",
    "rewrite",
    "convert",
    "find",
    "build",
    "name",
    "teach",
    "plan",
    "outline",
    "brainstorm",
    "imagine",
    "pretend",
    "sing",
    "recite",
    "analyze",
    "analyse",
    "help",
    "proofread",
    "edit",
    "improve",
    "simplify",
    "solve",
    "implement",
    "refactor",
    "review",
    "walk",
    "let's",
    "lets",
    "continue",
    "elaborate",
    "expand",
    "shorten",
    "rephrase",
    "go",
    "repeat",
    "try",
    "redo",
    "play",
    "guess",
    "pick",
    "choose",
    "count",
    "spell",
    "read",
]);

/// Follow-up openers (a continuation when there is a conversation to continue).
const CONTINUATION_OPENERS: &PhraseSet = &PhraseSet::new(&[
    "what about",
    "how about",
    "what else",
    "and",
    "also",
    "but",
    "so",
    "then",
    "plus",
    "or",
    "go on",
    "keep going",
    "continue",
    "more",
    "next",
    "same",
    "ok and",
    "okay and",
]);

/// Imperative verbs that start a skill request.
const ACTION_VERBS: &PhraseSet =
    &PhraseSet::new(&["remind", "schedule", "memorize", "note", "remember", "add", "track", "log", "book"]);

/// Time markers that turn "you said …" into a memory lookup ("you mentioned X last time").
const MEMORY_TIME_MARKERS: &PhraseSet = &PhraseSet::new(&[
    "last time",
    "yesterday",
    "earlier",
    "before",
    "the other day",
    "last week",
    "last month",
    "previously",
]);

/// Innate-skill keyword banks (whole-word phrases), in the order the fallback reports them.
const SKILL_KEYWORDS: &[(&str, &PhraseSet)] = &[
    (
        "schedule",
        &PhraseSet::new(&[
            "remind me",
            "remind",
            "reminder",
            "reminders",
            "schedule",
            "alarm",
            "timer",
            "wake me",
            "appointment",
            "notify me",
            "alert me",
            "calendar",
            "every morning",
            "every evening",
            "every day at",
            "every week",
        ]),
    ),
    (
        "list",
        &PhraseSet::new(&[
            "shopping list",
            "grocery list",
            "groceries list",
            "to do list",
            "todo list",
            "todo",
            "todos",
            "checklist",
            "my list",
            "my lists",
            "the list",
            "check off",
            "cross off",
            "packing list",
            "reading list",
            "wish list",
            "wishlist",
        ]),
    ),
    (
        "memorize",
        &PhraseSet::new(&[
            "remember that",
            "remember this",
            "remember my",
            "note that",
            "make a note",
            "take a note",
            "keep in mind",
            "don't forget",
            "save this",
            "store this",
            "memorize",
            "memorise",
            "write down",
            "jot down",
            "my name is",
        ]),
    ),
    (
        "recall",
        &PhraseSet::new(&[
            "do you remember",
            "you remember",
            "what did i",
            "did i tell",
            "did i mention",
            "have i told",
            "what have i",
            "i told you",
            "we discussed",
            "we talked",
            "we talk about",
            "we spoke",
            "what did we",
            "did we",
            "last time we",
            "last time you",
            "last time i",
            "earlier you",
            "what's my",
            "whats my",
            "what is my",
            "when is my",
            "where is my",
            "who is my",
            "what are my",
            "recall",
            "remind me what",
        ]),
    ),
    (
        "autobiography",
        &PhraseSet::new(&["what do you know about me", "tell me about myself", "my story", "who am i", "about me"]),
    ),
    (
        "focus",
        &PhraseSet::new(&[
            "focus session",
            "focus mode",
            "start a focus",
            "end focus",
            "stop focus",
            "deep work",
            "pomodoro",
            "help me focus",
            "i need to focus",
            "am i focused",
        ]),
    ),
    (
        "associate",
        &PhraseSet::new(&["remind you of", "reminds you of", "what comes to mind", "associate with", "associations"]),
    ),
    (
        "introspect",
        &PhraseSet::new(&[
            "introspect",
            "your memory",
            "how confident are you",
            "what are you thinking",
            "your routing",
            "your state",
            "why did you answer",
            "why did you say that",
            "what have you been doing",
            "what have you been up to",
        ]),
    ),
    (
        "persistent_task",
        &PhraseSet::new(&[
            "background task",
            "work on this over",
            "research this over",
            "over the next few days",
            "keep working on",
            "task status",
            "in the background",
            "keep an eye on",
            "start task",
            "confirm task",
            "cancel task",
            "pause task",
            "resume task",
        ]),
    ),
    (
        "document",
        &PhraseSet::new(&[
            "my document",
            "my documents",
            "in the document",
            "in my file",
            "uploaded file",
            "search my documents",
            "document library",
            "my warranty",
        ]),
    ),
    ("read", &PhraseSet::new(&["read this", "read the article", "this link", "this page", "this url"])),
];

/// Phrases that ask for an external tool (R2b and the fallback's "command words").
const TOOL_WORDS: &PhraseSet = &PhraseSet::new(&[
    "search for",
    "search the web",
    "search online",
    "look up",
    "look it up",
    "google",
    "browse",
    "fetch",
    "check online",
    "pull up",
    "open the website",
    "go to",
    "visit",
]);

/// Real-time words (the fallback's freshness test).
const REALTIME_WORDS: &PhraseSet = &PhraseSet::new(&[
    "who won",
    "what happened",
    "latest",
    "current",
    "currently",
    "today",
    "tonight",
    "this week",
    "this year",
    "results",
    "score",
    "winner",
    "news",
    "weather",
    "forecast",
    "stock price",
    "right now",
    "recently",
    "live",
]);

/// Whether the text holds an http(s) or www URL.
pub fn contains_url(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.contains("http://") || lower.contains("https://") || lower.contains("www.")
}

/// Innate skills a message asks for, by keyword (first-seen order, no duplicates).
pub fn detect_skills(text: &str) -> Vec<&'static str> {
    let lower = normalize(text);
    detect_skills_in(&words(&lower), contains_url(text))
}

fn detect_skills_in(ws: &[&str], url: bool) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for (skill, phrases) in SKILL_KEYWORDS {
        if phrases.any_in(ws) {
            out.push(skill);
        }
    }
    // "you said/mentioned X last time" is a memory lookup; "what you just said" is not.
    if !out.contains(&"recall")
        && has_any(ws, &["you said", "you mentioned", "you told me"])
        && MEMORY_TIME_MARKERS.any_in(ws)
    {
        out.push("recall");
    }
    // A named list of the user's own: "my books list", "our packing list".
    if !out.contains(&"list") && ws.windows(3).any(|w| matches!(w[0], "my" | "our") && matches!(w[2], "list" | "lists"))
    {
        out.push("list");
    }
    // "call me Sam" / "you can call me Sam" is the name hook only as an opener, not inside a quote.
    if !out.contains(&"memorize") && (phrase_at(ws, 0, "call me") || phrase_at(ws, 0, "you can call me")) {
        out.push("memorize");
    }
    // "forget my passport number", "remove X from your memory" (not "don't forget to…").
    if !out.contains(&"forget") && ws.iter().any(|w| matches!(*w, "forget" | "delete" | "remove" | "erase" | "wipe")) {
        let text = ws.join(" ");
        if crate::memory::forget::is_forget_request(&text) {
            out.retain(|s| *s != "memorize");
            out.push("forget");
        }
    }
    // "remember when…" only at the start ("I remember when I was a kid" is a statement).
    if !out.contains(&"recall") && phrase_at(ws, 0, "remember when") {
        out.push("recall");
    }
    if url && !out.contains(&"read") {
        out.push("read");
    }
    out
}

/// Strip [`POLITE_PREFIXES`] repeatedly from the front.
fn strip_polite<'a, 'b>(mut ws: &'b [&'a str]) -> &'b [&'a str] {
    while let Some(n) = POLITE_PREFIXES.leading(ws) {
        ws = &ws[n..];
    }
    ws
}

/// Whether the message asks for a skill or a tool (the [`IntentType::Action`] test).
fn is_action(msg: &Analysis) -> bool {
    let ws = msg.words.as_slice();
    if !msg.skills.is_empty() || TOOL_WORDS.any_in(ws) {
        return true;
    }
    let core = strip_polite(ws);
    match core.first() {
        // "add eggs", "add milk to my list"; not "add comments to this function".
        Some(&"add") => core.len() <= 3 || has_any(core, &["to my", "on my", "to our"]),
        Some(w) => ACTION_VERBS.contains(w) && *w != "add",
        None => false,
    }
}

/// Classify one message (docs/cognition.md §3.1). `signals` must be [`super::signals::extract`] of `text`.
pub fn classify_intent(text: &str, signals: &TextSignals, ctx: &IntentContext) -> IntentResult {
    let lower = normalize(text);
    classify(&Analysis::with_signals(text, &lower, words(&lower), signals.clone()), ctx)
}

/// [`classify_intent`] over a message already read.
pub fn classify(msg: &Analysis, ctx: &IntentContext) -> IntentResult {
    let intent_type = classify_type(msg, ctx);
    let complexity = estimate_complexity(msg.text, &msg.words, &msg.signals);
    let confidence = intent_confidence(intent_type, &msg.signals, ctx);
    IntentResult { intent_type, complexity, confidence }
}

fn classify_type(msg: &Analysis, ctx: &IntentContext) -> IntentType {
    let (ws, s) = (msg.words.as_slice(), &msg.signals);
    if s.prompt_token_count == 0 {
        return IntentType::Empty;
    }
    if is_action(msg) {
        return IntentType::Action;
    }
    match msg.social {
        Some(m) if m.reason == "greeting" => return IntentType::Greeting,
        Some(m) if m.reason == "thanks" => return IntentType::Feedback,
        Some(m) if m.exit == SocialExit::Cancel => return IntentType::Command,
        Some(m) if m.exit == SocialExit::Ignore => return IntentType::Statement,
        _ => {}
    }
    let core = strip_polite(ws);
    let leading_interrogative = core.first().is_some_and(|w| super::signals::INTERROGATIVES.contains(w));
    if s.explicit_feedback != Feedback::None
        && s.prompt_token_count <= 6
        && !s.has_question_mark
        && !leading_interrogative
        && !core.first().is_some_and(|w| COMMAND_VERBS.contains(w))
    {
        return IntentType::Feedback;
    }
    if core.first().is_some_and(|w| COMMAND_VERBS.contains(w)) && !s.vague_reference {
        return IntentType::Command;
    }
    if s.vague_reference || (ctx.working_memory_turns > 0 && CONTINUATION_OPENERS.leading(ws).is_some()) {
        return IntentType::Continuation;
    }
    if s.has_question_mark || leading_interrogative {
        return IntentType::Question;
    }
    if core.first().is_some_and(|w| COMMAND_VERBS.contains(w)) {
        return IntentType::Command;
    }
    IntentType::Statement
}

fn estimate_complexity(text: &str, ws: &[&str], s: &TextSignals) -> Complexity {
    let clauses = ws.iter().filter(|w| matches!(**w, "and" | "also" | "plus" | "then" | "additionally")).count()
        + text.matches('?').count().saturating_sub(1)
        + text.matches(';').count();
    if s.prompt_token_count > 30 || (s.prompt_token_count > 15 && clauses >= 2) {
        Complexity::Complex
    } else if s.prompt_token_count > 15 || (s.prompt_token_count >= 8 && clauses >= 1) {
        Complexity::Moderate
    } else {
        Complexity::Simple
    }
}

fn intent_confidence(t: IntentType, s: &TextSignals, ctx: &IntentContext) -> f64 {
    let mut c: f64 = match t {
        IntentType::Empty => return 1.0,
        IntentType::Greeting => 0.9,
        IntentType::Feedback => 0.85,
        IntentType::Action => 0.8,
        IntentType::Command => 0.75,
        IntentType::Question if s.has_question_mark => 0.8,
        IntentType::Question => 0.65,
        IntentType::Continuation if ctx.working_memory_turns > 0 => 0.7,
        IntentType::Continuation => 0.4,
        IntentType::Statement => 0.5,
    };
    if ctx.warmth > 0.5 {
        c += 0.05;
    }
    if s.prompt_token_count < 3 && !matches!(t, IntentType::Greeting | IntentType::Feedback) {
        c -= 0.1;
    }
    if s.prompt_token_count > 50 {
        c -= 0.1;
    }
    c.clamp(0.1, 1.0)
}

#[cfg(test)]
mod tests;
