//! Proof by replay for the routing stability regulator (docs/cognition.md §15.4).
//!
//! `cargo run --example routing_regulator_replay [-- LOG [--db FILE] [--days N]]` (28 days by default)
//!
//! The recorded session (default `tests/data/routing_learning_session.jsonl`: 45 threads, 180
//! user turns mixing under-asked questions, missed requests, chat and Q&A) is split by thread:
//! the even threads are the regulator's days (calibration), the odd threads are held out. Each
//! simulated day routes the calibration threads with the current weights (context grown per
//! exchange as `mode_distribution` grows it; the social filter first), labels every turn with
//! the feedback detector from the next message, stores the decisions and runs one regulator
//! cycle at the end of the day with an injected clock. Afterwards the held-out threads and the
//! labelled calibration sets are routed with the default and the final weights: misroutes per
//! label, turns that became misroutes, and labelled agreement. With `--db FILE` the cycles run
//! on that database, so `--replay LOG --rerun --weights-version N --db FILE` can replay them.
//! With `--score BEFORE AFTER` (two `--rerun --headless` outputs of LOG) it compares the modes
//! the real engine delivered instead, labelled the same way, per split. With `--from-published`
//! the days start from the seed's published weights (`clarify.dangling_reference` 0), stored
//! as a labelled version, and "before" means those weights.

use chalie::cognition::context::ContextSignals;
use chalie::cognition::regulator::{Exchange, FeedbackLabel, detect_feedback};
use chalie::cognition::router::calibration::{agreement, holdout_set, labelled_set};
use chalie::cognition::router::{Mode, RouterHistory, RouterSignals, RouterWeights, route};
use chalie::cognition::social::{SocialExit, social_filter};
use chalie::cognition::stability::Action;
use chalie::cognition::stability::routing::{DAY_S, run_cycle};
use chalie::store::{RouterWeightsRepo, RoutingRecord, RoutingRepo};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

const DEFAULT_LOG: &str = "tests/data/routing_learning_session.jsonl";
const DAYS: i64 = 28;
const T0: i64 = 1_800_000_000;

struct Turn {
    thread: usize,
    text: String,
}

/// One routed turn: its mode and what the next message says about it.
struct Routed {
    mode: Mode,
    tie: bool,
    /// The five scores (`{}` for a social exit).
    scores: Value,
    label: Option<FeedbackLabel>,
    /// The router's signals and the topic's previous mode, stored so the regulator's
    /// distribution veto can route the day again (`None` for a social exit: pre-routed).
    signals: Option<(Value, Option<Mode>)>,
}

fn route_threads(threads: &[Vec<&Turn>], w: &RouterWeights) -> Vec<Vec<Routed>> {
    threads
        .iter()
        .map(|turns| {
            let mut history = RouterHistory::new();
            let mut out: Vec<Routed> = Vec::new();
            for (i, t) in turns.iter().enumerate() {
                let (mode, tie, scores, signals) = match social_filter(&t.text) {
                    Some(SocialExit::Acknowledge) => (Mode::Acknowledge, false, json!({}), None),
                    Some(SocialExit::Ignore) => (Mode::Ignore, false, json!({}), None),
                    Some(SocialExit::Cancel) | None => {
                        let ctx = ContextSignals {
                            working_memory_turns: i.min(4),
                            gist_count: i.min(5),
                            fact_count: i / 2,
                            world_state_present: i >= 3,
                            topic_confidence: if i == 0 { 1.0 } else { 0.8 },
                            is_new_topic: i == 0,
                            session_exchange_count: i,
                            ..ContextSignals::default()
                        };
                        let signals = RouterSignals::from_text(&t.text, &ctx);
                        let state = history.state("topic");
                        let d = route(&signals, w, &state, true);
                        history.record("topic", &d);
                        let stored = serde_json::to_value(&signals).unwrap_or(Value::Null);
                        (
                            d.mode,
                            d.tiebreak.is_some(),
                            serde_json::to_value(d.scores).unwrap_or(Value::Null),
                            Some((stored, state.previous_mode)),
                        )
                    }
                };
                out.push(Routed { mode, tie, scores, label: None, signals });
            }
            for i in 0..turns.len().saturating_sub(1) {
                let fb =
                    detect_feedback(Exchange { user: &turns[i].text, mode: out[i].mode, next: &turns[i + 1].text });
                out[i].label = Some(fb.label);
            }
            out
        })
        .collect()
}

fn is_misroute(l: Option<FeedbackLabel>) -> bool {
    matches!(l, Some(FeedbackLabel::MissedClarify | FeedbackLabel::MissedAct | FeedbackLabel::UnderEngagement))
}

