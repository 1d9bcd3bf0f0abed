//! Drift: the background thoughts of the drift engine, newest first. The stored ones are
//! loaded when the UI starts; new ones arrive as events.

use super::{Scroll, clock, empty};
use crate::store::DriftItem;
use crate::tui::theme;
use crate::vocab::drift::DriftCycle;
use chrono::FixedOffset;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span, Text};

/// Thoughts kept on screen.
const KEEP: usize = 50;
/// Cycles kept on screen.
const CYCLES: usize = 5;

#[derive(Debug, Default)]
pub struct DriftPane {
    pub thoughts: Vec<DriftItem>,
    /// The cycles seen this session, newest first (a skipped one has no thought).
    pub cycles: Vec<DriftCycle>,
    pub scroll: Scroll,
}

const EMPTY: &str = "No drift thoughts yet. They arrive while you are idle.";

impl DriftPane {
    /// Stored thoughts (newest first) merged with any that arrived live.
    pub fn loaded(&mut self, thoughts: &[DriftItem]) {
        for t in thoughts {
            if !self.thoughts.iter().any(|x| x.id == t.id) {
                self.thoughts.push(t.clone());
            }
        }
        self.sort();
    }

    pub fn thought(&mut self, t: &DriftItem) {
        self.thoughts.retain(|x| x.id != t.id);
        self.thoughts.push(t.clone());
        self.sort();
        self.scroll.to_top();
    }

    pub fn cycle(&mut self, c: &DriftCycle) {
        self.cycles.insert(0, c.clone());
        self.cycles.truncate(CYCLES);
        self.scroll.to_top();
    }

    fn sort(&mut self) {
        self.thoughts.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        self.thoughts.truncate(KEEP);
    }

    pub fn text(&self, offset: FixedOffset) -> Text<'static> {
        if self.thoughts.is_empty() && self.cycles.is_empty() {
            return empty(EMPTY);
        }
        let mut text = Text::default();
        for c in &self.cycles {
            text.push_line(cycle_line(c, offset));
            if c.skipped.is_none() {
                let runners: Vec<String> =
                    c.scores.iter().skip(1).take(2).map(|s| format!("{} {:.2}", s.action, s.score)).collect();
                text.push_line(Line::styled(format!("  runner-up: {}", runners.join(", ")), theme::dim()));
            }
        }
        for t in &self.thoughts {
            let mut head = vec![
                Span::styled(clock(t.created_at, offset), theme::dim()),
                Span::raw(" "),
                Span::styled(t.kind.clone(), kind_style(&t.kind)),
            ];
            if let Some(topic) = &t.topic {
                head.push(Span::styled(format!(" · {topic}"), theme::dim()));
            }
            if let Some(action) = t.action.as_deref().filter(|a| *a != "NOTHING") {
                head.push(Span::styled(format!(" → {action}"), theme::dim()));
            }
            text.push_line(Line::from(head));
            text.push_line(Line::from(format!("  {}", t.content.trim())));
        }
        text
    }
}

fn kind_style(kind: &str) -> Style {
    Style::new().fg(match kind {
        "question" => Color::Yellow,
        "hypothesis" => Color::Magenta,
        "insight" => Color::Green,
        _ => Color::Cyan,
    })
}

/// One cycle: seed and strategy, energy against the gate, the action and who wrote the thought.
fn cycle_line(c: &DriftCycle, offset: FixedOffset) -> Line<'static> {
    let mut spans = vec![Span::styled(clock(c.at, offset), theme::dim()), Span::raw(" cycle ")];
    match &c.skipped {
        Some(why) => spans.push(Span::styled(format!("skipped: {why}"), theme::dim())),
        None => {
            let seed = c.seed.clone().unwrap_or_else(|| "self".into());
            let strategy = c.strategy.clone().unwrap_or_default();
            spans.push(Span::raw(format!("{seed} ({strategy})")));
            if let Some(e) = c.energy {
                spans.push(Span::styled(format!(" energy {e:.2} > {:.2}", c.gate), theme::dim()));
            }
            let action = c.action.clone().unwrap_or_default();
            let author = c.author.clone().unwrap_or_default();
            spans.push(Span::raw(format!(" → {action} [{author}]")));
        }
    }
    Line::from(spans)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::drift::{ActionScore, Fired};

    fn plain(t: &Text<'_>) -> String {
        t.lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn a_cycle_line_says_seed_energy_against_gate_action_author_and_runners_up() {
        let mut p = DriftPane::default();
        let score = |a: &str, s: f64| ActionScore { action: a.into(), score: s, rejected_by: None };
        p.cycle(&DriftCycle {
            at: 0,
            seed: Some("coffee".into()),
            strategy: Some("recent".into()),
            fired: vec![Fired { name: "mornings".into(), energy: 0.63 }],
            energy: Some(0.63),
            gate: 0.4,
            author: Some("template".into()),
            action: Some("REFLECT".into()),
            scores: vec![score("REFLECT", 0.48), score("RECONCILE", 0.36), score("NOTHING", 0.0)],
            ..DriftCycle::default()
        });
        p.cycle(&DriftCycle { at: 60, skipped: Some("queue busy: chunk".into()), gate: 0.4, ..DriftCycle::default() });
        let text = plain(&p.text(FixedOffset::east_opt(0).unwrap()));
        assert!(text.contains("00:01 cycle skipped: queue busy: chunk"), "{text}");
        assert!(text.contains("cycle coffee (recent) energy 0.63 > 0.40 → REFLECT [template]"), "{text}");
        assert!(text.contains("runner-up: RECONCILE 0.36, NOTHING 0.00"), "{text}");
    }
}
