//! The two bottom rows: key hints for the active context, and the status bar (spinner while
//! working, the latest notice or the active models, the session's tokens and model time).

use super::keymap::{Context, Keymap};
use super::theme;
use super::wrap::str_width;
use crate::config::Role;
use crate::events::{ActiveModel, NoticeLevel};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// Ticks (of 100 ms) an info notice stays; warnings and errors stay three times as long.
const NOTICE_TICKS: u64 = 60;

#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    pub level: NoticeLevel,
    pub text: String,
    pub since: u64,
}

/// Calls awaiting their cost, at most. Some never report one: a call whose future is dropped
/// (a shutdown, a forget stopping a late uncertainty check) and one whose end this pane missed
/// (its bus receiver lagged); each would otherwise keep its entry for the rest of the session.
/// Calls in flight at once are a handful.
pub const PENDING_CALLS: usize = 64;

#[derive(Debug, Default)]
pub struct Status {
    /// Per role: from the config until the engine reports what it resolved.
    pub models: Vec<ActiveModel>,
    pub resolved: bool,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub model_ms: u64,
    /// Calls served by something other than the built-in models (which cost nothing).
    pub paid_calls: u64,
    /// `[pricing]`: what the session's calls cost.
    pub pricing: crate::config::pricing::Pricing,
    /// Calls started and not yet costed: call id → (provider, model), to price the cost event.
    /// Ordered by id (ids are UUIDv7, time-ordered) so the oldest goes first past
    /// [`PENDING_CALLS`].
    pub calls: std::collections::BTreeMap<String, (String, String)>,
    /// Dollars spent on the priced calls this session.
    pub spent: f64,
    /// Paid calls to a model with no price: the spend shown is then a lower bound.
    pub unpriced_calls: u64,
    /// Turns sent and not yet answered.
    pub pending: usize,
    pub notice: Option<Notice>,
    pub show_log: bool,
    pub log_file: String,
    pub session_log: String,
    /// 100 ms ticks since start (drives the spinner and notice expiry).
    pub tick: u64,
}

impl Status {
    pub fn notice(&mut self, level: NoticeLevel, text: &str) {
        // One line: a multi-line error would push the layout around.
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        self.notice = Some(Notice { level, text, since: self.tick });
    }

    /// Advance the clock; true when something visible changed.
    pub fn tick(&mut self, working: bool) -> bool {
        self.tick += 1;
        let expired = self.notice.as_ref().is_some_and(|n| {
            let life = if n.level == NoticeLevel::Info { NOTICE_TICKS } else { NOTICE_TICKS * 3 };
            self.tick.saturating_sub(n.since) > life
        });
        if expired {
            self.notice = None;
        }
        expired || working
    }

    fn builtin_provider(&self, provider: &str) -> bool {
        self.models.iter().any(|m| m.builtin && m.model.split('/').next() == Some(provider))
    }

    /// A call began: remember its model until its cost arrives.
    pub fn call_started(&mut self, call_id: &str, provider: &str, model: &str) {
        self.calls.insert(call_id.to_string(), (provider.to_string(), model.to_string()));
        while self.calls.len() > PENDING_CALLS {
            self.calls.pop_first();
        }
    }

    /// A call ended without a cost (failed for good).
    pub fn call_failed(&mut self, call_id: &str) {
        self.calls.remove(call_id);
    }

    pub fn cost(&mut self, call_id: &str, provider: &str, tokens_in: u32, tokens_out: u32, wall_ms: u64) {
        self.tokens_in += u64::from(tokens_in);
        self.tokens_out += u64::from(tokens_out);
        self.model_ms += wall_ms;
        let model = self.calls.remove(call_id).map(|(_, m)| m);
        if self.builtin_provider(provider) {
            return;
        }
        self.paid_calls += 1;
        match model.and_then(|m| self.pricing.cost(provider, &m, u64::from(tokens_in), u64::from(tokens_out))) {
            Some(dollars) => self.spent += dollars,
            None => self.unpriced_calls += 1,
        }
    }

