//! Replies as Markdown: headings, lists, emphasis, quotes, tables and highlighted code, as
//! logical lines ready for [`super::wrap`].
//!
//! A streamed reply is re-rendered as it grows, so [`Doc`] splits the text into top-level
//! blocks at boundaries where parsing the blocks one by one gives the same result as parsing
//! the whole (a non-indented line after a blank line, outside fenced code). Only the last,
//! still-growing block is parsed again for each chunk; markdown split across chunks (`**bo` +
//! `ld**`, an unclosed fence) is simply part of that last block until it completes.

use super::highlight::{self, HlState};
use super::theme;
use super::wrap::{self, Logical, WrapMode};
use crate::text::terminal::safe;
use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

/// Render one Markdown block (or a whole document) to logical lines.
pub fn render(md: &str) -> Vec<Logical> {
    let mut r = Renderer::default();
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    for event in Parser::new_ext(md, options) {
        r.event(event);
    }
    r.flush();
    r.lines
}

/// A container a line sits in; its prefix is drawn on every row of every line inside it.
#[derive(Debug, Clone)]
enum Container {
    Quote,
    Item { marker: String, width: usize, first_pending: bool },
}

#[derive(Default)]
struct Renderer {
    lines: Vec<Logical>,
    cur: Vec<Span<'static>>,
    styles: Vec<Style>,
    containers: Vec<Container>,
    /// Ordered-list counters (None for bullets), innermost last.
    lists: Vec<Option<u64>>,
    pending_blank: bool,
    code: Option<(String, String)>,
    table: Option<Table>,
    heading: bool,
}

#[derive(Default)]
struct Table {
    rows: Vec<Vec<String>>,
    header_rows: usize,
    cell: String,
    in_head: bool,
}

