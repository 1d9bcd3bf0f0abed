//! The prompt files (embedded at build time) and the pure functions that turn a turn's
//! assembled context into model requests. No I/O: tests check exactly what a model is sent.

use crate::cognition::intent::{TriageContext, triage_schema};
use crate::cognition::router::{Mode, RouterSignals, tiebreak_schema};
use crate::llm::{ChatRequest, Message, PromptKind, ResponseFormat};
use crate::store::{TopicContext, TraitRow, WmEntry};
use serde_json::{Value, json};

pub const SOUL: &str = include_str!("../../../prompts/soul.md");
pub const IDENTITY_CORE: &str = include_str!("../../../prompts/identity-core.md");
pub const RESPOND: &str = include_str!("../../../prompts/frontal-cortex-respond.md");
pub const CLARIFY: &str = include_str!("../../../prompts/frontal-cortex-clarify.md");
pub const ACKNOWLEDGE: &str = include_str!("../../../prompts/frontal-cortex-acknowledge.md");
pub const TRIAGE: &str = include_str!("../../../prompts/cognitive-triage.md");
pub const TIEBREAK: &str = include_str!("../../../prompts/mode-tiebreaker.md");

/// Reply length caps per mode: a clarification is one question, an acknowledgement one line.
pub fn max_tokens(mode: Mode) -> u32 {
    match mode {
        Mode::Respond | Mode::Act => 512,
        Mode::Clarify => 96,
        Mode::Acknowledge => 48,
        Mode::Ignore => 0,
    }
}

/// What the frontal cortex is given for one reply.
#[derive(Debug, Clone, Copy)]
pub struct GenerationInput<'a> {
    pub mode: Mode,
    pub user_text: &'a str,
    /// The thread's conversation so far: all of its live working memory, oldest first.
    pub working_memory: &'a [WmEntry],
    pub traits: &'a [TraitRow],
    pub topic: &'a TopicContext,
    /// Earlier episodes and concepts recalled for this message.
    pub memories: &'a [String],
    /// Whitespace tokens of the message (a short greeting gets no working memory).
    pub prompt_tokens: usize,
    /// Extra lines for the system prompt (e.g. what the ACT step could not do).
    pub notes: &'a [String],
    /// The adaptive layer's directives for this reply (docs/cognition.md §18), strongest first.
    pub style: &'a [String],
}

/// The frontal cortex request, what stays the same first, so a prompt cache (the built-in
/// model's, or a server's) serves it from turn to turn: the persona (soul, identity core) as
/// the first system message, then working memory as turns (it only grows until it drops a
/// block, `store::WORKING_MEMORY_CAP`), then the mode's prompt as a system message, then,
/// only when there are any, the context sections the mode's relevance mask keeps, as a system
/// message of their own, and last the message. The built-in model decodes all of it ahead while
/// the message is typed ([`conversation_prefix`], with the sections a preview of the turn gives
/// the draft), so at Enter only the words typed since the last pause and the reply's header are
/// left when the preview's sections are the turn's. The sections go before the message: with
/// them after it (session 21) SmolLM2 answered the last thing it read, echoing the sections
/// instead of replying (`examples/prompt_order_ab.rs`). A remote server gets the system
/// messages merged into one (`llm::openai`).
pub fn generation_request(g: &GenerationInput) -> ChatRequest {
    let mut messages = vec![Message::system(persona(g.mode))];
    let short_greeting = g.mode == Mode::Acknowledge && g.prompt_tokens < 6;
    if !short_greeting {
        messages.extend(turns(g.working_memory));
    }
    messages.push(Message::system(mode_prompt(g.mode)));
    let sections = turn_sections(g);
    if !sections.is_empty() {
        messages.push(Message::system(sections));
    }
    messages.push(Message::user(g.user_text.to_string()));
    let mut req = ChatRequest::new(messages);
    req.max_tokens = max_tokens(g.mode);
    req.temperature = if g.mode == Mode::Respond { 0.6 } else { 0.4 };
    req.kind = PromptKind::Conversation;
    req
}

