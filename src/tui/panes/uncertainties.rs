//! Uncertainties: what the assistant is unsure about in its memories, most severe first.
//! Open ones are loaded when the UI starts; changes arrive as events. Records name their
//! memories; the memories' text is read from the database for display (never carried in
//! events), and Enter opens one record with both memories, the reasoning and what the user
//! can do about it.

use super::{Scroll, empty};
use crate::store::UncertaintyItem;
use crate::tui::theme;
use ratatui::text::{Line, Span, Text};
use std::collections::{HashMap, HashSet};

#[derive(Debug, Default)]
pub struct UncertaintiesPane {
    pub items: Vec<UncertaintyItem>,
    pub scroll: Scroll,
    /// The selected record (Up/Down while the pane has focus).
    pub selected: usize,
    /// `layer:id` → what the memory says, as last read; `None`: gone.
    pub texts: HashMap<String, Option<String>>,
    /// Memories whose text was asked for and has not arrived.
    requested: HashSet<String>,
    /// The newest time the pane has seen (ages are counted to it).
    pub now: i64,
}

const EMPTY: &str = "Nothing open. When two memories disagree (a new address, a changed date), the record \
                     shows here, most severe first; Enter opens it.";
/// The choices a record's detail offers, in key order 1–3.
pub const CHOICES: [&str; 3] = ["the new one is right", "both are true", "forget both"];

/// "45s", "12m", "3h", "2d".
pub fn age(seconds: i64) -> String {
    let s = seconds.max(0);
    match s {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86_400 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86_400),
    }
}

fn short(s: &str, n: usize) -> String {
    crate::text::clip::clip(s, n)
}

impl UncertaintiesPane {
    pub fn loaded(&mut self, items: &[UncertaintyItem]) {
        for it in items {
            self.changed(it);
        }
    }

    /// Opened or surfaced: shown; resolved or decayed: removed.
    pub fn changed(&mut self, item: &UncertaintyItem) {
        self.now = self.now.max(item.created_at);
        self.items.retain(|x| x.id != item.id);
        if item.is_open() {
            self.items.push(item.clone());
        } else {
            // Only open records are shown, so only their memories' text is kept: a session
            // that resolves records as they come would otherwise keep every text it ever read.
            let items = &self.items;
            self.texts.retain(|m, _| items.iter().any(|it| it.memory_a == *m || it.memory_b.as_ref() == Some(m)));
        }
        self.items.sort_by(|a, b| a.severity_rank().cmp(&b.severity_rank()).then(b.created_at.cmp(&a.created_at)));
        self.selected = self.selected.min(self.items.len().saturating_sub(1));
    }

    /// The memories named by open records whose text has not been read yet (each asked once).
    pub fn take_missing(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        for it in &self.items {
            for m in std::iter::once(&it.memory_a).chain(it.memory_b.as_ref()) {
                if !self.texts.contains_key(m) && self.requested.insert(m.clone()) {
                    out.push(m.clone());
                }
            }
        }
        out
    }

    pub fn texts_loaded(&mut self, texts: &[(String, Option<String>)]) {
        for (m, t) in texts {
            self.requested.remove(m);
            self.texts.insert(m.clone(), t.clone());
        }
    }

    pub fn select(&mut self, delta: isize) {
        let n = self.items.len();
        if n > 0 {
            self.selected = self.selected.saturating_add_signed(delta).min(n - 1);
        }
    }

    pub fn selected_item(&self) -> Option<&UncertaintyItem> {
        self.items.get(self.selected)
    }

    fn memory(&self, m: &str) -> String {
        match self.texts.get(m) {
            Some(Some(t)) => t.clone(),
            Some(None) => format!("{m} (gone)"),
            None => m.to_string(),
        }
    }

