//! Mode distribution of the deterministic router on realistic conversations, against the healthy
//! ranges of docs/cognition.md §6.8, for the calibrated defaults and the published weights; plus the
//! agreement of each weight set with the labelled calibration sets.
//!
//! `cargo run --example mode_distribution [-- PATH/first_turns.jsonl]`
//!
//! The 2,026 first user turns of the chatterbot corpus (21 categories) are replayed as sessions:
//! each session is 1–3 topic segments, each segment 2–5 consecutive messages of one category
//! (deterministic RNG, seed 20260521). Context grows the way Phase A would grow it: working memory
//! gains an entry per exchange (max 4) and survives topic switches; on the current topic, real
//! gists grow one per earlier exchange (max 5), facts one per two exchanges, world state appears
//! after three. Each topic keeps its own router history (previous mode, last 3 confidences).
//! Tie-breaks are counted but not run (the higher score is delivered, as on a model failure).

use std::collections::BTreeMap;

use chalie::cognition::context::ContextSignals;
use chalie::cognition::router::calibration::{Labelled, agreement, holdout_set, labelled_set, tiebreak_rate};
use chalie::cognition::router::{HealthyRange, Mode, RouterHistory, RouterSignals, RouterState, RouterWeights, route};
use chalie::cognition::social::{SocialExit, social_filter};

const DEFAULT_PATH: &str = "/work/shared/data/chatterbot/first_turns.jsonl";

struct Turn {
    session: usize,
    category: String,
    text: String,
}

/// Sessions of 1–3 segments; segments of 2–5 consecutive messages of one category.
fn sessions(rows: Vec<(String, String)>) -> Vec<Turn> {
    let mut by_cat: BTreeMap<String, std::collections::VecDeque<String>> = BTreeMap::new();
    for (cat, text) in rows {
        by_cat.entry(cat).or_default().push_back(text);
    }
    let mut rng = chalie::SplitMix64(20_260_521);
    let mut out = Vec::new();
    let mut session = 0;
    loop {
        let remaining: usize = by_cat.values().map(|q| q.len()).sum();
        if remaining == 0 {
            break;
        }
        for _ in 0..1 + rng.below(3) {
            // Pick a category weighted by what is left.
            let remaining: usize = by_cat.values().map(|q| q.len()).sum();
            if remaining == 0 {
                break;
            }
            let mut pick = rng.below(remaining);
            let cat = by_cat
                .iter()
                .find(|(_, q)| {
                    if pick < q.len() {
                        true
                    } else {
                        pick -= q.len();
                        false
                    }
                })
                .map(|(c, _)| c.clone())
                .expect("a category with messages left");
            let queue = by_cat.get_mut(&cat).expect("picked category");
            for _ in 0..2 + rng.below(4) {
                let Some(text) = queue.pop_front() else { break };
                out.push(Turn { session, category: cat.clone(), text });
            }
        }
        session += 1;
    }
    out
}

#[derive(Default)]
struct Tally {
    modes: BTreeMap<Mode, usize>,
    social: BTreeMap<&'static str, usize>,
    tiebreaks: usize,
    total: usize,
    per_category: BTreeMap<String, BTreeMap<Mode, usize>>,
}

fn run(turns: &[Turn], weights: &RouterWeights) -> Tally {
    let mut t = Tally::default();
    let mut history = RouterHistory::new();
    let (mut session, mut wm, mut topic, mut on_topic) = (usize::MAX, 0usize, String::new(), 0usize);
    for turn in turns {
        if turn.session != session {
            session = turn.session;
            wm = 0;
            topic.clear();
        }
        let key = format!("s{}/{}", turn.session, turn.category);
        let is_new_topic = key != topic;
        if is_new_topic {
            topic = key.clone();
            on_topic = 0;
        }
        let ctx = ContextSignals {
            working_memory_turns: wm.min(4),
            gist_count: on_topic.min(5),
            fact_count: on_topic / 2,
            world_state_present: on_topic >= 3,
            fok_score: 0.0,
            topic_confidence: if is_new_topic { 1.0 } else { 0.8 },
            is_new_topic,
            session_exchange_count: wm,
            ..ContextSignals::default()
        };
        let signals = RouterSignals::from_text(&turn.text, &ctx);
        let decision = route(&signals, weights, &history.state(&topic), true);
        history.record(&topic, &decision);
        t.total += 1;
        t.tiebreaks += usize::from(decision.tiebreak.is_some());
        *t.modes.entry(decision.mode).or_default() += 1;
        *t.per_category.entry(turn.category.clone()).or_default().entry(decision.mode).or_default() += 1;
        let social = match social_filter(&turn.text) {
            Some(SocialExit::Acknowledge) => "ACKNOWLEDGE",
            Some(SocialExit::Cancel) => "CANCEL",
            Some(SocialExit::Ignore) => "IGNORE",
            None => "-",
        };
        *t.social.entry(social).or_default() += 1;
        wm += 1;
        on_topic += 1;
    }
    t
}

