//! The topic classifier (docs/cognition.md §5.1): which topic a message belongs to, or whether it
//! opens a new one.
//!
//! Topics are rolling centroids of unit embeddings. A message is compared with every centroid
//! (the topic active in the last 30 minutes gets a bonus), a boundary test decides whether it
//! opens a new topic (the adaptive detector of [`crate::cognition::boundary`] when the thread's
//! state is given, else the static rule best_sim < 0.65), and otherwise the cheapest of the five
//! most similar topics by switch score takes it.
//!
//! Short contentless messages ("lol", "ok", "thanks") are gated: they stay with the current
//! topic, never open one, leave the detector's statistics frozen and do not move any centroid.
//!
//! Pure functions over plain structs: [`classify`] decides (it only touches the detector state),
//! [`apply`] writes the decision into the topic list. No I/O, no clock, no model.

use serde::{Deserialize, Serialize};

use crate::cognition::boundary::{BoundaryOutcome, BoundaryState, FocusLevel};

pub use crate::store::Topic;

impl Topic {
    /// A topic opened by one message: named from its text, centred on its embedding.
    pub fn new(id: i64, text: &str, embedding: &[f32], salience: f32, now_unix_s: i64) -> Topic {
        Topic {
            id,
            name: topic_name(text, now_unix_s),
            centroid: normalised(embedding),
            message_count: 1,
            avg_salience: salience,
            updated_at: now_unix_s,
        }
    }

    /// docs/cognition.md §5.1 step 6: with n = min(message_count, cap), `centroid ← normalise((centroid·n + e)/(n+1))`,
    /// avg_salience weighted the same way, count += 1.
    pub fn absorb(&mut self, embedding: &[f32], salience: f32, now_unix_s: i64, cap: u32) {
        let n = self.message_count.min(cap) as f32;
        if self.centroid.len() == embedding.len() {
            let e = normalised(embedding);
            let mixed: Vec<f32> = self.centroid.iter().zip(&e).map(|(&c, &x)| (c * n + x) / (n + 1.0)).collect();
            self.centroid = normalised(&mixed);
        } else {
            // A centroid from another embedding model cannot be averaged with this one.
            self.centroid = normalised(embedding);
        }
        self.avg_salience = (self.avg_salience * n + salience) / (n + 1.0);
        self.message_count = self.message_count.saturating_add(1);
        self.updated_at = now_unix_s;
    }
}

/// The classifier's constants. [`ClassifierParams::default`] is what the app runs;
/// [`ClassifierParams::published`] is docs/cognition.md §5.1 without the content gate, for comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClassifierParams {
    /// Static boundary rule without a detector: best_sim below this. Seed: 0.65.
    pub static_threshold: f32,
    /// Similarity bonus of the topic active within `recency_window_s`. Seed: +0.15.
    pub recency_bonus: f32,
    /// Seed: 30 min.
    pub recency_window_s: i64,
    /// Candidates scored by switch score. Seed: 5.
    pub top_k: usize,
    /// n = min(message_count, this) in the centroid update. Seed: 20.
    pub centroid_cap: u32,
    /// τ in tanh(Δt/τ), the freshness term. Seed: 300 s (the stability regulator may move it
    /// within 60–1800 s).
    pub decay_constant_s: f32,
    /// Seed: 0.6 (regulator bounds 0.3–0.8).
    pub w_semantic: f32,
    /// Seed: 0.3 (regulator bounds 0.1–0.6).
    pub w_freshness: f32,
    /// Seed: 0.1 (regulator bounds 0.05–0.2).
    pub w_salience: f32,
    /// Messages with fewer content words than this (after dropping stop words, fillers such as
    /// "lol"/"ok"/"thanks" and 1-character tokens) are contentless and gated. 0 turns the gate
    /// off. Default 1 (not in the seed; docs/cognition.md §5.5 asks for it): every chatterbot user line with a
    /// content word names its topic ("stock market", "gossips"), so a higher floor would gate
    /// real topic openers.
    pub min_content_words: usize,
    /// A question of at least this many words is never contentless ("Who are you?", "What do
    /// you like to do?" ask about something even without a content word; "what?" and "really?"
    /// stay gated). 0 turns the exception off. Default 3 (not in the seed): the chatterbot user
    /// lines gated without it included "Who are you?" opening a new segment.
    pub question_min_words: usize,
    /// A message with this many content words or more has the full content weight (1) for the
    /// boundary detector; fewer weigh in proportion ([`content_weight`]). 0: every message
    /// weighs 1. Not in the seed; see the default.
    pub full_weight_words: usize,
    /// Content weight of a question let through the gate by `question_min_words` without a
    /// content word ("what about you?", "Who are you?"). Not in the seed.
    pub question_weight: f32,
}

