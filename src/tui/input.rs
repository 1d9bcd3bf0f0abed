//! The message box: multi-line editing, paste, and history on Up/Down.
//!
//! Text is a `String` with a byte cursor always on a char boundary. Layout (wrapping at the
//! box width, keeping the cursor row in view) happens in `prepare` and looks only at the
//! logical lines near the cursor, so a pasted 50,000-line log costs no more per frame than a
//! short message.

use super::keymap::Command;
use super::theme;
use super::wrap::{char_width, str_width};
use ratatui::Frame;
use ratatui::layout::{Position, Rect};
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

/// Sent messages kept for Up/Down.
const HISTORY: usize = 200;

#[derive(Debug, Default)]
pub struct Input {
    text: String,
    cursor: usize,
    history: Vec<String>,
    /// Position while browsing history (None: editing the draft).
    browsing: Option<usize>,
    /// What was being typed before browsing started.
    draft: String,
    /// Rows to show and the cursor's place among them, from the last `prepare`.
    view: View,
}

#[derive(Debug, Default, Clone)]
struct View {
    rows: Vec<String>,
    cursor: (u16, u16),
    /// Logical lines in the whole text.
    lines: usize,
}

impl Input {
    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Type or paste text at the cursor. Pasted line endings are normalised; other control
    /// characters would corrupt the screen and are dropped.
    pub fn insert(&mut self, s: &str) {
        let clean: String = s
            .replace("\r\n", "\n")
            .replace('\r', "\n")
            .chars()
            .filter(|c| *c == '\n' || *c == '\t' || !c.is_control())
            .collect();
        self.text.insert_str(self.cursor, &clean);
        self.cursor += clean.len();
        self.browsing = None;
    }

    /// Carry out an editing command; `Some(text)` when the message is to be sent.
    pub fn handle(&mut self, cmd: Command) -> Option<String> {
        match cmd {
            Command::Send => {
                let text = self.text.trim().to_string();
                if text.is_empty() {
                    return None;
                }
                if self.history.last() != Some(&text) {
                    self.history.push(text.clone());
                    if self.history.len() > HISTORY {
                        self.history.remove(0);
                    }
                }
                self.text.clear();
                self.cursor = 0;
                self.browsing = None;
                self.draft.clear();
                return Some(text);
            }
            Command::NewLine => self.insert("\n"),
            // Up/Down move between lines of the text; past its first/last line, through history.
            Command::HistoryPrev if !self.move_vertically(-1) => self.history_step(-1),
            Command::HistoryNext if !self.move_vertically(1) => self.history_step(1),
            Command::Left => self.cursor = self.prev_boundary(self.cursor),
            Command::Right => self.cursor = self.next_boundary(self.cursor),
            Command::WordLeft => self.cursor = self.word_left(),
            Command::WordRight => self.cursor = self.word_right(),
            Command::LineStart => self.cursor = self.line_start(self.cursor),
            Command::LineEnd => self.cursor = self.line_end(self.cursor),
            Command::DeleteBack => {
                let start = self.prev_boundary(self.cursor);
                self.text.replace_range(start..self.cursor, "");
                self.cursor = start;
            }
            Command::DeleteForward => {
                let end = self.next_boundary(self.cursor);
                self.text.replace_range(self.cursor..end, "");
            }
            Command::DeleteWord => {
                let start = self.word_left();
                self.text.replace_range(start..self.cursor, "");
                self.cursor = start;
            }
            Command::ClearInput => {
                self.text.clear();
                self.cursor = 0;
                self.browsing = None;
            }
            _ => {}
        }
        None
    }

    fn prev_boundary(&self, i: usize) -> usize {
        self.text[..i].char_indices().next_back().map_or(0, |(j, _)| j)
    }

    fn next_boundary(&self, i: usize) -> usize {
        self.text[i..].chars().next().map_or(i, |c| i + c.len_utf8())
    }

    fn line_start(&self, i: usize) -> usize {
        self.text[..i].rfind('\n').map_or(0, |j| j + 1)
    }

    fn line_end(&self, i: usize) -> usize {
        self.text[i..].find('\n').map_or(self.text.len(), |j| i + j)
    }

    fn word_left(&self) -> usize {
        let before = &self.text[..self.cursor];
        let trimmed = before.trim_end();
        trimmed.rfind(char::is_whitespace).map_or(0, |j| j + trimmed[j..].chars().next().map_or(1, char::len_utf8))
    }

    fn word_right(&self) -> usize {
        let after = &self.text[self.cursor..];
        let skip_ws = after.len() - after.trim_start().len();
        let rest = &after[skip_ws..];
        self.cursor + skip_ws + rest.find(char::is_whitespace).unwrap_or(rest.len())
    }

    /// Move to the same column on the previous/next logical line; false at the first/last.
    fn move_vertically(&mut self, dir: i32) -> bool {
        let start = self.line_start(self.cursor);
        let col = str_width(&self.text[start..self.cursor]);
        let target_start = if dir < 0 {
            if start == 0 {
                return false;
            }
            self.line_start(start - 1)
        } else {
            let end = self.line_end(self.cursor);
            if end == self.text.len() {
                return false;
            }
            end + 1
        };
        let target_end = self.line_end(target_start);
        let mut w = 0;
        let mut pos = target_start;
        for (j, c) in self.text[target_start..target_end].char_indices() {
            if w >= col {
                break;
            }
            w += char_width(c);
            pos = target_start + j + c.len_utf8();
        }
        self.cursor = pos;
        true
    }

