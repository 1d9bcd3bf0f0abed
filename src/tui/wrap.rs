//! Wrapping styled text to a width, done once per width and cached by the chat, so a frame
//! only copies the rows it shows (ratatui's `Paragraph` re-wraps everything every frame).

use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// How a logical line breaks across rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WrapMode {
    /// At spaces; a word wider than the row is split.
    Word,
    /// Anywhere (code, tables): what is there matters more than where words end.
    Char,
    /// A horizontal rule: fill the row.
    Rule,
}

/// One logical line with the prefixes its rows carry (list bullets, quote bars, code gutters).
#[derive(Debug, Clone, PartialEq)]
pub struct Logical {
    /// Prefix on the first row.
    pub first: Vec<Span<'static>>,
    /// Prefix on every following row.
    pub rest: Vec<Span<'static>>,
    pub spans: Vec<Span<'static>>,
    pub mode: WrapMode,
}

impl Logical {
    pub fn plain(spans: Vec<Span<'static>>) -> Logical {
        Logical { first: Vec::new(), rest: Vec::new(), spans, mode: WrapMode::Word }
    }
}

pub fn char_width(c: char) -> usize {
    if c == '\t' { 4 } else { c.width().unwrap_or(0) }
}

pub fn str_width(s: &str) -> usize {
    s.chars().map(char_width).sum()
}

fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| str_width(&s.content)).sum()
}

/// Rows of `line` at `width` columns (at least one row, even for an empty line).
pub fn wrap(line: &Logical, width: u16, out: &mut Vec<Line<'static>>) {
    let width = usize::from(width.max(1));
    let first_w = spans_width(&line.first);
    let rest_w = spans_width(&line.rest);
    if line.mode == WrapMode::Rule {
        let mut spans = line.first.clone();
        let n = width.saturating_sub(first_w).max(1);
        let style = line.spans.first().map(|s| s.style).unwrap_or_default();
        spans.push(Span::styled("─".repeat(n), style));
        out.push(Line::from(spans));
        return;
    }
    let mut rows =
        Rows { out, width, first: &line.first, rest: &line.rest, first_w, rest_w, row: Vec::new(), used: 0, n: 0 };
    rows.start();
    match line.mode {
        WrapMode::Word | WrapMode::Rule => word_wrap(&mut rows, &line.spans),
        WrapMode::Char => {
            for span in &line.spans {
                for c in span.content.chars() {
                    rows.put_char(c, span.style);
                }
            }
        }
    }
    rows.finish();
}

struct Rows<'a> {
    out: &'a mut Vec<Line<'static>>,
    width: usize,
    first: &'a [Span<'static>],
    rest: &'a [Span<'static>],
    first_w: usize,
    rest_w: usize,
    row: Vec<Span<'static>>,
    used: usize,
    /// Rows emitted so far.
    n: usize,
}

impl Rows<'_> {
    fn start(&mut self) {
        let (prefix, w) = if self.n == 0 { (self.first, self.first_w) } else { (self.rest, self.rest_w) };
        self.row.extend(prefix.iter().cloned());
        self.used = w;
    }

    /// Columns left on the row, never less than one, so a too-narrow pane still progresses.
    fn room(&self) -> usize {
        self.width.saturating_sub(self.used)
    }

    fn is_fresh(&self) -> bool {
        let w = if self.n == 0 { self.first_w } else { self.rest_w };
        self.used == w
    }

    /// End the row, dropping the spaces a word wrap leaves at its end.
    fn wrap_line(&mut self) {
        let prefix = self.prefix_len();
        while self.row.len() > prefix {
            let Some(last) = self.row.last_mut() else { break };
            let kept = last.content.trim_end_matches([' ', '\t']).len();
            if kept == last.content.len() {
                break;
            }
            if kept == 0 {
                self.row.pop();
            } else {
                last.content.to_mut().truncate(kept);
                break;
            }
        }
        self.newline();
    }

    fn prefix_len(&self) -> usize {
        if self.n == 0 { self.first.len() } else { self.rest.len() }
    }

    fn newline(&mut self) {
        let row = std::mem::take(&mut self.row);
        self.out.push(Line::from(row));
        self.n += 1;
        self.start();
    }

    fn push(&mut self, text: &str, style: ratatui::style::Style, w: usize) {
        if text.is_empty() {
            return;
        }
        let fresh = self.is_fresh();
        match self.row.last_mut() {
            Some(last) if last.style == style && !fresh => last.content.to_mut().push_str(text),
            _ => self.row.push(Span::styled(text.to_string(), style)),
        }
        self.used += w;
    }

    fn put_char(&mut self, c: char, style: ratatui::style::Style) {
        let w = char_width(c);
        if w > self.room() && !self.is_fresh() {
            self.newline();
        }
        if c == '\t' {
            self.push("    ", style, 4);
        } else {
            let mut buf = [0u8; 4];
            self.push(c.encode_utf8(&mut buf), style, w);
        }
    }

    fn finish(mut self) {
        let row = std::mem::take(&mut self.row);
        self.out.push(Line::from(row));
    }
}

