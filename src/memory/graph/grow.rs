//! Neurogenesis (parameters §12.3, docs/cognition.md §9.4.5): a message the graph does not know
//! yet, but that is near enough to be about something, becomes a probationary node with a
//! deterministic id; later firings confirm it, and one never confirmed expires.

use sha2::{Digest, Sha256};

/// Top-1 similarity at or above this: the graph knows it.
pub const KNOWN: f64 = 0.60;
/// Below this: noise.
pub const NOISE: f64 = 0.28;
/// Up to this: novel (grow a node). Between this and [`KNOWN`]: a near miss, no node.
pub const NOVEL_MAX: f64 = 0.58;
/// Fewer tokens than this never make a node.
pub const MIN_TOKENS: usize = 3;
/// Short fillers that never make a node, whatever their length.
pub const BLOCKED: [&str; 10] = ["hello", "thanks", "yes", "no", "ok", "hi", "bye", "got it", "sure", "yeah"];
/// A grown node's threshold, and the weight of the edge from each of the message's seeds.
pub const GROWN_THRESHOLD: f64 = 0.8;
pub const SEED_EDGE: f64 = 0.15;
/// A grown node's name is cut to this many characters (one very long word).
pub const MAX_NAME_CHARS: usize = 120;
/// Firings that confirm a probationary node (v2 design: 2 firings or 1 explicit positive outcome).
pub const CONFIRM_FIRINGS: i64 = 2;
/// A probationary node still unconfirmed after this long is dropped. Seconds, named in
/// seconds (the reference compared seconds with a limit named in turns).
pub const PROBATION_TTL_S: i64 = 14 * 86_400;
/// New nodes per day.
pub const MAX_GROWN_PER_DAY: i64 = 60;

/// What the gate made of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Novelty {
    Blocked,
    Known,
    Noise,
    Novel,
    NearMiss,
}

/// Lowercase `[a-z0-9']+` tokens joined by single spaces.
pub fn normalise(text: &str) -> String {
    let lower = text.to_lowercase();
    let tokens: Vec<&str> = lower
        .split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '\''))
        .filter(|t| !t.is_empty())
        .collect();
    tokens.join(" ")
}

/// The gates, in the reference's order, over the normalised text and the top-1 similarity to
/// an existing concept (`None`: the graph is empty, which counts as noise-free novel).
pub fn novelty(normalised: &str, top1: Option<f64>) -> Novelty {
    if normalised.split(' ').filter(|t| !t.is_empty()).count() < MIN_TOKENS || BLOCKED.contains(&normalised) {
        return Novelty::Blocked;
    }
    match top1 {
        Some(s) if s >= KNOWN => Novelty::Known,
        Some(s) if s < NOISE => Novelty::Noise,
        Some(s) if s <= NOVEL_MAX => Novelty::Novel,
        Some(_) => Novelty::NearMiss,
        None => Novelty::Novel,
    }
}

/// The deterministic id: `auto:` and the first 12 hex characters of SHA-256 of the node's
/// name ([`grown_name`]; the reference hashed the whole message with SHA-1). Messages that name
/// the same thing get the same id, so a node recurs instead of one per wording.
pub fn graph_key(name: &str) -> String {
    let d = Sha256::digest(name.as_bytes());
    let hex: String = d.iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("auto:{hex}")
}

/// Words longest in a content phrase: a noun chunk's head comes last in English, so a longer
/// run keeps its last words ("the old climbing gym" → "old climbing gym").
pub const MAX_PHRASE_WORDS: usize = 3;