impl Renderer {
    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or_default()
    }

    fn push_style(&mut self, add: Style) {
        let s = self.style().patch(add);
        self.styles.push(s);
    }

    fn prefixes(&mut self) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let (mut first, mut rest) = (Vec::new(), Vec::new());
        for c in &mut self.containers {
            match c {
                Container::Quote => {
                    first.push(Span::styled("▌ ", theme::dim()));
                    rest.push(Span::styled("▌ ", theme::dim()));
                }
                Container::Item { marker, width, first_pending } => {
                    if *first_pending {
                        first.push(Span::styled(marker.clone(), theme::accent()));
                        *first_pending = false;
                    } else {
                        first.push(Span::raw(" ".repeat(*width)));
                    }
                    rest.push(Span::raw(" ".repeat(*width)));
                }
            }
        }
        (first, rest)
    }

    fn push_line(&mut self, spans: Vec<Span<'static>>, mode: WrapMode) {
        let (first, rest) = self.prefixes();
        self.lines.push(Logical { first, rest, spans, mode });
    }

    /// End the line being built, if any.
    fn flush(&mut self) {
        if !self.cur.is_empty() {
            let spans = std::mem::take(&mut self.cur);
            self.push_line(spans, WrapMode::Word);
        }
    }

    /// A blank line between blocks (with the quote bars of the blocks around it).
    fn block_start(&mut self) {
        self.flush();
        if self.pending_blank && !self.lines.is_empty() {
            let rest: Vec<Span<'static>> = self
                .containers
                .iter()
                .map(|c| match c {
                    Container::Quote => Span::styled("▌", theme::dim()),
                    Container::Item { width, .. } => Span::raw(" ".repeat(*width)),
                })
                .collect();
            self.lines.push(Logical { first: rest.clone(), rest, spans: Vec::new(), mode: WrapMode::Word });
        }
        self.pending_blank = false;
    }

    fn text(&mut self, t: &str) {
        if let Some((_, buf)) = &mut self.code {
            buf.push_str(t);
        } else if let Some(table) = &mut self.table {
            table.cell.push_str(t);
        } else {
            let style = self.style();
            self.cur.push(Span::styled(t.to_string(), style));
        }
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => self.text(&t),
            Event::Code(t) => {
                if let Some(table) = &mut self.table {
                    table.cell.push_str(&t);
                } else {
                    let style = self.style().patch(theme::inline_code());
                    self.cur.push(Span::styled(t.into_string(), style));
                }
            }
            Event::SoftBreak => self.text(" "),
            Event::HardBreak => self.flush(),
            Event::Rule => {
                self.block_start();
                self.push_line(vec![Span::styled("", theme::dim())], WrapMode::Rule);
                self.pending_blank = true;
            }
            Event::TaskListMarker(done) => {
                let (mark, style) = if done { ("[x] ", theme::accent()) } else { ("[ ] ", theme::dim()) };
                self.cur.push(Span::styled(mark, style));
            }
            Event::Html(t) | Event::InlineHtml(t) => {
                for (i, part) in t.split('\n').enumerate() {
                    if i > 0 {
                        self.flush();
                    }
                    self.text(part);
                }
            }
            Event::FootnoteReference(t) | Event::InlineMath(t) | Event::DisplayMath(t) => self.text(&t),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.block_start(),
            Tag::Heading { level, .. } => {
                self.block_start();
                let n = match level {
                    HeadingLevel::H1 => 1,
                    HeadingLevel::H2 => 2,
                    _ => 3,
                };
                self.heading = true;
                self.push_style(theme::heading(n));
            }
            Tag::BlockQuote(_) => {
                self.block_start();
                self.containers.push(Container::Quote);
                self.push_style(Style::new().add_modifier(Modifier::ITALIC));
            }
            Tag::CodeBlock(kind) => {
                self.block_start();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info.split_whitespace().next().unwrap_or("").to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::List(start) => {
                if self.lists.is_empty() {
                    self.block_start();
                } else {
                    self.flush();
                }
                self.lists.push(start);
            }
            Tag::Item => {
                self.flush();
                if self.pending_blank {
                    self.block_start();
                }
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let m = format!("{n}. ");
                        *n += 1;
                        m
                    }
                    _ => ["• ", "◦ ", "▪ "][(self.lists.len().saturating_sub(1)) % 3].to_string(),
                };
                let width = wrap::str_width(&marker);
                self.containers.push(Container::Item { marker, width, first_pending: true });
            }
            Tag::Emphasis => self.push_style(Style::new().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(Style::new().add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self.push_style(Style::new().add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { .. } | Tag::Image { .. } => self.push_style(theme::link()),
            Tag::Table(_) => {
                self.block_start();
                self.table = Some(Table::default());
            }
            Tag::TableHead => {
                if let Some(t) = &mut self.table {
                    t.in_head = true;
                    t.rows.push(Vec::new());
                }
            }
            Tag::TableRow => {
                if let Some(t) = &mut self.table {
                    t.rows.push(Vec::new());
                }
            }
            Tag::TableCell => {
                if let Some(t) = &mut self.table {
                    t.cell.clear();
                }
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush();
                self.pending_blank = true;
            }
            TagEnd::Heading(_) => {
                self.flush();
                self.styles.pop();
                self.heading = false;
                self.pending_blank = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.containers.pop();
                self.styles.pop();
                self.pending_blank = true;
            }
            TagEnd::CodeBlock => {
                if let Some((lang, buf)) = self.code.take() {
                    self.code_block(&lang, &buf);
                }
                self.pending_blank = true;
            }
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
                if self.lists.is_empty() {
                    self.pending_blank = true;
                }
            }
            TagEnd::Item => {
                self.flush();
                self.containers.pop();
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough | TagEnd::Link | TagEnd::Image => {
                self.styles.pop();
            }
            TagEnd::TableCell => {
                if let Some(t) = &mut self.table {
                    let cell = std::mem::take(&mut t.cell);
                    if let Some(row) = t.rows.last_mut() {
                        row.push(cell.trim().to_string());
                    }
                }
            }
            TagEnd::TableHead => {
                if let Some(t) = &mut self.table {
                    t.in_head = false;
                    t.header_rows = t.rows.len();
                }
            }
            TagEnd::Table => {
                if let Some(t) = self.table.take() {
                    self.table_lines(&t);
                }
                self.pending_blank = true;
            }
            _ => {}
        }
    }

    fn code_block(&mut self, lang: &str, code: &str) {
        if !lang.is_empty() {
            self.push_line(
                vec![Span::styled(lang.to_string(), theme::dim().add_modifier(Modifier::ITALIC))],
                WrapMode::Word,
            );
        }
        let mut state = HlState::default();
        let body = code.strip_suffix('\n').unwrap_or(code);
        for line in body.split('\n') {
            let mut spans = vec![Span::styled("│ ", theme::dim())];
            spans.extend(highlight::line(line, lang, &mut state));
            self.push_line(spans, WrapMode::Char);
        }
    }

    fn table_lines(&mut self, t: &Table) {
        let cols = t.rows.iter().map(Vec::len).max().unwrap_or(0);
        let mut widths = vec![0usize; cols];
        for row in &t.rows {
            for (i, cell) in row.iter().enumerate() {
                widths[i] = widths[i].max(wrap::str_width(cell));
            }
        }
        for (r, row) in t.rows.iter().enumerate() {
            let header = r < t.header_rows;
            let mut spans = Vec::new();
            for (i, w) in widths.iter().enumerate() {
                if i > 0 {
                    spans.push(Span::styled(" │ ", theme::dim()));
                }
                let cell = row.get(i).map(String::as_str).unwrap_or("");
                let pad = w.saturating_sub(wrap::str_width(cell));
                let style = if header { theme::bold() } else { Style::new() };
                spans.push(Span::styled(format!("{cell}{}", " ".repeat(pad)), style));
            }
            self.push_line(spans, WrapMode::Char);
            if header && r + 1 == t.header_rows {
                let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                self.push_line(vec![Span::styled(rule.join("─┼─"), theme::dim())], WrapMode::Char);
            }
        }
    }
}

