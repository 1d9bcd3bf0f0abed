//! What a message is about, from its words alone: its salience, its content words (stop words,
//! fillers and laughter removed), whether it is contentless, how much it should move the
//! detector, and the name a new topic gets (docs/cognition.md §5.1, §5.2).

use super::ClassifierParams;

/// docs/cognition.md §5.1 message salience: 0.5; +0.2 over 100 characters, else +0.1 over 50; +0.15 with a `?`;
/// +0.15 if an urgency word appears (as a substring, like the original); at most 1.0.
pub fn message_salience(text: &str) -> f32 {
    const URGENT: [&str; 8] = ["urgent", "asap", "immediately", "help", "error", "bug", "broken", "crash"];
    let mut score: f32 = 0.5;
    let chars = text.chars().count();
    if chars > 100 {
        score += 0.2;
    } else if chars > 50 {
        score += 0.1;
    }
    if text.contains('?') {
        score += 0.15;
    }
    let lower = text.to_lowercase();
    if URGENT.iter().any(|w| lower.contains(w)) {
        score += 0.15;
    }
    score.min(1.0)
}

/// English function words and conversational verbs that name no topic ("tell", "know", "want"),
/// dropped from names and not counted as content. Sorted, so lookups are a binary search.
#[rustfmt::skip]
pub const STOP_WORDS: &[&str] = &[
    "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "anything", "are", "aren",
    "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could",
    "couldn", "did", "didn", "do", "does", "doesn", "doing", "don", "down", "during", "each", "else", "even", "ever",
    "everything", "few", "for", "from", "further", "get", "go", "going", "got", "had", "has", "hasn", "have", "haven",
    "having", "he", "help", "her", "here", "hers", "herself", "him", "himself", "his", "how", "if", "im", "in",
    "into", "is", "isn", "it", "its", "itself", "ive", "just", "know", "let", "like", "ll", "make", "many", "may",
    "maybe", "me", "might", "mine", "more", "most", "much", "must", "my", "myself", "need", "no", "nor", "not", "now",
    "of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "please",
    "re", "really", "right", "said", "same", "say", "shall", "she", "should", "shouldn", "so", "some", "something",
    "still", "such", "tell", "than", "that", "thats", "the", "their", "theirs", "them", "themselves", "then", "there",
    "these", "they", "thing", "things", "think", "this", "those", "through", "to", "too", "under", "until", "up",
    "us", "ve", "very", "want", "was", "wasn", "way", "we", "well", "were", "weren", "what", "whats", "when", "where",
    "which", "while", "who", "whom", "why", "will", "with", "won", "would", "wouldn", "yet", "you", "your", "yours",
    "yourself", "yourselves",
];

/// Chat fillers: acknowledgements, greetings, laughter. Dropped like stop words; on their own they
/// make a message contentless. Sorted.
#[rustfmt::skip]
pub const FILLERS: &[&str] = &[
    "ah", "alright", "aw", "bye", "cool", "eh", "fine", "good", "great", "haha", "hahaha", "hehe", "hello", "hey",
    "hi", "hm", "hmm", "hmmm", "kk", "lmao", "lol", "nah", "nice", "nope", "oh", "ok", "okay", "pls", "rofl", "sure",
    "thank", "thanks", "thanx", "thx", "ty", "uh", "um", "wow", "ya", "yah", "yeah", "yep", "yes", "yup",
];

pub(super) fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok() || FILLERS.binary_search(&word).is_ok() || is_laughter(word)
}

/// "hahahaha", "hehe", "ahah": only h/a/e letters, with both an h and a vowel, 4 or more long.
pub(super) fn is_laughter(word: &str) -> bool {
    word.len() >= 4
        && word.bytes().all(|b| matches!(b, b'h' | b'a' | b'e'))
        && word.contains('h')
        && word.bytes().any(|b| b != b'h')
}

/// Lowercase words with everything not alphanumeric treated as a separator.
pub(super) fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase)
}

/// First-person words as [`words`] splits them ("I'm" → "i", "m").
const FIRST_PERSON: &[&str] = &["i", "im", "ive", "me", "mine", "my", "myself"];

/// Whether `text` speaks in the first person: the mark of people talking about themselves
/// (docs/cognition.md §5.5), which questions and requests to an assistant rarely are.
pub fn speaks_in_first_person(text: &str) -> bool {
    words(text).any(|w| FIRST_PERSON.contains(&w.as_str()))
}

/// The words that can name a topic: not stop words, fillers or 1-character tokens, in order.
pub fn content_words(text: &str) -> Vec<String> {
    words(text).filter(|w| w.chars().count() > 1 && !is_stop_word(w)).collect()
}

/// Whether the content gate holds this message back: fewer than `min_content_words` content
/// words, unless it is a question of at least `question_min_words` words.
pub fn is_contentless(text: &str, params: &ClassifierParams) -> bool {
    if params.min_content_words == 0 || content_words(text).len() >= params.min_content_words {
        return false;
    }
    let long_question =
        params.question_min_words > 0 && text.contains('?') && words(text).count() >= params.question_min_words;
    !long_question
}

/// How much topic a message can carry, 0–1: its content words over `full_weight_words` (capped
/// at 1), at least `question_weight` for a question of `question_min_words` words or more.
/// What the boundary detector scales a message's evidence by.
pub fn content_weight(text: &str, params: &ClassifierParams) -> f32 {
    if params.full_weight_words == 0 {
        return 1.0;
    }
    let content = content_words(text).len();
    if content > 0 && text.contains('?') {
        // A question about something names its topic however short it is ("Do you like jazz?").
        return 1.0;
    }
    let share = (content as f32 / params.full_weight_words as f32).min(1.0);
    let long_question =
        params.question_min_words > 0 && text.contains('?') && words(text).count() >= params.question_min_words;
    if long_question { share.max(params.question_weight.clamp(0.0, 1.0)) } else { share }
}

/// docs/cognition.md §5.1 deterministic name: the first (up to) 4 content words joined by `-`; with none,
/// `topic-<unix_ts>`.
pub fn topic_name(text: &str, now_unix_s: i64) -> String {
    let content = content_words(text);
    if content.is_empty() {
        return format!("topic-{now_unix_s}");
    }
    content[..content.len().min(4)].join("-")
}
