//! The Chat pane: scrollback of rendered messages, the reply streaming into the last one.
//!
//! Each message keeps its Markdown rendering wrapped at the current width ([`Doc`]), so a
//! frame costs the rows on screen, not the history: a 10,000-line reply scrolls as fast as a
//! short one. `prepare` (run before each draw) does whatever re-rendering changed text or a
//! new width needs; `render` only copies rows into the buffer.
//!
//! The pane holds a window of the conversation, not all of it: while it follows the newest
//! text it keeps the last [`KEPT`] messages, and scrolling to the top of the window asks the
//! store for the page before it ([`Chat::wants_earlier`], [`Chat::prepend`]). A session of
//! thousands of turns then costs the TUI the same memory and the same frame time as one of a
//! hundred (each kept message is ~1 kB of rendered lines), and nothing stored is out of reach.

use super::markdown::Doc;
use super::theme;
use crate::cognition::router::Mode;
use crate::llm::ChatRole;
use crate::vocab::regulator::RegulatorReport;
use chrono::{DateTime, FixedOffset, Utc};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    Streaming,
    Done,
    Stopped,
    /// No real reply: the reason.
    Failed(String),
}

#[derive(Debug, Clone)]
pub struct Message {
    /// `System`: things the program says in the conversation (reminders, failed replies).
    pub role: ChatRole,
    pub exchange_id: Option<String>,
    pub mode: Option<Mode>,
    pub at: DateTime<Utc>,
    pub status: Status,
    pub body: Doc,
    /// The regulator's verdict on a reply (its low-confidence spans are marked).
    pub regulator: Option<RegulatorReport>,
}

impl Message {
    /// Header row + body + one blank row after.
    fn height(&self) -> usize {
        1 + self.body.height() + 1
    }
}

/// Messages kept while the pane follows the newest text: ~120 exchanges, tens of screens.
pub const KEPT: usize = 240;
/// Messages read from the store each time the user scrolls past the top of the window.
pub const EARLIER_PAGE: usize = 120;

#[derive(Debug, Default)]
pub struct Chat {
    pub messages: Vec<Message>,
    /// The store holds messages of this conversation before the first one kept.
    pub earlier: bool,
    /// A page of earlier messages was asked for and has not arrived.
    loading_earlier: bool,
    /// Rows scrolled up from the bottom (0 = following the newest text).
    pub scroll: usize,
    /// Rows in the whole history at the last `prepare`.
    total: usize,
    /// Rows visible at the last `prepare`.
    visible: usize,
    /// Width the messages are wrapped at.
    width: u16,
    /// Some streamed text was missed (the UI fell behind the bus); the finished reply fixes it.
    pub gap: bool,
    /// Low-confidence spans are underlined and dimmed unless this is set (a key toggles it;
    /// see [`mark_line`]).
    pub hide_unsure: bool,
}

impl Chat {
    pub fn streaming(&self) -> Option<&Message> {
        self.messages.last().filter(|m| m.status == Status::Streaming)
    }

    pub fn is_streaming(&self) -> bool {
        self.streaming().is_some()
    }

    /// A forget redacted these exchanges' lines in the database: the screen follows, keeping
    /// each turn in its place.
    pub fn forget(&mut self, exchanges: &[String]) {
        for m in &mut self.messages {
            if m.exchange_id.as_ref().is_some_and(|x| exchanges.contains(x)) {
                m.body = Doc::new(crate::store::FORGOTTEN_LINE, true);
            }
        }
        self.total = 0;
    }

    pub fn push(&mut self, role: ChatRole, text: &str, at: DateTime<Utc>) {
        let plain = role == ChatRole::User;
        self.messages.push(Message {
            role,
            exchange_id: None,
            mode: None,
            at,
            status: Status::Done,
            body: Doc::new(text, plain),
            regulator: None,
        });
    }

    /// Show a stored conversation (`chalie-tui --thread ID`), oldest first, before new turns;
    /// `earlier`: the store holds messages before `rows`.
    pub fn load(&mut self, rows: &[crate::store::ChatMessage], earlier: bool) {
        self.earlier = earlier;
        self.append_rows(rows);
    }

