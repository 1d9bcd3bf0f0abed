//! Routing statistics over stored decisions (docs/cognition.md §15.1): the mode distribution
//! against the healthy ranges, the normalised mode entropy, the tie-break rate and what the
//! next messages said about the routes. Pure: decision rows in, numbers out. `audit --stats`,
//! the Routing pane and the routing stability regulator read the same [`RoutingStats`].

use super::{HealthyRange, Mode};
use crate::store::RoutingRecord;
use serde::Serialize;

/// Labels of the feedback detector that say the route itself was wrong.
pub const MISROUTE_LABELS: [&str; 3] = ["missed_clarify", "missed_act", "under_engagement"];

/// One mode's share of the window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModeShare {
    pub mode: Mode,
    pub count: usize,
    pub percent: f64,
    /// "healthy", "outside healthy" or "RED FLAG" ([`HealthyRange::verdict`]).
    pub verdict: &'static str,
    pub healthy: &'static str,
}

/// What a window of routing decisions says about the router.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoutingStats {
    pub decisions: usize,
    pub modes: Vec<ModeShare>,
    /// Shannon entropy of the mode distribution over log2 5: 0 one mode only, 1 all equal.
    pub entropy: f64,
    /// Share of decisions whose top two scores were close enough to ask for a tie-break
    /// (`tiebreaker_candidates` set), whether or not the tie-break call ran.
    pub tie_break_rate: f64,
    /// Decisions whose next message has been judged.
    pub labelled: usize,
    /// Share of the labelled decisions whose feedback says the route was wrong.
    pub misroute_rate: f64,
    /// Share of the labelled non-CLARIFY decisions the user had to explain.
    pub clarify_miss_rate: f64,
    /// Share of the labelled non-ACT decisions whose request the user had to repeat.
    pub act_miss_rate: f64,
    /// Share of the labelled decisions followed by a request for more.
    pub under_engagement_rate: f64,
    /// Share of the labelled RESPOND decisions that were misroutes.
    pub respond_misroute_rate: f64,
    /// RESPOND share above 75 %, counted only when RESPOND turns were misroutes at the
    /// misroute threshold: a user who mostly asks questions is not overusing RESPOND.
    pub respond_overuse: f64,
    /// Red flags, one line each (e.g. "CLARIFY 1.0 % RED FLAG (8–20 % …)").
    pub flags: Vec<String>,
}

/// The misroute share at which RESPOND's surplus counts as overuse (parameters §10).
pub const RESPOND_MISROUTE_GATE: f64 = 0.10;
/// RESPOND's healthy ceiling, as a share.
pub const RESPOND_CEILING: f64 = 0.75;

fn label(r: &RoutingRecord) -> Option<&str> {
    r.feedback.as_ref()?.get("label")?.as_str()
}

fn share(n: usize, of: usize) -> f64 {
    if of == 0 { 0.0 } else { n as f64 / of as f64 }
}

/// Mode shares of `n` decisions (those delivering `modes`), the normalised entropy and the
/// red-flag lines: the part of [`routing_stats`] the Routing pane computes live.
pub fn distribution(modes: impl Iterator<Item = Mode>, n: usize) -> (Vec<ModeShare>, f64, Vec<String>) {
    let mut counts = [0usize; 5];
    for m in modes {
        if let Some(i) = Mode::ALL.iter().position(|k| *k == m) {
            counts[i] += 1;
        }
    }
    let mut flags = Vec::new();
    let shares: Vec<ModeShare> = Mode::ALL
        .iter()
        .zip(counts)
        .map(|(&mode, count)| {
            let percent = 100.0 * share(count, n);
            let range = HealthyRange::of(mode);
            let verdict = if n == 0 { "no data" } else { range.verdict(percent) };
            if verdict == "RED FLAG" {
                flags.push(format!("{} {percent:.1} % RED FLAG (healthy {})", mode.as_str(), range.label));
            }
            ModeShare { mode, count, percent, verdict, healthy: range.label }
        })
        .collect();
    let entropy = counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = share(c, n);
            -p * p.log2()
        })
        .sum::<f64>()
        / 5f64.log2();
    (shares, entropy, flags)
}

