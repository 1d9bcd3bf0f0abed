//! The Tasks view (F7): every open task with its plan as a tree, each step's state and
//! result, coverage and the next run (docs/cognition.md §17). Read on opening and on `r`.

use super::theme;
use crate::vocab::tasks::Task;
use chrono::FixedOffset;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Text};
use ratatui::widgets::{Clear, Paragraph, Wrap};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct TasksView {
    /// `None` until the first read answers.
    pub tasks: Option<Vec<Task>>,
    pub top: u16,
}

impl TasksView {
    pub fn loaded(&mut self, tasks: Vec<Task>) {
        self.tasks = Some(tasks);
    }

    pub fn scroll(&mut self, rows: i32) {
        let max = self.lines(chrono::Offset::fix(&chrono::Utc)).len().saturating_sub(1) as i32;
        self.top = (i32::from(self.top) + rows).clamp(0, max.max(0)) as u16;
    }

    pub fn lines(&self, offset: FixedOffset) -> Vec<String> {
        match &self.tasks {
            None => vec!["Reading…".into()],
            Some(t) if t.is_empty() => vec![
                "No background tasks are open.".into(),
                String::new(),
                "Ask for one in the chat (\"keep an eye on flights to Lisbon under €120 for May\")".into(),
                "and say \"start task N\" when it is proposed; `chalie-tui tasks` lists them too.".into(),
            ],
            Some(t) => t
                .iter()
                .flat_map(|task| {
                    let mut l = crate::cognition::tasks::view::lines(task, offset);
                    l.push(String::new());
                    l
                })
                .collect(),
        }
    }

    /// Over the middle of the screen, most of it.
    pub fn render(&self, frame: &mut Frame, screen: Rect, offset: FixedOffset) {
        let width = screen.width.saturating_sub(4).min(110);
        let height = screen.height.saturating_sub(2);
        let area = Rect { x: screen.x + (screen.width - width) / 2, y: screen.y + 1, width, height };
        frame.render_widget(Clear, area);
        let text = Text::from(self.lines(offset).into_iter().map(Line::from).collect::<Vec<_>>());
        let p = Paragraph::new(text)
            .wrap(Wrap { trim: false })
            .scroll((self.top, 0))
            .block(theme::pane("Tasks (r reload, Esc close)", true));
        frame.render_widget(p, area);
    }
}
