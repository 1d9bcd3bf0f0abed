//! The regulator as the TUI shows it: unsure words underlined and dimmed in the chat (a style,
//! not a colour, so 16-colour and monochrome terminals show it), F5 toggling the marks, the
//! numbers and any break in the Routing pane.

use super::*;
use crate::vocab::regulator::{BreakReason, BreakReport, RegulatorReport, SpanReport};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

const ANSWER: &str = "The capital of Tanzania is Dodoma.";

fn report() -> RegulatorReport {
    RegulatorReport {
        decision: "circuit_break".into(),
        confidence: 0.81,
        low_confidence_spans: vec![SpanReport { start: 27, end: 33, text: "Dodoma".into(), mean_logprob: -3.1 }],
        breaks: vec![BreakReport {
            reason: BreakReason::RepeatedToolCallLoop { tool_name: "recall".into(), consecutive_count: 5 },
            message: "Stopped: the recall skill ran 5 times in a row without getting anywhere.".into(),
        }],
        ..RegulatorReport::idle()
    }
}

fn regulated() -> App {
    let mut a = app();
    user(&mut a, T0 - 30, "x1", "what is the capital of Tanzania?");
    a.on_engine(&ev(
        T0 - 29,
        routed("x1", Mode::Respond, scores(0.6, 0.2, 0.1, 0.0, -0.2), None, false, "geography", true),
    ));
    chunk(&mut a, T0 - 28, "x1", ANSWER);
    done(&mut a, T0 - 27, "x1", Mode::Respond, ANSWER);
    a.on_engine(&ev(T0 - 27, EngineEvent::Regulated { exchange_id: "x1".into(), report: report() }));
    a
}

/// The style of each cell of the first on-screen occurrence of `word`.
fn word_cells(t: &Terminal<TestBackend>, word: &str) -> Vec<Modifier> {
    let buf = t.backend().buffer();
    let area = buf.area;
    for y in 0..area.height {
        let row: String = (0..area.width).map(|x| buf[(x, y)].symbol().to_string()).collect();
        if let Some(at) = row.find(word) {
            let col = row[..at].chars().count() as u16;
            return (0..word.chars().count() as u16).map(|i| buf[(col + i, y)].modifier).collect();
        }
    }
    panic!("{word} not on screen");
}

#[test]
fn unsure_words_are_underlined_and_f5_toggles_them() {
    let mut a = regulated();
    let mut t = Terminal::new(TestBackend::new(120, 40)).unwrap();
    super::super::draw(&mut t, &mut a).unwrap();
    assert!(word_cells(&t, "Dodoma.").iter().take(6).all(|m| m.contains(Modifier::UNDERLINED | Modifier::DIM)));
    assert!(word_cells(&t, "capital of").iter().all(|m| !m.contains(Modifier::UNDERLINED)));
    insta::assert_snapshot!(t.backend().to_string());

    assert_eq!(a.on_terminal(key(KeyCode::F(5))), None);
    super::super::draw(&mut t, &mut a).unwrap();
    assert!(word_cells(&t, "Dodoma.").iter().all(|m| !m.contains(Modifier::UNDERLINED)));
    assert_eq!(a.on_terminal(key(KeyCode::F(5))), None);
    super::super::draw(&mut t, &mut a).unwrap();
    assert!(word_cells(&t, "Dodoma.")[0].contains(Modifier::UNDERLINED));
}

#[test]
fn f1_lists_the_marking_key() {
    let mut a = app();
    a.on_terminal(key(KeyCode::F(1)));
    let screen = draw(&mut a, 120, 40);
    assert!(screen.contains("F5") && screen.contains("unsure"), "{screen}");
}

#[test]
fn a_line_is_split_only_where_a_word_is_marked() {
    let row = Line::from(vec![Span::raw("is Dod"), Span::styled("oma here", theme::bold())]);
    let marked = super::super::chat::mark_line(&row, &["Dodoma".to_string()]);
    let parts: Vec<(String, bool)> = marked
        .spans
        .iter()
        .map(|s| (s.content.to_string(), s.style.add_modifier.contains(Modifier::UNDERLINED)))
        .collect();
    assert_eq!(parts, [("is ".into(), false), ("Dod".into(), true), ("oma".into(), true), (" here".into(), false)]);
    assert_eq!(marked.spans[2].style.add_modifier & Modifier::BOLD, Modifier::BOLD, "the word keeps its own style");
}
