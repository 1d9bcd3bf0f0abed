//! `chalie-tui audit --stats`, the money part: every model call in the session logs, totalled
//! per role with the `[pricing]` table (docs: README "Money"). The logs are the record of
//! each call's role, model and tokens; prices are today's, applied to all of them.

use crate::config::pricing::Pricing;
use crate::config::{Config, Paths, ProviderKind};
use crate::events::EngineEvent;
use crate::session::LogEntry;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// One role's calls and what they cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RoleCost {
    pub role: String,
    pub calls: u64,
    pub tokens_in: u64,
    pub tokens_out: u64,
    /// Dollars for the calls whose model has a price; built-in models cost nothing.
    pub dollars: f64,
    /// Calls to a paid endpoint with no price in the table: `dollars` is then a lower bound.
    pub unpriced_calls: u64,
}

/// Per role (sorted by name), the calls among `events` that
/// finished with a cost. `free` says which providers are the built-in models.
pub fn totals<'a>(
    events: impl IntoIterator<Item = &'a EngineEvent>,
    pricing: &Pricing,
    free: &dyn Fn(&str) -> bool,
) -> Vec<RoleCost> {
    let mut started: HashMap<&str, (&str, &str, &str)> = HashMap::new();
    let mut by_role: BTreeMap<String, RoleCost> = BTreeMap::new();
    for event in events {
        match event {
            EngineEvent::LlmStart { call_id, role, provider, model, .. } => {
                started.insert(call_id, (role.as_str(), provider, model));
            }
            EngineEvent::LlmCost { call_id, tokens_in, tokens_out, .. } => {
                let Some((role, provider, model)) = started.remove(call_id.as_str()) else { continue };
                let row = by_role
                    .entry(role.to_string())
                    .or_insert_with(|| RoleCost { role: role.into(), ..Default::default() });
                let (tin, tout) = (u64::from(*tokens_in), u64::from(*tokens_out));
                row.calls += 1;
                row.tokens_in += tin;
                row.tokens_out += tout;
                if free(provider) {
                    continue;
                }
                match pricing.cost(provider, model, tin, tout) {
                    Some(d) => row.dollars += d,
                    None => row.unpriced_calls += 1,
                }
            }
            _ => {}
        }
    }
    by_role.into_values().collect()
}

/// Every session log's events, oldest file first; logs that cannot be read are skipped with
/// a line on stderr (a torn log must not hide the others).
pub fn logged_totals(paths: &Paths, config: &Config) -> anyhow::Result<Vec<RoleCost>> {
    let dir = paths.sessions_dir();
    let mut files: Vec<_> = match std::fs::read_dir(&dir) {
        Ok(rd) => rd
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(anyhow::Error::new(e).context(format!("cannot list {}", dir.display()))),
    };
    files.sort();
    let free = |p: &str| config.providers.get(p).is_some_and(|p| p.kind == ProviderKind::Local);
    let mut events = Vec::new();
    for file in &files {
        match crate::session::read_log(file) {
            Ok(log) => events.extend(log.entries.into_iter().filter_map(|e| match e {
                LogEntry::Event(s) => Some(s.event),
                LogEntry::Unknown(_) => None,
            })),
            Err(e) => crate::errln!("skipped: {}", crate::text::terminal::safe(&e.to_string())),
        }
    }
    Ok(totals(&events, &config.pricing, &free))
}

/// The cost block: a table, or with `json` one object `{"cost_by_role": [...]}`.
/// Aligned columns per role and a total row; "+?" marks a cost missing some unpriced calls.
pub fn table(rows: &[RoleCost]) -> String {
    let dollars = |d: f64, unpriced: u64| format!("${d:.4}{}", if unpriced > 0 { "+?" } else { "" });
    let mut out =
        format!("{:<12} {:>7} {:>12} {:>12} {:>12}", "cost by role", "calls", "tokens in", "tokens out", "cost");
    let mut total = RoleCost { role: "total".into(), ..Default::default() };
    for r in rows {
        out.push_str(&format!(
            "\n{:<12} {:>7} {:>12} {:>12} {:>12}",
            r.role,
            r.calls,
            r.tokens_in,
            r.tokens_out,
            dollars(r.dollars, r.unpriced_calls)
        ));
        total.calls += r.calls;
        total.tokens_in += r.tokens_in;
        total.tokens_out += r.tokens_out;
        total.dollars += r.dollars;
        total.unpriced_calls += r.unpriced_calls;
    }
    out.push_str(&format!(
        "\n{:<12} {:>7} {:>12} {:>12} {:>12}",
        total.role,
        total.calls,
        total.tokens_in,
        total.tokens_out,
        dollars(total.dollars, total.unpriced_calls)
    ));
    if total.unpriced_calls > 0 {
        out.push_str("\n+? : some calls went to a model with no [pricing] entry");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::pricing::Price;
    use crate::config::{Role, Weight};

    fn start(id: &str, role: Role, provider: &str, model: &str) -> EngineEvent {
        EngineEvent::LlmStart {
            call_id: id.into(),
            role,
            provider: provider.into(),
            model: model.into(),
            prompt_chars: 0,
            prompt_digest: String::new(),
            origin: None,
        }
    }

    fn cost(id: &str, tokens_in: u32, tokens_out: u32) -> EngineEvent {
        EngineEvent::LlmCost { call_id: id.into(), provider: String::new(), tokens_in, tokens_out, wall_ms: 1 }
    }

    #[test]
    fn calls_are_totalled_per_role_at_their_models_price() {
        let price = Price { input_per_mtok: Weight(2.0), output_per_mtok: Weight(8.0) };
        let pricing = Pricing([("api/big".to_string(), price)].into_iter().collect());
        let events = [
            start("1", Role::Primary, "api", "big"),
            cost("1", 1_000_000, 500_000), // 2 + 4
            start("2", Role::Primary, "api", "big"),
            cost("2", 500_000, 0), // 1
            start("3", Role::Lightweight, "ollama", "small"),
            cost("3", 100, 10), // no price
            start("4", Role::Embedding, "local", "minilm"),
            cost("4", 7, 0),                        // built-in
            start("5", Role::Strong, "api", "big"), // never finished: not counted
        ];
        let rows = totals(&events, &pricing, &|p| p == "local");
        let by: HashMap<_, _> = rows.iter().map(|r| (r.role.as_str(), r)).collect();
        assert_eq!(rows.len(), 3, "{rows:?}");
        assert_eq!((by["primary"].calls, by["primary"].tokens_in, by["primary"].tokens_out), (2, 1_500_000, 500_000));
        assert!((by["primary"].dollars - 7.0).abs() < 1e-9, "{}", by["primary"].dollars);
        assert_eq!((by["lightweight"].dollars, by["lightweight"].unpriced_calls), (0.0, 1));
        assert_eq!((by["embedding"].dollars, by["embedding"].unpriced_calls), (0.0, 0));
        let t = table(&rows);
        assert!(t.lines().last().is_some_and(|l| l.contains("+?")), "{t}");
        assert!(t.contains("$7.0000+?"), "total row: {t}");
    }
}
