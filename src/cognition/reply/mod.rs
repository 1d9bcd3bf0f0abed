//! Who writes the reply: the model, a template, or memory.
//!
//! A 135M model cannot be trusted with what the deterministic side already knows. Asked
//! "what am I allergic to?" with the answer in its prompt, SmolLM2-135M still invents one,
//! and it answers "Hi, I'm Ada" with condolences. So with the built-in model:
//! - acknowledgements, greetings, thanks and a few fixed small-talk questions get a short
//!   reply from [`templates`], reflecting what the message just taught us;
//! - questions about the user's own traits and facts are answered from memory by [`own`],
//!   naming the source, and "I don't know that yet" when nothing is stored;
//!
//! and with any model, an ACT turn whose planner produced nothing usable answers from what
//! recall found instead of apologising. Everything else, open questions above all, stays
//! with the model. [`ReplySource`] records which one answered, for the Routing pane, the
//! audit and `ask --json`.

pub mod own;
pub mod templates;

pub use crate::vocab::report::ReplySource;

/// How sure a reply should sound about a trait of that confidence (docs/cognition.md §8.2 labels):
/// the prompt's trait lines and memory's answers use the same words.
pub fn trait_label(confidence: f64) -> &'static str {
    if confidence > 0.7 {
        "well established"
    } else if confidence >= 0.4 {
        "likely"
    } else {
        "uncertain"
    }
}

/// A stable, well-spread pick among `n` variants for `text`: the same message gets the same
/// wording (so replays reproduce), different messages vary.
pub(crate) fn pick(text: &str, salt: u64, n: usize) -> usize {
    // FNV-1a over the bytes, then one splitmix step to spread the low bits.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ salt;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    crate::SplitMix64(h).below(n)
}

/// The template reply for a turn the built-in model would answer worse, if there is one:
/// acknowledgements (with what the message taught us), and fixed questions about the
/// assistant itself in any answering mode.
pub fn template_reply(
    text: &str,
    mode: crate::cognition::router::Mode,
    social_reason: Option<&str>,
    name: Option<&str>,
) -> Option<String> {
    use crate::cognition::router::Mode;
    if matches!(mode, Mode::Acknowledge | Mode::Respond | Mode::Clarify) {
        // "how are you?" reads as a greeting to the social filter, but wants an answer; "bye!"
        // reads as nothing in particular to the router, but wants a goodbye.
        if let Some(t) = templates::about_me(text) {
            return Some(t);
        }
        if templates::is_farewell(text) {
            return Some(templates::acknowledge(text, templates::Occasion::Goodbye, name, &[]));
        }
    }
    match mode {
        Mode::Acknowledge => {
            let learned = templates::taught(text);
            Some(templates::acknowledge(text, templates::Occasion::of(text, social_reason), name, &learned))
        }
        Mode::Respond | Mode::Clarify => {
            // "I live in Porto": a plain statement about oneself wants a note, not an essay.
            let learned = templates::taught(text);
            templates::is_self_statement(text, &learned)
                .then(|| templates::acknowledge(text, templates::Occasion::Plain, name, &learned))
        }
        Mode::Act | Mode::Ignore => None,
    }
}

/// A recalled memory must match a question at least this well to stand as its answer when
/// the planner found no action (recall's confidence: the share of the question's content
/// words it holds, or its cosine to the question).
pub const RECALL_ANSWER_MIN_MATCH: f64 = 0.5;

/// The answer memory gives: the own-question `q` answered from `mem` (or "I don't know that
/// yet"), else, when `any_recall` holds the question, the best recalled memory that matches it
/// well enough and tells it something.
pub fn memory_answer(
    q: Option<&own::OwnQuestion>,
    mem: &own::OwnMemory,
    hits: &[crate::memory::recall::Hit],
    any_recall: Option<&str>,
) -> Option<own::OwnAnswer> {
    if let Some(a) = q.and_then(|q| own::answer(q, mem, hits)) {
        return Some(a);
    }
    let question = any_recall?;
    hits.iter()
        .find(|h| h.confidence >= RECALL_ANSWER_MIN_MATCH && tells_more(question, &h.text))
        .map(own::recall_answer)
}

/// Whether `memory` holds a content word `question` does not. A memory made only of the
/// question's own words matches it well (half of "which markets are open this afternoon?" is
/// in the concept "afternoon: afternoon") and answers nothing: read back, it is an echo.
fn tells_more(question: &str, memory: &str) -> bool {
    let asked = crate::memory::recall::query_terms(question);
    crate::memory::recall::query_terms(memory).iter().any(|w| !asked.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::recall::{Hit, ScoreParts};

    fn hit(layer: &'static str, id: i64, text: &str, confidence: f64) -> Hit {
        Hit {
            layer,
            id,
            text: text.into(),
            at: 0,
            confidence,
            why: String::new(),
            reliability: "reliable".into(),
            sources: Vec::new(),
            score: confidence,
            parts: ScoreParts::default(),
        }
    }

    #[test]
    fn a_memory_that_only_repeats_the_question_s_words_is_not_an_answer() {
        let question = "Which markets are open this afternoon?";
        let echo = hit("concept", 1, "afternoon: afternoon", 0.5);
        let told = hit("episode", 7, "The Saturday market at Bolhão opens at 8 and closes at 13", 0.5);
        let mem = own::OwnMemory::default();

        assert_eq!(memory_answer(None, &mem, std::slice::from_ref(&echo), Some(question)), None);
        let answer = memory_answer(None, &mem, &[echo, told], Some(question)).expect("the memory that tells something");
        assert_eq!(answer.sources, ["episode:7"]);
        assert!(answer.text.contains("Bolhão"), "{}", answer.text);
    }

    #[test]
    fn recalled_memories_answer_only_when_the_caller_gives_the_question() {
        let told = hit("fact", 3, "wifi password: the one on the router's sticker", 0.9);
        let mem = own::OwnMemory::default();
        assert_eq!(memory_answer(None, &mem, std::slice::from_ref(&told), None), None);
        assert!(memory_answer(None, &mem, &[told], Some("what's the wifi password?")).is_some());
    }
}