/// Statistics over `rows` (any order).
pub fn routing_stats(rows: &[RoutingRecord]) -> RoutingStats {
    let n = rows.len();
    let mode_of = |r: &RoutingRecord| r.selected_mode.parse::<Mode>().ok();
    let (modes, entropy, flags) = distribution(rows.iter().filter_map(mode_of), n);
    let counts: Vec<usize> = modes.iter().map(|m| m.count).collect();
    let tie = rows.iter().filter(|r| r.tiebreaker_candidates.as_ref().is_some_and(|v| !v.is_null())).count();
    let labelled: Vec<(&RoutingRecord, &str)> = rows.iter().filter_map(|r| Some((r, label(r)?))).collect();
    let rate = |keep: &dyn Fn(&RoutingRecord) -> bool, hit: &dyn Fn(&str) -> bool| {
        let pool: Vec<&str> = labelled.iter().filter(|(r, _)| keep(r)).map(|(_, l)| *l).collect();
        share(pool.iter().filter(|l| hit(l)).count(), pool.len())
    };
    let misroute = |l: &str| MISROUTE_LABELS.contains(&l);
    let is = |m: Mode| move |r: &RoutingRecord| mode_of(r) == Some(m);
    let misroute_rate = rate(&|_| true, &misroute);
    let respond_misroute_rate = rate(&is(Mode::Respond), &misroute);
    let respond_share = share(counts[0], n);
    let respond_overuse =
        if respond_misroute_rate >= RESPOND_MISROUTE_GATE { (respond_share - RESPOND_CEILING).max(0.0) } else { 0.0 };
    RoutingStats {
        decisions: n,
        modes,
        entropy,
        tie_break_rate: share(tie, n),
        labelled: labelled.len(),
        misroute_rate,
        clarify_miss_rate: rate(&|r| !is(Mode::Clarify)(r), &|l| l == "missed_clarify"),
        act_miss_rate: rate(&|r| !is(Mode::Act)(r), &|l| l == "missed_act"),
        under_engagement_rate: rate(&|_| true, &|l| l == "under_engagement"),
        respond_misroute_rate,
        respond_overuse,
        flags,
    }
}

/// The statistics of the 24 h before `now` (unix seconds): the one window `audit --stats`, the
/// F2 audit's stats tab and the regulator's cycle read, so they cannot disagree.
pub fn last_day(conn: &rusqlite::Connection, now: i64) -> Result<RoutingStats, crate::store::StoreError> {
    let day = crate::cognition::stability::routing::DAY_S;
    Ok(routing_stats(&crate::store::RoutingRepo(conn).between(now - day, now + 1)?))
}

/// The statistics as a few aligned lines (for `audit --stats`).
pub fn describe(s: &RoutingStats) -> String {
    let mut out = format!("{} routing decisions, {} with feedback\n", s.decisions, s.labelled);
    for m in &s.modes {
        out.push_str(&format!(
            "  {:<12} {:>4} {:>6.1} %  {:<16} healthy {}\n",
            m.mode.as_str(),
            m.count,
            m.percent,
            m.verdict,
            m.healthy
        ));
    }
    out.push_str(&format!(
        "entropy {:.2} (of log2 5)  tie-break {:.1} %  misroute {:.1} %  (missed clarify {:.1} %, missed act {:.1} %, under-engaged {:.1} %)\nRESPOND misroutes {:.1} %, overuse {:.3}",
        s.entropy,
        100.0 * s.tie_break_rate,
        100.0 * s.misroute_rate,
        100.0 * s.clarify_miss_rate,
        100.0 * s.act_miss_rate,
        100.0 * s.under_engagement_rate,
        100.0 * s.respond_misroute_rate,
        s.respond_overuse,
    ));
    for f in &s.flags {
        out.push_str(&format!("\n{f}"));
    }
    out
}

#[cfg(test)]
#[path = "stats_tests.rs"]
pub(crate) mod tests;