/// The start of the next reply's prompt once `history` is the thread's working memory and
/// `draft` what the user has typed so far: the persona, the turns and a RESPOND turn's prompt
/// (the likeliest mode), then the `sections` the turn would add for the draft (its preview,
/// `turn::preview`; empty for none), the draft as the message and the opening of the reply. A
/// backend decodes it while the user reads and types ([`crate::llm::Llm::prefill`]), so a
/// message sent as it was last handed over leaves only the reply's header at Enter, and one
/// finished after the pause the words typed since. With no draft yet it stops inside the
/// mode's prompt (left open: the sections or the message come next). The built-in model reuses
/// only the tokens a later prompt shares with it from the start, so a draft or a preview that
/// differs from what Enter sends costs the decoding of what differs (after a changed section,
/// the message too) and never shows in the reply.
pub fn conversation_prefix(history: &[WmEntry], draft: Option<&str>, sections: &str) -> ChatRequest {
    let mut messages = vec![Message::system(persona(Mode::Respond))];
    messages.extend(turns(history));
    messages.push(Message::system(mode_prompt(Mode::Respond)));
    if let Some(text) = draft {
        if !sections.is_empty() {
            messages.push(Message::system(sections.to_string()));
        }
        messages.push(Message::user(text.to_string()));
        // Left open, empty: the reply's header.
        messages.push(Message::assistant(String::new()));
    }
    let mut req = ChatRequest::new(messages);
    req.kind = PromptKind::Conversation;
    req
}

/// Soul, then identity core except for an acknowledgement.
fn persona(mode: Mode) -> String {
    let mut system = String::with_capacity(512);
    system.push_str(SOUL.trim());
    if mode != Mode::Acknowledge {
        system.push(' ');
        system.push_str(IDENTITY_CORE.trim());
    }
    system
}

fn turns(history: &[WmEntry]) -> impl Iterator<Item = Message> + '_ {
    history.iter().map(|e| match e.role.as_str() {
        "assistant" => Message::assistant(e.content.clone()),
        _ => Message::user(e.content.clone()),
    })
}

fn mode_prompt(mode: Mode) -> &'static str {
    match mode {
        Mode::Clarify => CLARIFY.trim(),
        Mode::Acknowledge => ACKNOWLEDGE.trim(),
        Mode::Respond | Mode::Act | Mode::Ignore => RESPOND.trim(),
    }
}

/// This turn's context, before the message: the sections its mode's relevance mask keeps
/// (empty when it keeps none).
pub fn turn_sections(g: &GenerationInput) -> String {
    let mut system = String::new();
    // Relevance mask (docs/cognition.md §4.4): the user's traits always; facts and gists for replies
    // that answer; world state only for a full answer.
    // Micro-preferences are directives (the style section), not facts about the user.
    let traits: Vec<String> =
        g.traits.iter().filter(|t| t.category != crate::cognition::adaptive::micro::CATEGORY).map(trait_line).collect();
    section(&mut system, "What you know about the user", &traits);
    if g.mode != Mode::Acknowledge {
        let facts: Vec<String> = g.topic.facts.iter().map(|(k, v)| format!("- {k}: {v}")).collect();
        section(&mut system, "Facts from this conversation", &facts);
        let gists: Vec<String> =
            g.topic.gists.iter().filter(|x| !x.cold_start).map(|x| format!("- {}", x.content)).collect();
        section(&mut system, "Earlier in this topic", &gists);
        let memories: Vec<String> = g.memories.iter().map(|m| format!("- {m}")).collect();
        section(&mut system, "From earlier conversations", &memories);
    }
    if matches!(g.mode, Mode::Respond | Mode::Act) {
        let world: Vec<String> = g.topic.world_state.iter().map(|(k, v)| format!("- {k}: {v}")).collect();
        section(&mut system, "Current state", &world);
    }
    let notes: Vec<String> = g.notes.iter().map(|n| format!("- {n}")).collect();
    section(&mut system, "Notes", &notes);
    // Last, nearest the reply; worded within the voice above, which outranks them.
    let style: Vec<String> = g.style.iter().map(|s| format!("- {s}")).collect();
    section(&mut system, STYLE_TITLE, &style);
    system
}

/// The title of the adaptive layer's section in the reply prompt.
pub const STYLE_TITLE: &str = "How to reply to this user";

pub use crate::cognition::reply::trait_label;