    pub fn text(&self) -> Text<'static> {
        if self.items.is_empty() {
            return empty(EMPTY);
        }
        let mut text = Text::default();
        for (i, u) in self.items.iter().enumerate() {
            let pair = match &u.memory_b {
                Some(b) => format!("{} ↔ {}", short(&self.memory(&u.memory_a), 28), short(&self.memory(b), 28)),
                None => short(&self.memory(&u.memory_a), 56),
            };
            let mark = if i == self.selected { "›" } else { " " };
            text.push_line(Line::from(vec![
                Span::raw(mark.to_string()),
                Span::styled(format!("{:<8}", u.severity.to_uppercase()), theme::severity(&u.severity)),
                Span::raw(format!(" {}", u.kind)),
                Span::styled(
                    format!(" · {} · asked {}×", age(self.now - u.created_at), u.surfaced_count),
                    theme::dim(),
                ),
            ]));
            text.push_line(Line::from(format!("  {pair}")));
        }
        text
    }

    /// One record in full: both memories, the reasoning, when to ask, and the choices.
    pub fn detail(&self, id: &str) -> Text<'static> {
        let Some(u) = self.items.iter().find(|x| x.id == id) else {
            return empty("This record was resolved.");
        };
        let mut t = Text::default();
        t.push_line(Line::from(vec![
            Span::styled(u.severity.to_uppercase(), theme::severity(&u.severity)),
            Span::raw(format!(
                " {} · {} · {} old · asked {}×",
                u.kind,
                u.state,
                age(self.now - u.created_at),
                u.surfaced_count
            )),
        ]));
        t.push_line(Line::default());
        t.push_line(Line::from(format!("Older:  {}", self.memory(&u.memory_a))));
        if let Some(b) = &u.memory_b {
            t.push_line(Line::from(format!("Newer:  {}", self.memory(b))));
        }
        t.push_line(Line::default());
        if let Some(r) = u.reasoning.as_deref().filter(|r| !r.trim().is_empty()) {
            t.push_line(Line::from(format!("Why:    {}", r.trim())));
        }
        if let Some(s) = u.surface_context.as_deref() {
            t.push_line(Line::from(format!("Asked about when the talk turns to: {s}")));
        }
        t.push_line(Line::default());
        for (i, c) in CHOICES.iter().enumerate() {
            t.push_line(Line::from(vec![
                Span::styled(format!(" {} ", i + 1), theme::accent()),
                Span::raw(c.to_string()),
            ]));
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: &str, state: &str, a: &str, b: &str) -> UncertaintyItem {
        UncertaintyItem {
            id: id.into(),
            kind: "contradiction".into(),
            severity: "high".into(),
            state: state.into(),
            memory_a: a.into(),
            memory_b: Some(b.into()),
            reasoning: None,
            surface_context: None,
            surfaced_count: 0,
            created_at: 0,
        }
    }

    #[test]
    fn resolved_records_take_their_memories_text_with_them() {
        let mut pane = UncertaintiesPane::default();
        for i in 0..100 {
            let (a, b) = (format!("trait:{}", 2 * i), format!("trait:{}", 2 * i + 1));
            pane.changed(&item(&format!("u{i}"), "open", &a, &b));
            assert_eq!(pane.take_missing(), vec![a.clone(), b.clone()]);
            pane.texts_loaded(&[(a.clone(), Some("x".into())), (b.clone(), None)]);
            pane.changed(&item(&format!("u{i}"), "resolved", &a, &b));
        }
        assert!(pane.items.is_empty());
        assert!(pane.texts.is_empty(), "{} texts kept", pane.texts.len());

        // A memory still named by an open record keeps its text.
        pane.changed(&item("u1", "open", "trait:1", "trait:2"));
        pane.changed(&item("u2", "open", "trait:2", "trait:3"));
        let _ = pane.take_missing();
        pane.texts_loaded(&[("trait:1".into(), None), ("trait:2".into(), None), ("trait:3".into(), None)]);
        pane.changed(&item("u1", "resolved", "trait:1", "trait:2"));
        let mut kept: Vec<&String> = pane.texts.keys().collect();
        kept.sort();
        assert_eq!(kept, ["trait:2", "trait:3"]);
    }
}
