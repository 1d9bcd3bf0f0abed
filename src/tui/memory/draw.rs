//! Drawing the memory browser: tabs, search line, the list with reliability marks, one
//! memory with its provenance, and the forget question. `prepare` measures, `render` only
//! copies into the frame.

use super::{MemoryBrowser, Mode};
use crate::store::{MemoryId, MemoryLayer, MemoryRow};
use crate::tui::keymap::{Command, Context, Keymap};
use crate::tui::panes::{clock_full, short};
use crate::tui::theme;
use chrono::FixedOffset;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Cell, Clear, Paragraph, Row, Table, TableState, Wrap};
use serde_json::Value;

impl MemoryBrowser {
    /// The popup's area inside `screen`.
    pub fn area(screen: Rect) -> Rect {
        let width = screen.width.saturating_sub(4).min(120).max(screen.width.min(20));
        let height = screen.height.saturating_sub(2).max(screen.height.min(6));
        Rect { x: screen.x + (screen.width - width) / 2, y: screen.y + (screen.height - height) / 2, width, height }
    }

    /// Fit the list's window to the selection and measure the detail text.
    pub fn prepare(&mut self, area: Rect, offset: FixedOffset) {
        // Borders, tabs, search line and the table header.
        self.visible = usize::from(area.height.saturating_sub(5).max(1));
        if self.selected < self.offset {
            self.offset = self.selected;
        } else if self.selected >= self.offset + self.visible {
            self.offset = self.selected + 1 - self.visible;
        }
        if let (Mode::Detail, Some(row)) = (self.mode, self.current()) {
            let inner = Rect { x: 0, y: 0, width: area.width.saturating_sub(2), height: area.height.saturating_sub(2) };
            self.detail.clamp(&detail_text(row, offset), inner);
        }
    }

    pub fn render(&self, frame: &mut Frame, area: Rect, offset: FixedOffset, keymap: &Keymap) {
        frame.render_widget(Clear, area);
        if let (Mode::Detail, Some(row)) = (self.mode, self.current()) {
            let p = Paragraph::new(detail_text(row, offset))
                .wrap(Wrap { trim: false })
                .scroll((self.detail.top, 0))
                .block(theme::pane(&format!("Memory · {}", row.id), true));
            frame.render_widget(p, area);
            return;
        }
        let count = match (self.loading, self.rows.len()) {
            (true, _) => "loading…".to_string(),
            (false, 1) => "1 memory".to_string(),
            (false, n) => format!("{n} memories"),
        };
        let block = theme::pane(&format!("Memory · {} · {count}", self.layer.title()), true).title_bottom(
            Line::from(" ✓ reliable  ? uncertain  ! contradicted  ~ superseded ").right_aligned().style(theme::dim()),
        );
        let inner = block.inner(area);
        frame.render_widget(block, area);
        let [tabs, search, list] =
            Layout::vertical([Constraint::Length(1), Constraint::Length(1), Constraint::Fill(1)]).areas(inner);
        frame.render_widget(Paragraph::new(self.tabs_line()), tabs);
        frame.render_widget(Paragraph::new(self.search_line()), search);
        if self.rows.is_empty() {
            frame.render_widget(Paragraph::new(self.empty_text()).wrap(Wrap { trim: false }), list);
        } else {
            self.render_table(frame, list, offset);
        }
        if let Mode::Confirm { id, .. } = self.mode {
            self.render_confirm(frame, area, id, keymap);
        }
    }