/// Lines of a fenced code block per block: a streamed 10,000-line code block then costs
/// one chunk of highlighting per frame, not all of it.
const CODE_CHUNK: usize = 64;

/// An open code fence: its character, length and language.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fence {
    ch: char,
    n: usize,
    lang: String,
}

impl Fence {
    /// Does `line` (without its newline) close this fence?
    fn closes(&self, line: &str) -> bool {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let t = &line[indent..];
        indent <= 3
            && t.chars().take_while(|c| *c == self.ch).count() >= self.n
            && t.trim_matches(self.ch).trim().is_empty()
    }

    /// The fence a line opens, if any.
    fn opened_by(line: &str) -> Option<Fence> {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let t = &line[indent..];
        if indent > 3 {
            return None;
        }
        ['`', '~'].into_iter().find_map(|ch| {
            let n = t.chars().take_while(|c| *c == ch).count();
            let info = &t[n * ch.len_utf8()..];
            (n >= 3 && !(ch == '`' && info.contains('`'))).then(|| Fence {
                ch,
                n,
                lang: info.split_whitespace().next().unwrap_or("").to_string(),
            })
        })
    }
}

/// Where a block starts, and the code fence it starts inside of (a long code block is cut
/// into chunks of [`CODE_CHUNK`] lines).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Start {
    pub at: usize,
    pub inside: Option<Fence>,
}

