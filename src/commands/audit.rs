//! `chalie-tui audit`: the routing audit trail, newest first, as a table or one JSON object
//! per decision. ACT decisions carry the iterations that followed, so the table can say
//! which planner made each plan.

use crate::cli::AuditArgs;
use crate::cognition::router::Mode;
use crate::config::{Config, Paths};
use crate::store::{self, ActIteration, RoutingRecord, RoutingRepo, StoreError};
use serde::Serialize;
use std::fmt::Display;
use std::process::ExitCode;

/// One routing decision and the ACT iterations that followed it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AuditEntry {
    #[serde(flatten)]
    pub record: RoutingRecord,
    /// Empty unless the decision delivered ACT.
    pub act_iterations: Vec<ActIteration>,
}

pub fn run(paths: &Paths, config: &Config, args: AuditArgs) -> anyhow::Result<ExitCode> {
    let conn = store::open(&paths.db_file)?;
    if args.stats {
        // The routing statistics of the last 24 h (docs/cognition.md §15.1) and the money spent
        // per role over every session log, as one report.
        let stats = crate::cognition::router::stats::last_day(&conn, store::now_ts())?;
        let costs = super::audit_costs::logged_totals(paths, config)?;
        if args.json {
            let mut v = serde_json::to_value(&stats)?;
            v["cost_by_role"] = serde_json::to_value(&costs)?;
            super::say_json(&v.to_string());
        } else {
            super::say(&format!("last 24 h: {}", crate::cognition::router::stats::describe(&stats)));
            super::say(&super::audit_costs::table(&costs));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let entries = read(&RoutingRepo(&conn), args.limit, args.mode)?;
    if args.json {
        for entry in &entries {
            // Through a JSON value, whose keys print sorted: the line format outside tools read.
            super::say_json(&serde_json::to_value(entry)?.to_string());
        }
    } else if entries.is_empty() {
        crate::outln!("No routing decisions recorded yet in {}.", paths.db_file.display());
    } else {
        super::say(&table(&entries, &chrono::Local));
    }
    Ok(ExitCode::SUCCESS)
}

/// The newest `limit` decisions (only those that delivered `mode`, when given), each with
/// its ACT iterations.
pub fn read(repo: &RoutingRepo<'_>, limit: usize, mode: Option<Mode>) -> Result<Vec<AuditEntry>, StoreError> {
    repo.recent(limit, mode.map(Mode::as_str))?
        .into_iter()
        .map(|record| {
            let act_iterations = match &record.exchange_id {
                Some(x) if record.selected_mode == Mode::Act.as_str() => repo.act_iterations(x)?,
                _ => Vec::new(),
            };
            Ok(AuditEntry { record, act_iterations })
        })
        .collect()
}

/// The audit as aligned columns (time in `tz`, topic, mode, confidence, tie-break, routing
/// time) and a free last column saying why: the router's reasoning, the plans ACT made and
/// the fallback that fired.
pub fn table<Tz: chrono::TimeZone>(entries: &[AuditEntry], tz: &Tz) -> String
where
    Tz::Offset: Display,
{
    let mut out = format!("{:<20} {:<24} {:<12} {:>6} {:<4} {:>8}  why", "time", "topic", "mode", "conf", "tie", "ms");
    for e in entries {
        let r = &e.record;
        let time = chrono::DateTime::from_timestamp(r.created_at, 0)
            .map(|t| t.with_timezone(tz).format("%Y-%m-%d %H:%M:%S").to_string())
            .unwrap_or_default();
        out.push_str(&format!(
            "\n{:<20} {:<24} {:<12} {:>6} {:<4} {:>8}  {}",
            time,
            crate::text::clip::clip(&r.topic, 24),
            r.selected_mode,
            r.router_confidence.map_or("-".into(), |c| format!("{c:.2}")),
            if r.tiebreaker_used { "yes" } else { "no" },
            r.routing_time_ms.map_or("-".into(), |m| format!("{m:.3}")),
            why(e),
        ));
    }
    out
}

/// "reasoning; planner plan: N, … [fallback: name]", each part only when there is one.
fn why(e: &AuditEntry) -> String {
    let plans: Vec<String> = e
        .act_iterations
        .iter()
        .filter(|i| !i.actions.is_empty())
        .map(|i| format!("{} plan: {}", i.planner, i.actions.len()))
        .collect();
    let reasoning = match (&e.record.reasoning, plans.is_empty()) {
        (Some(reason), false) => Some(format!("{reason}; {}", plans.join(", "))),
        (reason, _) => reason.clone(),
    };
    match (reasoning, &e.record.fallback) {
        (Some(reason), Some(f)) => format!("{reason} [fallback: {f}]"),
        (Some(reason), None) => reason,
        (None, Some(f)) => format!("[fallback: {f}]"),
        (None, None) => String::new(),
    }
}

#[cfg(test)]
#[path = "audit_tests.rs"]
mod tests;