/// Greedy word wrap over styled pieces. A "word" may span several spans (`**bold**text`),
/// so words are gathered as runs of (text, style) pieces before being placed.
fn word_wrap(rows: &mut Rows<'_>, spans: &[Span<'static>]) {
    let mut word: Vec<(String, ratatui::style::Style)> = Vec::new();
    let mut word_w = 0usize;
    let place_word = |rows: &mut Rows<'_>, word: &mut Vec<(String, ratatui::style::Style)>, word_w: &mut usize| {
        if word.is_empty() {
            return;
        }
        if *word_w > rows.room() && !rows.is_fresh() {
            rows.wrap_line();
        }
        if *word_w <= rows.room() {
            for (t, s) in word.drain(..) {
                let w = str_width(&t);
                rows.push(&t, s, w);
            }
        } else {
            // Wider than a whole row: split it.
            for (t, s) in word.drain(..) {
                for c in t.chars() {
                    rows.put_char(c, s);
                }
            }
        }
        *word_w = 0;
    };
    for span in spans {
        let mut rest: &str = &span.content;
        while !rest.is_empty() {
            let ws = rest.find([' ', '\t']).unwrap_or(rest.len());
            if ws > 0 {
                let piece = &rest[..ws];
                word_w += str_width(piece);
                word.push((piece.to_string(), span.style));
                rest = &rest[ws..];
                continue;
            }
            // A run of spaces ends the word; spaces at the start of a continuation row are dropped.
            place_word(rows, &mut word, &mut word_w);
            let end = rest.find(|c: char| c != ' ' && c != '\t').unwrap_or(rest.len());
            let spaces = &rest[..end];
            let w = str_width(spaces);
            if rows.is_fresh() && rows.n > 0 {
                // dropped
            } else if w <= rows.room() {
                rows.push(spaces, span.style, w);
            } else {
                rows.wrap_line();
            }
            rest = &rest[end..];
        }
    }
    place_word(rows, &mut word, &mut word_w);
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::Style;

    fn rows(l: &Logical, w: u16) -> Vec<String> {
        let mut out = Vec::new();
        wrap(l, w, &mut out);
        out.iter().map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect()).collect()
    }

    #[test]
    fn words_wrap_with_prefixes() {
        let l = Logical {
            first: vec![Span::raw("• ")],
            rest: vec![Span::raw("  ")],
            spans: vec![Span::raw("one two "), Span::styled("three", Style::new().bold()), Span::raw(" four")],
            mode: WrapMode::Word,
        };
        assert_eq!(rows(&l, 11), ["• one two", "  three", "  four"]);
        assert_eq!(rows(&l, 40), ["• one two three four"]);
    }

    #[test]
    fn long_words_split_and_wide_chars_count_double() {
        let l = Logical::plain(vec![Span::raw("abcdefghij xy")]);
        assert_eq!(rows(&l, 4), ["abcd", "efgh", "ij", "xy"]);
        let l = Logical::plain(vec![Span::raw("日本語の文")]);
        assert_eq!(rows(&l, 4), ["日本", "語の", "文"]);
        let l = Logical::plain(Vec::new());
        assert_eq!(rows(&l, 10), [""]);
    }

    #[test]
    fn code_wraps_anywhere_and_rules_fill() {
        let l = Logical { first: vec![], rest: vec![], spans: vec![Span::raw("let  x = 1;")], mode: WrapMode::Char };
        assert_eq!(rows(&l, 5), ["let  ", "x = 1", ";"]);
        let l = Logical { first: vec![], rest: vec![], spans: vec![], mode: WrapMode::Rule };
        assert_eq!(rows(&l, 3), ["───"]);
    }
}
