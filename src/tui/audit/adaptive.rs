//! The audit detail's Adaptive section (docs/cognition.md §18.8).

use super::theme;
use ratatui::text::{Line, Span};
use serde_json::Value;

/// The directives the reply's prompt carried (docs/cognition.md §18), each with what produced
/// it, then the inputs the plan read.
pub(super) fn lines(v: &Value) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    let directives = v["directives"].as_array().cloned().unwrap_or_default();
    let sent: Vec<String> =
        v["sent"].as_array().into_iter().flatten().filter_map(|s| s.as_str().map(str::to_string)).collect();
    if directives.is_empty() {
        out.push(Line::from("no directives: the default voice").style(theme::dim()));
    }
    for d in &directives {
        let text = d["text"].as_str().unwrap_or_default().to_string();
        let cut = if sent.contains(&text) { "" } else { "  (not sent: over the built-in model's budget)" };
        out.push(Line::from(vec![
            Span::styled(format!("{:<8} ", d["origin"].as_str().unwrap_or("?")), theme::dim()),
            Span::raw(text),
            Span::styled(cut, theme::dim()),
        ]));
    }
    let opt = |k: &str| match &v[k] {
        Value::Null => "-".to_string(),
        Value::String(s) => s.clone(),
        x => x.to_string(),
    };
    out.push(
        Line::from(format!(
            "load {} · energy {} · challenge {} · {} style observations",
            opt("load"),
            opt("energy"),
            opt("challenge"),
            opt("observations")
        ))
        .style(theme::dim()),
    );
    out
}