/// Block starts after `from`: a line that begins with a non-blank character right after a
/// blank line, outside fenced code (there, parsing the blocks one by one gives the same result
/// as parsing the whole), and every [`CODE_CHUNK`] lines inside a fence. `from` must itself be
/// a block start, inside `fence` if given.
pub fn block_starts(text: &str, from: usize, fence: Option<&Fence>) -> Vec<Start> {
    let mut out = Vec::new();
    let mut fence = fence.cloned();
    let mut code_lines = 0usize;
    let mut prev_blank = false;
    let mut pos = from;
    for line in text[from..].split_inclusive('\n') {
        let start = pos;
        pos += line.len();
        let body = line.trim_end_matches(['\n', '\r']);
        if let Some(f) = &fence {
            if f.closes(body) {
                fence = None;
            } else {
                if code_lines >= CODE_CHUNK {
                    out.push(Start { at: start, inside: Some(f.clone()) });
                    code_lines = 0;
                }
                code_lines += 1;
            }
            prev_blank = false;
            continue;
        }
        let blank = body.trim().is_empty();
        if start > from && prev_blank && !blank && !body.starts_with([' ', '\t']) {
            out.push(Start { at: start, inside: None });
        }
        if let Some(f) = Fence::opened_by(body) {
            fence = Some(f);
            code_lines = 0;
        }
        prev_blank = blank;
    }
    out
}

/// A chunk of a long code block: its lines, then (after the closing fence, if this chunk has
/// it) whatever Markdown follows.
fn render_code_chunk(src: &str, fence: &Fence) -> Vec<Logical> {
    let mut out = Vec::new();
    let mut state = HlState::default();
    let mut rest = None;
    let mut pos = 0;
    for line in src.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        pos += line.len();
        if fence.closes(body) {
            rest = Some(&src[pos..]);
            break;
        }
        let mut spans = vec![Span::styled("│ ", theme::dim())];
        spans.extend(highlight::line(body, &fence.lang, &mut state));
        out.push(Logical { first: Vec::new(), rest: Vec::new(), spans, mode: WrapMode::Char });
    }
    if let Some(rest) = rest.map(str::trim).filter(|r| !r.is_empty()) {
        out.push(Logical::plain(Vec::new()));
        out.extend(render(rest));
    }
    out
}

/// One top-level block of a document and its cached rendering.
#[derive(Debug, Clone)]
struct Block {
    start: usize,
    /// The code fence this block continues (no separator row before it).
    inside: Option<Fence>,
    lines: Vec<Logical>,
    rows: Vec<Line<'static>>,
    /// The width `rows` were wrapped at (0: not yet).
    rows_width: u16,
}

/// A message body that can grow chunk by chunk and is wrapped once per width.
#[derive(Debug, Clone)]
pub struct Doc {
    text: String,
    /// Plain text (the user's messages): no Markdown interpretation.
    plain: bool,
    blocks: Vec<Block>,
    /// The text changed since the blocks were last rendered.
    stale: bool,
    height: usize,
}

