//! Uncertainties: what the assistant is unsure about in its memories, most severe first.
//! Open ones are loaded when the UI starts; changes arrive as events.

use super::{Scroll, empty};
use crate::store::UncertaintyItem;
use crate::tui::theme;
use ratatui::text::{Line, Span, Text};

#[derive(Debug, Default)]
pub struct UncertaintiesPane {
    pub items: Vec<UncertaintyItem>,
    pub scroll: Scroll,
}

const EMPTY: &str = "Nothing open. The uncertainty engine (not in this build yet) will list conflicting \
                     memories here, most severe first.";

impl UncertaintiesPane {
    pub fn loaded(&mut self, items: &[UncertaintyItem]) {
        for it in items {
            self.changed(it);
        }
    }

    /// Opened or surfaced: shown; resolved or decayed: removed.
    pub fn changed(&mut self, item: &UncertaintyItem) {
        self.items.retain(|x| x.id != item.id);
        if item.is_open() {
            self.items.push(item.clone());
        }
        self.items.sort_by(|a, b| a.severity_rank().cmp(&b.severity_rank()).then(b.created_at.cmp(&a.created_at)));
    }

    pub fn text(&self) -> Text<'static> {
        if self.items.is_empty() {
            return empty(EMPTY);
        }
        let mut text = Text::default();
        for u in &self.items {
            let pair = match &u.memory_b {
                Some(b) => format!("{} ↔ {b}", u.memory_a),
                None => u.memory_a.clone(),
            };
            text.push_line(Line::from(vec![
                Span::styled(format!("{:<8}", u.severity.to_uppercase()), theme::severity(&u.severity)),
                Span::raw(format!(" {}", u.kind)),
                Span::styled(format!(" {pair}"), theme::dim()),
            ]));
            if let Some(why) = u.reasoning.as_deref().filter(|r| !r.trim().is_empty()) {
                text.push_line(Line::from(format!("  {}", why.trim())));
            }
        }
        text
    }
}
