use super::content::is_stop_word;
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
    // Changed deliberately with the real-chat calibration: the content weights and the
    // greeting restart differ too.
    assert_eq!(
        ClassifierParams {
            min_content_words: 0,
            question_min_words: 0,
            full_weight_words: 0,
            question_weight: 1.0,
            greeting_restart_after: 0,
            ..d
        },
        p,
        "only the gate, the content weights and the greeting restart differ"
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
    let topics = vec![topic(1, at_similarity(&e, 0.5, 4), 3, 0.5, T0), topic(2, at_similarity(&e, 0.5, 5), 3, 0.5, T0)];
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
    for text in ["lol", "yeah", "ok", "thanks", "Thanks!!", "hahaha", "ok thanks", "lol yeah", "hmm", "what?", "k"] {
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
        let msg = Message { text: "the garden beds and the tomatoes", embedding: &e, now_unix_s: T0 + 60 * i as i64 };
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

/// Runs `texts` through one thread at one embedding; the messages that opened a topic.
fn new_topics(texts: &[&str]) -> Vec<usize> {
    let p = ClassifierParams::default();
    let e = random_unit(77);
    let mut state = crate::cognition::boundary::BoundaryState::new(BoundaryParams::default());
    let mut topics: Vec<Topic> = Vec::new();
    let mut active = None;
    let mut out = Vec::new();
    for (i, text) in texts.iter().enumerate() {
        let msg = Message { text, embedding: &e, now_unix_s: T0 + 30 * i as i64 };
        let c = classify(&topics, active, &msg, Some(Detector { state: &mut state, focus: FocusLevel::None }), &p);
        if i > 0 && c.is_new_topic {
            out.push(i);
        }
        let id = topics.len() as i64;
        active = Some(apply(&mut topics, &c, &msg, id, &p));
    }
    out
}

#[test]
fn a_greeting_after_a_settled_topic_starts_a_new_one() {
    // Same embedding throughout: only the greeting can open a topic.
    let talk = "I have been reading about old steam trains all week";
    assert_eq!(new_topics(&[talk, talk, talk, talk, "Hey, how's it going?", talk]), vec![4]);
    // Too soon after the topic opened (the answer to a greeting greets back), and a greeting
    // word later in the line, are not restarts.
    assert_eq!(new_topics(&[talk, talk, "hi there!", talk, "They said hello to the driver"]), Vec::<usize>::new());
    assert_eq!(new_topics(&["hello", "hi!", talk, talk]), Vec::<usize>::new());
}

#[test]
fn first_person_lines_are_told_from_questions_to_an_assistant() {
    for text in ["I'd love to go there", "my sister did that", "Honestly im not sure", "That reminds me of it"] {
        assert!(speaks_in_first_person(text), "{text:?}");
    }
    for text in ["what is gravitation", "can you write heap sort?", "Imagine a world without cars", "mine?!"] {
        assert_eq!(speaks_in_first_person(text), text == "mine?!", "{text:?}");
    }
}

#[test]
fn the_classifier_reports_first_person_lines_to_the_detector() {
    use crate::cognition::boundary::{BoundaryState, FocusLevel};
    let p = ClassifierParams::default();
    let e = random_unit(3);
    let mut state = BoundaryState::new(BoundaryParams::default());
    let mut topics = Vec::new();
    for (i, text) in
        ["We went hiking last weekend", "I loved the view from the top", "what trail was it"].into_iter().enumerate()
    {
        let msg = Message { text, embedding: &e, now_unix_s: 1_700_000_000 + 60 * i as i64 };
        let c = classify(
            &topics,
            topics.len().checked_sub(1),
            &msg,
            Some(Detector { state: &mut state, focus: FocusLevel::None }),
            &p,
        );
        apply(&mut topics, &c, &msg, i as i64, &p);
    }
    // The first line opens the thread; the detector decides the other two, one in the first person.
    assert_eq!((state.words_seen, state.first_person_lines), (2, 1));
}
