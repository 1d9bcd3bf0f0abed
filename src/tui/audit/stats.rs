//! The audit's routing-stats tab (docs/cognition.md §15.1): the last 24 h's mode distribution
//! against the healthy ranges with red flags, the normalised entropy, the tie-break and
//! misroute rates. The numbers are [`last_day`](crate::cognition::router::stats::last_day)'s,
//! the function `audit --stats` prints, read through the audit's background queries.

use super::{Audit, Request, theme};
use crate::cognition::router::stats::RoutingStats;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Clear, Paragraph, Wrap};

/// Which of the audit's two views shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tab {
    #[default]
    Decisions,
    Stats,
}

impl Audit {
    /// Tab / ← → in the table: the other tab, read afresh.
    pub fn switch_tab(&mut self) -> Option<Request> {
        if self.detail.is_some() {
            return None;
        }
        self.tab = match self.tab {
            Tab::Decisions => Tab::Stats,
            Tab::Stats => Tab::Decisions,
        };
        Some(self.reload())
    }

    /// The read the shown tab needs.
    pub fn reload(&mut self) -> Request {
        match self.tab {
            Tab::Decisions => {
                self.loading = true;
                Request::Load(self.filter)
            }
            Tab::Stats => Request::Stats,
        }
    }

    pub fn stats_loaded(&mut self, stats: RoutingStats) {
        self.stats = Some(stats);
    }

    pub(super) fn render_stats(&self, frame: &mut Frame, area: Rect) {
        frame.render_widget(Clear, area);
        let block = theme::pane("Routing audit · stats · last 24 h", true);
        let text = match &self.stats {
            None => Text::from(Line::from("Reading the routing statistics…").style(theme::dim())),
            Some(s) => text(s, self.reflection_off),
        };
        frame.render_widget(Paragraph::new(text).wrap(Wrap { trim: false }).block(block), area);
    }
}

fn pct(x: f64) -> String {
    format!("{:.1} %", 100.0 * x)
}

/// The tab's lines for `s`; `reflection_off` adds the note that the built-in strong model does
/// not reflect on decisions (so no reflection pressure can show).
pub fn text(s: &RoutingStats, reflection_off: bool) -> Text<'static> {
    let mut t = Text::default();
    t.push_line(Line::from(format!("{} decisions, {} judged by the next message", s.decisions, s.labelled)));
    if s.decisions == 0 {
        t.push_line(Line::from("No routing decisions in the last 24 h.").style(theme::dim()));
    }
    t.push_line(Line::default());
    t.push_line(
        Line::from(format!("{:<13}{:>6}{:>9}  {:<17}healthy", "mode", "count", "share", "verdict"))
            .style(theme::bold().add_modifier(Modifier::UNDERLINED)),
    );
    for m in &s.modes {
        let style = match m.verdict {
            "RED FLAG" => theme::warn(),
            "healthy" => ratatui::style::Style::default(),
            _ => theme::dim(),
        };
        t.push_line(Line::from(vec![
            Span::styled(format!("{:<13}", m.mode.as_str()), theme::mode(m.mode)),
            Span::raw(format!("{:>6}{:>7.1} %  ", m.count, m.percent)),
            Span::styled(format!("{:<17}", m.verdict), style),
            Span::styled(m.healthy, theme::dim()),
        ]));
    }
    t.push_line(Line::default());
    t.push_line(Line::from(format!("entropy      {:.2}  (normalised by log2 5; 1 = all modes equal)", s.entropy)));
    t.push_line(Line::from(format!("tie-break    {}  (top two scores close enough to ask)", pct(s.tie_break_rate))));
    let misroute = format!(
        "misroute     {}  (missed clarify {}, missed act {}, under-engaged {})",
        pct(s.misroute_rate),
        pct(s.clarify_miss_rate),
        pct(s.act_miss_rate),
        pct(s.under_engagement_rate)
    );
    // Over the misroute pressure's threshold (parameters §10: 10 %) in the warning colour.
    t.push_line(Line::from(misroute).style(if s.misroute_rate > 0.10 { theme::warn() } else { Default::default() }));
    t.push_line(Line::from(format!(
        "RESPOND      misroutes {}, overuse {:.3}",
        pct(s.respond_misroute_rate),
        s.respond_overuse
    )));
    for f in &s.flags {
        t.push_line(Line::from(f.clone()).style(theme::warn()));
    }
    if reflection_off {
        t.push_line(Line::default());
        t.push_line(
            Line::from("reflection skipped: the strong model is the built-in one, so no decision is reviewed")
                .style(theme::dim()),
        );
    }
    t
}
