//! The help popup (F1 / ?): every binding of the live key table, grouped by where it
//! applies, so it always matches what the keys do, user overrides included.

use super::keymap::{Keymap, Scope};
use super::panes::Scroll;
use super::theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Clear, Paragraph};

#[derive(Debug, Default)]
pub struct Help {
    pub scroll: Scroll,
    /// This session's files ("log /path"), listed under the keys: where to look when
    /// something went wrong is a question help should answer.
    pub files: Vec<String>,
    /// One line per background task (name, state, last run, queue, last error), as of when
    /// the popup opened: "is my memory being written?" is answered here too.
    pub workers: Vec<String>,
}

impl Help {
    pub fn with_files(files: Vec<String>) -> Help {
        Help { files, ..Help::default() }
    }

    /// The key table, then this session's files and background tasks.
    fn full_text(&self, keymap: &Keymap) -> Text<'static> {
        let mut t = Self::text(keymap);
        if !self.files.is_empty() {
            t.push_line(Line::default());
            t.push_line(Line::from(Span::styled("Files", theme::accent().add_modifier(Modifier::BOLD))));
            for f in &self.files {
                t.push_line(Line::from(format!("  {f}")));
            }
        }
        if !self.workers.is_empty() {
            t.push_line(Line::default());
            t.push_line(Line::from(Span::styled("Background", theme::accent().add_modifier(Modifier::BOLD))));
            for w in &self.workers {
                t.push_line(Line::from(format!("  {w}")));
            }
        }
        t
    }

    pub fn area(screen: Rect) -> Rect {
        let width = screen.width.saturating_sub(4).min(72);
        let height = screen.height.saturating_sub(2);
        Rect { x: screen.x + (screen.width - width) / 2, y: screen.y + (screen.height - height) / 2, width, height }
    }

    pub fn text(keymap: &Keymap) -> Text<'static> {
        let mut t = Text::default();
        let key_width = keymap.bindings.iter().map(|b| b.label.chars().count()).max().unwrap_or(8).min(16);
        for (i, scope) in Scope::ORDER.iter().enumerate() {
            if i > 0 {
                t.push_line(Line::default());
            }
            t.push_line(Line::from(Span::styled(scope.heading(), theme::accent().add_modifier(Modifier::BOLD))));
            for b in keymap.bindings.iter().filter(|b| b.scope == *scope) {
                let label = if b.label.is_empty() { "(unbound)".to_string() } else { b.label.clone() };
                t.push_line(Line::from(vec![
                    Span::styled(format!("  {label:<key_width$}  "), theme::bold()),
                    Span::raw(b.help),
                    Span::styled(format!("  [{}]", b.name), theme::dim()),
                ]));
            }
        }
        t.push_line(Line::default());
        t.push_line(
            Line::from("Rebind any key under [keys] in the config file, by the name in brackets.").style(theme::dim()),
        );
        t
    }

    pub fn prepare(&mut self, screen: Rect, keymap: &Keymap) {
        let area = Self::area(screen);
        let inner = Rect { width: area.width.saturating_sub(2), height: area.height.saturating_sub(2), ..area };
        self.scroll.clamp(&self.full_text(keymap), inner);
    }

    pub fn render(&self, frame: &mut Frame, screen: Rect, keymap: &Keymap) {
        let area = Self::area(screen);
        frame.render_widget(Clear, area);
        let p = Paragraph::new(self.full_text(keymap))
            .scroll((self.scroll.top, 0))
            .block(theme::pane("Keys · Esc closes", true));
        frame.render_widget(p, area);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::background::{StatusReport, WorkerBoard, WorkerId};

    #[test]
    fn lists_every_background_task_under_the_keys() {
        let rows = StatusReport::from_board(&WorkerBoard::new().snapshot(), 0).rows();
        let help = Help { workers: rows, ..Help::default() };
        let text: String = help.full_text(&Keymap::default()).lines.iter().map(|l| l.to_string() + "\n").collect();
        assert!(text.contains("Background"), "{text}");
        for id in WorkerId::ALL {
            assert!(text.lines().any(|l| l.trim_start().starts_with(id.name())), "{} missing:\n{text}", id.name());
        }
        let none = Help::default().full_text(&Keymap::default());
        assert!(!none.lines.iter().any(|l| l.to_string() == "Background"), "no board, no section");
    }
}
