//! Drawing the conversation list: search line, the table with the current conversation
//! marked, and the delete question.

use super::{ConversationList, Mode};
use crate::tui::keymap::{Command, Context, Keymap};
use crate::tui::panes::{clock_full, short};
use crate::tui::theme;
use chrono::FixedOffset;
use ratatui::Frame;
use ratatui::layout::{Alignment, Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Cell, Clear, Paragraph, Row, Table, TableState, Wrap};

impl ConversationList {
    /// The popup's area inside `screen`.
    pub fn area(screen: Rect) -> Rect {
        let width = screen.width.saturating_sub(4).min(100).max(screen.width.min(20));
        let height = screen.height.saturating_sub(2).max(screen.height.min(6));
        Rect { x: screen.x + (screen.width - width) / 2, y: screen.y + (screen.height - height) / 2, width, height }
    }

    /// Fit the list's window to the selection.
    pub fn prepare(&mut self, area: Rect) {
        // Borders, search line and the table header.
        self.visible = usize::from(area.height.saturating_sub(4).max(1));
        if self.selected < self.offset {
            self.offset = self.selected;
        } else if self.selected >= self.offset + self.visible {
            self.offset = self.selected + 1 - self.visible;
        }
    }

    /// `current` is the conversation new messages go to, marked with ●.
    pub fn render(&self, frame: &mut Frame, area: Rect, offset: FixedOffset, keymap: &Keymap, current: Option<&str>) {
        frame.render_widget(Clear, area);
        let count = match (self.loading, self.rows.len()) {
            (true, _) => "loading…".to_string(),
            (false, 1) => "1 conversation".to_string(),
            (false, n) => format!("{n} conversations"),
        };
        let block = theme::pane(&format!("Conversations · {count}"), true)
            .title_bottom(Line::from(" ● this conversation ").right_aligned().style(theme::dim()));
        let inner = block.inner(area);
        frame.render_widget(block, area);
        let [search, list] = Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(inner);
        frame.render_widget(Paragraph::new(self.search_line()), search);
        if self.rows.is_empty() {
            let msg = match (self.loading, self.query()) {
                (true, _) => "Reading…".to_string(),
                (false, Some(q)) => format!("No conversation mentions “{q}”."),
                (false, None) => "No conversations yet. Say something and it becomes one.".to_string(),
            };
            frame.render_widget(Paragraph::new(Line::from(msg).style(theme::dim())).wrap(Wrap { trim: false }), list);
        } else {
            self.render_table(frame, list, offset, current);
        }
        if let Mode::Confirm(id) = &self.mode {
            self.render_confirm(frame, area, id, keymap);
        }
    }

    fn search_line(&self) -> Line<'static> {
        match (&self.mode, self.search.is_empty()) {
            (Mode::Search, _) => Line::from(vec![
                Span::styled("search: ", theme::accent()),
                Span::raw(self.search.clone()),
                Span::styled("▏", theme::accent()),
            ]),
            (_, false) => Line::from(vec![Span::styled("search: ", theme::dim()), Span::raw(self.search.clone())]),
            (_, true) => Line::default(),
        }
    }

    fn render_table(&self, frame: &mut Frame, area: Rect, offset: FixedOffset, current: Option<&str>) {
        let rows = self.rows.iter().map(|c| {
            let here = current == Some(c.thread_id.as_str());
            Row::new(vec![
                Cell::from(if here { "●" } else { " " }).style(theme::accent()),
                Cell::from(title(&c.title)),
                Cell::from(clock_full(c.last_at, offset)).style(theme::dim()),
                Cell::from(Text::from(c.messages.to_string()).alignment(Alignment::Right)),
            ])
        });
        let widths = [Constraint::Length(1), Constraint::Fill(1), Constraint::Length(14), Constraint::Length(5)];
        let table = Table::new(rows, widths)
            .header(
                Row::new(vec!["", "conversation", "last message", " msgs"])
                    .style(theme::bold().add_modifier(Modifier::UNDERLINED)),
            )
            .row_highlight_style(theme::selected())
            .highlight_symbol("▸ ");
        let mut state = TableState::default().with_offset(self.offset).with_selected(Some(self.selected));
        frame.render_stateful_widget(table, area, &mut state);
    }

    fn render_confirm(&self, frame: &mut Frame, area: Rect, id: &str, keymap: &Keymap) {
        let row = self.rows.iter().find(|r| r.thread_id == id);
        let name = row.map_or(String::new(), |r| title(&r.title));
        let n = row.map_or(0, |r| r.messages);
        let width = area.width.saturating_sub(8).min(64);
        let dialog = Rect { x: area.x + (area.width - width) / 2, y: area.y + area.height / 3, width, height: 7 }
            .intersection(area);
        let yes = keymap.key_for(Command::Confirm, Context::ConversationConfirm).unwrap_or("");
        let no = keymap.key_for(Command::Close, Context::ConversationConfirm).unwrap_or("");
        let body = Text::from(vec![
            Line::from(format!("“{}” · {n} messages", short(&name, usize::from(width.saturating_sub(16))))),
            Line::from("Every message is forgotten, with what was learned from it; the deletion is recorded.")
                .style(theme::dim()),
            Line::from(vec![
                Span::styled(format!(" {yes} "), theme::key_cap()),
                Span::raw(" delete   "),
                Span::styled(format!(" {no} "), theme::key_cap()),
                Span::raw(" keep"),
            ]),
        ]);
        frame.render_widget(Clear, dialog);
        let p = Paragraph::new(body).wrap(Wrap { trim: true }).block(theme::pane("Delete this conversation?", true));
        frame.render_widget(p, dialog);
    }
}

fn title(t: &str) -> String {
    let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
    if t.is_empty() { "(untitled)".into() } else { t }
}