fn tally(routed: &[Vec<Routed>]) -> (BTreeMap<&'static str, usize>, BTreeMap<Mode, usize>, usize) {
    let mut labels = BTreeMap::new();
    let mut modes = BTreeMap::new();
    let mut n = 0;
    for r in routed.iter().flatten() {
        n += 1;
        *modes.entry(r.mode).or_default() += 1;
        if is_misroute(r.label) {
            *labels.entry(r.label.map_or("-", FeedbackLabel::as_str)).or_default() += 1;
        }
    }
    (labels, modes, n)
}

fn report(name: &str, before: &[Vec<Routed>], after: &[Vec<Routed>]) {
    let (lb, mb, n) = tally(before);
    let (la, ma, _) = tally(after);
    let total = |m: &BTreeMap<&str, usize>| m.values().sum::<usize>();
    println!("\n== {name}: {n} turns");
    println!("   misroutes before {} {:?}", total(&lb), lb);
    println!("   misroutes after  {} {:?}", total(&la), la);
    let (mut fixed, mut new) = (0, 0);
    for (b, a) in before.iter().flatten().zip(after.iter().flatten()) {
        match (is_misroute(b.label), is_misroute(a.label)) {
            (true, false) => fixed += 1,
            (false, true) => new += 1,
            _ => {}
        }
    }
    println!("   turns no longer misrouted {fixed}, newly misrouted {new}");
    let modes = |m: &BTreeMap<Mode, usize>| {
        Mode::ALL.iter().map(|k| format!("{} {}", k.as_str(), m.get(k).copied().unwrap_or(0))).collect::<Vec<_>>()
    };
    println!("   modes before {:?}\n   modes after  {:?}", modes(&mb), modes(&ma));
}

/// Every turn misrouted before or after, with its modes and scores, for reading the proof.
fn list_misroutes(name: &str, threads: &[Vec<&Turn>], before: &[Vec<Routed>], after: &[Vec<Routed>]) {
    println!("\n-- misrouted turns, {name} (before → after)");
    for (turns, (b, a)) in threads.iter().zip(before.iter().zip(after)) {
        for (i, t) in turns.iter().enumerate() {
            if is_misroute(b[i].label) || is_misroute(a[i].label) {
                let l = |r: &Routed| r.label.map_or("-", FeedbackLabel::as_str);
                println!(
                    "   t{:02}.{i} {} {} → {} {}: {:?} {}",
                    t.thread,
                    b[i].mode.as_str(),
                    l(&b[i]),
                    a[i].mode.as_str(),
                    l(&a[i]),
                    t.text,
                    a[i].scores
                );
            }
        }
    }
}

/// Misroutes of `after` against `before`: (total, no longer misrouted, newly misrouted).
fn compare(before: &[Vec<Routed>], after: &[Vec<Routed>]) -> (usize, usize, usize) {
    let (mut total, mut fixed, mut new) = (0, 0, 0);
    for (b, a) in before.iter().flatten().zip(after.iter().flatten()) {
        total += usize::from(is_misroute(a.label));
        match (is_misroute(b.label), is_misroute(a.label)) {
            (true, false) => fixed += 1,
            (false, true) => new += 1,
            _ => {}
        }
    }
    (total, fixed, new)
}