impl Default for ClassifierParams {
    fn default() -> Self {
        ClassifierParams {
            min_content_words: 1,
            question_min_words: 3,
            full_weight_words: FULL_WEIGHT_WORDS,
            question_weight: QUESTION_WEIGHT,
            ..ClassifierParams::published()
        }
    }
}

impl ClassifierParams {
    /// docs/cognition.md §5.1 as published: no content gate.
    pub fn published() -> Self {
        ClassifierParams {
            static_threshold: 0.65,
            recency_bonus: 0.15,
            recency_window_s: 1800,
            top_k: 5,
            centroid_cap: 20,
            decay_constant_s: 300.0,
            w_semantic: 0.6,
            w_freshness: 0.3,
            w_salience: 0.1,
            min_content_words: 0,
            question_min_words: 0,
            full_weight_words: 0,
            question_weight: 1.0,
        }
    }
}

/// Default [`ClassifierParams::full_weight_words`]: 1, so a line with any content word weighs
/// fully and only the questions without one ("what about you?") weigh less. On the chit-chat
/// calibration sessions 2 or 3 helped (dev Pk 0.370 → 0.353 / 0.347) but the chatterbot user
/// lines, short and content-poor, lost their boundaries (dev Pk 0.170 → 0.220 / 0.243;
/// `examples/topic_eval.rs`, `--chitchat-sweep`).
const FULL_WEIGHT_WORDS: usize = 1;
/// Default [`ClassifierParams::question_weight`]: half weight for a question without a content
/// word. Chosen, not swept: such a line ("Who are you?", "what about you?") can open a topic in
/// an assistant but is as often small talk.
const QUESTION_WEIGHT: f32 = 0.5;

/// One message to classify.
#[derive(Debug, Clone, Copy)]
pub struct Message<'a> {
    pub text: &'a str,
    /// Its embedding (re-normalised here).
    pub embedding: &'a [f32],
    pub now_unix_s: i64,
}

/// The thread's boundary detector, when the thread is known.
#[derive(Debug)]
pub struct Detector<'a> {
    pub state: &'a mut BoundaryState,
    pub focus: FocusLevel,
}

/// The decision for one message; [`apply`] carries it out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Classification {
    /// The existing topic it joins; `None` when it opens a new topic.
    pub topic_index: Option<usize>,
    pub is_new_topic: bool,
    /// Similarity to the chosen topic (with the recency bonus); on a new topic the best
    /// similarity, 1.0 for the very first topic.
    pub confidence: f32,
    /// The chosen topic's switch score (lower is cheaper); 1 − best_sim on a new topic.
    pub switch_score: f32,
    /// The best similarity over all topics, with the recency bonus (what the detector saw).
    pub best_sim: f32,
    /// docs/cognition.md §5.1 message salience.
    pub salience: f32,
    /// Gated by the content gate: no boundary, no centroid move, detector held.
    pub contentless: bool,
    /// The detector's view of this message; `None` when the static rule decided.
    pub diagnostics: Option<BoundaryOutcome>,
}

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

fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok() || FILLERS.binary_search(&word).is_ok() || is_laughter(word)
}

/// "hahahaha", "hehe", "ahah": only h/a/e letters, with both an h and a vowel, 4 or more long.
fn is_laughter(word: &str) -> bool {
    word.len() >= 4
        && word.bytes().all(|b| matches!(b, b'h' | b'a' | b'e'))
        && word.contains('h')
        && word.bytes().any(|b| b != b'h')
}

/// Lowercase words with everything not alphanumeric treated as a separator.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase)
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

/// Dot product of two unit vectors; 0 for vectors of different dimension (a centroid from
/// another embedding model matches nothing).
pub fn similarity(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() {
        return 0.0;
    }
    a.iter().zip(b).map(|(&x, &y)| x * y).sum()
}

