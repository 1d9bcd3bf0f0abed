//! Routing: for the latest message, one bar per mode with its score, the delivered mode
//! highlighted, then confidence, margin, whether the tie-breaker ran, routing time and topic:
//! why the assistant chose what it did, not just what.

use super::{Scroll, empty};
use crate::cognition::pipeline::{RouterReport, TopicReport};
use crate::cognition::reply::ReplySource;
use crate::cognition::router::{Mode, ModeScores};
use crate::tui::theme;
use crate::vocab::graph::GraphReport;
use crate::vocab::regulator::RegulatorReport;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span, Text};

/// The latest routing decision.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub exchange_id: String,
    pub mode: Mode,
    pub router: RouterReport,
    pub topic: TopicReport,
    pub fallbacks: Vec<String>,
    /// Who wrote the reply, once it is done.
    pub reply_source: Option<ReplySource>,
    /// The regulator's verdict, once the turn is done.
    pub regulator: Option<RegulatorReport>,
    /// What the concept graph fired for the message.
    pub graph: Option<GraphReport>,
}

#[derive(Debug, Default)]
pub struct RoutingPane {
    pub latest: Option<Decision>,
    pub scroll: Scroll,
    /// This session's recent delivered modes and whether each asked for a tie-break, newest
    /// last (at most [`RECENT`]): the live distribution line.
    pub recent: std::collections::VecDeque<(Mode, bool)>,
    /// Whether each recent judged decision was a misroute, newest last (at most [`RECENT`]),
    /// as the engine's `route_judged` events said.
    pub judged: std::collections::VecDeque<bool>,
    /// The latest verdict: the judged turn's mode, the label and its cue.
    pub last_judged: Option<Judged>,
}

/// The next message's verdict on a routed turn, as logged.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    pub mode: Mode,
    pub label: String,
    pub cue: String,
    pub misroute: bool,
}

/// How many decisions the live distribution covers.
pub const RECENT: usize = 100;

const EMPTY: &str = "No message routed yet. Each mode's score and the reason for the choice show here.";

impl RoutingPane {
    /// Count one delivered decision into the live distribution.
    pub fn record(&mut self, mode: Mode, tie: bool) {
        if self.recent.len() == RECENT {
            self.recent.pop_front();
        }
        self.recent.push_back((mode, tie));
    }

    /// A `route_judged` event: the engine's verdict on the last route (the one stored on the
    /// decision's row that `audit --stats` reads), counted into the live misroute rate without
    /// running the detector again (docs/cognition.md §15.1).
    pub fn judged(&mut self, verdict: Judged) {
        if self.judged.len() == RECENT {
            self.judged.pop_front();
        }
        self.judged.push_back(verdict.misroute);
        self.last_judged = Some(verdict);
    }

