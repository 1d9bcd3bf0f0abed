//! Layout and drawing. `layout` (run before each draw, with `&mut App`) sizes the areas and
//! brings every cache up to date; `render` only reads the app and copies into the frame, so
//! a frame never waits on anything.

use super::app::App;
use super::audit::Audit;
use super::conversations::ConversationList;
use super::keymap::{Command, Context, Focus};
use super::memory::MemoryBrowser;
use super::panes::{self, Scroll};
use super::status;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Text;

/// Where everything is on screen; zero-sized when hidden.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Areas {
    pub screen: Rect,
    pub main: Rect,
    pub chat: Rect,
    pub input: Rect,
    pub routing: Rect,
    pub act: Rect,
    pub drift: Rect,
    pub uncertainties: Rect,
    pub hints: Rect,
    pub status: Rect,
}

/// Below this width the side panes give their room to the chat.
const SIDE_MIN_SCREEN: u16 = 60;

fn inner(r: Rect) -> Rect {
    Rect { x: r.x + 1, y: r.y + 1, width: r.width.saturating_sub(2), height: r.height.saturating_sub(2) }
}

pub fn layout(app: &mut App, screen: Rect) -> Areas {
    let [main, hints, status] =
        Layout::vertical([Constraint::Min(3), Constraint::Length(1), Constraint::Length(1)]).areas(screen);
    let side_width = match main.width {
        w if w >= 110 => 44,
        w if w >= SIDE_MIN_SCREEN => w * 2 / 5,
        _ => 0,
    };
    let [left, side] = Layout::horizontal([Constraint::Min(20), Constraint::Length(side_width)]).areas(main);

    // The message box grows with its text, up to a third of the screen.
    let max_rows = (left.height / 3).clamp(1, 12);
    let input_rows = app.input.prepare(left.width.saturating_sub(2), max_rows);
    let [chat, input] = Layout::vertical([Constraint::Min(3), Constraint::Length(input_rows + 2)]).areas(left);
    let chat_inner = inner(chat);
    app.chat.prepare(chat_inner.width, chat_inner.height);

    let mut a = Areas { screen, main, chat, input, hints, status, ..Areas::default() };
    if side_width > 0 {
        let w = side_width.saturating_sub(2);
        // Routing gets what its text needs (up to half the column); the rest share equally.
        let routing_text = app.routing.text(w);
        let wanted = measure(&routing_text, w) + 2;
        let routing_h = wanted.min(side.height / 2).max(3);
        let [routing, act, drift, unc] = Layout::vertical([
            Constraint::Length(routing_h),
            Constraint::Fill(1),
            Constraint::Fill(1),
            Constraint::Fill(1),
        ])
        .areas(side);
        app.routing.scroll.clamp(&routing_text, inner(routing));
        app.act.scroll.clamp(&app.act.text(w), inner(act));
        app.drift.scroll.clamp(&app.drift.text(app.offset), inner(drift));
        app.uncertainties.scroll.clamp(&app.uncertainties.text(), inner(unc));
        (a.routing, a.act, a.drift, a.uncertainties) = (routing, act, drift, unc);
    }
    let offset = app.offset;
    if let Some(audit) = &mut app.audit {
        audit.prepare(Audit::area(main), offset);
    }
    if let Some(memory) = &mut app.memory {
        memory.prepare(MemoryBrowser::area(main), offset);
    }
    if let Some(list) = &mut app.conversations {
        list.prepare(ConversationList::area(main));
    }
    if let Some(help) = &mut app.help {
        help.prepare(main, &app.keymap);
    }
    a
}

fn measure(text: &Text<'_>, width: u16) -> u16 {
    let p = ratatui::widgets::Paragraph::new(text.clone()).wrap(ratatui::widgets::Wrap { trim: false });
    u16::try_from(p.line_count(width.max(1))).unwrap_or(u16::MAX)
}

/// Draw the app as laid out by the last `layout`. Never changes it.
pub fn render(app: &App, frame: &mut Frame) {
    let a = &app.areas;
    app.chat.render(frame, a.chat, app.focus == Focus::Chat, app.offset);
    let send = app.keymap.key_for(Command::Send, Context::Input).unwrap_or("");
    let hint = match app.keymap.key_for(Command::NewLine, Context::Input) {
        Some(nl) if !nl.is_empty() => format!("{send} sends · {nl} adds a line"),
        _ => format!("{send} sends"),
    };
    app.input.render(frame, a.input, app.focus == Focus::Input && app.context() == Context::Input, &hint);
    if a.routing.width > 0 {
        let w = a.routing.width.saturating_sub(2);
        side(frame, a.routing, "Routing", app.focus == Focus::Routing, app.routing.text(w), &app.routing.scroll);
        side(frame, a.act, "ACT", app.focus == Focus::Act, app.act.text(w), &app.act.scroll);
        side(frame, a.drift, "Drift", app.focus == Focus::Drift, app.drift.text(app.offset), &app.drift.scroll);
        let unc = app.uncertainties.text();
        side(
            frame,
            a.uncertainties,
            "Uncertainties",
            app.focus == Focus::Uncertainties,
            unc,
            &app.uncertainties.scroll,
        );
    }
    let streaming = app.chat.is_streaming() && matches!(app.context(), Context::Input | Context::View);
    status::render_hints(frame, a.hints, &app.keymap, app.context(), streaming);
    app.status.render(frame, a.status, app.activity());
    if app.setup.visible() {
        app.setup.render(frame, a.main, app.status.tick);
    }
    if let Some(memory) = &app.memory {
        memory.render(frame, MemoryBrowser::area(a.main), app.offset, &app.keymap);
    }
    if let Some(list) = &app.conversations {
        list.render(frame, ConversationList::area(a.main), app.offset, &app.keymap, app.thread.as_deref());
    }
    if let Some(audit) = &app.audit {
        audit.render(frame, Audit::area(a.main), app.offset);
    }
    if let Some(tasks) = &app.tasks {
        tasks.render(frame, a.main, app.offset);
    }
    if let Some(id) = &app.uncertainty {
        popup(frame, a.main, "Uncertainty", &app.uncertainties.detail(id));
    }
    if app.drift_open {
        popup(frame, a.main, "Drift", &app.drift.detail(app.offset));
    }
    if let Some(help) = &app.help {
        help.render(frame, a.main, &app.keymap);
    }
    if let Some(asked) = &app.approval {
        popup(frame, a.main, "Run this tool?", &asked.text());
    }
}

/// One uncertainty record or drift thought over the middle of the screen.
fn popup(frame: &mut Frame, screen: Rect, title: &str, text: &Text<'static>) {
    let width = screen.width.saturating_sub(4).min(90);
    let height = (text.lines.len() as u16 + 2).min(screen.height);
    let area =
        Rect { x: screen.x + (screen.width - width) / 2, y: screen.y + (screen.height - height) / 2, width, height };
    frame.render_widget(ratatui::widgets::Clear, area);
    let p = ratatui::widgets::Paragraph::new(text.clone())
        .wrap(ratatui::widgets::Wrap { trim: false })
        .block(super::theme::pane(title, true));
    frame.render_widget(p, area);
}

fn side(frame: &mut Frame, area: Rect, title: &str, focused: bool, text: Text<'static>, scroll: &Scroll) {
    panes::draw(frame, area, title, focused, text, scroll);
}