/// Similarity of `embedding` to every topic, with `recency_bonus` added for `active` when it
/// was updated within `recency_window_s` of now (docs/cognition.md §5.1 step 2).
pub fn similarities(
    topics: &[Topic],
    embedding: &[f32],
    active: Option<usize>,
    now_unix_s: i64,
    params: &ClassifierParams,
) -> Vec<f32> {
    let e = normalised(embedding);
    topics
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let sim = similarity(&e, &t.centroid);
            let recent = active == Some(i) && now_unix_s - t.updated_at <= params.recency_window_s;
            if recent { sim + params.recency_bonus } else { sim }
        })
        .collect()
}

/// docs/cognition.md §5.1 step 5, one candidate:
/// `w_sem·(1 − sim) + w_fresh·tanh(Δt/τ) + w_sal·|salience − topic.avg_salience|`.
pub fn switch_score(sim: f32, secs_since_update: f32, salience: f32, topic_salience: f32, p: &ClassifierParams) -> f32 {
    let freshness = (secs_since_update.max(0.0) / p.decay_constant_s.max(1e-6)).tanh();
    p.w_semantic * (1.0 - sim) + p.w_freshness * freshness + p.w_salience * (salience - topic_salience).abs()
}

/// The top `top_k` topics by similarity, scored; the one with the minimum switch score wins.
/// Returns (index, switch score). Ties go to the more similar topic, then the lower index.
pub fn best_switch(
    topics: &[Topic],
    sims: &[f32],
    salience: f32,
    now_unix_s: i64,
    params: &ClassifierParams,
) -> Option<(usize, f32)> {
    let mut order: Vec<usize> = (0..topics.len().min(sims.len())).collect();
    order.sort_by(|&a, &b| sims[b].total_cmp(&sims[a]).then(a.cmp(&b)));
    order
        .into_iter()
        .take(params.top_k.max(1))
        .map(|i| {
            let t = &topics[i];
            (i, switch_score(sims[i], (now_unix_s - t.updated_at) as f32, salience, t.avg_salience, params))
        })
        .fold(None, |best: Option<(usize, f32)>, c| match best {
            Some(b) if b.1 <= c.1 => Some(b),
            _ => Some(c),
        })
}

/// docs/cognition.md §5.1 steps 1–5 for one message. Only the detector state changes; [`apply`] updates topics.
///
/// `active` is the thread's current topic (it gets the recency bonus while fresh). With a
/// detector the boundary test is adaptive; without one it is `best_sim < static_threshold`.
pub fn classify(
    topics: &[Topic],
    active: Option<usize>,
    msg: &Message,
    detector: Option<Detector>,
    params: &ClassifierParams,
) -> Classification {
    let salience = message_salience(msg.text);
    let contentless = is_contentless(msg.text, params);
    let active = active.filter(|&i| i < topics.len());

    // 1. The first topic.
    if topics.is_empty() {
        let diagnostics = detector.map(|d| {
            if contentless { d.state.hold(d.focus) } else { d.state.prime(msg.embedding, msg.now_unix_s, d.focus) }
        });
        return Classification {
            topic_index: None,
            is_new_topic: true,
            confidence: 1.0,
            switch_score: 0.0,
            best_sim: 1.0,
            salience,
            contentless,
            diagnostics,
        };
    }

    // 2. Similarities, with the recency bonus.
    let sims = similarities(topics, msg.embedding, active, msg.now_unix_s, params);
    let best_sim = sims.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let score_of = |i: usize| {
        let t = &topics[i];
        switch_score(sims[i], (msg.now_unix_s - t.updated_at) as f32, salience, t.avg_salience, params)
    };

    // Contentless: stay with the current topic (or the closest); nothing is learnt from it.
    if contentless {
        let fresh_active = active.filter(|&i| msg.now_unix_s - topics[i].updated_at <= params.recency_window_s);
        let chosen = fresh_active.unwrap_or_else(|| argmax(&sims));
        return Classification {
            topic_index: Some(chosen),
            is_new_topic: false,
            confidence: sims[chosen],
            switch_score: score_of(chosen),
            best_sim,
            salience,
            contentless,
            diagnostics: detector.map(|d| d.state.hold(d.focus)),
        };
    }

    // 3–4. Boundary test.
    let diagnostics = detector.map(|d| {
        d.state.observe_words(words(msg.text).count());
        let weight = content_weight(msg.text, params);
        d.state.update_weighted(msg.embedding, best_sim, weight, msg.now_unix_s, d.focus)
    });
    let is_boundary = match &diagnostics {
        Some(outcome) => outcome.is_boundary,
        None => best_sim < params.static_threshold,
    };
    if is_boundary {
        return Classification {
            topic_index: None,
            is_new_topic: true,
            confidence: best_sim,
            switch_score: 1.0 - best_sim,
            best_sim,
            salience,
            contentless,
            diagnostics,
        };
    }

    // 5. The cheapest of the top candidates.
    let (chosen, switch) = best_switch(topics, &sims, salience, msg.now_unix_s, params).expect("topics is not empty");
    Classification {
        topic_index: Some(chosen),
        is_new_topic: false,
        confidence: sims[chosen],
        switch_score: switch,
        best_sim,
        salience,
        contentless,
        diagnostics,
    }
}

