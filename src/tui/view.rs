//! Drawing. Reads `App`, never changes it.

use super::app::{App, Role, RoutingView};
use super::keymap::{self, BINDINGS, Focus};
use crate::cognition::router::Mode;
use crate::events::NoticeLevel;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style, Stylize};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Block, BorderType, Clear, Paragraph, Row, Table, Wrap};

const SIDE_PANES: [(Focus, &str, &str); 4] = [
    (Focus::Routing, "Routing", "No message routed yet. Each message's mode scores appear here."),
    (Focus::Act, "ACT", "No ACT loop has run yet. Actions and their results appear here."),
    (Focus::Drift, "Drift", "No drift thoughts yet. They arrive while you are idle."),
    (
        Focus::Uncertainties,
        "Uncertainties",
        "No open uncertainties. Memories that contradict each other are listed here.",
    ),
];

fn block(title: &str, focused: bool) -> Block<'_> {
    let style = if focused { Style::new().fg(Color::Cyan) } else { Style::new().fg(Color::DarkGray) };
    Block::bordered().border_type(BorderType::Rounded).border_style(style).title(Span::styled(
        format!(" {title} "),
        if focused { Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD) } else { Style::new() },
    ))
}

pub fn render(app: &App, frame: &mut Frame) {
    let [main, hints, status] =
        Layout::vertical([Constraint::Min(6), Constraint::Length(1), Constraint::Length(1)]).areas(frame.area());
    let side_width = if main.width >= 100 { 40 } else { main.width * 2 / 5 };
    let [left, side] = Layout::horizontal([Constraint::Min(20), Constraint::Length(side_width)]).areas(main);
    let [chat, input] = Layout::vertical([Constraint::Min(3), Constraint::Length(3)]).areas(left);

    render_chat(app, frame, chat);
    render_input(app, frame, input);
    let panes = Layout::vertical([Constraint::Ratio(1, 4); 4]).split(side);
    for ((focus, title, empty), area) in SIDE_PANES.iter().zip(panes.iter()) {
        let body = match (focus, &app.routing) {
            (Focus::Routing, Some(r)) => routing_text(r, area.width.saturating_sub(2)),
            _ => Text::from(empty.dark_gray()),
        };
        let p = Paragraph::new(body).wrap(Wrap { trim: true }).block(block(title, app.focus == *focus));
        frame.render_widget(p, *area);
    }
    render_hints(app, frame, hints);
    render_status(app, frame, status);
    if app.show_help {
        render_help(frame);
    }
}

/// One bar per mode (the delivered one highlighted), then confidence, margin and topic.
fn routing_text(r: &RoutingView, width: u16) -> Text<'static> {
    let mut text = Text::default();
    let max = r.router.scores.ranked()[0].1.max(f64::EPSILON);
    let bar_width = usize::from(width.saturating_sub(19)).max(1);
    for mode in Mode::ALL {
        let score = r.router.scores.get(mode);
        let filled = ((score.max(0.0) / max) * bar_width as f64).round() as usize;
        let style = if mode == r.mode { Style::new().fg(Color::Cyan).bold() } else { Style::new().fg(Color::Gray) };
        text.push_line(Line::from(vec![
            Span::styled(format!("{:<11}", mode.as_str()), style),
            Span::styled("█".repeat(filled.min(bar_width)), style),
            Span::raw(format!(" {score:.2}")),
        ]));
    }
    let tie = if r.router.tiebreaker_used { "tie-break used" } else { "no tie-break" };
    text.push_line(Line::from(format!(
        "conf {:.2} · margin {:.2} · {tie} · {:.2} ms",
        r.router.confidence, r.router.effective_margin, r.router.routing_time_ms
    )));
    let new = if r.topic.is_new_topic { " (new)" } else { "" };
    text.push_line(Line::from(format!("topic {}{new}", r.topic.name)).dark_gray());
    if !r.fallbacks.is_empty() {
        text.push_line(Line::from(format!("fallback: {}", r.fallbacks.join(", "))).yellow());
    }
    text
}

fn render_chat(app: &App, frame: &mut Frame, area: Rect) {
    let mut text = Text::default();
    if app.chat.is_empty() {
        text.push_line(Line::from("Say something to start. Ctrl-Q quits, F1 lists every key.").dark_gray());
    }
    for line in &app.chat {
        let (who, style) = match line.role {
            Role::User => ("you", Style::new().fg(Color::Green).bold()),
            Role::Assistant => ("chalie", Style::new().fg(Color::Magenta).bold()),
        };
        text.push_line(Line::from(Span::styled(who, style)));
        for l in line.text.lines() {
            text.push_line(Line::from(l.to_string()));
        }
        text.push_line(Line::default());
    }
    let inner_width = area.width.saturating_sub(2).max(1);
    let p = Paragraph::new(text).wrap(Wrap { trim: false });
    let total = p.line_count(inner_width) as u16;
    let visible = area.height.saturating_sub(2);
    let bottom = total.saturating_sub(visible);
    let top = bottom.saturating_sub(app.chat_scroll.min(bottom));
    frame.render_widget(p.scroll((top, 0)).block(block("Chat", app.focus == Focus::Chat)), area);
}

fn render_input(app: &App, frame: &mut Frame, area: Rect) {
    let focused = app.focus == Focus::Input;
    let inner = area.width.saturating_sub(2) as usize;
    // Keep the end of a long line in view, where the cursor is.
    let shown: String = {
        let chars: Vec<char> = app.input.chars().collect();
        chars[chars.len().saturating_sub(inner.saturating_sub(1))..].iter().collect()
    };
    let cursor_x = area.x + 1 + shown.chars().count() as u16;
    frame.render_widget(Paragraph::new(shown).block(block("Message", focused)), area);
    if focused {
        frame.set_cursor_position((cursor_x, area.y + 1));
    }
}

fn render_hints(app: &App, frame: &mut Frame, area: Rect) {
    let mut spans = Vec::new();
    for b in keymap::active(app.focus).filter(|b| b.hint) {
        spans.push(Span::styled(format!(" {} ", b.keys), Style::new().black().on_gray()));
        spans.push(Span::raw(format!(" {}  ", b.help)));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn render_status(app: &App, frame: &mut Frame, area: Rect) {
    let line = match &app.notice {
        Some((level, msg)) => {
            let style = match level {
                NoticeLevel::Info => Style::new().fg(Color::Cyan),
                NoticeLevel::Warn => Style::new().fg(Color::Yellow),
                NoticeLevel::Error => Style::new().fg(Color::Red),
            };
            Line::from(vec![Span::styled(msg.clone(), style)])
        }
        None => Line::from(app.status.models.clone().dark_gray()),
    };
    frame.render_widget(Paragraph::new(line), area);
}

fn render_help(frame: &mut Frame) {
    let area = frame.area();
    let width = area.width.min(56);
    let height = (BINDINGS.len() as u16 + 4).min(area.height);
    let popup = Rect { x: area.x + (area.width - width) / 2, y: area.y + (area.height - height) / 2, width, height };
    let rows = BINDINGS.iter().map(|b| Row::new(vec![b.keys.to_string(), b.help.to_string()]));
    let table = Table::new(rows, [Constraint::Length(16), Constraint::Min(10)])
        .header(Row::new(vec!["Key", "Does"]).bold())
        .block(block("Keys (Esc closes)", true));
    frame.render_widget(Clear, popup);
    frame.render_widget(table, popup);
}