/// A trait as the frontal cortex sees it (docs/cognition.md §10): a current value plainly; a
/// contradicted one flagged; a superseded one only as past, so it is never taken as current.
pub fn trait_line(t: &TraitRow) -> String {
    let key = t.key.replace('_', " ");
    match t.reliability.as_str() {
        "superseded" => match t.until.and_then(|ts| chrono::DateTime::from_timestamp(ts, 0)) {
            Some(until) => {
                format!("- {key}: used to be {} (until {}; past, no longer true)", t.value, until.format("%-d %b %Y"))
            }
            None => format!("- {key}: used to be {} (past, no longer true)", t.value),
        },
        "contradicted" => {
            format!("- {key}: {} (contradicted by another memory: do not assert it; ask if it matters)", t.value)
        }
        "uncertain" => format!("- {key}: {} (unconfirmed)", t.value),
        _ => format!("- {key}: {} ({})", t.value, trait_label(t.confidence)),
    }
}

/// A recalled memory as the frontal cortex sees it: flagged when it is not reliable, so
/// the reply can hedge instead of asserting it (docs/cognition.md §4.3).
pub fn memory_line(hit: &crate::memory::Hit) -> String {
    match hit.reliability.as_str() {
        "reliable" => hit.text.clone(),
        state => format!("{} ({state}: do not assert it as fact)", hit.text),
    }
}

fn section(out: &mut String, title: &str, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    if !out.is_empty() {
        out.push_str("\n\n");
    }
    out.push_str(title);
    out.push_str(":\n");
    out.push_str(&lines.join("\n"));
}

/// The triage request (docs/cognition.md §3.2 inputs): the message, previous mode and tools, the last two
/// working-memory entries, warmth, memory confidence and the gist count, as JSON.
pub fn triage_request(text: &str, s: &RouterSignals, wm: &[WmEntry], ctx: &TriageContext) -> ChatRequest {
    let recent: Vec<Value> =
        wm.iter().rev().take(2).rev().map(|e| json!({"role": e.role, "content": clip(&e.content, 300)})).collect();
    let input = json!({
        "message": text,
        "previous_mode": ctx.previous_mode,
        "previous_tools": ctx.previous_tools,
        "tools_available": ctx.tools_available.iter().chain(&ctx.named_tools).collect::<Vec<_>>(),
        "recent_turns": recent,
        "context_warmth": s.context_warmth,
        "memory_confidence": s.memory_confidence,
        "gist_count": s.gist_count,
        "fact_count": s.fact_count,
    });
    let mut req = ChatRequest::new(vec![Message::system(TRIAGE.trim()), Message::user(input.to_string())]);
    req.max_tokens = 200;
    req.temperature = 0.1;
    req.logprobs = false;
    req.format = ResponseFormat::JsonSchema { name: "triage".into(), schema: triage_schema() };
    req
}

/// The tie-breaker request: the docs/cognition.md §6.6 context (candidates as A and B) as JSON.
pub fn tiebreak_request(context: &Value) -> ChatRequest {
    let mut req = ChatRequest::new(vec![Message::system(TIEBREAK.trim()), Message::user(context.to_string())]);
    req.max_tokens = 16;
    req.temperature = 0.1;
    req.logprobs = false;
    req.format = ResponseFormat::JsonSchema { name: "tiebreak".into(), schema: tiebreak_schema() };
    req
}