    /// " · $0.0042": the session's spend; "+?" when some paid calls had no price, nothing
    /// when none did (an unpriced endpoint, e.g. a local Ollama, has no known cost).
    fn spend(&self) -> String {
        let priced = self.paid_calls - self.unpriced_calls.min(self.paid_calls);
        if self.paid_calls == 0 {
            return " · $0".into();
        }
        if priced == 0 {
            return String::new();
        }
        let dollars = if self.spent < 0.01 { format!("{:.4}", self.spent) } else { format!("{:.2}", self.spent) };
        let unknown = if self.unpriced_calls > 0 { "+?" } else { "" };
        format!(" · ${dollars}{unknown}")
    }

    /// "primary ollama/qwen3:8b · lightweight … · embedding local/all-minilm-l6-v2 (built-in)";
    /// roles sharing a model are listed together.
    pub fn models_line(&self) -> String {
        let mut groups: Vec<(Vec<&str>, String)> = Vec::new();
        for m in &self.models {
            let label = if m.builtin { format!("{} (built-in)", m.model) } else { m.model.clone() };
            match groups.iter_mut().find(|(_, l)| *l == label) {
                Some((roles, _)) => roles.push(m.role.as_str()),
                None => groups.push((vec![m.role.as_str()], label)),
            }
        }
        groups.iter().map(|(roles, label)| format!("{} {label}", roles.join("/"))).collect::<Vec<_>>().join(" · ")
    }

    fn usage(&self) -> String {
        let k = |n: u64| {
            if n >= 10_000 {
                format!("{:.0}k", n as f64 / 1000.0)
            } else if n >= 1000 {
                format!("{:.1}k", n as f64 / 1000.0)
            } else {
                n.to_string()
            }
        };
        let cost = self.spend();
        format!("tok ↑{} ↓{} · {:.1} s{cost}", k(self.tokens_in), k(self.tokens_out), self.model_ms as f64 / 1000.0)
    }

    pub fn render(&self, frame: &mut Frame, area: Rect, activity: Option<&str>) {
        let mut left: Vec<Span<'static>> = Vec::new();
        if let Some(what) = activity {
            left.push(Span::styled(format!("{} {what} ", SPINNER[(self.tick % 10) as usize]), theme::accent()));
        }
        if self.show_log {
            left.push(Span::raw(format!("log {} · session {}", self.log_file, self.session_log)));
        } else if let Some(n) = &self.notice {
            left.push(Span::styled(n.text.clone(), theme::notice(n.level)));
        } else {
            let models = if self.models.is_empty() { "models: resolving…".to_string() } else { self.models_line() };
            left.push(Span::styled(models, theme::dim()));
        }
        let right = self.usage();
        let right_w = str_width(&right) as u16 + 1;
        let left_w = area.width.saturating_sub(right_w);
        let left_line = truncate_line(left, usize::from(left_w));
        frame.render_widget(Paragraph::new(left_line), Rect { width: left_w, ..area });
        if area.width > right_w {
            let r = Rect { x: area.x + left_w, width: right_w, ..area };
            frame.render_widget(Paragraph::new(Line::from(format!(" {right}")).style(theme::dim())), r);
        }
    }
}

