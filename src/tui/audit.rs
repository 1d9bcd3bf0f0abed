//! The routing audit (F2): past decisions in a table, filterable by mode, and one decision in
//! full: signal snapshot, weights, every mode's score, margin, tie-break and feedback.
//! Rows come from the database through a background task (`Action::LoadAudit`), never from
//! the draw path.

use super::panes::{Scroll, routing::score_lines, short};
use super::theme;
use crate::cognition::router::{Mode, ModeScores};
use crate::store::{AuditRow, RoutingRecord};
use chrono::FixedOffset;
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Cell, Clear, Paragraph, Row, Table, TableState, Wrap};
use serde_json::Value;
use std::str::FromStr;

mod adaptive;
mod stats;

pub use stats::{Tab, text as stats_text};

/// Decisions listed per load (the rows also go to the session log, so not thousands).
pub const LIMIT: usize = 200;

/// What the popup asks of the app.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    Close,
    Load(Option<Mode>),
    Detail(String),
    /// The routing statistics, for the stats tab.
    Stats,
}

#[derive(Debug)]
pub struct Detail {
    pub id: String,
    /// None while loading; Some(None) when the decision is not stored.
    pub record: Option<Option<Box<RoutingRecord>>>,
    pub scroll: Scroll,
}

#[derive(Debug)]
pub struct Audit {
    pub filter: Option<Mode>,
    pub rows: Vec<AuditRow>,
    pub loading: bool,
    pub selected: usize,
    offset: usize,
    visible: usize,
    pub detail: Option<Detail>,
    /// New decisions were routed since the rows were read.
    pub stale: bool,
    pub tab: Tab,
    /// The stats tab's numbers, once read.
    pub stats: Option<crate::cognition::router::stats::RoutingStats>,
    /// The strong model is the built-in one: reflection is skipped (said on the stats tab).
    pub reflection_off: bool,
}

impl Audit {
    pub fn open(filter: Option<Mode>) -> Audit {
        Audit {
            filter,
            rows: Vec::new(),
            loading: true,
            selected: 0,
            offset: 0,
            visible: 1,
            detail: None,
            stale: false,
            tab: Tab::Decisions,
            stats: None,
            reflection_off: false,
        }
    }

    pub fn loaded(&mut self, mode: Option<Mode>, rows: &[AuditRow]) {
        if mode != self.filter {
            return; // an answer to a filter the user has since changed
        }
        let keep = self.rows.get(self.selected).map(|r| r.id.clone());
        self.rows = rows.to_vec();
        self.loading = false;
        self.selected = keep.and_then(|id| self.rows.iter().position(|r| r.id == id)).unwrap_or(0);
    }

    pub fn detail_loaded(&mut self, id: &str, record: Option<&RoutingRecord>) {
        if let Some(d) = &mut self.detail
            && d.id == id
        {
            d.record = Some(record.map(|r| Box::new(r.clone())));
        }
    }

    fn open_detail(&mut self, index: usize) -> Option<Request> {
        let id = self.rows.get(index)?.id.clone();
        self.selected = index;
        self.detail = Some(Detail { id: id.clone(), record: None, scroll: Scroll::default() });
        Some(Request::Detail(id))
    }

    pub fn up(&mut self, n: usize) {
        match &mut self.detail {
            Some(d) => d.scroll.by(-(n as i32)),
            None => self.selected = self.selected.saturating_sub(n),
        }
    }

    pub fn down(&mut self, n: usize) {
        match &mut self.detail {
            Some(d) => d.scroll.by(n as i32),
            None => self.selected = (self.selected + n).min(self.rows.len().saturating_sub(1)),
        }
    }

    pub fn page(&self) -> usize {
        match &self.detail {
            Some(d) => usize::from(d.scroll.visible.saturating_sub(1).max(1)),
            None => self.visible.saturating_sub(1).max(1),
        }
    }

    pub fn home(&mut self) {
        self.up(usize::MAX / 2);
    }

    pub fn end(&mut self) {
        self.down(usize::MAX / 2);
    }

    /// Enter: show the selected decision.
    pub fn open_selected(&mut self) -> Option<Request> {
        if self.detail.is_some() { None } else { self.open_detail(self.selected) }
    }

    /// Left/Right in the detail view: the neighbouring decision.
    pub fn step(&mut self, by: isize) -> Option<Request> {
        self.detail.as_ref()?;
        let i = self.selected.checked_add_signed(by)?;
        if i >= self.rows.len() {
            return None;
        }
        self.open_detail(i)
    }

    pub fn cycle_filter(&mut self) -> Request {
        self.filter = match self.filter {
            None => Some(Mode::ALL[0]),
            Some(m) => Mode::ALL.iter().position(|x| *x == m).and_then(|i| Mode::ALL.get(i + 1)).copied(),
        };
        self.loading = true;
        self.selected = 0;
        Request::Load(self.filter)
    }

    /// Esc: from the detail back to the table, from the table out.
    pub fn back(&mut self) -> Option<Request> {
        if self.detail.take().is_some() { None } else { Some(Request::Close) }
    }

