//! The side panes: Routing, ACT, Drift and Uncertainties. Their contents are small (a
//! decision, one ACT run, the latest thoughts), so each builds its text per frame and the
//! shared [`SidePane`] frame wraps, scrolls and draws it.

pub mod act;
pub mod drift;
pub mod routing;
pub mod uncertainties;

use super::theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Text};
use ratatui::widgets::{Paragraph, Wrap};

/// Scroll state shared by the side panes.
#[derive(Debug, Default, Clone, Copy)]
pub struct Scroll {
    pub top: u16,
    /// Rows of content at the last `clamp`, for clamping and the "more" marker.
    pub rows: u16,
    pub visible: u16,
}

impl Scroll {
    pub fn by(&mut self, rows: i32) {
        let max = self.rows.saturating_sub(self.visible);
        self.top = (i32::from(self.top) + rows).clamp(0, i32::from(max)) as u16;
    }

    pub fn to_top(&mut self) {
        self.top = 0;
    }

    pub fn to_bottom(&mut self) {
        self.top = self.rows.saturating_sub(self.visible);
    }

    /// Measure `text` at the pane's inner size and keep `top` in range.
    pub fn clamp(&mut self, text: &Text<'_>, inner: Rect) {
        let p = Paragraph::new(text.clone()).wrap(Wrap { trim: false });
        self.rows = u16::try_from(p.line_count(inner.width.max(1))).unwrap_or(u16::MAX);
        self.visible = inner.height;
        self.top = self.top.min(self.rows.saturating_sub(self.visible));
    }
}

/// Draw a side pane: its frame, `text` wrapped and scrolled, and a marker when more is below.
pub fn draw(frame: &mut Frame, area: Rect, title: &str, focused: bool, text: Text<'static>, scroll: &Scroll) {
    let mut block = theme::pane(title, focused);
    let below = scroll.rows.saturating_sub(scroll.top + scroll.visible);
    if below > 0 {
        block = block.title_bottom(Line::from(format!(" ↓ {below} ")).right_aligned().style(theme::dim()));
    }
    let p = Paragraph::new(text).wrap(Wrap { trim: false }).scroll((scroll.top, 0)).block(block);
    frame.render_widget(p, area);
}

/// The explanation a pane shows while it has nothing to show.
pub fn empty(text: &str) -> Text<'static> {
    Text::from(Line::from(text.to_string()).style(theme::dim()))
}

/// "14:03" in the user's time zone.
pub fn clock(ts: i64, offset: chrono::FixedOffset) -> String {
    chrono::DateTime::from_timestamp(ts, 0)
        .map(|t| t.with_timezone(&offset).format("%H:%M").to_string())
        .unwrap_or_default()
}

/// "11-21 14:03:12" in the user's time zone.
pub fn clock_full(ts: i64, offset: chrono::FixedOffset) -> String {
    chrono::DateTime::from_timestamp(ts, 0)
        .map(|t| t.with_timezone(&offset).format("%m-%d %H:%M:%S").to_string())
        .unwrap_or_default()
}

/// At most `n` characters, with an ellipsis when cut.
pub fn short(s: &str, n: usize) -> String {
    crate::text::clip::clip(s.trim(), n)
}