impl Doc {
    /// The text is kept with its control characters made visible
    /// ([`crate::text::terminal::safe`]): a reply's escape sequences are shown, never obeyed.
    pub fn new(text: &str, plain: bool) -> Doc {
        Doc { text: safe(text).into_owned(), plain, blocks: Vec::new(), stale: true, height: 0 }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn push_str(&mut self, s: &str) {
        self.text.push_str(&safe(s));
        self.stale = true;
    }

    /// Replace the whole text (a finished reply may differ from what streamed).
    pub fn set_text(&mut self, s: &str) {
        let s = safe(s);
        if self.text != s {
            self.text = s.to_string();
            self.blocks.clear();
            self.stale = true;
        }
    }

    /// Re-render what changed and wrap to `width`; returns the height in rows.
    pub fn prepare(&mut self, width: u16) -> usize {
        if self.stale {
            self.stale = false;
            if self.plain {
                let lines = self.text.split('\n').map(|l| Logical::plain(vec![Span::raw(l.to_string())])).collect();
                self.blocks = vec![Block { start: 0, inside: None, lines, rows: Vec::new(), rows_width: 0 }];
            } else {
                // Re-split from the last block: everything before it is final.
                let first = self
                    .blocks
                    .pop()
                    .map_or(Start { at: 0, inside: None }, |b| Start { at: b.start, inside: b.inside });
                let mut starts = block_starts(&self.text, first.at, first.inside.as_ref());
                starts.insert(0, first);
                for (i, start) in starts.iter().enumerate() {
                    let next = starts.get(i + 1);
                    let end = next.map_or(self.text.len(), |n| n.at);
                    let src = &self.text[start.at..end];
                    // Blank lines at a cut inside a code block are code; elsewhere they only
                    // separate blocks.
                    let src = if next.is_some_and(|n| n.inside.is_some()) { src } else { src.trim_end() };
                    let lines = match &start.inside {
                        Some(fence) => render_code_chunk(src, fence),
                        None => render(src),
                    };
                    self.blocks.push(Block {
                        start: start.at,
                        inside: start.inside.clone(),
                        lines,
                        rows: Vec::new(),
                        rows_width: 0,
                    });
                }
            }
        }
        let mut height = 0;
        for b in &mut self.blocks {
            if b.rows_width != width {
                b.rows.clear();
                for l in &b.lines {
                    wrap::wrap(l, width, &mut b.rows);
                }
                b.rows_width = width;
            }
            height += b.rows.len();
        }
        // One blank row between blocks (each block's own trailing blank is trimmed), except
        // before the next chunk of a code block.
        let shown = self.blocks.iter().filter(|b| !b.rows.is_empty());
        height += shown.enumerate().filter(|(i, b)| *i > 0 && b.inside.is_none()).count();
        self.height = height;
        height
    }

    /// Height at the last `prepare`.
    pub fn height(&self) -> usize {
        self.height
    }

    /// Visit rows `skip..skip + take` (as of the last `prepare`).
    pub fn rows(&self, mut skip: usize, mut take: usize, f: &mut dyn FnMut(&Line<'static>)) {
        static BLANK: Line<'static> = Line { spans: Vec::new(), style: Style::new(), alignment: None };
        let mut first = true;
        for b in self.blocks.iter().filter(|b| !b.rows.is_empty()) {
            if take == 0 {
                return;
            }
            if !first && b.inside.is_none() {
                if skip > 0 {
                    skip -= 1;
                } else {
                    f(&BLANK);
                    take -= 1;
                }
            }
            first = false;
            if skip >= b.rows.len() {
                skip -= b.rows.len();
                continue;
            }
            for row in b.rows[skip..].iter().take(take) {
                f(row);
                take -= 1;
            }
            skip = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect()).collect()
    }

    fn doc_rows(d: &mut Doc, width: u16) -> Vec<String> {
        let h = d.prepare(width);
        let mut out = Vec::new();
        d.rows(0, h, &mut |l| out.push(l.spans.iter().map(|s| s.content.as_ref()).collect::<String>()));
        out
    }

    #[test]
    fn renders_the_common_constructs() {
        let md = "# Title\n\nSome *emphasis* and **bold** and `code`.\n\n- one\n- two\n  1. nested\n\n> quoted\n\n```rust\nfn main() {}\n```\n\n| a | bb |\n|---|----|\n| 1 | 2 |\n\n---\n";
        let mut d = Doc::new(md, false);
        let rows = doc_rows(&mut d, 40);
        assert_eq!(
            rows,
            [
                "Title",
                "",
                "Some emphasis and bold and code.",
                "",
                "• one",
                "• two",
                "  1. nested",
                "",
                "▌ quoted",
                "",
                "rust",
                "│ fn main() {}",
                "",
                "a │ bb",
                "──┼───",
                "1 │ 2 ",
                "",
                "────────────────────────────────────────",
            ]
        );
    }

    #[test]
    fn streaming_in_any_split_renders_like_the_whole() {
        let md = "Intro with **bold text** here.\n\n```python\ndef f():\n\n    return \"x\"\n```\n\n1. first\n\n2. second\n\nEnd `inline` done.";
        let mut whole = Doc::new(md, false);
        let expected = doc_rows(&mut whole, 30);
        for step in [1, 2, 3, 5, 7, 13] {
            let mut d = Doc::new("", false);
            let chars: Vec<char> = md.chars().collect();
            for chunk in chars.chunks(step) {
                d.push_str(&chunk.iter().collect::<String>());
                // Render mid-stream, as the UI does each frame.
                d.prepare(30);
            }
            assert_eq!(doc_rows(&mut d, 30), expected, "chunk size {step}");
        }
    }

    #[test]
    fn block_starts_skip_fences_and_indented_lines() {
        let t = "a\n\nb\n\n```\nx\n\ny\n```\n\n  indented\n\nc";
        let starts = block_starts(t, 0, None);
        let heads: Vec<&str> = starts.iter().map(|s| &t[s.at..s.at + 1]).collect();
        assert_eq!(heads, ["b", "`", "c"]);
        assert!(starts.iter().all(|s| s.inside.is_none()));
    }

    #[test]
    fn long_code_blocks_are_cut_into_chunks_that_render_like_the_whole() {
        let code: String =
            (0..150).map(|i| if i % 7 == 0 { "\n".to_string() } else { format!("let x{i} = {i}; // c\n") }).collect();
        let md = format!("Intro.\n\n```rust\n{code}```\nAfter the fence.\n\nEnd.");
        let starts = block_starts(&md, 0, None);
        assert_eq!(starts.iter().filter(|s| s.inside.is_some()).count(), 2, "150 lines make three chunks");
        let mut whole = Doc::new(&md, false);
        let expected = doc_rows(&mut whole, 40);
        assert_eq!(expected.iter().filter(|r| r.starts_with("│ ")).count(), 150);
        assert!(expected.contains(&"After the fence.".to_string()));
        // One pass through pulldown-cmark alone gives the same rows.
        let mut direct = Vec::new();
        for l in render(&md) {
            wrap::wrap(&l, 40, &mut direct);
        }
        assert_eq!(text_of(&direct), expected);
        for step in [3, 17, 64] {
            let mut d = Doc::new("", false);
            let chars: Vec<char> = md.chars().collect();
            for piece in chars.chunks(step) {
                d.push_str(&piece.iter().collect::<String>());
                d.prepare(40);
            }
            assert_eq!(doc_rows(&mut d, 40), expected, "chunk size {step}");
        }
    }

    #[test]
    fn rows_window_and_plain_text() {
        let mut d = Doc::new("line one\nline two\n\n# not a heading", true);
        assert_eq!(doc_rows(&mut d, 20), ["line one", "line two", "", "# not a heading"]);
        let mut seen = Vec::new();
        d.rows(1, 2, &mut |l| seen.push(text_of(std::slice::from_ref(l))[0].clone()));
        assert_eq!(seen, ["line two", ""]);
    }

    #[test]
    fn escape_sequences_in_a_streamed_reply_are_shown_not_obeyed() {
        let reply = "Hi\x1b]2;pwned\x07 **there**\x1b[2J\x1b[H\n\n```\ncode\u{9b}1m\r\n```\n";
        for plain in [false, true] {
            for step in [1, 2, 5] {
                let mut d = Doc::new("", plain);
                let chars: Vec<char> = reply.chars().collect();
                for chunk in chars.chunks(step) {
                    d.push_str(&chunk.iter().collect::<String>());
                }
                let rows = doc_rows(&mut d, 40).join("\n");
                assert!(!rows.contains(|c: char| c.is_control() && c != '\n'), "{rows:?}");
                assert!(
                    rows.contains("␛]2;pwned␇") && rows.contains("␛[2J␛[H") && rows.contains("code␛[1m"),
                    "{rows:?}"
                );
            }
        }
    }
}
