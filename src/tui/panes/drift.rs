//! Drift: the background thoughts of the drift engine, newest first. The stored ones are
//! loaded when the UI starts; new ones arrive as events.

use super::{Scroll, clock, empty};
use crate::store::DriftItem;
use crate::tui::theme;
use chrono::FixedOffset;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span, Text};

/// Thoughts kept on screen.
const KEEP: usize = 50;

#[derive(Debug, Default)]
pub struct DriftPane {
    pub thoughts: Vec<DriftItem>,
    pub scroll: Scroll,
}

const EMPTY: &str = "No drift thoughts yet. They arrive while you are idle.";

impl DriftPane {
    /// Stored thoughts (newest first) merged with any that arrived live.
    pub fn loaded(&mut self, thoughts: &[DriftItem]) {
        for t in thoughts {
            if !self.thoughts.iter().any(|x| x.id == t.id) {
                self.thoughts.push(t.clone());
            }
        }
        self.sort();
    }

    pub fn thought(&mut self, t: &DriftItem) {
        self.thoughts.retain(|x| x.id != t.id);
        self.thoughts.push(t.clone());
        self.sort();
        self.scroll.to_top();
    }

    fn sort(&mut self) {
        self.thoughts.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        self.thoughts.truncate(KEEP);
    }

    pub fn text(&self, offset: FixedOffset) -> Text<'static> {
        if self.thoughts.is_empty() {
            return empty(EMPTY);
        }
        let mut text = Text::default();
        for t in &self.thoughts {
            let mut head = vec![
                Span::styled(clock(t.created_at, offset), theme::dim()),
                Span::raw(" "),
                Span::styled(t.kind.clone(), kind_style(&t.kind)),
            ];
            if let Some(topic) = &t.topic {
                head.push(Span::styled(format!(" · {topic}"), theme::dim()));
            }
            if let Some(action) = t.action.as_deref().filter(|a| *a != "NOTHING") {
                head.push(Span::styled(format!(" → {action}"), theme::dim()));
            }
            text.push_line(Line::from(head));
            text.push_line(Line::from(format!("  {}", t.content.trim())));
        }
        text
    }
}

fn kind_style(kind: &str) -> Style {
    Style::new().fg(match kind {
        "question" => Color::Yellow,
        "hypothesis" => Color::Magenta,
        "insight" => Color::Green,
        _ => Color::Cyan,
    })
}