pub use crate::text::clip::clip;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ChatRole;
    use crate::store::Gist;

    /// A fully confident, reliable trait row.
    fn reliable(key: &str, value: &str, category: &str) -> TraitRow {
        TraitRow {
            key: key.into(),
            value: value.into(),
            category: category.into(),
            confidence: 1.0,
            reliability: "reliable".into(),
            until: None,
        }
    }

    #[test]
    fn unreliable_memories_are_flagged_for_the_reply_and_labels_follow_confidence() {
        let hit = |reliability: &str| crate::memory::Hit {
            layer: "episode",
            id: 1,
            text: "Ana lives in Porto".into(),
            at: 0,
            confidence: 1.0,
            why: String::new(),
            reliability: reliability.into(),
            sources: Vec::new(),
            score: 1.0,
            parts: crate::memory::ScoreParts::default(),
        };
        assert_eq!(memory_line(&hit("reliable")), "Ana lives in Porto");
        assert_eq!(memory_line(&hit("contradicted")), "Ana lives in Porto (contradicted: do not assert it as fact)");
        assert_eq!(
            [trait_label(0.95), trait_label(0.5), trait_label(0.35)],
            ["well established", "likely", "uncertain"]
        );
    }

    /// Where the message is, and whether a sections message comes before it (a second system
    /// message after the mode's; the persona, at 0, is never the mode's prompt).
    fn layout(req: &ChatRequest) -> (usize, bool) {
        let user = req.messages.iter().rposition(|m| m.role == ChatRole::User).unwrap();
        let system = |i: usize| req.messages[i].role == ChatRole::System;
        (user, user >= 3 && system(user - 1) && system(user - 2))
    }

    /// The mode's prompt: the system message before the sections, or before the message.
    fn instructions(req: &ChatRequest) -> &str {
        let (user, sections) = layout(req);
        &req.messages[user - 1 - usize::from(sections)].content
    }

    /// This turn's sections: a system message between the mode's prompt and the message.
    fn sections(req: &ChatRequest) -> Option<&str> {
        let (user, sections) = layout(req);
        sections.then(|| req.messages[user - 1].content.as_str())
    }

    #[test]
    fn the_next_prompt_starts_with_the_prefix_decoded_ahead() {
        let topic = TopicContext::default();
        let traits = vec![reliable("name", "Ada", "identity")];
        let wm = wm();
        let req = generation_request(&input(Mode::Respond, &wm, &traits, &topic));
        // Before anything is typed: everything up to the mode's prompt, left open.
        let before = conversation_prefix(&wm, None, "");
        let open = before.messages.len() - 1;
        assert_eq!(before.messages[..], req.messages[..=open]);
        assert_eq!(before.messages[open].content, RESPOND.trim());
        assert_eq!(before.kind, req.kind);
        // With the whole message typed and its sections previewed: the whole prompt, then the
        // reply's header, open.
        let n = req.messages.len();
        let previewed = conversation_prefix(&wm, Some("next May"), sections(&req).unwrap());
        assert_eq!(previewed.messages[..n], req.messages[..]);
        assert_eq!(previewed.messages.len(), n + 1);
        assert_eq!((previewed.messages[n].role, previewed.messages[n].content.as_str()), (ChatRole::Assistant, ""));
        // Without a preview the draft follows the mode's prompt: a prompt with no sections.
        let typed = conversation_prefix(&wm, Some("next May"), "");
        let bare = generation_request(&input(Mode::Respond, &wm, &[], &topic));
        assert_eq!(typed.messages[..bare.messages.len()], bare.messages[..]);
        // A turn later the conversation only grew: the earlier prompt's turns are still its start.
        let mut longer = wm.clone();
        longer.push(WmEntry { role: "user".into(), content: "next May".into(), created_at: 3 });
        longer.push(WmEntry { role: "assistant".into(), content: "Lovely.".into(), created_at: 4 });
        let later = generation_request(&input(Mode::Clarify, &longer, &traits, &topic));
        assert_eq!(later.messages[..3], req.messages[..3]);
    }

    fn wm() -> Vec<WmEntry> {
        vec![
            WmEntry { role: "user".into(), content: "I'm planning a trip to Lisbon".into(), created_at: 1 },
            WmEntry { role: "assistant".into(), content: "Lovely. When?".into(), created_at: 2 },
        ]
    }

    fn input<'a>(
        mode: Mode,
        wm: &'a [WmEntry],
        traits: &'a [TraitRow],
        topic: &'a TopicContext,
    ) -> GenerationInput<'a> {
        GenerationInput {
            mode,
            user_text: "next May",
            working_memory: wm,
            traits,
            topic,
            memories: &[],
            prompt_tokens: 2,
            notes: &[],
            style: &[],
        }
    }

    #[test]
    fn a_superseded_value_reads_as_past_with_the_day_it_stopped() {
        let mut t = TraitRow {
            key: "location".into(),
            value: "Porto".into(),
            category: "core".into(),
            confidence: 0.9,
            reliability: "superseded".into(),
            until: Some(1_773_316_800), // 12 Mar 2026, 12:00 UTC
        };
        assert_eq!(trait_line(&t), "- location: used to be Porto (until 12 Mar 2026; past, no longer true)");
        t.until = None;
        assert_eq!(trait_line(&t), "- location: used to be Porto (past, no longer true)");
    }

    #[test]
    fn respond_carries_soul_mode_prompt_context_and_turns() {
        let traits = vec![reliable("name", "Ada", "identity")];
        let topic = TopicContext {
            gists: vec![
                Gist {
                    gist_type: "intent".into(),
                    content: "wants a city break".into(),
                    confidence: 7.0,
                    cold_start: false,
                },
                Gist {
                    gist_type: "cold_start".into(),
                    content: "placeholder".into(),
                    confidence: 5.0,
                    cold_start: true,
                },
            ],
            facts: vec![("destination".into(), "Lisbon".into())],
            world_state: vec![],
            fok: 0.0,
        };
        let wm = wm();
        let req = generation_request(&input(Mode::Respond, &wm, &traits, &topic));
        // Persona, the turns, the mode's prompt, this turn's sections, the message.
        assert_eq!(req.messages[0].content, format!("{} {}", SOUL.trim(), IDENTITY_CORE.trim()));
        assert_eq!(req.messages.len(), 6);
        assert_eq!(req.messages[1].role, ChatRole::User);
        assert_eq!(req.messages[2].role, ChatRole::Assistant);
        assert_eq!(req.messages[3].role, ChatRole::System);
        assert_eq!(req.messages[4].role, ChatRole::System);
        assert_eq!(instructions(&req), RESPOND.trim());
        assert_eq!((req.messages[5].role, req.messages[5].content.as_str()), (ChatRole::User, "next May"));
        let system = sections(&req).unwrap();
        assert!(system.starts_with("What you know about the user:\n- name: Ada"), "{system}");
        assert!(system.contains("- destination: Lisbon"));
        assert!(system.contains("wants a city break"));
        assert!(!system.contains("placeholder"), "cold-start gists stay out");
        assert_eq!(req.max_tokens, 512);
        assert_eq!(req.kind, PromptKind::Conversation);
    }

    #[test]
    fn each_mode_uses_its_own_prompt_and_cap() {
        let topic = TopicContext::default();
        let wm = wm();
        let clarify = generation_request(&input(Mode::Clarify, &wm, &[], &topic));
        assert!(instructions(&clarify).starts_with(CLARIFY.trim()));
        assert_eq!(clarify.max_tokens, 96);
        let ack = generation_request(&input(Mode::Acknowledge, &wm, &[], &topic));
        assert!(instructions(&ack).starts_with(ACKNOWLEDGE.trim()));
        assert!(!ack.messages[0].content.contains(IDENTITY_CORE.trim()));
        assert_eq!(ack.messages.len(), 3, "a short greeting gets no working memory, and it has no sections");
        assert_eq!(ack.max_tokens, 48);
    }

    #[test]
    fn empty_sections_are_left_out() {
        let topic = TopicContext::default();
        let req = generation_request(&input(Mode::Respond, &[], &[], &topic));
        assert_eq!(instructions(&req), RESPOND.trim());
        assert_eq!(sections(&req), None, "no sections, no message for them");
        assert_eq!(req.messages.len(), 3);
    }

    #[test]
    fn style_directives_close_the_system_prompt_and_micro_preferences_are_not_facts() {
        let topic = TopicContext::default();
        let traits = vec![reliable("response_length", "short", "micro_preference")];
        let style = vec!["Keep replies brief: a few sentences.".to_string()];
        let mut g = input(Mode::Respond, &[], &traits, &topic);
        g.style = &style;
        let req = generation_request(&g);
        let system = sections(&req).unwrap();
        assert_eq!(system, "How to reply to this user:\n- Keep replies brief: a few sentences.");
        assert!(!system.contains("reply length"), "a micro-preference is a directive, not a trait line");
        g.style = &[];
        assert_eq!(sections(&generation_request(&g)), None);
    }

    #[test]
    fn triage_and_tiebreak_requests_are_strict_json() {
        let s = RouterSignals::from_text("add milk to my list", &Default::default());
        let req = triage_request("add milk to my list", &s, &wm(), &TriageContext::default());
        assert!(matches!(&req.format, ResponseFormat::JsonSchema { name, .. } if name == "triage"));
        let body: Value = serde_json::from_str(&req.messages[1].content).unwrap();
        assert_eq!(body["message"], "add milk to my list");
        assert_eq!(body["recent_turns"].as_array().unwrap().len(), 2);
        let tb = tiebreak_request(&json!({"A": "RESPOND", "B": "CLARIFY"}));
        assert!(matches!(&tb.format, ResponseFormat::JsonSchema { name, .. } if name == "tiebreak"));
        assert_eq!(tb.max_tokens, 16);
    }
}
