//! The rules added for real chat: content weights, the refractory period and the block rule.

use super::{DIM, T0};
use crate::cognition::boundary::*;

fn random_unit(seed: u64) -> Vec<f32> {
    crate::cognition::topic::random_unit(seed, DIM)
}

/// Chat-like noise: each line shares only part of its direction with its topic.
fn line(topic: &[f32], seed: u64) -> Vec<f32> {
    let r = random_unit(seed);
    normalised(&topic.iter().zip(&r).map(|(t, x)| 0.8 * t + x).collect::<Vec<_>>())
}

/// Feeds lines one minute apart at a constant best_sim and weight; the indices that fired.
fn fired(state: &mut BoundaryState, lines: &[Vec<f32>], best_sim: f32, weight: f32, start: i64) -> Vec<usize> {
    (0..lines.len())
        .filter(|&i| {
            state.update_weighted(&lines[i], best_sim, weight, start + 60 * i as i64, FocusLevel::None).is_boundary
        })
        .collect()
}

fn block_rule() -> BoundaryParams {
    BoundaryParams { block_left: 6, block_right: 3, block_floor: Some(0.3), ..BoundaryParams::chatterbot() }
}

#[test]
fn the_block_rule_finds_a_change_the_similarity_does_not_show() {
    // Chat lines sit at a similar, middling similarity to whatever topic is open, before and
    // after the change: only the lines themselves show that the subject moved.
    let (a, b) = (random_unit(1), random_unit(2));
    let before: Vec<Vec<f32>> = (0..12).map(|i| line(&a, 100 + i)).collect();
    let after: Vec<Vec<f32>> = (0..4).map(|i| line(&b, 200 + i)).collect();
    let mut state = BoundaryState::new(block_rule());
    state.prime(&before[0], T0, FocusLevel::None);
    assert_eq!(fired(&mut state, &before[1..], 0.45, 1.0, T0 + 60), Vec::<usize>::new(), "one topic");
    let got = fired(&mut state, &after, 0.45, 1.0, T0 + 3600 / 2);
    assert!(!got.is_empty() && got[0] < 3, "within block_right messages of the change: {got:?}");
    // The previous calibration, without the block rule, misses it.
    let mut plain = BoundaryState::new(BoundaryParams::chatterbot());
    plain.prime(&before[0], T0, FocusLevel::None);
    fired(&mut plain, &before[1..], 0.45, 1.0, T0 + 60);
    assert!(fired(&mut plain, &after, 0.45, 1.0, T0 + 3600 / 2).is_empty());
}

#[test]
fn the_block_rule_waits_for_both_blocks_inside_the_topic() {
    // Right after a topic opened there is no left block of it yet: nothing to compare.
    let (a, b) = (random_unit(3), random_unit(4));
    let mut state = BoundaryState::new(block_rule());
    state.prime(&line(&a, 1), T0, FocusLevel::None);
    let lines: Vec<Vec<f32>> = (0..3).map(|i| line(&a, 10 + i)).chain((0..3).map(|i| line(&b, 20 + i))).collect();
    assert!(fired(&mut state, &lines, 0.45, 1.0, T0 + 60).is_empty());
}

#[test]
fn weightless_lines_bring_no_evidence() {
    // A line far below the thread's similarity fires the calibrated detector at full weight;
    // at weight 0 ("what about you?" with nothing to say about a topic) it brings nothing.
    let a = random_unit(5);
    let steady: Vec<Vec<f32>> = (0..10).map(|i| line(&a, 300 + i)).collect();
    let params = BoundaryParams { floor_min_weight: 0.5, ..BoundaryParams::chatterbot() };
    let run = |weight: f32| {
        let mut state = BoundaryState::new(params.clone());
        state.prime(&steady[0], T0, FocusLevel::None);
        fired(&mut state, &steady[1..], 0.6, 1.0, T0 + 60);
        state.update_weighted(&random_unit(6), 0.05, weight, T0 + 900, FocusLevel::None)
    };
    assert!(run(1.0).is_boundary);
    let light = run(0.0);
    assert!(!light.is_boundary && !light.below_floor && light.acc < light.bound, "{light:?}");
}

#[test]
fn the_refractory_period_blocks_an_immediate_second_boundary() {
    let a = random_unit(7);
    let params = BoundaryParams { refractory_msgs: 2, ..BoundaryParams::chatterbot() };
    let mut state = BoundaryState::new(params);
    state.prime(&line(&a, 1), T0, FocusLevel::None);
    // Lines each below the similarity floor: the two right after the topic opened may not fire,
    // the third does, and then two more may not.
    let far: Vec<Vec<f32>> = (0..6).map(|i| random_unit(50 + i)).collect();
    assert_eq!(fired(&mut state, &far, 0.05, 1.0, T0 + 60), vec![2, 5]);
    let mut chatterbot = BoundaryState::new(BoundaryParams::chatterbot());
    chatterbot.prime(&line(&a, 1), T0, FocusLevel::None);
    assert_eq!(fired(&mut chatterbot, &far, 0.05, 1.0, T0 + 60), vec![0, 1, 2, 3, 4, 5], "no refractory period");
}

