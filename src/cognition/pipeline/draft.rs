//! The next reply's prompt, decoded before Enter (issue 22: the first token on the built-in
//! model). Between turns the built-in model has nothing to do; the engine gives it the start
//! of the coming reply prompt (persona, conversation, the likeliest mode's prompt) and, while
//! the user types, the sections the turn would add for the message as it stands (a preview
//! that writes nothing, `turn::preview`) and the message. At Enter the model finds all that in
//! its KV cache and decodes only what differs: the reply's header when the message was sent as
//! last handed over, else the words typed since the last pause; when the turn's sections differ
//! from the preview's, from the first difference on (the message too).
//!
//! Nothing here decides what the reply says. The reply's prompt is always built from the
//! message as sent, and the built-in model reuses a cached token only where the new prompt
//! has the same token at the same position from the start ([`crate::llm::Provider::prefill`]),
//! so a draft that changed costs time, never a stale reply.

use super::{Engine, model, prompts};
use crate::config::Role;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What the engine knows of the message being typed.
#[derive(Default)]
pub(super) struct Drafts {
    /// The latest draft and its thread, kept for the prefill after a turn that was still
    /// running when it came.
    latest: Mutex<Option<(String, String)>>,
    /// Turns under way: a draft then waits for the turn's end, since decoding it against the
    /// conversation as it was would evict the running turn's own message and reply.
    running: AtomicUsize,
}

/// Marks a turn as running until dropped.
pub(super) struct Running<'a>(&'a AtomicUsize);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Drafts {
    /// A turn starts: the draft it answers is spent.
    pub(super) fn turn_started(&self) -> Running<'_> {
        self.running.fetch_add(1, Ordering::SeqCst);
        *self.latest.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
        Running(&self.running)
    }

    fn set(&self, thread: &str, text: &str) {
        let kept = (!text.is_empty()).then(|| (thread.to_string(), text.to_string()));
        *self.latest.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = kept;
    }

    fn for_thread(&self, thread: &str) -> Option<String> {
        let latest = self.latest.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        latest.as_ref().filter(|(t, _)| t == thread).map(|(_, text)| text.clone())
    }
}

impl Engine {
    /// The user has typed `text` (trimmed and privacy-masked as the message would be) for
    /// `thread` (`None`: the most recently active one, where intake would put it). Has the
    /// built-in reply model decode the reply prompt up to the message's end now, unless a
    /// turn is running (its end does it). Returns once queued; any call goes first.
    pub async fn prefill_draft(&self, thread: Option<&str>, text: &str) {
        if !model::builtin_primary(self) {
            return;
        }
        let thread = match thread {
            Some(t) => t.to_string(),
            None => match self.db.call(|c| crate::store::ChatRepo(c).latest_thread()).await {
                Ok(Some(t)) => t,
                Ok(None) => return,
                Err(e) => {
                    tracing::debug!("no draft prefill: {}", crate::describe(&e));
                    return;
                }
            },
        };
        self.drafts.set(&thread, text);
        if text.is_empty() || self.drafts.running.load(Ordering::SeqCst) > 0 {
            return;
        }
        self.prefill_reply(&thread, Some(text)).await;
    }

    /// After a turn: the thread's next reply prompt, with the draft typed meanwhile if any.
    pub(super) async fn prefill_next_reply(&self, thread_id: &str) {
        if !model::builtin_primary(self) {
            return;
        }
        let draft = self.drafts.for_thread(thread_id);
        self.prefill_reply(thread_id, draft.as_deref()).await;
    }

    /// Queue the decoding of the start of `thread`'s next reply prompt: the persona and the
    /// conversation as the next turn will read it, then the draft with the sections the turn
    /// would give it ([`Engine::preview`]). A failed read only costs the head start.
    async fn prefill_reply(&self, thread: &str, draft: Option<&str>) {
        if let Some(text) = draft
            && let Some(p) = self.preview(thread, text).await
        {
            let req = prompts::conversation_prefix(&p.conversation, Some(text), &p.sections);
            return self.llm.prefill(Role::Primary, &req).await;
        }
        let (thread, now) = (thread.to_string(), crate::store::now_ts());
        match self.db.call(move |c| crate::store::TurnRepo(c).conversation(&thread, now)).await {
            Ok(history) => self.llm.prefill(Role::Primary, &prompts::conversation_prefix(&history, draft, "")).await,
            Err(e) => tracing::debug!("no prefill for the next reply: {}", crate::describe(&e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_draft_is_kept_for_its_thread_until_a_turn_starts() {
        let d = Drafts::default();
        d.set("t", "next May");
        assert_eq!(d.for_thread("t").as_deref(), Some("next May"));
        assert_eq!(d.for_thread("other"), None, "another conversation's prompt never gets it");
        let running = d.turn_started();
        assert_eq!(d.for_thread("t"), None, "the draft is the message being answered");
        assert_eq!(d.running.load(Ordering::SeqCst), 1);
        d.set("t", "and then");
        drop(running);
        assert_eq!(d.running.load(Ordering::SeqCst), 0);
        assert_eq!(d.for_thread("t").as_deref(), Some("and then"), "typed during the turn: for the prefill after it");
        d.set("t", "");
        assert_eq!(d.for_thread("t"), None);
    }
}
