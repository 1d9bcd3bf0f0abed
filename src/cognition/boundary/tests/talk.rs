//! The conversation test by first-person lines and the rules it gates: a minimum topic length
//! and a higher block floor (docs/cognition.md §5.3, §5.5).

use super::{DIM, T0};
use crate::cognition::boundary::*;

fn random_unit(seed: u64) -> Vec<f32> {
    crate::cognition::topic::random_unit(seed, DIM)
}

/// A thread primed with one line, then fed `lines` one minute apart, each `words` long and in the
/// first person or not, at a constant best_sim; the indices that fired.
fn run(params: BoundaryParams, lines: &[Vec<f32>], words: usize, first_person: bool, best_sim: f32) -> Vec<usize> {
    let mut state = BoundaryState::new(params);
    state.prime(&random_unit(1), T0, FocusLevel::None);
    (0..lines.len())
        .filter(|&i| {
            state.observe_line(words, first_person);
            state.update_weighted(&lines[i], best_sim, 1.0, T0 + 60 * (i as i64 + 1), FocusLevel::None).is_boundary
        })
        .collect()
}

#[test]
fn first_person_lines_of_middling_length_make_a_conversation() {
    let mut state = BoundaryState::new(BoundaryParams::default());
    for _ in 0..3 {
        state.observe_line(7, true);
    }
    assert!(!state.talking(), "three lines are too few to tell");
    state.observe_line(7, false);
    // 4 lines of 7 words, 3 of them in the first person: people telling each other things,
    // though the lines are shorter than the 9 words of the long-line test.
    assert!(state.talking() && state.long_lines());
    let loaded = BoundaryState::from_json(&state.to_json(), BoundaryParams::default()).expect("reads back");
    assert_eq!(loaded.first_person_lines, 3);
    assert!(loaded.talking());

    // The same lengths asked of an assistant, without "I" or "my": a quiz, not a conversation.
    let mut quiz = BoundaryState::new(BoundaryParams::default());
    for first_person in [false, false, true, false, false, false, false] {
        quiz.observe_line(7, first_person);
    }
    assert!(!quiz.talking() && !quiz.long_lines(), "1 line in 7 speaks in the first person");
    // Short first-person lines do not count either ("I see", "me too").
    let mut short = BoundaryState::new(BoundaryParams::default());
    for _ in 0..6 {
        short.observe_line(3, true);
    }
    assert!(!short.talking());
}

#[test]
fn a_conversation_holds_a_topic_for_twelve_messages() {
    // Lines unlike each other at a steady, low-but-not-absurd similarity (0.25, above the 0.18
    // floor): the accumulator closes a quiz topic every 9 messages (its refractory period and
    // the evidence it takes), a conversation's only after the 12-message minimum.
    let far: Vec<Vec<f32>> = (0..30).map(|i| random_unit(100 + i)).collect();
    assert_eq!(run(BoundaryParams::default(), &far, 7, false, 0.25), vec![1, 10, 19, 28]);
    assert_eq!(run(BoundaryParams::default(), &far, 7, true, 0.25), vec![1, 13, 25]);
    let before = BoundaryParams { talk_first_person_share: 0.0, ..BoundaryParams::default() };
    assert_eq!(run(before, &far, 7, true, 0.25), vec![1, 10, 19, 28], "44d9bad: no minimum");
}

#[test]
fn a_clear_break_opens_a_topic_even_in_a_young_conversation_topic() {
    // Below the absolute similarity floor a message is nothing like its topic: the minimum holds
    // back drifting evidence, not that, so only the 2-message refractory period applies.
    let far: Vec<Vec<f32>> = (0..30).map(|i| random_unit(100 + i)).collect();
    let fired = run(BoundaryParams::default(), &far, 7, true, 0.05);
    assert_eq!(&fired[..5], &[0, 1, 2, 5, 8], "{fired:?}");
    let quiz = run(BoundaryParams::default(), &far[..6], 7, false, 0.05);
    assert_eq!(quiz, (0..6).collect::<Vec<_>>(), "a quiz thread changes topic at each such message");
}

/// Eight lines along `a`, then two whose mean has a cosine of `cos` with it.
fn blocks(cos: f32) -> Vec<Vec<f32>> {
    let a = random_unit(7);
    let r = random_unit(8);
    let d: f32 = r.iter().zip(&a).map(|(x, y)| x * y).sum();
    let b: Vec<f32> = r.iter().zip(&a).map(|(x, y)| x - d * y).collect();
    let nb = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    let u: Vec<f32> = a.iter().zip(&b).map(|(x, y)| cos * x + (1.0 - cos * cos).sqrt() * y / nb).collect();
    std::iter::repeat_n(a, 14).chain(std::iter::repeat_n(u, 2)).collect()
}

#[test]
fn a_conversation_changes_topic_on_blocks_the_quiz_floor_would_keep() {
    // Two lines at cosine 0.28 to the eight before them, at a steady similarity: the block rule
    // fires at 0.3 in a conversation (one message late at most), not at the quiz floor of 0.25.
    let lines = blocks(0.28);
    let talk = run(BoundaryParams::default(), &lines, 8, true, 0.45);
    assert!(talk.len() == 1 && (14..=15).contains(&talk[0]), "fired at {talk:?}");
    let quiz_floor = BoundaryParams { talk_block_floor: None, ..BoundaryParams::default() };
    assert_eq!(run(quiz_floor, &lines, 8, true, 0.45), Vec::<usize>::new());
    // Blocks that still share most of their direction are one topic.
    assert_eq!(run(BoundaryParams::default(), &blocks(0.6), 8, true, 0.45), Vec::<usize>::new());
}