#[test]
fn the_recent_lines_survive_a_save_and_load() {
    let a = random_unit(8);
    let mut state = BoundaryState::new(block_rule());
    state.prime(&line(&a, 1), T0, FocusLevel::None);
    fired(&mut state, &(0..12).map(|i| line(&a, 60 + i)).collect::<Vec<_>>(), 0.45, 1.0, T0 + 60);
    assert_eq!(state.recent.len(), 9, "block_left + block_right kept");
    let loaded = BoundaryState::from_json(&state.to_json(), block_rule()).expect("reads back");
    assert_eq!(loaded.recent, state.recent);
    assert_eq!(loaded.since_boundary, state.since_boundary);
}

/// Far lines (each below the similarity floor) after one line of topic, every line `words` long;
/// the indices that fired.
fn far_lines_fired(words: usize) -> Vec<usize> {
    let a = random_unit(9);
    let mut state = BoundaryState::new(BoundaryParams::default());
    state.prime(&line(&a, 1), T0, FocusLevel::None);
    (0..12)
        .filter(|&i| {
            state.observe_words(words);
            state
                .update_weighted(&random_unit(400 + i as u64), 0.05, 1.0, T0 + 60 * (i as i64 + 1), FocusLevel::None)
                .is_boundary
        })
        .collect()
}

#[test]
fn a_thread_of_long_lines_waits_longer_between_boundaries() {
    // Two people chatting (long lines): after a topic opens (the primed line, then each
    // boundary) the next two lines may not fire.
    assert_eq!(far_lines_fired(14), vec![2, 5, 8, 11]);
    // A run of short questions keeps firing at every message, as the chatterbot topics need.
    assert_eq!(far_lines_fired(5), (0..12).collect::<Vec<_>>());
}

#[test]
fn the_thread_length_is_a_running_mean() {
    let mut state = BoundaryState::new(BoundaryParams::default());
    state.observe_words(12);
    assert_eq!(state.mean_words, 12.0, "the first line sets it");
    assert!(state.long_lines() && state.refractory_msgs() == 2);
    // A mean of all lines so far: 12, 3, 3, 3, 12, 12 → 7.5, a quiz-like thread.
    for n in [3, 3, 3, 12, 12] {
        state.observe_words(n);
    }
    assert_eq!(state.mean_words, 7.5);
    assert!(!state.long_lines());
    assert_eq!(state.refractory_msgs(), 0);
    let loaded = BoundaryState::from_json(&state.to_json(), BoundaryParams::default()).expect("reads back");
    assert_eq!((loaded.mean_words, loaded.words_seen), (7.5, 6));
}

#[test]
fn the_classifier_reports_message_length_to_the_detector() {
    use crate::cognition::topic::{ClassifierParams, Detector, Message, apply, classify};
    let p = ClassifierParams::default();
    let e = random_unit(10);
    let mut state = BoundaryState::new(BoundaryParams::default());
    let mut topics = Vec::new();
    for (i, text) in
        ["Planning a trip to Lisbon", "I would like to see the old tram lines and the river"].into_iter().enumerate()
    {
        let msg = Message { text, embedding: &e, now_unix_s: T0 + 60 * i as i64 };
        let c = classify(
            &topics,
            topics.len().checked_sub(1),
            &msg,
            Some(Detector { state: &mut state, focus: FocusLevel::None }),
            &p,
        );
        apply(&mut topics, &c, &msg, i as i64, &p);
    }
    assert_eq!(state.mean_words, 12.0, "the second line, the first one the detector decided");
}

#[test]
fn a_conversation_starts_from_the_chat_prior_once() {
    let mut state = BoundaryState::new(BoundaryParams::default());
    assert_eq!(state.sim_ema, 0.5, "the quiz prior while nothing is known");
    state.observe_words(5);
    assert_eq!(state.sim_ema, 0.5, "short lines keep it");
    state.observe_words(20);
    assert_eq!(state.sim_ema, 0.1, "a conversation: the chat prior");
    // Once learnt, the running mean is the thread's own: a later swing of the line length
    // back and forth does not reset it.
    state.sim_ema = 0.4;
    state.observe_words(1);
    state.observe_words(40);
    assert!(state.long_lines());
    assert_eq!(state.sim_ema, 0.4);
    let loaded = BoundaryState::from_json(&state.to_json(), BoundaryParams::default()).expect("reads back");
    assert!(loaded.chat_prior_applied);
    // The chatterbot set has no chat prior.
    let mut quiz = BoundaryState::new(BoundaryParams::chatterbot());
    quiz.observe_words(20);
    assert_eq!(quiz.sim_ema, 0.5);
}