/// Words that hold a chat line together without naming anything, beyond
/// [`crate::text::is_content_word`]'s function words: auxiliaries, prepositions, conjunctions,
/// pronouns, everyday verbs and their forms, hedges and opinion words, interjections, and
/// contractions typed without their apostrophe (the second half of the list: the most frequent
/// non-names of the chit-chat dev calibration half, `examples/graph_names.rs`). A phrase
/// is what is left between them, so the list errs on dropping a word rather than gluing two
/// things into one name.
#[rustfmt::skip]
const NOT_NAMING: &[&str] = &[
    "am", "is", "are", "was", "were", "be", "been", "being", "do", "does", "did", "doing", "done", "have", "has",
    "had", "having", "will", "would", "can", "could", "should", "shall", "may", "might", "must", "gonna", "wanna",
    "gotta", "to", "of", "in", "on", "at", "for", "with", "about", "from", "into", "onto", "over", "under", "after",
    "before", "by", "as", "than", "like", "up", "down", "out", "off", "around", "through", "since", "until", "and",
    "or", "but", "so", "because", "if", "then", "when", "while", "that", "which", "who", "whom", "whose", "what",
    "where", "why", "how", "it", "its", "he", "him", "his", "she", "her", "hers", "they", "them", "their", "theirs",
    "this", "these", "those", "there", "here", "ours", "yourselves", "themselves", "itself", "one", "ones", "just",
    "really", "very", "too", "also", "still", "even", "only", "pretty", "kinda", "sorta", "quite", "back", "again",
    "always", "never", "ever", "often", "sometimes", "maybe", "actually", "definitely", "probably", "totally",
    "already", "now", "today", "tonight", "tomorrow", "yesterday", "soon", "later", "once", "most", "more", "less",
    "other", "another", "such", "same", "else", "well", "got", "gets", "getting", "going", "goes", "went", "gone",
    "come", "comes", "came", "coming", "love", "loves", "loved", "loving", "likes", "liked", "hate", "hates",
    "hated", "enjoy", "enjoys", "enjoyed", "feel", "feels", "felt", "thinks", "thought", "knows", "knew", "wants",
    "wanted", "needs", "needed", "says", "tells", "told", "makes", "made", "take", "takes", "took", "taken", "saw",
    "seen", "play", "plays", "played", "playing", "watch", "watched", "tried", "used", "guess", "remember", "call",
    "called", "talk", "talks", "talked", "talking", "saying", "thinking", "looking", "trying", "making", "having",
    "doing", "good", "great", "nice", "cool", "fun", "favorite", "favourite", "best", "better", "bad", "worse",
    "worst", "little", "big", "kind", "sort", "thing", "things", "stuff", "someone", "something", "anything",
    "everything", "nothing", "anyone", "everyone", "people", "person", "way", "time", "times", "yes", "yeah", "yep",
    "nope", "ok", "okay", "oh", "wow", "haha", "lol", "hmm", "um", "uh", "hey", "hello", "hi", "thanks", "thank",
    "please", "sure", "right", "agree", "agreed", "disagree", "im", "ive", "id", "ill", "youre", "thats", "dont",
    "cant", "wont", "didnt", "doesnt", "isnt", "wasnt", "whats", "hows", "theres", "sounds", "hahaha", "hahah",
    "hmmm", "ooh", "ya", "dude", "man", "gosh", "goodness", "sorry", "awesome", "amazing", "crazy", "craziest",
    "weird", "funny", "interesting", "glad", "excited", "sweet", "hope", "wish", "wonder", "imagine", "heard",
    "hear", "find", "meet", "read", "happened", "learned", "taking", "able", "hard", "long", "real", "far", "close",
    "least", "yet", "though", "although", "basically", "honestly", "sense", "wait", "day",
];

/// Whether a normalised token can be part of a name: a content word, not a chat filler, and not
/// a contraction ("i'm", "don't").
fn naming(word: &str) -> bool {
    crate::text::is_content_word(word) && !word.contains('\'') && !NOT_NAMING.contains(&word)
}

/// The content phrases of normalised text, in order, each once: the runs of naming words, each
/// cut to its last [`MAX_PHRASE_WORDS`].
pub fn content_phrases(normalised: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut run: Vec<&str> = Vec::new();
    let close = |run: &mut Vec<&str>, out: &mut Vec<String>| {
        if !run.is_empty() {
            let phrase = run[run.len().saturating_sub(MAX_PHRASE_WORDS)..].join(" ");
            if !out.contains(&phrase) {
                out.push(phrase);
            }
            run.clear();
        }
    };
    for w in normalised.split(' ').filter(|w| !w.is_empty()) {
        if naming(w) {
            run.push(w);
        } else {
            close(&mut run, &mut out);
        }
    }
    close(&mut run, &mut out);
    out
}

