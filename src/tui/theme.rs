//! Colours and styles in one place, so panes agree and a theme change is one edit. Only the
//! 16 ANSI colours are used: they follow the user's terminal palette, light or dark.

use crate::cognition::router::Mode;
use crate::events::NoticeLevel;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;
use ratatui::widgets::{Block, BorderType};

pub const ACCENT: Color = Color::Cyan;

pub fn dim() -> Style {
    Style::new().fg(Color::DarkGray)
}

pub fn accent() -> Style {
    Style::new().fg(ACCENT)
}

pub fn bold() -> Style {
    Style::new().add_modifier(Modifier::BOLD)
}

pub fn user() -> Style {
    Style::new().fg(Color::Green).add_modifier(Modifier::BOLD)
}

pub fn assistant() -> Style {
    Style::new().fg(Color::Magenta).add_modifier(Modifier::BOLD)
}

pub fn error() -> Style {
    Style::new().fg(Color::Red)
}

pub fn warn() -> Style {
    Style::new().fg(Color::Yellow)
}

pub fn selected() -> Style {
    Style::new().fg(Color::Black).bg(ACCENT)
}

pub fn key_cap() -> Style {
    Style::new().fg(Color::Black).bg(Color::Gray)
}

pub fn notice(level: NoticeLevel) -> Style {
    match level {
        NoticeLevel::Info => accent(),
        NoticeLevel::Warn => warn(),
        NoticeLevel::Error => error(),
    }
}

/// Each mode keeps one colour everywhere (routing bars, audit rows, chat headers).
pub fn mode(mode: Mode) -> Style {
    Style::new().fg(match mode {
        Mode::Respond => Color::Cyan,
        Mode::Clarify => Color::Yellow,
        Mode::Act => Color::Magenta,
        Mode::Acknowledge => Color::Green,
        Mode::Ignore => Color::Gray,
    })
}

pub fn severity(severity: &str) -> Style {
    match severity {
        "critical" => Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
        "high" => Style::new().fg(Color::Red),
        "medium" => warn(),
        _ => dim(),
    }
}

// Markdown and code.
pub fn heading(level: u8) -> Style {
    match level {
        1 => Style::new().fg(Color::Magenta).add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
        2 => Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
        _ => Style::new().add_modifier(Modifier::BOLD),
    }
}

pub fn inline_code() -> Style {
    Style::new().fg(Color::Yellow)
}

pub fn link() -> Style {
    Style::new().fg(Color::Blue).add_modifier(Modifier::UNDERLINED)
}

pub fn code_keyword() -> Style {
    Style::new().fg(Color::Magenta)
}

pub fn code_string() -> Style {
    Style::new().fg(Color::Green)
}

pub fn code_comment() -> Style {
    Style::new().fg(Color::DarkGray).add_modifier(Modifier::ITALIC)
}

pub fn code_number() -> Style {
    Style::new().fg(Color::Cyan)
}

pub fn code_type() -> Style {
    Style::new().fg(Color::Yellow)
}

pub fn code_macro() -> Style {
    Style::new().fg(Color::LightBlue)
}

/// A pane's frame: rounded, highlighted when focused.
pub fn pane<'a>(title: &str, focused: bool) -> Block<'a> {
    let (border, title_style) =
        if focused { (accent(), accent().add_modifier(Modifier::BOLD)) } else { (dim(), Style::new()) };
    Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(border)
        .title(Span::styled(format!(" {title} "), title_style))
}
