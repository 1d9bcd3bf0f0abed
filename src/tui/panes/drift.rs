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
    /// The selected entry (Up/Down while the pane has focus): the cycles, then the thoughts.
    pub selected: usize,
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

    fn entries(&self) -> usize {
        self.cycles.len() + self.thoughts.len()
    }

    pub fn select(&mut self, delta: isize) {
        let n = self.entries();
        if n > 0 {
            self.selected = self.selected.saturating_add_signed(delta).min(n - 1);
        }
    }

    /// Whether Enter has something to open.
    pub fn has_selection(&self) -> bool {
        self.selected < self.entries()
    }

    /// The selected entry in full: the thought and who wrote it, the seed and its strategy,
    /// what fired from it, the gate, and the action with every score and rejection. A stored
    /// thought from an earlier session shows what was kept with it.
    pub fn detail(&self, offset: FixedOffset) -> Text<'static> {
        let (cycle, thought) = match self.selected.checked_sub(self.cycles.len()) {
            None => {
                let c = &self.cycles[self.selected];
                (Some(c), c.thought_id.and_then(|id| self.thoughts.iter().find(|t| t.id == id)))
            }
            Some(i) => match self.thoughts.get(i) {
                Some(t) => (self.cycles.iter().find(|c| c.thought_id == Some(t.id)), Some(t)),
                None => return empty("Nothing selected."),
            },
        };
        let mut text = Text::default();
        if let Some(t) = thought {
            text.push_line(Line::from(vec![
                Span::styled(clock(t.created_at, offset), theme::dim()),
                Span::raw(" "),
                Span::styled(t.kind.clone(), kind_style(&t.kind)),
                Span::styled(t.topic.as_ref().map(|x| format!(" · {x}")).unwrap_or_default(), theme::dim()),
            ]));
            text.push_line(Line::from(t.content.trim().to_string()));
        }
        let Some(c) = cycle else {
            text.push_line(Line::default());
            let action = thought.and_then(|t| t.action.clone()).unwrap_or_default();
            let energy = thought.and_then(|t| t.energy).map(|e| format!(", energy {e:.2}")).unwrap_or_default();
            text.push_line(Line::from(format!("Action: {action}{energy}")));
            text.push_line(Line::styled(
                "From an earlier session: `chalie-tui drift --json` has its cycle in full.",
                theme::dim(),
            ));
            return text;
        };
        if thought.is_none() {
            text.push_line(cycle_line(c, offset));
            if let Some(t) = &c.thought {
                text.push_line(Line::from(t.clone()));
            }
        }
        text.push_line(Line::default());
        if let Some(why) = &c.skipped {
            text.push_line(Line::from(format!("Skipped: {why}")));
            if let Some(e) = c.energy {
                text.push_line(Line::from(format!("Gate: energy {e:.2} against {:.2}", c.gate)));
            }
            return text;
        }
        let written = match c.author.as_deref() {
            Some("model") => "the lightweight model",
            _ => "the template (no model asked, or its answer was unusable)",
        };
        text.push_line(Line::from(format!("Written by {written}")));
        let seed = c.seed.clone().unwrap_or_else(|| "the self-model".into());
        text.push_line(Line::from(format!("Seed: {seed} ({})", c.strategy.clone().unwrap_or_default())));
        if !c.fired.is_empty() {
            let path: Vec<String> = c.fired.iter().map(|f| format!("{} {:.2}", f.name, f.energy)).collect();
            text.push_line(Line::from(format!("Path: {seed} → {}", path.join(", "))));
        }
        if let Some(e) = c.energy {
            let verdict = if e > c.gate { "passed" } else { "closed" };
            text.push_line(Line::from(format!("Gate: energy {e:.2} against {:.2}, {verdict}", c.gate)));
        }
        let action = c.action.clone().unwrap_or_default();
        let effect = c.effect.as_ref().map(|e| format!(": {e}")).unwrap_or_default();
        text.push_line(Line::from(format!("Action: {action}{effect}")));
        for s in &c.scores {
            let why = match &s.rejected_by {
                Some(gate) => format!("rejected: {gate}"),
                None if s.action == action => "chosen".to_string(),
                None => "eligible".to_string(),
            };
            text.push_line(Line::styled(format!("  {:<12} {:.2}  {why}", s.action, s.score), theme::dim()));
        }
        text
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
        let mark = |i: usize| Span::raw(if i == self.selected { "›" } else { " " });
        for (i, c) in self.cycles.iter().enumerate() {
            let mut line = cycle_line(c, offset);
            line.spans.insert(0, mark(i));
            text.push_line(line);
            if c.skipped.is_none() {
                let runners: Vec<String> =
                    c.scores.iter().skip(1).take(2).map(|s| format!("{} {:.2}", s.action, s.score)).collect();
                text.push_line(Line::styled(format!("  runner-up: {}", runners.join(", ")), theme::dim()));
            }
        }
        for (i, t) in self.thoughts.iter().enumerate() {
            let mut head = vec![
                mark(self.cycles.len() + i),
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
