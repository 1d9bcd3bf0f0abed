//! The reply prompt's sections for a message still being typed (issue 22: the first token on
//! the built-in model). The draft goes through the turn's own deterministic stages, Phase A,
//! the topic stage with recall, the adaptive layer, inside a savepoint that is always rolled
//! back ([`crate::store::rolled_back`]), so the preview sees what the turn would see and
//! leaves no topic row, detector state, trait, counter or TTL behind. Nothing is announced
//! and no model but the embedding one runs (called on its provider directly: a preview is
//! not a call a session log records).
//!
//! What it cannot know without side effects (the concept graph's lines, the uncertainty
//! check's notes, a name or focus note, the mode when it is not RESPOND) it leaves out. A
//! preview that differs from the turn's sections costs the decoding of what differs, never
//! the reply: the reply's prompt is built by the turn, and the built-in model reuses only
//! the tokens it shares with what was decoded ahead.

use super::super::{Engine, phases, prompts};
use crate::cognition::intent::Analysis;
use crate::cognition::router::Mode;
use crate::config::Role;
use crate::store::WmEntry;

/// What the turn would put before a message: the conversation and the sections.
pub(in crate::cognition::pipeline) struct Preview {
    pub conversation: Vec<WmEntry>,
    pub sections: String,
}

impl Engine {
    /// The preview of a RESPOND turn for `text` on `thread`; `None` when a stage fails or the
    /// message is social (a template answers it).
    pub(in crate::cognition::pipeline) async fn preview(&self, thread: &str, text: &str) -> Option<Preview> {
        let lower = crate::text::normalize(text);
        let msg = Analysis::new(text, &lower);
        if msg.social.is_some() {
            return None;
        }
        let embedding = match (msg.words.is_empty(), self.llm.route(Role::Embedding)) {
            (false, Some(route)) => {
                let mut v = route.provider.embed(&route.model, &[text.to_string()]).await.ok()?;
                (!v.is_empty()).then(|| v.swap_remove(0))
            }
            _ => None,
        };
        let (thread, body, now) = (thread.to_string(), text.to_string(), crate::store::now_ts());
        let params = (self.topic_params.clone(), self.boundary_params.clone());
        let prompt_tokens = msg.signals.prompt_token_count;
        let read = self.db.call(move |c| {
            crate::store::rolled_back(c, || {
                let a = phases::phase_a(c, &thread, "", None, None, now)?;
                let (stage, memories) =
                    phases::topic_and_recall(c, &thread, &body, embedding.as_deref(), now, (&params.0, &params.1))?;
                let last_reply_words = a.last_reply_words();
                let t =
                    crate::cognition::adaptive::state::TurnInput { text: &body, last_reply_words, answers: true, now };
                let adaptive = crate::cognition::adaptive::state::prepare(c, &t)?;
                Ok((a, stage, memories, adaptive))
            })
        });
        let (a, stage, hits, adaptive) = match read.await {
            Ok(r) => r,
            Err(e) => {
                tracing::debug!("no preview of the reply prompt: {}", crate::describe(&e));
                return None;
            }
        };
        let memories: Vec<String> = hits.iter().map(prompts::memory_line).collect();
        let style = adaptive.lines_for(true, crate::cognition::adaptive::BUILTIN_MAX_DIRECTIVES);
        let input = prompts::GenerationInput {
            mode: Mode::Respond,
            user_text: text,
            working_memory: &a.conversation,
            traits: &a.traits,
            topic: &stage.context,
            memories: &memories,
            prompt_tokens,
            notes: &[],
            style: &style,
        };
        let sections = prompts::turn_sections(&input);
        Some(Preview { conversation: a.conversation, sections })
    }
}