/// Carries out a classification (docs/cognition.md §5.1 step 6): opens the new topic with id `new_id`, or
/// updates the chosen one. A contentless message only refreshes its topic's count and clock.
/// Returns the index of the message's topic.
pub fn apply(
    topics: &mut Vec<Topic>,
    c: &Classification,
    msg: &Message,
    new_id: i64,
    params: &ClassifierParams,
) -> usize {
    match c.topic_index.filter(|&i| i < topics.len()) {
        Some(i) if c.contentless => {
            let t = &mut topics[i];
            t.message_count = t.message_count.saturating_add(1);
            t.updated_at = msg.now_unix_s;
            i
        }
        Some(i) => {
            topics[i].absorb(msg.embedding, c.salience, msg.now_unix_s, params.centroid_cap);
            i
        }
        None => {
            topics.push(Topic::new(new_id, msg.text, msg.embedding, c.salience, msg.now_unix_s));
            topics.len() - 1
        }
    }
}

fn argmax(v: &[f32]) -> usize {
    v.iter().enumerate().fold((0, f32::NEG_INFINITY), |best, (i, &x)| if x > best.1 { (i, x) } else { best }).0
}

fn normalised(v: &[f32]) -> Vec<f32> {
    let norm = v.iter().map(|&x| f64::from(x).powi(2)).sum::<f64>().sqrt();
    if norm == 0.0 {
        return v.to_vec();
    }
    let scale = (1.0 / norm) as f32;
    v.iter().map(|&x| x * scale).collect()
}