    /// The latest verdict on a route, the misroute ones in the warning colour.
    pub fn judged_line(&self) -> Option<Line<'static>> {
        let j = self.last_judged.as_ref()?;
        let style = if j.misroute { theme::warn() } else { theme::dim() };
        let cue = if j.cue.is_empty() { String::new() } else { format!(" ({})", j.cue) };
        Some(Line::from(vec![
            Span::styled("last route ", theme::dim()),
            Span::styled(j.mode.as_str(), theme::mode(j.mode)),
            Span::styled(format!(" judged {}{cue}", j.label), style),
        ]))
    }

    /// The recent mode distribution against the healthy ranges (a red-flag mode in the warning
    /// colour), its normalised entropy and the tie-break rate (docs/cognition.md §15.1).
    pub fn distribution_line(&self) -> Option<Line<'static>> {
        let n = self.recent.len();
        if n < 2 {
            return None;
        }
        let (shares, entropy, _) =
            crate::cognition::router::stats::distribution(self.recent.iter().map(|(m, _)| *m), n);
        let ties = self.recent.iter().filter(|(_, t)| *t).count();
        let mut spans = vec![Span::styled(format!("last {n}: "), theme::dim())];
        for s in shares.iter().filter(|s| s.count > 0 || s.verdict == "RED FLAG") {
            let style = match s.verdict {
                "RED FLAG" => theme::warn(),
                "healthy" => Style::default(),
                _ => theme::dim(),
            };
            let flag = if s.verdict == "RED FLAG" { "!" } else { "" };
            spans.push(Span::styled(format!("{} {:.0}%{flag} ", &s.mode.as_str()[..3], s.percent), style));
        }
        spans
            .push(Span::styled(format!("· H {entropy:.2} · tie {:.0}%", 100.0 * ties as f64 / n as f64), theme::dim()));
        if !self.judged.is_empty() {
            let missed = self.judged.iter().filter(|m| **m).count();
            let rate = 100.0 * missed as f64 / self.judged.len() as f64;
            // Over the misroute pressure's threshold (parameters §10: 10 %) in the warning colour.
            let style = if rate > 10.0 { theme::warn() } else { theme::dim() };
            spans.push(Span::styled(format!(" · misroute {rate:.0}%"), style));
        }
        Some(Line::from(spans))
    }

    /// Rows the pane would like (borders included), so the layout can give it room.
    pub fn wanted_height(&self) -> u16 {
        match &self.latest {
            Some(d) => {
                2 + 5
                    + 4
                    + u16::from(!d.fallbacks.is_empty())
                    + u16::from(d.router.pre_routed)
                    + u16::from(d.reply_source.is_some())
                    + d.regulator.as_ref().map_or(0, |r| 1 + (r.breaks.len() + r.low_confidence_spans.len()) as u16)
                    + d.graph.as_ref().map_or(0, |g| graph_lines(g).len() as u16)
                    + u16::from(self.recent.len() >= 2)
                    + u16::from(self.last_judged.is_some())
            }
            None => 5,
        }
    }

    pub fn text(&self, width: u16) -> Text<'static> {
        let Some(d) = &self.latest else { return empty(EMPTY) };
        let r = &d.router;
        let mut text = Text::from(score_lines(&r.scores, Some(d.mode), width));
        text.push_line(Line::from(vec![
            Span::raw(format!("conf {:.2}", r.confidence)),
            Span::styled(" · ", theme::dim()),
            Span::raw(format!("margin {:.2}", r.margin)),
            Span::styled(format!(" (needs {:.2})", r.effective_margin), theme::dim()),
        ]));
        text.push_line(Line::from(tiebreak(r, d.mode)));
        let new = if d.topic.is_new_topic { " (new)" } else { "" };
        text.push_line(Line::from(vec![
            Span::raw(format!("{:.2} ms", r.routing_time_ms)),
            Span::styled(" · topic ", theme::dim()),
            Span::styled(d.topic.name.clone(), theme::accent()),
            Span::styled(new, theme::warn()),
        ]));
        if r.pre_routed || r.scored_mode != d.mode {
            text.push_line(Line::from(r.reason.clone()).style(theme::dim()));
        }
        if !d.fallbacks.is_empty() {
            text.push_line(Line::from(format!("fallback: {}", d.fallbacks.join(", "))).style(theme::warn()));
        }
        if let Some(source) = d.reply_source {
            text.push_line(Line::from(vec![
                Span::styled("reply by ", theme::dim()),
                Span::styled(source.as_str(), theme::accent()),
            ]));
        }
        if let Some(reg) = &d.regulator {
            text.extend(regulator_lines(reg));
        }
        if let Some(g) = &d.graph {
            text.extend(graph_lines(g));
        }
        if let Some(line) = self.distribution_line() {
            text.push_line(line);
        }
        if let Some(line) = self.judged_line() {
            text.push_line(line);
        }
        text
    }
}