/// Cut a line to `width` columns, ending in "…" when cut.
fn truncate_line(spans: Vec<Span<'static>>, width: usize) -> Line<'static> {
    let mut out = Vec::new();
    let mut used = 0;
    for s in spans {
        let w = str_width(&s.content);
        if used + w <= width {
            used += w;
            out.push(s);
            continue;
        }
        let mut cut = String::new();
        for c in s.content.chars() {
            let cw = super::wrap::char_width(c);
            if used + cw + 1 > width {
                break;
            }
            used += cw;
            cut.push(c);
        }
        cut.push('…');
        out.push(Span::styled(cut, s.style));
        break;
    }
    Line::from(out)
}

/// The hint bar: the active context's keys, then the global ones, as far as they fit.
pub fn render_hints(frame: &mut Frame, area: Rect, keymap: &Keymap, ctx: Context, streaming: bool) {
    let mut spans = Vec::new();
    let mut used = 0usize;
    for b in keymap.hints(ctx, streaming) {
        let w = str_width(&b.short) + str_width(b.help) + 5;
        if used + w > usize::from(area.width) {
            break;
        }
        used += w;
        spans.push(Span::styled(format!(" {} ", b.short), theme::key_cap()));
        spans.push(Span::raw(format!(" {}  ", b.help)));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The models the config asks for, shown until the engine reports what it resolved.
pub fn configured_models(config: &crate::config::Config) -> Vec<ActiveModel> {
    Role::ALL
        .iter()
        .map(|&role| {
            let m = config.models.get(role);
            let builtin =
                config.providers.get(&m.provider).is_some_and(|p| p.kind == crate::config::ProviderKind::Local);
            ActiveModel { role, model: m.to_string(), builtin }
        })
        .collect()
}

#[cfg(test)]
mod spend_tests {
    use super::*;
    use crate::config::Role;
    use crate::config::Weight;
    use crate::config::pricing::{Price, Pricing};

    fn status() -> Status {
        let mut s = Status {
            models: vec![ActiveModel { role: Role::Embedding, model: "local/minilm".into(), builtin: true }],
            ..Status::default()
        };
        let price = Price { input_per_mtok: Weight(3.0), output_per_mtok: Weight(15.0) };
        s.pricing = Pricing([("openai/gpt-x".to_string(), price)].into_iter().collect());
        s
    }

    #[test]
    fn priced_calls_add_up_to_the_session_cost() {
        let mut s = status();
        assert!(s.usage().ends_with(" · $0"), "{}", s.usage());
        s.call_started("a", "openai", "gpt-x");
        s.cost("a", "openai", 1000, 200, 10); // 0.003 + 0.003
        s.call_started("b", "local", "minilm");
        s.cost("b", "local", 50, 0, 1); // built-in: free, not a paid call
        assert!((s.spent - 0.006).abs() < 1e-12, "{}", s.spent);
        assert!(s.usage().ends_with(" · $0.0060"), "{}", s.usage());
        s.call_started("c", "openai", "gpt-x");
        s.cost("c", "openai", 1_000_000, 1_000_000, 10);
        assert!(s.usage().ends_with(" · $18.01"), "{}", s.usage());
        assert!(s.calls.is_empty());
    }

    #[test]
    fn an_unpriced_endpoint_marks_the_spend_as_a_lower_bound() {
        let mut s = status();
        s.call_started("a", "ollama", "qwen3");
        s.cost("a", "ollama", 10, 10, 1);
        assert!(!s.usage().contains('$'), "no price known at all: {}", s.usage());
        s.call_started("b", "openai", "gpt-x");
        s.cost("b", "openai", 1000, 0, 1);
        assert!(s.usage().ends_with(" · $0.0030+?"), "{}", s.usage());
        s.call_started("c", "openai", "gpt-x");
        s.call_failed("c");
        assert!(s.calls.is_empty());
    }

    #[test]
    fn calls_that_never_report_a_cost_do_not_pile_up() {
        let mut s = status();
        let ids: Vec<String> = (0..PENDING_CALLS * 3).map(|_| uuid::Uuid::now_v7().to_string()).collect();
        for id in &ids {
            s.call_started(id, "openai", "gpt-x");
        }
        assert_eq!(s.calls.len(), PENDING_CALLS);
        // The newest are kept: the call costed now is priced as its model.
        let last = ids.last().map(String::as_str).unwrap_or_default();
        s.cost(last, "openai", 1000, 0, 1);
        assert_eq!(s.unpriced_calls, 0);
        assert!((s.spent - 0.003).abs() < 1e-12, "{}", s.spent);
        assert!(!s.calls.contains_key(ids[0].as_str()), "the oldest went first");
    }
}