/// One parameter from 0 to 0.5 by 0.025 over the defaults: misroutes on the calibration
/// (even) and held-out (odd) threads, and labelled agreement on the even and odd items of the
/// tuning set and on the holdout set. Choose on the even columns, report the odd ones.
fn sweep(name: &str, calibration: &[Vec<&Turn>], held_out: &[Vec<&Turn>]) -> anyhow::Result<()> {
    let mut base = RouterWeights::default();
    base.set(name, 0.0)?;
    let (even, odd): (Vec<_>, Vec<_>) = labelled_set().into_iter().enumerate().partition(|(i, _)| i % 2 == 0);
    let even: Vec<_> = even.into_iter().map(|(_, x)| x).collect();
    let odd: Vec<_> = odd.into_iter().map(|(_, x)| x).collect();
    let holdout = holdout_set();
    let (cal0, held0) = (route_threads(calibration, &base), route_threads(held_out, &base));
    println!(
        "{name}: calibration misroutes (fixed/new) | labelled even | held-out misroutes (fixed/new) | labelled odd | holdout"
    );
    for k in 0..=20 {
        let v = f64::from(k) * 0.025;
        let mut w = base;
        w.set(name, v)?;
        let (c, cf, cn) = compare(&cal0, &route_threads(calibration, &w));
        let (h, hf, hn) = compare(&held0, &route_threads(held_out, &w));
        let (ae, ne, _) = agreement(&w, &even);
        let (ao, no, _) = agreement(&w, &odd);
        let (ah, nh, _) = agreement(&w, &holdout);
        println!("  {v:.3}: {c:>2} ({cf}/{cn}) | {ae}/{ne} | {h:>2} ({hf}/{hn}) | {ao}/{no} | {ah}/{nh}");
    }
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let log_path = args
        .iter()
        .enumerate()
        .find(|(i, a)| {
            !a.starts_with("--") && (*i == 0 || !["--db", "--days", "--sweep"].contains(&args[i - 1].as_str()))
        })
        .map(|(_, a)| a.clone())
        .unwrap_or_else(|| DEFAULT_LOG.to_string());
    let db_path = args.iter().position(|a| a == "--db").and_then(|i| args.get(i + 1)).cloned();
    let days: i64 = match args.iter().position(|a| a == "--days").and_then(|i| args.get(i + 1)) {
        Some(d) => d.parse()?,
        None => DAYS,
    };
    let log = chalie::session::read_log(std::path::Path::new(&log_path))?;
    let recorded = chalie::session::recorded_turns(&log);
    let mut by_thread: BTreeMap<String, usize> = BTreeMap::new();
    let turns: Vec<Turn> = recorded
        .iter()
        .map(|t| {
            let next = by_thread.len();
            Turn { thread: *by_thread.entry(t.thread_id.clone()).or_insert(next), text: t.text.clone() }
        })
        .collect();
    let mut threads: Vec<Vec<&Turn>> = vec![Vec::new(); by_thread.len()];
    for t in &turns {
        threads[t.thread].push(t);
    }
    let (calibration, held_out): (Vec<_>, Vec<_>) = threads.into_iter().enumerate().partition(|(i, _)| i % 2 == 0);
    let calibration: Vec<Vec<&Turn>> = calibration.into_iter().map(|(_, t)| t).collect();
    let held_out: Vec<Vec<&Turn>> = held_out.into_iter().map(|(_, t)| t).collect();
    println!(
        "{} turns in {} threads: calibration {} threads, held out {} threads",
        turns.len(),
        by_thread.len(),
        calibration.len(),
        held_out.len()
    );

    if let Some(i) = args.iter().position(|a| a == "--score") {
        let read = |k: usize| -> anyhow::Result<Vec<Mode>> {
            let path = args.get(i + k).ok_or_else(|| anyhow::anyhow!("--score BEFORE AFTER"))?;
            std::fs::read_to_string(path)?
                .lines()
                .map(|l| {
                    let v: Value = serde_json::from_str(l)?;
                    v["mode"].as_str().unwrap_or("").parse::<Mode>().map_err(anyhow::Error::msg)
                })
                .collect()
        };
        let (before, after) = (read(1)?, read(2)?);
        anyhow::ensure!(before.len() == turns.len() && after.len() == turns.len(), "one line per turn of LOG");
        for (name, keep) in [("calibration threads (rerun)", 0), ("held-out threads (rerun)", 1)] {
            let pick = |modes: &[Mode]| -> Vec<Vec<Routed>> {
                let mut per: BTreeMap<usize, Vec<(usize, Mode)>> = BTreeMap::new();
                for (k, t) in turns.iter().enumerate() {
                    if t.thread % 2 == keep {
                        per.entry(t.thread).or_default().push((k, modes[k]));
                    }
                }
                per.values()
                    .map(|ts| {
                        (0..ts.len())
                            .map(|j| {
                                let (k, mode) = ts[j];
                                let label = ts.get(j + 1).map(|&(n, _)| {
                                    detect_feedback(Exchange { user: &turns[k].text, mode, next: &turns[n].text }).label
                                });
                                Routed { mode, tie: false, scores: Value::Null, label, signals: None }
                            })
                            .collect()
                    })
                    .collect()
            };
            report(name, &pick(&before), &pick(&after));
        }
        return Ok(());
    }

    if let Some(i) = args.iter().position(|a| a == "--sweep") {
        let name = args.get(i + 1).ok_or_else(|| anyhow::anyhow!("--sweep PARAM"))?;
        sweep(name, &calibration, &held_out)?;
        return Ok(());
    }

    let conn = match &db_path {
        Some(p) => chalie::store::open(std::path::Path::new(p))?,
        None => chalie::store::open_in_memory()?,
    };
    // With `--from-published` the days start from the seed's published weights (no
    // dangling-reference term), stored first as their own version (author `replay-start`), so
    // the regulator has to learn the term the defaults ship with.
    let mut defaults = RouterWeights::default();
    if args.iter().any(|a| a == "--from-published") {
        defaults.set("clarify.dangling_reference", 0.0)?;
        defaults.version += 1;
        let reason = "replay start: the seed's published weights, clarify.dangling_reference 0";
        RouterWeightsRepo(&conn).insert(
            defaults.version,
            &serde_json::to_string(&defaults)?,
            "replay-start",
            reason,
            T0,
        )?;
        println!("start: router weights v{} (author replay-start): {reason}", defaults.version);
    }
    let mut weights = defaults;
    let bounds: Vec<_> = RouterWeights::bounds().to_vec();
    for day in 0..days {
        let routed = route_threads(&calibration, &weights);
        let start = T0 + day * DAY_S;
        let repo = RoutingRepo(&conn);
        for (k, r) in routed.iter().flatten().enumerate() {
            let record = RoutingRecord {
                id: format!("d{day}-{k}"),
                thread_id: None,
                topic: "replay".into(),
                exchange_id: None,
                selected_mode: r.mode.as_str().into(),
                router_confidence: None,
                scores: r.scores.clone(),
                pre_routed: r.signals.is_none(),
                tiebreaker_used: false,
                tiebreaker_candidates: r.tie.then(|| json!(["RESPOND", "CLARIFY"])),
                margin: None,
                effective_margin: None,
                signal_snapshot: r.signals.as_ref().map_or(Value::Null, |(s, _)| s.clone()).into(),
                weight_snapshot: None,
                weights_version: Some(i64::from(weights.version)),
                routing_time_ms: None,
                fallback: None,
                reasoning: None,
                feedback: r.label.map(|l| json!({"label": l.as_str()})),
                reflection: None,
                previous_mode: r.signals.as_ref().and_then(|(_, p)| p.map(|m| m.as_str().to_string())),
                created_at: start + 60 * k as i64,
                regulator: None,
                adaptive: None,
            };
            repo.insert(&record)?;
        }
        let cycle = run_cycle(&conn, &BTreeSet::new(), start + DAY_S - 60, false)?;
        let acts: Vec<String> = cycle
            .plan
            .actions
            .iter()
            .map(|a| match a {
                Action::Adjust { param, old, new, pressure, value, .. } => {
                    format!("{param} {old:.3}→{new:.3} ({pressure} {value:.3})")
                }
                Action::Revert { param, from, to, pressure, before, after, .. } => {
                    format!("REVERT {param} {from:.3}→{to:.3} ({pressure} {before:.3}→{after:.3})")
                }
                Action::Keep { pressure, before, after, .. } => format!("keep ({pressure} {before:.3}→{after:.3})"),
            })
            .collect();
        println!(
            "day {day:>2}: misroute {:.3} (clarify {:.3}, act {:.3}, more {:.3}), tie {:.3}, entropy {:.3}; {}",
            cycle.stats.misroute_rate,
            cycle.stats.clarify_miss_rate,
            cycle.stats.act_miss_rate,
            cycle.stats.under_engagement_rate,
            cycle.stats.tie_break_rate,
            cycle.stats.entropy,
            if acts.is_empty() {
                cycle.plan.skipped.first().map_or_else(|| "no change".to_string(), |s| format!("no change: {s}"))
            } else {
                acts.join("; ")
            }
        );
        if let Some(v) = RouterWeightsRepo(&conn).latest()? {
            weights = serde_json::from_str(&v.weights)?;
        }
        weights.validate().map_err(anyhow::Error::msg)?;
        for b in &bounds {
            let v = weights.get(b.name).unwrap_or(f64::NAN);
            anyhow::ensure!((b.min..=b.max).contains(&v), "{} = {v} left its bounds", b.name);
        }
    }
    println!("\nfinal weights v{}; moved from the start:", weights.version);
    for name in RouterWeights::PARAMS {
        let (a, b) = (defaults.get(name).unwrap_or(0.0), weights.get(name).unwrap_or(0.0));
        if (a - b).abs() > 1e-9 {
            println!("   {name}: {a:.3} → {b:.3}");
        }
    }
    if args.iter().any(|a| a == "--list") {
        for (name, set) in [("calibration", &calibration), ("held out", &held_out)] {
            list_misroutes(name, set, &route_threads(set, &defaults), &route_threads(set, &weights));
        }
    }
    report("calibration threads", &route_threads(&calibration, &defaults), &route_threads(&calibration, &weights));
    report("held-out threads", &route_threads(&held_out, &defaults), &route_threads(&held_out, &weights));
    for (name, set) in [("labelled set", labelled_set()), ("holdout set", holdout_set())] {
        let (b, n, _) = agreement(&defaults, &set);
        let (a, _, _) = agreement(&weights, &set);
        println!("\n== {name}: agreement {b}/{n} before, {a}/{n} after");
    }
    Ok(())
}