    fn append_rows(&mut self, rows: &[crate::store::ChatMessage]) {
        for r in rows {
            let at = DateTime::from_timestamp(r.created_at, 0).unwrap_or_default();
            match r.role.as_str() {
                "user" => self.push_user(&r.exchange_id, &r.content, at),
                "assistant" => {
                    self.push(ChatRole::Assistant, &r.content, at);
                    if let Some(m) = self.messages.last_mut() {
                        m.exchange_id = Some(r.exchange_id.clone());
                        m.mode = r.mode.as_deref().and_then(|x| Mode::ALL.into_iter().find(|mode| mode.as_str() == x));
                    }
                }
                _ => self.push(ChatRole::System, &r.content, at),
            }
        }
    }

    pub fn push_user(&mut self, exchange_id: &str, text: &str, at: DateTime<Utc>) {
        self.push(ChatRole::User, text, at);
        if let Some(m) = self.messages.last_mut() {
            m.exchange_id = Some(exchange_id.to_string());
        }
    }

    /// The regulator's verdict on a reply.
    pub fn set_regulator(&mut self, exchange_id: &str, report: &RegulatorReport) {
        if let Some(i) = self.reply_index(exchange_id) {
            self.messages[i].regulator = Some(report.clone());
            self.total = 0;
        }
    }

    /// The routed mode, shown on the reply's header.
    pub fn set_mode(&mut self, exchange_id: &str, mode: Mode) {
        if let Some(m) = self.messages.iter_mut().rev().find(|m| m.exchange_id.as_deref() == Some(exchange_id)) {
            m.mode = Some(mode);
        }
    }

    fn reply_index(&self, exchange_id: &str) -> Option<usize> {
        self.messages
            .iter()
            .rposition(|m| m.role == ChatRole::Assistant && m.exchange_id.as_deref() == Some(exchange_id))
    }

    fn mode_of(&self, exchange_id: &str) -> Option<Mode> {
        self.messages.iter().rev().find(|m| m.exchange_id.as_deref() == Some(exchange_id)).and_then(|m| m.mode)
    }

    pub fn chunk(&mut self, exchange_id: &str, text: &str, at: DateTime<Utc>) {
        if let Some(i) = self.reply_index(exchange_id) {
            self.messages[i].body.push_str(text);
            return;
        }
        let mode = self.mode_of(exchange_id);
        self.messages.push(Message {
            role: ChatRole::Assistant,
            exchange_id: Some(exchange_id.to_string()),
            mode,
            at,
            status: Status::Streaming,
            body: Doc::new(text, false),
            regulator: None,
        });
    }

    /// The turn is committed: the final text replaces what streamed (the engine may have
    /// trimmed or reshaped it), or arrives whole when nothing streamed.
    pub fn done(
        &mut self,
        exchange_id: &str,
        mode: Mode,
        text: &str,
        cancelled: bool,
        failed: Option<&str>,
        at: DateTime<Utc>,
    ) {
        let status = match (failed, cancelled) {
            (Some(why), _) => Status::Failed(why.to_string()),
            (None, true) => Status::Stopped,
            (None, false) => Status::Done,
        };
        let role = if failed.is_some() { ChatRole::System } else { ChatRole::Assistant };
        match self.reply_index(exchange_id) {
            Some(i) => {
                let m = &mut self.messages[i];
                m.body.set_text(text);
                m.status = status;
                m.role = role;
                m.mode = Some(mode);
            }
            None if !text.is_empty() || failed.is_some() => self.messages.push(Message {
                role,
                exchange_id: Some(exchange_id.to_string()),
                mode: Some(mode),
                at,
                status,
                body: Doc::new(text, false),
                regulator: None,
            }),
            // IGNORE: no reply; the header of the user's message shows the mode.
            None => self.set_mode(exchange_id, mode),
        }
        self.gap = false;
    }

    /// The exchange whose stored messages came before the window's first message, when the
    /// user has scrolled to the top of the window and the store has more: the app reads the
    /// page before it (asked once until [`Chat::prepend`] answers).
    pub fn wants_earlier(&mut self) -> Option<String> {
        if !self.earlier || self.loading_earlier || self.scroll < self.max_scroll() {
            return None;
        }
        let first = self.first_exchange()?.to_string();
        self.loading_earlier = true;
        Some(first)
    }

    /// The exchange of the window's first stored message: where the page before it ends.
    fn first_exchange(&self) -> Option<&str> {
        self.messages.iter().find_map(|m| m.exchange_id.as_deref())
    }