/// Deterministic unit vectors for tests (roughly normal components from [`crate::SplitMix64`]).
#[cfg(test)]
pub(crate) fn random_unit(seed: u64, dim: usize) -> Vec<f32> {
    let mut rng = crate::SplitMix64(seed);
    normalised(&(0..dim).map(|_| (0..4).map(|_| rng.next_f64() as f32).sum::<f32>() - 2.0).collect::<Vec<_>>())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cognition::boundary::BoundaryParams;

    const DIM: usize = 384;
    const T0: i64 = 1_700_000_000;

    fn random_unit(seed: u64) -> Vec<f32> {
        super::random_unit(seed, DIM)
    }

    fn perturb(base: &[f32], noise: f32, seed: u64) -> Vec<f32> {
        let r = random_unit(seed);
        normalised(&base.iter().zip(&r).map(|(b, x)| b + noise * x).collect::<Vec<_>>())
    }

    /// A unit vector whose dot product with `base` is exactly `cos`.
    fn at_similarity(base: &[f32], cos: f32, seed: u64) -> Vec<f32> {
        let v = random_unit(seed);
        let d = similarity(&v, base);
        let ortho = normalised(&v.iter().zip(base).map(|(a, b)| a - d * b).collect::<Vec<_>>());
        let sin = (1.0 - cos * cos).sqrt();
        base.iter().zip(&ortho).map(|(b, o)| cos * b + sin * o).collect()
    }

    fn topic(id: i64, centroid: Vec<f32>, count: u32, salience: f32, updated_at: i64) -> Topic {
        Topic { id, name: format!("t{id}"), centroid, message_count: count, avg_salience: salience, updated_at }
    }

    #[test]
    fn published_constants_match_the_sheet() {
        let p = ClassifierParams::published();
        assert_eq!(
            (p.static_threshold, p.recency_bonus, p.recency_window_s, p.top_k, p.centroid_cap),
            (0.65, 0.15, 1800, 5, 20)
        );
        assert_eq!((p.decay_constant_s, p.w_semantic, p.w_freshness, p.w_salience), (300.0, 0.6, 0.3, 0.1));
        assert_eq!(p.min_content_words, 0, "no gate as published");
        let d = ClassifierParams::default();
        // Changed deliberately with the real-chat calibration: the content weights differ too.
        assert_eq!(
            ClassifierParams {
                min_content_words: 0,
                question_min_words: 0,
                full_weight_words: 0,
                question_weight: 1.0,
                ..d
            },
            p,
            "only the gate and the content weights differ"
        );
    }

    #[test]
    fn names_are_deterministic_content_words() {
        assert_eq!(topic_name("Can you help me fix my Python build error?", T0), "fix-python-build-error");
        assert_eq!(topic_name("The quarterly budget review, for Q3 2026!", T0), "quarterly-budget-review-q3");
        assert_eq!(topic_name("I want a vegan lasagna", T0), "vegan-lasagna");
        assert_eq!(topic_name("Tell me about Venus", T0), "venus");
        assert_eq!(topic_name("Café crème brûlée recipe", T0), "café-crème-brûlée-recipe");
        // 1-character tokens and fillers go too.
        assert_eq!(topic_name("a b c x-ray lol", T0), "ray");
        // Nothing left: the fallback.
        assert_eq!(topic_name("lol ok thanks!", T0), format!("topic-{T0}"));
        assert_eq!(topic_name("", 42), "topic-42");
        assert_eq!(topic_name("Python build error", T0), topic_name("python BUILD error...", T0 + 5));
    }

    #[test]
    fn word_lists_are_sorted_for_binary_search() {
        for list in [STOP_WORDS, FILLERS] {
            assert!(list.windows(2).all(|w| w[0] < w[1]), "sorted and without duplicates");
            assert!(list.iter().all(|w| is_stop_word(w)));
        }
        assert!((140..=200).contains(&STOP_WORDS.len()), "about 150 stop words: {}", STOP_WORDS.len());
        assert!(!is_stop_word("python") && !is_stop_word("budget"));
    }

    #[test]
    fn salience_follows_the_heuristic() {
        assert_eq!(message_salience("hello there"), 0.5);
        assert!((message_salience(&"x".repeat(51)) - 0.6).abs() < 1e-6);
        assert!((message_salience(&"x".repeat(50)) - 0.5).abs() < 1e-6, "over 50, not 50");
        assert!((message_salience(&"x".repeat(101)) - 0.7).abs() < 1e-6);
        assert!((message_salience("what time is it?") - 0.65).abs() < 1e-6);
        assert!((message_salience("the build is BROKEN") - 0.65).abs() < 1e-6);
        assert!((message_salience("urgent: is prod down?") - 0.8).abs() < 1e-6);
        let everything = format!("{} help? crash", "y".repeat(120));
        assert_eq!(message_salience(&everything), 1.0);
        // Characters, not bytes.
        assert!((message_salience(&"é".repeat(40)) - 0.5).abs() < 1e-6);
    }

    #[test]
    fn switch_score_is_the_published_formula() {
        let p = ClassifierParams::default();
        let s = switch_score(0.8, 300.0, 0.7, 0.5, &p);
        let expected = 0.6 * 0.2 + 0.3 * 1f32.tanh() + 0.1 * 0.2;
        assert!((s - expected).abs() < 1e-6, "{s} vs {expected}");
        assert!((switch_score(1.0, 0.0, 0.5, 0.5, &p)).abs() < 1e-6);
        // Clock skew never makes a topic fresher than now.
        assert_eq!(switch_score(0.5, -100.0, 0.5, 0.5, &p), switch_score(0.5, 0.0, 0.5, 0.5, &p));
    }

    #[test]
    fn the_minimum_switch_score_over_the_top_five_wins() {
        let p = ClassifierParams::default();
        let e = random_unit(1);
        let now = T0 + 10_000;
        // Six topics by falling similarity, all equally salient.
        let sims = [0.95, 0.90, 0.85, 0.80, 0.75, 0.74];
        let build = |ages: [i64; 6]| -> Vec<Topic> {
            sims.iter()
                .zip(ages)
                .enumerate()
                .map(|(i, (&s, age))| topic(i as i64, at_similarity(&e, s, 10 + i as u64), 5, 0.5, now - age))
                .collect()
        };
        // The 4th was updated 10 s ago, the rest long ago: fresh beats slightly more similar.
        let topics = build([5000, 5000, 5000, 10, 5000, 5000]);
        let got = similarities(&topics, &e, None, now, &p);
        let (chosen, score) = best_switch(&topics, &got, 0.5, now, &p).expect("topics");
        assert_eq!(chosen, 3);
        assert!((score - switch_score(got[3], 10.0, 0.5, 0.5, &p)).abs() < 1e-6);
        // Only the 6th is fresh, and it would be the cheapest of all, but it is not in the top five.
        let topics = build([5000, 5000, 5000, 5000, 5000, 0]);
        let (chosen, _) = best_switch(&topics, &got, 0.5, now, &p).expect("topics");
        assert_eq!(chosen, 0);
        let (chosen, _) = best_switch(&topics, &got, 0.5, now, &ClassifierParams { top_k: 6, ..p.clone() }).unwrap();
        assert_eq!(chosen, 5);
        assert!(best_switch(&[], &[], 0.5, now, &p).is_none());
    }

    #[test]
    fn the_centroid_update_is_capped_at_twenty() {
        let a = random_unit(1);
        let b = at_similarity(&a, 0.0, 2);
        let mut young = topic(1, a.clone(), 1, 0.5, T0);
        young.absorb(&b, 0.9, T0 + 60, 20);
        // n = 1: the halfway point, renormalised.
        let half = normalised(&a.iter().zip(&b).map(|(x, y)| (x + y) / 2.0).collect::<Vec<_>>());
        assert!(young.centroid.iter().zip(&half).all(|(x, y)| (x - y).abs() < 1e-6));
        assert!((young.avg_salience - 0.7).abs() < 1e-6);
        assert_eq!((young.message_count, young.updated_at), (2, T0 + 60));

        // n = min(50, 20) = 20: the new message weighs 1/21.
        let mut old = topic(2, a.clone(), 50, 0.5, T0);
        old.absorb(&b, 0.92, T0 + 60, 20);
        let mixed = normalised(&a.iter().zip(&b).map(|(x, y)| (20.0 * x + y) / 21.0).collect::<Vec<_>>());
        assert!(old.centroid.iter().zip(&mixed).all(|(x, y)| (x - y).abs() < 1e-6));
        assert!((old.avg_salience - (20.0 * 0.5 + 0.92) / 21.0).abs() < 1e-6);
        assert_eq!(old.message_count, 51);
        let norm: f32 = old.centroid.iter().map(|x| x * x).sum();
        assert!((norm - 1.0).abs() < 1e-5);
    }

    #[test]
    fn the_active_topic_gets_the_recency_bonus_for_thirty_minutes() {
        let p = ClassifierParams::default();
        let e = random_unit(3);
        let topics =
            vec![topic(1, at_similarity(&e, 0.5, 4), 3, 0.5, T0), topic(2, at_similarity(&e, 0.5, 5), 3, 0.5, T0)];
        let plain = similarities(&topics, &e, None, T0 + 60, &p);
        let bonus = similarities(&topics, &e, Some(1), T0 + 1800, &p);
        assert!((bonus[1] - plain[1] - 0.15).abs() < 1e-5, "{bonus:?} {plain:?}");
        assert!((bonus[0] - plain[0]).abs() < 1e-6, "only the active topic");
        let stale = similarities(&topics, &e, Some(1), T0 + 1801, &p);
        assert!((stale[1] - plain[1]).abs() < 1e-6, "no bonus after 30 minutes");
    }

    #[test]
    fn the_static_rule_decides_without_a_detector() {
        let p = ClassifierParams::default();
        let a = random_unit(6);
        let topics = vec![topic(1, a.clone(), 4, 0.5, T0)];
        let close = at_similarity(&a, 0.70, 7);
        let msg = Message { text: "more about the garden beds", embedding: &close, now_unix_s: T0 + 7200 };
        let c = classify(&topics, None, &msg, None, &p);
        assert_eq!((c.topic_index, c.is_new_topic, c.diagnostics), (Some(0), false, None));
        assert!((c.confidence - 0.70).abs() < 1e-4);

        let far = at_similarity(&a, 0.60, 8);
        let msg = Message { text: "what about tax returns", embedding: &far, now_unix_s: T0 + 7200 };
        let c = classify(&topics, None, &msg, None, &p);
        assert!(c.is_new_topic && c.topic_index.is_none());
        assert!((c.confidence - 0.60).abs() < 1e-4 && (c.switch_score - 0.40).abs() < 1e-4);

        // The recency bonus lifts 0.60 over the threshold for the fresh active topic.
        let msg = Message { now_unix_s: T0 + 60, ..msg };
        let c = classify(&topics, Some(0), &msg, None, &p);
        assert_eq!(c.topic_index, Some(0));
    }

    #[test]
    fn the_first_message_opens_the_first_topic() {
        let p = ClassifierParams::default();
        let e = random_unit(9);
        let msg = Message { text: "Planning a trip to Lisbon", embedding: &e, now_unix_s: T0 };
        let mut state = BoundaryState::new(BoundaryParams::default());
        let c = classify(&[], None, &msg, Some(Detector { state: &mut state, focus: FocusLevel::None }), &p);
        assert!(c.is_new_topic && c.topic_index.is_none());
        assert_eq!((c.confidence, c.switch_score), (1.0, 0.0));
        assert_eq!(state.msg_count, 1, "the detector saw it");
        let mut topics = Vec::new();
        assert_eq!(apply(&mut topics, &c, &msg, 77, &p), 0);
        assert_eq!((topics[0].id, topics[0].name.as_str(), topics[0].message_count), (77, "planning-trip-lisbon", 1));
    }

    #[test]
    fn contentless_messages_are_gated() {
        let p = ClassifierParams::default();
        for text in ["lol", "yeah", "ok", "thanks", "Thanks!!", "hahaha", "ok thanks", "lol yeah", "hmm", "what?", "k"]
        {
            assert!(is_contentless(text, &p), "{text:?}");
        }
        for text in ["lol the deploy failed", "stock market", "Who are you?", "What do you like to do?", "gossips"] {
            assert!(!is_contentless(text, &p), "{text:?}");
        }
        assert!(!is_contentless("lol", &ClassifierParams::published()), "the gate is off as published");

        // In a thread: "lol" stays with the current topic, moves nothing, fires nothing.
        let a = random_unit(11);
        let mut topics = vec![topic(1, a.clone(), 5, 0.5, T0), topic(2, random_unit(12), 5, 0.5, T0 - 100)];
        let mut state = BoundaryState::new(BoundaryParams::default());
        for i in 0..6 {
            let e = perturb(&a, 0.3, 100 + i);
            let msg =
                Message { text: "the garden beds and the tomatoes", embedding: &e, now_unix_s: T0 + 60 * i as i64 };
            let c = classify(&topics, Some(0), &msg, Some(Detector { state: &mut state, focus: FocusLevel::None }), &p);
            apply(&mut topics, &c, &msg, 9, &p);
        }
        let before_state = state.clone();
        let before_topic = topics[0].clone();
        let filler = random_unit(13); // "lol" embeds far from anything
        let msg = Message { text: "lol", embedding: &filler, now_unix_s: T0 + 600 };
        let c = classify(&topics, Some(0), &msg, Some(Detector { state: &mut state, focus: FocusLevel::None }), &p);
        assert!(c.contentless && !c.is_new_topic);
        assert_eq!(c.topic_index, Some(0));
        assert!(c.diagnostics.is_some_and(|d| d.held && !d.is_boundary));
        assert_eq!(state, before_state, "the detector's statistics are frozen");
        assert_eq!(apply(&mut topics, &c, &msg, 9, &p), 0);
        assert_eq!(topics[0].centroid, before_topic.centroid, "the centroid does not move");
        assert_eq!(topics[0].message_count, before_topic.message_count + 1);
        assert_eq!(topics.len(), 2);

        // Without the gate the same message is judged on its embedding: far from everything,
        // the static rule opens a topic for it.
        let c = classify(&topics, Some(0), &msg, None, &ClassifierParams::published());
        assert!(c.is_new_topic && !c.contentless);
    }

    #[test]
    fn chatty_lines_weigh_less_than_lines_about_something() {
        let p = ClassifierParams::default();
        for text in ["what about you?", "and how about you?", "Who are you?"] {
            assert!(!is_contentless(text, &p), "{text:?} passes the gate");
            assert!(content_weight(text, &p) < 1.0, "{text:?}");
        }
        for text in ["I just got back from hiking in Zion", "Do you like jazz?", "stock market"] {
            assert_eq!(content_weight(text, &p), 1.0, "{text:?}");
        }
        let three = ClassifierParams { full_weight_words: 3, ..p.clone() };
        assert!((content_weight("I agree.", &three) - 1.0 / 3.0).abs() < 1e-6);
        assert_eq!(content_weight("what about you?", &ClassifierParams::published()), 1.0, "no weights as published");

        // In a thread: "what about you?" embeds far from the topic; a line about something that
        // far away opens a topic by the similarity floor, the chatty question does not.
        let a = random_unit(41);
        let mut topics = vec![topic(1, a.clone(), 6, 0.5, T0)];
        let mut state = BoundaryState::new(BoundaryParams::default());
        for i in 0..6 {
            let e = perturb(&a, 0.3, 400 + i);
            let msg = Message { text: "hiking trails in Zion", embedding: &e, now_unix_s: T0 + 60 * i as i64 };
            let c = classify(&topics, Some(0), &msg, Some(Detector { state: &mut state, focus: FocusLevel::None }), &p);
            apply(&mut topics, &c, &msg, 9, &p);
        }
        let far = random_unit(42);
        let msg = Message { text: "what about you?", embedding: &far, now_unix_s: T0 + 600 };
        let mut light = state.clone();
        let c = classify(&topics, Some(0), &msg, Some(Detector { state: &mut light, focus: FocusLevel::None }), &p);
        assert!(!c.is_new_topic, "{:?}", c.diagnostics);
        assert!(c.diagnostics.is_some_and(|d| !d.below_floor && d.acc < d.bound));
        let msg = Message { text: "mortgage interest rates", ..msg };
        let c = classify(&topics, Some(0), &msg, Some(Detector { state: &mut state, focus: FocusLevel::None }), &p);
        assert!(c.is_new_topic, "a line with content fires: {:?}", c.diagnostics);
    }

    #[test]
    fn an_outlier_does_not_carry_the_thread_away() {
        // The calibrated detector may open a topic for one message unlike anything before (it
        // cannot tell it from the first message of a new topic), but the next on-topic message
        // goes back to the old topic without firing again.
        let p = ClassifierParams::default();
        let a = random_unit(21);
        let mut topics = Vec::new();
        let mut state = BoundaryState::new(BoundaryParams::default());
        let mut active = None;
        let mut run = |text: &str, e: &[f32], t: i64, topics: &mut Vec<Topic>| {
            let msg = Message { text, embedding: e, now_unix_s: t };
            let c = classify(topics, active, &msg, Some(Detector { state: &mut state, focus: FocusLevel::None }), &p);
            let i = apply(topics, &c, &msg, topics.len() as i64, &p);
            active = Some(i);
            (i, c)
        };
        for i in 0..8 {
            let (idx, _) =
                run("tomato seedlings in the garden", &perturb(&a, 0.3, 200 + i), T0 + 60 * i as i64, &mut topics);
            assert_eq!(idx, 0);
        }
        let (_, outlier) = run("interest rates on mortgages", &random_unit(99), T0 + 600, &mut topics);
        let (back, c) = run("watering the tomato seedlings", &perturb(&a, 0.3, 300), T0 + 660, &mut topics);
        assert_eq!(back, 0, "back to the garden topic (outlier opened a topic: {})", outlier.is_new_topic);
        assert!(!c.is_new_topic && c.diagnostics.is_some_and(|d| !d.is_boundary));
    }

    #[test]
    fn a_real_shift_opens_a_new_topic_with_the_detector() {
        let p = ClassifierParams::default();
        let (a, b) = (random_unit(31), random_unit(32));
        let mut topics = Vec::new();
        let mut state = BoundaryState::new(BoundaryParams::default());
        let mut active = None;
        let mut opened = Vec::new();
        for i in 0..12u64 {
            let (text, e) =
                if i < 8 { ("tomato garden", perturb(&a, 0.3, i)) } else { ("mortgage rates", perturb(&b, 0.3, i)) };
            let msg = Message { text, embedding: &e, now_unix_s: T0 + 60 * i as i64 };
            let c = classify(&topics, active, &msg, Some(Detector { state: &mut state, focus: FocusLevel::None }), &p);
            assert!(c.diagnostics.is_some());
            if c.is_new_topic {
                opened.push(i);
            }
            active = Some(apply(&mut topics, &c, &msg, i as i64, &p));
        }
        assert_eq!(opened, vec![0, 8], "the first message and the shift");
        assert_eq!(topics.len(), 2);
        assert_eq!(topics[1].name, "mortgage-rates");
        assert_eq!(topics[1].message_count, 4);
    }

    #[test]
    fn mismatched_dimensions_never_match() {
        assert_eq!(similarity(&[1.0, 0.0], &[1.0, 0.0, 0.0]), 0.0);
        let mut t = topic(1, vec![1.0, 0.0], 3, 0.5, T0);
        t.absorb(&[0.0, 0.0, 2.0], 0.5, T0 + 1, 20);
        assert_eq!(t.centroid, vec![0.0, 0.0, 1.0], "restarted on the new model's vector");
    }
}