fn print_distribution(name: &str, t: &Tally) {
    println!("\n== {name}: {} messages, tie-break requested on {:.1} %", t.total, pct(t.tiebreaks, t.total));
    println!("   {:<12} {:>6} {:>8}   {:<30} verdict", "mode", "count", "share", "healthy (cognition.md §6.8)");
    for mode in Mode::ALL {
        let n = t.modes.get(&mode).copied().unwrap_or(0);
        let p = pct(n, t.total);
        let range = HealthyRange::of(mode);
        let verdict = range.verdict(p);
        println!("   {:<12} {:>6} {:>7.1} %   {:<30} {verdict}", mode.as_str(), n, p, range.label);
    }
}

/// Expected × delivered for the calibrated defaults on one labelled set (no tie-break).
fn print_confusion(set_name: &str, set: &[Labelled]) {
    let mut m: BTreeMap<(Mode, Mode), usize> = BTreeMap::new();
    for x in set {
        let signals = RouterSignals::from_text(x.text, &x.context);
        let state = RouterState { previous_mode: x.previous_mode, recent_confidences: Vec::new() };
        *m.entry((x.expected, route(&signals, &RouterWeights::default(), &state, false).mode)).or_default() += 1;
    }
    let clarify: usize = Mode::ALL.iter().map(|e| m.get(&(*e, Mode::Clarify)).copied().unwrap_or(0)).sum();
    println!(
        "\n   {set_name}, calibrated defaults: CLARIFY delivered {:.1} % ({clarify}/{}); rows expected, columns delivered",
        pct(clarify, set.len()),
        set.len()
    );
    println!("     {:<12}{}", "", Mode::ALL.iter().map(|g| format!("{:>12}", g.as_str())).collect::<String>());
    for e in Mode::ALL {
        let row: String = Mode::ALL.iter().map(|g| format!("{:>12}", m.get(&(e, *g)).copied().unwrap_or(0))).collect();
        println!("     {:<12}{row}", e.as_str());
    }
}

fn pct(n: usize, total: usize) -> f64 {
    100.0 * n as f64 / total.max(1) as f64
}

fn main() {
    let path = std::env::args().nth(1).unwrap_or_else(|| DEFAULT_PATH.to_string());

    println!("== labelled calibration sets (routing without tie-break: the higher score wins)");
    let weight_sets = [
        ("calibrated defaults", RouterWeights::default()),
        ("published defaults (cognition.md §6.3)", RouterWeights::published()),
        ("published config (cognition.md §6.3)", RouterWeights::published_config()),
    ];
    for (set_name, set) in [("tuning set", labelled_set()), ("holdout set", holdout_set())] {
        let respond_share = set.iter().filter(|x| x.expected == Mode::Respond).count();
        println!(
            "   {set_name} ({} messages): always-RESPOND baseline {:.1} %",
            set.len(),
            pct(respond_share, set.len())
        );
        for (name, w) in &weight_sets {
            let (ok, n, _) = agreement(w, &set);
            println!(
                "     {name:<28} agreement {:>5.1} % ({ok}/{n}), tie-break requested {:.1} %",
                pct(ok, n),
                100.0 * tiebreak_rate(w, &set)
            );
        }
        print_confusion(set_name, &set);
    }

    let data = match std::fs::read_to_string(&path) {
        Ok(d) => d,
        Err(e) => {
            println!("\n(cannot read {path}: {e}; skipping the corpus distribution)");
            return;
        }
    };
    let rows: Vec<(String, String)> = data
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| Some((v["category"].as_str()?.to_string(), v["text"].as_str()?.to_string())))
        .collect();
    let turns = sessions(rows);
    let sessions_n = turns.last().map_or(0, |t| t.session + 1);
    println!("\n== corpus: {path}: {} messages in {sessions_n} sessions", turns.len());

    let mine = run(&turns, &RouterWeights::default());
    print_distribution("router, calibrated defaults", &mine);
    let published = run(&turns, &RouterWeights::published());
    print_distribution("router, published defaults", &published);

    println!("\n== social filter in front of the router (calibrated defaults)");
    for (k, n) in &mine.social {
        let label = if *k == "-" { "not social (triage/router)" } else { k };
        println!("   {label:<28} {n:>6} {:>7.1} %", pct(*n, mine.total));
    }

    println!("\n== per category, calibrated defaults (share of RESPOND / CLARIFY / ACT / ACKNOWLEDGE / IGNORE)");
    for (cat, modes) in &mine.per_category {
        let total: usize = modes.values().sum();
        let cells: Vec<String> =
            Mode::ALL.iter().map(|m| format!("{:>5.1}", pct(modes.get(m).copied().unwrap_or(0), total))).collect();
        println!("   {cat:<14} n={total:<5} {}", cells.join(" "));
    }
}