    /// Stored messages from before exchange `before` (oldest first) go on top; the rows on
    /// screen stay where they are. `earlier`: the store holds still older ones. A page for a
    /// window that has moved on since it was asked (trimmed, or another conversation) is
    /// dropped; the next scroll to the top asks again.
    pub fn prepend(&mut self, rows: &[crate::store::ChatMessage], earlier: bool, before: &str) {
        self.loading_earlier = false;
        if self.first_exchange() != Some(before) {
            return;
        }
        let mut page = Chat { width: self.width, ..Chat::default() };
        page.append_rows(rows);
        // The scroll counts rows from the bottom, so rows added above leave the view still;
        // counting them into `total` here keeps `prepare` from taking them for new text.
        self.total += page.messages.iter_mut().map(|m| m.body.prepare(self.width) + 2).sum::<usize>();
        page.messages.append(&mut self.messages);
        self.messages = page.messages;
        self.earlier = earlier;
    }

    /// While the view follows the newest text, only the last [`KEPT`] messages stay; what goes
    /// is in the store, a scroll to the top away.
    fn trim(&mut self) {
        if self.scroll > 0 || self.loading_earlier || self.messages.len() <= KEPT {
            return;
        }
        let gone = self.messages.len() - KEPT;
        self.messages.drain(..gone);
        self.earlier = true;
        self.total = 0;
    }

    /// Wrap what changed to the pane's inner size; keep the view still while scrolled up.
    pub fn prepare(&mut self, width: u16, height: u16) {
        self.trim();
        self.width = width;
        let before = self.total;
        self.total = self.messages.iter_mut().map(|m| m.body.prepare(width) + 2).sum();
        self.visible = usize::from(height);
        if self.scroll > 0 && self.total > before {
            self.scroll += self.total - before;
        }
        self.scroll = self.scroll.min(self.max_scroll());
    }

    fn max_scroll(&self) -> usize {
        self.total.saturating_sub(self.visible)
    }

    /// Positive: up (back in time).
    pub fn scroll_by(&mut self, rows: isize) {
        self.scroll = self.scroll.saturating_add_signed(rows).min(self.max_scroll());
    }

    pub fn page(&self) -> isize {
        self.visible.saturating_sub(2).max(1) as isize
    }

    pub fn to_top(&mut self) {
        self.scroll = self.max_scroll();
    }

    pub fn to_bottom(&mut self) {
        self.scroll = 0;
    }

    /// The reply a copy takes: the newest assistant reply at or above the bottom row of the
    /// view, so scrolling up to an older reply and pressing the key copies that one.
    pub fn focused_reply(&self) -> Option<&Message> {
        let mut below = self.scroll;
        let mut bottom = self.messages.len();
        for (i, m) in self.messages.iter().enumerate().rev() {
            if below < m.height() {
                bottom = i + 1;
                break;
            }
            below -= m.height();
            bottom = i;
        }
        self.messages[..bottom].iter().rev().find(|m| m.role == ChatRole::Assistant && !m.body.text().is_empty())
    }

    pub fn render(&self, frame: &mut Frame, area: Rect, focused: bool, offset: FixedOffset) {
        let mut block = theme::pane("Chat", focused);
        if self.scroll > 0 {
            block = block
                .title_bottom(Line::from(format!(" ↓ {} more ", self.scroll)).right_aligned().style(theme::accent()));
        } else if self.gap {
            block = block.title_bottom(
                Line::from(" some streamed text was skipped; the full reply follows ").style(theme::warn()),
            );
        }
        if self.loading_earlier {
            block = block.title_top(Line::from(" reading earlier messages… ").right_aligned().style(theme::dim()));
        }
        let inner = block.inner(area);
        frame.render_widget(block, area);
        if inner.width == 0 || inner.height == 0 {
            return;
        }
        if self.messages.is_empty() {
            let hint = Line::from("Say something to start. Ctrl-Q quits, F1 lists every key.").style(theme::dim());
            frame.render_widget(
                ratatui::widgets::Paragraph::new(hint).wrap(ratatui::widgets::Wrap { trim: true }),
                inner,
            );
            return;
        }
        let buf = frame.buffer_mut();
        let height = usize::from(inner.height);
        let top = self.total.saturating_sub(height).saturating_sub(self.scroll);
        let mut y = inner.y;
        let mut skip = top;
        let mut take = height.min(self.total.saturating_sub(top));
        for m in &self.messages {
            if take == 0 {
                break;
            }
            let h = m.height();
            if skip >= h {
                skip -= h;
                continue;
            }
            // Header.
            if skip == 0 {
                buf.set_line(inner.x, y, &header(m, offset), inner.width);
                y += 1;
                take -= 1;
            } else {
                skip -= 1;
            }
            let body_take = take.min(m.body.height().saturating_sub(skip));
            let unsure = self.unsure_words(m);
            m.body.rows(skip, body_take, &mut |row| {
                if unsure.is_empty() {
                    buf.set_line(inner.x, y, row, inner.width);
                } else {
                    buf.set_line(inner.x, y, &mark_line(row, &unsure), inner.width);
                }
                y += 1;
            });
            take -= body_take;
            skip = skip.saturating_sub(m.body.height());
            // The blank row after the message.
            if take > 0 {
                if skip == 0 {
                    y += 1;
                    take -= 1;
                } else {
                    skip -= 1;
                }
            }
        }
    }
}