    fn history_step(&mut self, dir: i32) {
        if self.history.is_empty() {
            return;
        }
        let next = match (self.browsing, dir < 0) {
            (None, true) => {
                self.draft = self.text.clone();
                Some(self.history.len() - 1)
            }
            (None, false) => return,
            (Some(i), true) => Some(i.saturating_sub(1)),
            (Some(i), false) if i + 1 < self.history.len() => Some(i + 1),
            (Some(_), false) => None,
        };
        self.text = match next {
            Some(i) => self.history.get(i).cloned().unwrap_or_default(),
            None => std::mem::take(&mut self.draft),
        };
        self.cursor = self.text.len();
        self.browsing = next;
    }

    /// Rows the box wants at `width` (inner), at most `max_rows`.
    pub fn prepare(&mut self, width: u16, max_rows: u16) -> u16 {
        let width = usize::from(width.max(2));
        let max_rows = usize::from(max_rows.max(1));
        // Logical lines around the cursor are enough to fill the box.
        let cursor_line_start = self.line_start(self.cursor);
        let mut start = cursor_line_start;
        for _ in 0..max_rows {
            if start == 0 {
                break;
            }
            start = self.line_start(start - 1);
        }
        let mut end = self.line_end(self.cursor);
        for _ in 0..max_rows {
            if end >= self.text.len() {
                break;
            }
            end = self.line_end(end + 1);
        }
        let mut rows: Vec<String> = Vec::new();
        let mut cursor = (0usize, 0usize);
        let mut pos = start;
        for line in self.text[start..end].split('\n') {
            let mut row = String::new();
            let mut w = 0;
            for (j, c) in line.char_indices() {
                if pos + j == self.cursor {
                    cursor = (rows.len(), w);
                }
                let cw = char_width(c);
                if w + cw > width - 1 {
                    rows.push(std::mem::take(&mut row));
                    w = 0;
                    if pos + j == self.cursor {
                        cursor = (rows.len(), 0);
                    }
                }
                if c == '\t' {
                    row.push_str("    ");
                } else {
                    row.push(c);
                }
                w += cw;
            }
            if pos + line.len() == self.cursor {
                cursor = (rows.len(), w);
            }
            rows.push(row);
            pos += line.len() + 1;
        }
        // Keep the cursor row in the window of `max_rows`.
        let first = (cursor.0 + 1).saturating_sub(max_rows);
        let shown: Vec<String> = rows.iter().skip(first).take(max_rows).cloned().collect();
        let lines = self.text.bytes().filter(|b| *b == b'\n').count() + 1;
        self.view = View { cursor: ((cursor.0 - first) as u16, cursor.1 as u16), rows: shown, lines };
        self.view.rows.len().max(1) as u16
    }

    pub fn render(&self, frame: &mut Frame, area: Rect, focused: bool, hint: &str) {
        let title =
            if self.view.lines > 1 { format!("Message · {} lines", self.view.lines) } else { "Message".into() };
        let block = theme::pane(&title, focused);
        let inner = block.inner(area);
        let body = if self.text.is_empty() {
            Paragraph::new(Line::from(hint.to_string()).style(theme::dim()))
        } else {
            Paragraph::new(self.view.rows.iter().map(|r| Line::from(r.clone())).collect::<Vec<_>>())
        };
        frame.render_widget(body.block(block), area);
        if focused && inner.width > 0 && inner.height > 0 {
            let x = inner.x + self.view.cursor.1.min(inner.width - 1);
            let y = inner.y + self.view.cursor.0.min(inner.height - 1);
            frame.set_cursor_position(Position { x, y });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(s: &str) -> Input {
        let mut i = Input::default();
        i.insert(s);
        i
    }

    #[test]
    fn editing_moves_on_char_boundaries() {
        let mut i = typed("héllo wörld");
        i.handle(Command::Left);
        i.handle(Command::DeleteBack);
        assert_eq!(i.text(), "héllo wörd");
        i.handle(Command::WordLeft);
        i.handle(Command::DeleteWord);
        assert_eq!(i.text(), "wörd");
        i.handle(Command::LineEnd);
        i.handle(Command::DeleteWord);
        assert!(i.is_empty());
    }

    #[test]
    fn multiline_up_down_then_history() {
        let mut i = typed("first");
        assert_eq!(i.handle(Command::Send).as_deref(), Some("first"));
        i.insert("line one");
        i.handle(Command::NewLine);
        i.insert("two");
        // Up moves within the text first, then into history.
        i.handle(Command::HistoryPrev);
        assert_eq!(i.cursor, 3);
        i.handle(Command::HistoryPrev);
        assert_eq!(i.text(), "first");
        i.handle(Command::HistoryNext);
        assert_eq!(i.text(), "line one\ntwo", "the draft comes back");
        assert_eq!(i.handle(Command::Send).as_deref(), Some("line one\ntwo"));
        assert_eq!(i.handle(Command::Send), None, "an empty box sends nothing");
    }

    #[test]
    fn paste_normalises_and_layout_follows_the_cursor() {
        let mut i = Input::default();
        let big: String = (0..50_000).map(|n| format!("log line {n}\r\n")).collect();
        i.insert(&big);
        assert!(!i.text().contains('\r'));
        let h = i.prepare(20, 5);
        assert_eq!(h, 5);
        assert_eq!(i.view.lines, 50_001);
        assert_eq!(i.view.rows.last().map(String::as_str), Some(""));
        assert_eq!(i.view.cursor, (4, 0));
        // Wrapping a long line keeps the cursor at its end.
        let mut i = typed("abcdefghijklmnopqrstuvwxyz");
        assert_eq!(i.prepare(10, 5), 3);
        assert_eq!(i.view.rows, ["abcdefghi", "jklmnopqr", "stuvwxyz"]);
        assert_eq!(i.view.cursor, (2, 8));
    }
}
