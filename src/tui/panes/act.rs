//! ACT: the latest ACT loop, one iteration at a time as it happens: actions and their short
//! results, time, fatigue against the budget, and why the loop stopped.

use super::{Scroll, empty, short};
use crate::events::ActStep;
use crate::tui::theme;
use ratatui::style::Style;
use ratatui::text::{Line, Span, Text};

#[derive(Debug, Clone, PartialEq)]
pub struct Iteration {
    pub n: u32,
    pub actions: Vec<ActStep>,
    pub elapsed_ms: f64,
    pub fatigue: f64,
    pub budget: f64,
    pub termination: Option<String>,
}

/// One ACT run (the loop for one message).
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub exchange_id: String,
    pub topic: String,
    pub iterations: Vec<Iteration>,
}

#[derive(Debug, Default)]
pub struct ActPane {
    pub run: Option<Run>,
    pub scroll: Scroll,
}

const EMPTY: &str = "No ACT loop yet. Each iteration's actions, results, time and fatigue show here.";

impl ActPane {
    /// A message was routed to ACT: a new run starts.
    pub fn start(&mut self, exchange_id: &str, topic: &str) {
        self.run = Some(Run { exchange_id: exchange_id.into(), topic: topic.into(), iterations: Vec::new() });
        self.scroll.to_top();
    }

    /// A forget happened: the run's topic name may be made of the forgotten words.
    pub fn forget_topic(&mut self) {
        if let Some(r) = &mut self.run {
            r.topic.clear();
        }
    }

    pub fn iteration(&mut self, exchange_id: &str, it: Iteration) {
        let same = self.run.as_ref().is_some_and(|r| r.exchange_id == exchange_id);
        if !same {
            self.start(exchange_id, "");
        }
        if let Some(run) = &mut self.run {
            run.iterations.retain(|i| i.n != it.n);
            run.iterations.push(it);
            // Follow the newest iteration.
            self.scroll.top = u16::MAX;
        }
    }

    pub fn text(&self, width: u16) -> Text<'static> {
        let Some(run) = &self.run else { return empty(EMPTY) };
        let mut text = Text::default();
        let topic = if run.topic.is_empty() { String::new() } else { format!(" · {}", run.topic) };
        text.push_line(Line::from(vec![
            Span::styled("ACT", theme::mode(crate::cognition::router::Mode::Act)),
            Span::styled(topic, theme::dim()),
        ]));
        if run.iterations.is_empty() {
            text.push_line(Line::from("planning…").style(theme::dim()));
        }
        let result_width = usize::from(width.saturating_sub(6)).max(8);
        for it in &run.iterations {
            text.push_line(Line::from(vec![
                Span::styled(format!("#{} ", it.n), theme::bold()),
                Span::raw(format!("{:.0} ms ", it.elapsed_ms)),
                Span::styled("fatigue ", theme::dim()),
                Span::styled(gauge(it.fatigue, it.budget, 6), fatigue_style(it.fatigue, it.budget)),
                Span::raw(format!(" {:.1}/{:.0}", it.fatigue, it.budget)),
            ]));
            for a in &it.actions {
                let (mark, style) = if a.ok { ("✓", theme::accent()) } else { ("✗", theme::error()) };
                let params =
                    if a.params.is_empty() { String::new() } else { format!(" {}", short(&a.params, result_width)) };
                text.push_line(Line::from(vec![
                    Span::styled(format!(" {mark} "), style),
                    Span::styled(a.skill.clone(), theme::bold()),
                    Span::raw(params),
                ]));
                text.push_line(Line::from(vec![
                    Span::styled("   → ", theme::dim()),
                    Span::raw(short(&a.result, result_width)),
                    Span::styled(format!(" ({:.0} ms)", a.ms), theme::dim()),
                ]));
            }
            if let Some(why) = &it.termination {
                text.push_line(Line::from(format!("■ stopped: {}", why.replace('_', " "))).style(theme::warn()));
            }
        }
        text
    }
}

/// A small bar: how much of the budget is spent.
fn gauge(value: f64, budget: f64, width: usize) -> String {
    let frac = if budget > 0.0 { (value / budget).clamp(0.0, 1.0) } else { 0.0 };
    let filled = (frac * width as f64).round() as usize;
    format!("{}{}", "▰".repeat(filled), "▱".repeat(width - filled))
}

fn fatigue_style(value: f64, budget: f64) -> Style {
    if budget > 0.0 && value / budget >= 0.8 {
        theme::error()
    } else if budget > 0.0 && value / budget >= 0.5 {
        theme::warn()
    } else {
        theme::accent()
    }
}