    /// The popup's area inside `screen`.
    pub fn area(screen: Rect) -> Rect {
        let width = screen.width.saturating_sub(4).min(120).max(screen.width.min(20));
        let height = screen.height.saturating_sub(2).max(screen.height.min(6));
        Rect { x: screen.x + (screen.width - width) / 2, y: screen.y + (screen.height - height) / 2, width, height }
    }

    /// Fit the table's window to the selection, and measure the detail text.
    pub fn prepare(&mut self, area: Rect, offset: FixedOffset) {
        let inner = Rect { height: area.height.saturating_sub(3), ..area };
        self.visible = usize::from(inner.height.max(1));
        if self.selected < self.offset {
            self.offset = self.selected;
        } else if self.selected >= self.offset + self.visible {
            self.offset = self.selected + 1 - self.visible;
        }
        if let Some(d) = &mut self.detail {
            let text = detail_text(d, area.width.saturating_sub(2), offset);
            let inner = Rect { x: 0, y: 0, width: area.width.saturating_sub(2), height: area.height.saturating_sub(2) };
            d.scroll.clamp(&text, inner);
        }
    }

    pub fn render(&self, frame: &mut Frame, area: Rect, offset: FixedOffset) {
        if self.tab == Tab::Stats && self.detail.is_none() {
            return self.render_stats(frame, area);
        }
        frame.render_widget(Clear, area);
        let filter = self.filter.map_or("all modes".to_string(), |m| format!("{} only", m.as_str()));
        if let Some(d) = &self.detail {
            let title = format!("Routing decision {} of {}", self.selected + 1, self.rows.len());
            let text = detail_text(d, area.width.saturating_sub(2), offset);
            let p = Paragraph::new(text)
                .wrap(Wrap { trim: false })
                .scroll((d.scroll.top, 0))
                .block(theme::pane(&title, true));
            frame.render_widget(p, area);
            return;
        }
        let count = match (self.loading, self.rows.len()) {
            (true, _) => "loading…".to_string(),
            (false, 1) => "1 decision".to_string(),
            (false, n) => format!("{n} decisions"),
        };
        let block = theme::pane(&format!("Routing audit · {filter} · {count}"), true);
        if self.rows.is_empty() {
            let msg = if self.loading {
                "Reading the audit trail…"
            } else if self.filter.is_some() {
                "No decision delivered this mode yet. Press m for the next mode."
            } else {
                "No routing decisions recorded yet. Each message you send adds one."
            };
            frame.render_widget(Paragraph::new(Line::from(msg).style(theme::dim())).block(block), area);
            return;
        }
        let topic_width = usize::from(area.width.saturating_sub(2 + 15 + 12 + 6 + 4 + 8 + 8 + 7));
        let rows = self.rows.iter().map(|r| {
            let mode = Mode::from_str(&r.mode).ok();
            let mode_style = mode.map(theme::mode).unwrap_or_default();
            let mut mode_cell = r.mode.clone();
            if r.pre_routed {
                mode_cell.push('*');
            }
            let tie = if r.tiebreaker_used { "yes" } else { "·" };
            let ms = r.routing_time_ms.map_or("-".into(), |m| format!("{m:.2}"));
            let conf = r.confidence.map_or("-".into(), |c| format!("{c:.2}"));
            let topic = if r.fallback.is_some() {
                format!("{} ⚠", short(&r.topic, topic_width.saturating_sub(2)))
            } else {
                short(&r.topic, topic_width)
            };
            let (reg, reg_style) = regulator_cell(r.regulator.as_deref());
            Row::new(vec![
                Cell::from(super::panes::clock_full(r.created_at, offset)).style(theme::dim()),
                Cell::from(topic),
                Cell::from(mode_cell).style(mode_style),
                Cell::from(conf),
                Cell::from(tie),
                Cell::from(ms),
                Cell::from(reg).style(reg_style),
            ])
        });
        let table = Table::new(
            rows,
            [
                Constraint::Length(14),
                Constraint::Fill(1),
                Constraint::Length(12),
                Constraint::Length(5),
                Constraint::Length(4),
                Constraint::Length(7),
                Constraint::Length(7),
            ],
        )
        .header(
            Row::new(vec!["time", "topic", "mode", "conf", "tie", "ms", "reg"])
                .style(theme::bold().add_modifier(Modifier::UNDERLINED)),
        )
        .row_highlight_style(theme::selected())
        .highlight_symbol("▸ ")
        .block(block);
        let mut state = TableState::default().with_offset(self.offset).with_selected(Some(self.selected));
        frame.render_stateful_widget(table, area, &mut state);
    }
}