/// What the concept graph fired for the message (docs/cognition.md §9.4.3): the seeds with
/// their energy, each fired concept with its step and the edge that brought it, the inhibited.
/// Nothing when nothing was seeded.
pub fn graph_lines(g: &GraphReport) -> Vec<Line<'static>> {
    if g.seeds.is_empty() && g.grown.is_none() {
        return g.router.as_ref().map(router_line).into_iter().collect();
    }
    let seeds: Vec<String> = g.seeds.iter().map(|s| format!("{} {:.2}", s.name, s.energy)).collect();
    let mut out = vec![Line::from(vec![Span::styled("graph seeds ", theme::dim()), Span::raw(seeds.join(", "))])];
    // One short line per fired concept: step, name, the edge that brought it, its energy.
    for f in &g.fired {
        let mut line =
            vec![Span::styled(format!("  s{} ", f.step), theme::dim()), Span::styled(f.name.clone(), theme::accent())];
        match (&f.via, f.weight) {
            (Some(from), Some(w)) => line.push(Span::styled(format!(" \u{2190} {from} ({w:+.2})"), theme::dim())),
            _ => line.push(Span::styled(" (seed)", theme::dim())),
        }
        line.push(Span::raw(format!(" {:.2}", f.energy)));
        out.push(Line::from(line));
    }
    if let Some(n) = &g.grown {
        out.push(Line::from(vec![Span::styled("  grew ", theme::dim()), Span::styled(n.clone(), theme::accent())]));
    }
    if !g.inhibited.is_empty() {
        let names: Vec<String> = g.inhibited.iter().map(|i| format!("{} {:.2}", i.name, i.energy)).collect();
        out.push(Line::from(format!("  inhibited {}", names.join(", "))).style(theme::warn()));
    }
    out.extend(g.router.as_ref().map(router_line));
    out
}

/// The v2 router's part (docs/cognition.md §9.4.9): its calls and routed edges, why a step went
/// mechanical, and how long the breaker keeps it off.
fn router_line(r: &crate::vocab::graph::GraphRouting) -> Line<'static> {
    let mut text = if r.mode == "off" {
        format!("  router off ({} more turns, deterministic)", r.off_turns)
    } else {
        format!("  router v2: {} call{}, {} routed", r.calls, if r.calls == 1 { "" } else { "s" }, r.routed)
    };
    if let Some(f) = &r.fallback {
        text.push_str(&format!("; {f} \u{2192} deterministic"));
    }
    let style = if r.mode == "off" || r.fallback.is_some() { theme::warn() } else { theme::dim() };
    Line::from(text).style(style)
}

/// The regulator's verdict: the decision with its confidence, then each break on its own line
/// (a break stopped the turn, so it is never left to colour alone: it says "break").
pub fn regulator_lines(reg: &RegulatorReport) -> Vec<Line<'static>> {
    let mut head = vec![
        Span::styled("regulator ", theme::dim()),
        Span::styled(reg.decision.clone(), if reg.breaks.is_empty() { theme::accent() } else { theme::warn() }),
        Span::styled(format!(" · conf {:.2}", reg.confidence), theme::dim()),
    ];
    if let Some(d) = &reg.scope_drift {
        head.push(Span::styled(format!(" · drift {:.2}", d.score), theme::dim()));
    }
    if !reg.low_confidence_spans.is_empty() {
        head.push(Span::styled(format!(" · {} unsure", reg.low_confidence_spans.len()), theme::dim()));
    }
    let mut out = vec![Line::from(head)];
    for s in &reg.low_confidence_spans {
        out.push(Line::from(vec![
            Span::styled("  unsure ", theme::dim()),
            Span::styled(format!("\u{201c}{}\u{201d}", s.text), Style::new().add_modifier(Modifier::UNDERLINED)),
            Span::styled(format!(" logprob {:.2} · chars {}–{}", s.mean_logprob, s.start, s.end), theme::dim()),
        ]));
    }
    for b in &reg.breaks {
        out.push(Line::from(format!("break: {}", b.message)).style(theme::warn()));
    }
    out
}