/// A grown node's name: the message's first content phrase (what a chat line is about tends to
/// come first: "just got back from the gym" → "gym"), cut to [`MAX_NAME_CHARS`]. `None`: the
/// message names nothing, and grows no node.
pub fn grown_name(normalised: &str) -> Option<String> {
    let first = content_phrases(normalised).into_iter().next()?;
    if first.chars().count() <= MAX_NAME_CHARS {
        return Some(first);
    }
    Some(first.chars().take(MAX_NAME_CHARS).collect())
}

/// Whether a probationary node is confirmed (`positive`: an explicit positive outcome while it fired).
pub fn confirmed(fired_count: i64, positive: bool) -> bool {
    fired_count >= CONFIRM_FIRINGS || positive
}

/// Whether an unconfirmed node is past its probation.
pub fn expired(created_at: i64, now: i64) -> bool {
    now - created_at > PROBATION_TTL_S
}

#[cfg(test)]
mod tests {
    use super::*;

    /// parameters §12.6 neurogenesis vectors.
    #[test]
    fn recorded_gates_and_ids() {
        let text = normalise("Tell me about giraffe codewords");
        assert_eq!(novelty(&text, Some(0.76)), Novelty::Known);
        assert_eq!(novelty(&text, Some(0.32)), Novelty::Novel);
        assert_eq!(novelty(&text, Some(0.24)), Novelty::Noise);
        assert_eq!(novelty(&text, Some(0.59)), Novelty::NearMiss);
        for filler in ["hello", "thanks", "Hi!", "got it", "ok sure"] {
            assert_eq!(novelty(&normalise(filler), Some(0.32)), Novelty::Blocked, "{filler}");
        }
        assert_eq!(
            graph_key(&normalise("  Giraffe concept for codeword  ")),
            graph_key("giraffe concept for codeword")
        );
        assert_ne!(graph_key("giraffe concept for codeword"), graph_key("giraffe concept for codewords"));
        assert_eq!(graph_key("x").len(), "auto:".len() + 12);
    }

    fn name(line: &str) -> Option<String> {
        grown_name(&normalise(line))
    }

    /// Lines from /work/shared/data/chitchat/topic_shift_dev.jsonl (sessions named): the name
    /// is what the line is about, not the whole line.
    #[test]
    fn chitchat_lines_are_named_after_their_content() {
        // ccc-ts-0228, ccc-ts-0211: two wordings, one gym.
        assert_eq!(name("Just got back from the gym kinda tired").as_deref(), Some("gym"));
        assert_eq!(
            name("haha I guess you're right, going to the gym will give you some pretty decent super powers!")
                .as_deref(),
            Some("gym")
        );
        // ccc-ts-0324: coffee three times over, three wordings.
        for line in ["I had coffee before. It's an okay taste.", "Or when you make coffee"] {
            assert_eq!(name(line).as_deref(), Some("coffee"), "{line}");
        }
        // ccc-ts-0212, ccc-ts-0450, ccc-ts-0223.
        assert_eq!(name("My dog could be my most loyal best friend!").as_deref(), Some("dog"));
        assert_eq!(name("I play piano and guitar").as_deref(), Some("piano"));
        assert_eq!(name("Are we talking like pizza chains or just anything?").as_deref(), Some("pizza chains"));
        assert_eq!(
            content_phrases(&normalise(
                "I play a little bit of guitar and piano, but in commercial music you focus on the production"
            )),
            ["guitar", "piano", "commercial music", "focus", "production"]
        );
        // Nothing named: no node.
        assert_eq!(name("I agree."), None);
        assert_eq!(name("Oh, I don't know that I would call it that"), None);
    }

    #[test]
    fn recurring_content_keeps_one_id() {
        let a = name("Just got back from the gym kinda tired");
        let b = name("going to the gym will give you some pretty decent super powers");
        assert_eq!(a.as_deref().map(graph_key), b.as_deref().map(graph_key));
        let long = "x".repeat(300);
        assert_eq!(name(&long).map(|n| n.chars().count()), Some(MAX_NAME_CHARS));
        assert_eq!(name("the old red brick climbing gym").as_deref(), Some("brick climbing gym"));
    }

    #[test]
    fn probation_confirms_and_expires() {
        assert!(!confirmed(1, false));
        assert!(confirmed(2, false) && confirmed(0, true));
        assert!(!expired(0, PROBATION_TTL_S) && expired(0, PROBATION_TTL_S + 1));
    }
}