/// Everything stored about one decision, as text.
fn detail_text(d: &Detail, width: u16, offset: FixedOffset) -> Text<'static> {
    let r = match &d.record {
        None => return Text::from(Line::from("loading…").style(theme::dim())),
        Some(None) => {
            return Text::from(Line::from(format!("Decision {} is not in the database.", d.id)).style(theme::warn()));
        }
        Some(Some(r)) => r,
    };
    let mut t = Text::default();
    let section = |t: &mut Text<'static>, title: &str| {
        t.push_line(Line::default());
        t.push_line(Line::from(Span::styled(format!("── {title} "), theme::accent().add_modifier(Modifier::BOLD))));
    };
    let mode = Mode::from_str(&r.selected_mode).ok();
    t.push_line(Line::from(vec![
        Span::styled(super::panes::clock_full(r.created_at, offset), theme::dim()),
        Span::raw("  topic "),
        Span::styled(r.topic.clone(), theme::accent()),
        Span::raw("  delivered "),
        Span::styled(r.selected_mode.clone(), mode.map(theme::mode).unwrap_or_default().add_modifier(Modifier::BOLD)),
        Span::styled(if r.pre_routed { "  (pre-routed)" } else { "" }, theme::warn()),
    ]));
    if let Some(reason) = &r.reasoning {
        t.push_line(Line::from(reason.clone()).style(theme::dim()));
    }
    t.push_line(Line::from(format!("id {}", r.id)).style(theme::dim()));

    section(&mut t, "Scores");
    match serde_json::from_value::<ModeScores>(r.scores.clone()) {
        Ok(scores) => {
            for l in score_lines(&scores, mode, width.min(70)) {
                t.push_line(l);
            }
        }
        Err(_) => t.push_line(Line::from(r.scores.to_string())),
    }
    let opt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
    t.push_line(Line::from(format!(
        "confidence {} · margin {} · effective margin {} (a margin below it calls the tie-breaker)",
        opt(r.router_confidence),
        opt(r.margin),
        opt(r.effective_margin)
    )));
    let tie = match (&r.tiebreaker_candidates, r.tiebreaker_used) {
        (None, _) => "tie-breaker: not needed".to_string(),
        (Some(c), true) => format!("tie-breaker: ran on {} and chose {}", compact(c), r.selected_mode),
        (Some(c), false) => {
            format!("tie-breaker: needed between {} but not used (heuristic, timeout or bad answer)", compact(c))
        }
    };
    t.push_line(Line::from(tie));
    t.push_line(Line::from(format!(
        "routing {} ms · weights v{} · previous mode {}",
        opt(r.routing_time_ms),
        r.weights_version.map_or("-".into(), |v| v.to_string()),
        r.previous_mode.as_deref().unwrap_or("-")
    )));
    if let Some(f) = &r.fallback {
        t.push_line(Line::from(format!("fallbacks: {f}")).style(theme::warn()));
    }

    section(&mut t, "Feedback");
    match &r.feedback {
        None => t.push_line(
            Line::from("none yet: the feedback detector labels a decision after the next exchange").style(theme::dim()),
        ),
        Some(v) => flatten_into(&mut t, "", v),
    }
    if let Some(v) = &r.regulator {
        section(&mut t, "Regulator");
        flatten_into(&mut t, "", v);
    }
    if let Some(v) = &r.adaptive {
        section(&mut t, "Adaptive");
        for l in adaptive::lines(v) {
            t.push_line(l);
        }
    }
    if let Some(v) = &r.reflection {
        section(&mut t, "Reflection");
        flatten_into(&mut t, "", v);
    }
    section(&mut t, "Signals");
    flatten_into(&mut t, "", &r.signal_snapshot);
    section(&mut t, "Weights");
    match &r.weight_snapshot {
        Some(v) => flatten_into(&mut t, "", v),
        None => t.push_line(Line::from("not recorded").style(theme::dim())),
    }
    t
}

fn compact(v: &Value) -> String {
    match v {
        Value::Array(items) => {
            items.iter().map(|i| i.as_str().map_or(i.to_string(), str::to_string)).collect::<Vec<_>>().join(" vs ")
        }
        other => other.to_string(),
    }
}

/// JSON as `path  value` lines, nested objects joined with dots.
fn flatten_into(t: &mut Text<'static>, prefix: &str, v: &Value) {
    match v {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten_into(t, &path, v);
            }
        }
        leaf => {
            let value = match leaf {
                Value::Number(n) => n
                    .as_f64()
                    .map_or(n.to_string(), |f| if f.fract() == 0.0 { format!("{f}") } else { format!("{f:.3}") }),
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let key = if prefix.is_empty() { "(value)".to_string() } else { prefix.to_string() };
            t.push_line(Line::from(vec![Span::styled(format!("{key:<32} "), theme::dim()), Span::raw(value)]));
        }
    }
}

/// The regulator's decision in a word for the audit table (a break also in the warning style,
/// never by colour alone: the word says it).
fn regulator_cell(decision: Option<&str>) -> (&'static str, ratatui::style::Style) {
    match decision {
        None => ("-", theme::dim()),
        Some("continue") => ("·", theme::dim()),
        Some("circuit_break") => ("break", theme::warn()),
        Some("scope_drift_warn") => ("drift", theme::warn()),
        Some("procedural_warning") => ("fixes", ratatui::style::Style::new()),
        Some("low_confidence_spans") => ("unsure", ratatui::style::Style::new()),
        Some(_) => ("?", theme::dim()),
    }
}