/// Whether the tie-breaker ran, and what came of it.
fn tiebreak(r: &RouterReport, delivered: Mode) -> Vec<Span<'static>> {
    match r.tiebreaker_candidates {
        None => vec![Span::styled("no tie-break needed", theme::dim())],
        Some([a, b]) if r.tiebreaker_used => vec![
            Span::raw("tie-break ran: "),
            Span::raw(format!("{} vs {} → ", a.as_str(), b.as_str())),
            Span::styled(delivered.as_str(), theme::mode(delivered)),
        ],
        Some([a, b]) => vec![Span::styled(
            format!("close call {} vs {}: tie-breaker not used, kept {}", a.as_str(), b.as_str(), a.as_str()),
            theme::warn(),
        )],
    }
}

/// One bar per mode, scaled to the largest score; `chosen` highlighted in its mode colour.
pub fn score_lines(scores: &ModeScores, chosen: Option<Mode>, width: u16) -> Vec<Line<'static>> {
    let max = Mode::ALL.iter().map(|m| scores.get(*m).abs()).fold(f64::EPSILON, f64::max);
    let bar_width = usize::from(width.saturating_sub(13 + 6)).max(1);
    Mode::ALL
        .iter()
        .map(|&mode| {
            let score = scores.get(mode);
            let filled = ((score.max(0.0) / max) * bar_width as f64).round() as usize;
            let is_chosen = chosen == Some(mode);
            let (label, bar, value) = if is_chosen {
                (theme::mode(mode).add_modifier(Modifier::BOLD), theme::mode(mode), theme::bold())
            } else {
                (theme::dim(), Style::new().fg(Color::Gray), Style::new())
            };
            Line::from(vec![
                Span::styled(format!("{}{:<12}", if is_chosen { "▸" } else { " " }, mode.as_str()), label),
                Span::styled("█".repeat(filled.min(bar_width)), bar),
                Span::styled(format!(" {score:>5.2}"), value),
            ])
        })
        .collect()
}

#[cfg(test)]
mod distribution_tests {
    use super::*;

    #[test]
    fn the_live_line_flags_a_mode_outside_its_red_flag_bounds() {
        let mut pane = RoutingPane::default();
        assert!(pane.distribution_line().is_none());
        for i in 0..RECENT + 5 {
            pane.record(if i % 10 == 0 { Mode::Clarify } else { Mode::Respond }, i % 20 == 0);
        }
        assert_eq!(pane.recent.len(), RECENT, "a rolling window");
        let line = pane.distribution_line().unwrap();
        let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
        assert!(text.starts_with("last 100: RES 90%! CLA 10% "), "{text}");
        assert!(text.contains("ACT 0%!"), "ACT death is flagged: {text}");
        assert!(text.ends_with("tie 5%"), "{text}");
        let flagged = line.spans.iter().find(|s| s.content.starts_with("RES")).unwrap();
        assert_eq!(flagged.style, theme::warn());
    }

    #[test]
    fn the_misroute_rate_counts_the_logged_verdicts() {
        let mut pane = RoutingPane::default();
        let verdict = |label: &str, misroute| Judged {
            mode: Mode::Respond,
            label: label.into(),
            cue: "i meant".into(),
            misroute,
        };
        for mode in [Mode::Respond, Mode::Respond, Mode::Acknowledge] {
            pane.record(mode, false);
        }
        pane.judged(verdict("missed_clarify", true));
        pane.judged(verdict("thanks", false));
        assert_eq!(pane.judged, [true, false]);
        let line = pane.distribution_line().unwrap();
        let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
        assert!(text.ends_with("· misroute 50%"), "{text}");
        assert_eq!(line.spans.last().unwrap().style, theme::warn(), "over the 10 % threshold");
        let last: String = pane.judged_line().unwrap().spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(last, "last route RESPOND judged thanks (i meant)");
    }
}