    fn tabs_line(&self) -> Line<'static> {
        let mut spans = Vec::new();
        for l in MemoryLayer::ALL {
            if l == self.layer {
                spans.push(Span::styled(format!("[{}]", l.title()), theme::selected().add_modifier(Modifier::BOLD)));
            } else {
                spans.push(Span::styled(format!(" {} ", l.title()), theme::dim()));
            }
        }
        Line::from(spans)
    }

    fn search_line(&self) -> Line<'static> {
        match (self.mode, self.search.is_empty()) {
            (Mode::Search, _) => Line::from(vec![
                Span::styled("search: ", theme::accent()),
                Span::raw(self.search.clone()),
                Span::styled("▏", theme::accent()),
            ]),
            (_, false) => Line::from(vec![Span::styled("search: ", theme::dim()), Span::raw(self.search.clone())]),
            (_, true) => Line::default(),
        }
    }

    fn empty_text(&self) -> Text<'static> {
        let msg = if self.loading {
            "Reading…".to_string()
        } else if let Some(q) = self.query() {
            format!("Nothing in {} matches “{q}”.", self.layer.title().to_lowercase())
        } else {
            let why = match self.layer {
                MemoryLayer::Traits => "Traits are learned from what you say about yourself.",
                MemoryLayer::Episodes => "Episodes are written after a conversation has had enough in it.",
                MemoryLayer::Concepts => "Concepts are distilled from episodes.",
                MemoryLayer::Gists => "Gists summarise the current conversation and lapse within the hour.",
                MemoryLayer::Facts => "Facts are picked out of recent exchanges and lapse after a day.",
                MemoryLayer::Lists => "Ask the assistant to keep a list.",
                MemoryLayer::Reminders => "Ask the assistant to remind you of something.",
                MemoryLayer::Thoughts => "Drift thoughts arrive while you are idle (F6 runs a cycle now).",
                MemoryLayer::World => "A list edited, a reminder set or a focus started shows here for a while.",
            };
            format!("No {} yet. {why}", self.layer.title().to_lowercase())
        };
        Text::from(Line::from(msg).style(theme::dim()))
    }

    fn render_table(&self, frame: &mut Frame, area: Rect, offset: FixedOffset) {
        let rows = self.rows.iter().map(|r| {
            let (mark, style) = mark(r);
            Row::new(vec![
                Cell::from(mark).style(style),
                Cell::from(r.id.to_string()),
                Cell::from(r.confidence.map_or(String::new(), |c| format!("{c:.2}"))),
                Cell::from(clock_full(r.created_at, offset)).style(theme::dim()),
                Cell::from(short(&r.note(), 18)).style(theme::dim()),
                Cell::from(r.text.split_whitespace().collect::<Vec<_>>().join(" ")),
            ])
        });
        let widths = [
            Constraint::Length(1),
            Constraint::Length(13),
            Constraint::Length(4),
            Constraint::Length(14),
            Constraint::Length(18),
            Constraint::Fill(1),
        ];
        let table = Table::new(rows, widths)
            .header(
                Row::new(vec!["", "id", "conf", "created", "note", "memory"])
                    .style(theme::bold().add_modifier(Modifier::UNDERLINED)),
            )
            .row_highlight_style(theme::selected())
            .highlight_symbol("▸ ");
        let mut state = TableState::default().with_offset(self.offset).with_selected(Some(self.selected));
        frame.render_stateful_widget(table, area, &mut state);
    }

    fn render_confirm(&self, frame: &mut Frame, area: Rect, id: MemoryId, keymap: &Keymap) {
        let text = self.rows.iter().find(|r| r.id == id).map_or(String::new(), |r| r.text.clone());
        let width = area.width.saturating_sub(8).min(64);
        let dialog = Rect { x: area.x + (area.width - width) / 2, y: area.y + area.height / 3, width, height: 7 }
            .intersection(area);
        let yes = keymap.key_for(Command::Confirm, Context::MemoryConfirm).unwrap_or("");
        let no = keymap.key_for(Command::Close, Context::MemoryConfirm).unwrap_or("");
        let body = Text::from(vec![
            Line::from(format!("“{}”", short(&text, usize::from(width.saturating_sub(4)) * 2))),
            Line::from("It leaves recall, search and the graph; the deletion is recorded.").style(theme::dim()),
            Line::from(vec![
                Span::styled(format!(" {yes} "), theme::key_cap()),
                Span::raw(" forget   "),
                Span::styled(format!(" {no} "), theme::key_cap()),
                Span::raw(" keep"),
            ]),
        ]);
        frame.render_widget(Clear, dialog);
        let p = Paragraph::new(body).wrap(Wrap { trim: true }).block(theme::pane(&format!("Forget {id}?"), true));
        frame.render_widget(p, dialog);
    }
}

/// The reliability mark of a row (docs/cognition.md §4.3 states); layers without the field get none.
fn mark(r: &MemoryRow) -> (&'static str, Style) {
    match r.reliability.as_deref() {
        Some("reliable") => ("✓", theme::accent()),
        Some("uncertain") => ("?", theme::warn()),
        Some("contradicted") => ("!", theme::error()),
        Some("superseded") => ("~", theme::dim()),
        _ => (" ", Style::new()),
    }
}

/// One memory in full: its text, reliability and confidence, times, and every provenance field.
fn detail_text(r: &MemoryRow, offset: FixedOffset) -> Text<'static> {
    let mut t = Text::default();
    let (m, style) = mark(r);
    let mut head = vec![Span::styled(r.id.to_string(), theme::accent().add_modifier(Modifier::BOLD))];
    if let Some(rel) = &r.reliability {
        head.push(Span::styled(format!("  {m} {rel}"), style));
    }
    if let Some(c) = r.confidence {
        head.push(Span::raw(format!("  confidence {c:.2}")));
    }
    t.push_line(Line::from(head));
    t.push_line(Line::default());
    t.push_line(Line::from(r.text.clone()));
    t.push_line(Line::default());
    t.push_line(Line::from(Span::styled("── Provenance ", theme::accent().add_modifier(Modifier::BOLD))));
    let field = |t: &mut Text<'static>, k: &str, v: String| {
        t.push_line(Line::from(vec![Span::styled(format!("{k:<30} "), theme::dim()), Span::raw(v)]));
    };
    field(&mut t, "created", clock_full(r.created_at, offset));
    if r.updated_at != r.created_at {
        field(&mut t, "updated", clock_full(r.updated_at, offset));
    }
    if let Some(e) = r.expires_at {
        field(&mut t, "lapses", clock_full(e, offset));
    }
    for (k, v) in &r.provenance {
        let shown = match v {
            Value::Null => "—".to_string(),
            Value::Number(n) if k.ends_with("_at") => n.as_i64().map_or(n.to_string(), |ts| clock_full(ts, offset)),
            Value::Number(n) => match n.as_f64() {
                Some(f) if f.fract() != 0.0 => format!("{f:.3}"),
                _ => n.to_string(),
            },
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        field(&mut t, k, shown);
    }
    t
}