impl Chat {
    /// The words to mark in a message: those of its low-confidence spans, while marking is on.
    fn unsure_words(&self, m: &Message) -> Vec<String> {
        if self.hide_unsure {
            return Vec::new();
        }
        let Some(reg) = &m.regulator else { return Vec::new() };
        reg.low_confidence_spans
            .iter()
            .flat_map(|s| s.text.split_whitespace().map(str::to_string).collect::<Vec<_>>())
            .filter(|w| w.chars().count() >= 2)
            .collect()
    }
}

/// A rendered row with every occurrence of `words` underlined and dimmed: readable in 16
/// colours and in monochrome, since neither style is a colour. The rendered rows are Markdown
/// output wrapped at the pane's width, so the spans' character offsets no longer apply; the
/// words are found again in the row (a span split across rows is marked on both).
pub fn mark_line(row: &Line<'static>, words: &[String]) -> Line<'static> {
    let text: Vec<char> = row.spans.iter().flat_map(|s| s.content.chars()).collect();
    let mut marked = vec![false; text.len()];
    for w in words {
        let w: Vec<char> = w.chars().collect();
        let mut i = 0;
        while i + w.len() <= text.len() {
            if text[i..i + w.len()] == w[..] {
                marked[i..i + w.len()].iter_mut().for_each(|m| *m = true);
                i += w.len();
            } else {
                i += 1;
            }
        }
    }
    if !marked.contains(&true) {
        return row.clone();
    }
    let unsure = ratatui::style::Modifier::UNDERLINED | ratatui::style::Modifier::DIM;
    let mut spans = Vec::new();
    let mut at = 0;
    for s in &row.spans {
        let chars: Vec<char> = s.content.chars().collect();
        let mut start = 0;
        while start < chars.len() {
            let flag = marked[at + start];
            let len = chars[start..].iter().zip(&marked[at + start..]).take_while(|(_, m)| **m == flag).count();
            let piece: String = chars[start..start + len].iter().collect();
            let style = if flag { s.style.add_modifier(unsure) } else { s.style };
            spans.push(Span::styled(piece, style));
            start += len;
        }
        at += chars.len();
    }
    Line::from(spans).style(row.style).alignment(row.alignment.unwrap_or_default())
}

fn header(m: &Message, offset: FixedOffset) -> Line<'static> {
    let (who, style) = match m.role {
        ChatRole::User => ("you", theme::user()),
        ChatRole::Assistant => ("chalie", theme::assistant()),
        ChatRole::System => ("chalie", theme::error().add_modifier(ratatui::style::Modifier::BOLD)),
    };
    let mut spans = vec![Span::styled(who, style)];
    spans.push(Span::styled(format!("  {}", m.at.with_timezone(&offset).format("%H:%M")), theme::dim()));
    if let Some(mode) = m.mode {
        spans.push(Span::styled("  ", Style::new()));
        spans.push(Span::styled(mode.as_str(), theme::mode(mode)));
    }
    match &m.status {
        Status::Streaming => spans.push(Span::styled("  writing…", theme::dim())),
        Status::Stopped => spans.push(Span::styled("  (stopped)", theme::warn())),
        Status::Failed(why) => spans.push(Span::styled(format!("  (no reply: {why})"), theme::error())),
        Status::Done => {}
    }
    Line::from(spans)
}
