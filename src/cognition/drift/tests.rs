use super::actions::{self, Action, Inputs, Kind};
use super::comm::{self, CommState};
use super::cycle::{self, Front, Snapshot};
use super::gate::{self, Conditions, Skip};
use super::schedule;
use super::seed::{self, Concept, Episode, Pool, Strategy};
use super::synth;
use crate::SplitMix64;
use crate::memory::graph::{Edge, Graph, Node};
use std::collections::HashMap;

const NOW: i64 = 1_800_000_000;

fn ok_conditions() -> Conditions {
    Conditions { last_episode_at: Some(NOW - 3600), richness: 0.5, ..Conditions::default() }
}

#[test]
fn every_skip_reason() {
    assert_eq!(gate::skip_reason(&ok_conditions(), NOW), None);
    let cases: Vec<(Conditions, Skip)> = vec![
        (Conditions { turn_in_flight: true, ..ok_conditions() }, Skip::TurnInFlight),
        (Conditions { busy_queues: vec!["chunk".into()], ..ok_conditions() }, Skip::QueueBusy("chunk".into())),
        (Conditions { last_episode_at: None, ..ok_conditions() }, Skip::NoRecentEpisode),
        (Conditions { last_episode_at: Some(NOW - 169 * 3600), ..ok_conditions() }, Skip::NoRecentEpisode),
        (Conditions { richness: 0.09, ..ok_conditions() }, Skip::Poor { richness: 0.09 }),
        (Conditions { in_focus: true, ..ok_conditions() }, Skip::Focus),
        (
            Conditions { fatigue: vec![(NOW - 60, 1.0), (NOW - 600, 0.9), (NOW - 1000, 0.6)], ..ok_conditions() },
            Skip::Fatigued { spent: 2.5 },
        ),
    ];
    for (c, want) in cases {
        let got = gate::skip_reason(&c, NOW);
        match (&got, &want) {
            (Some(Skip::Fatigued { spent: a }), Skip::Fatigued { spent: b }) => assert!((a - b).abs() < 1e-9),
            _ => assert_eq!(got.as_ref(), Some(&want)),
        }
    }
    // Fatigue outside the 30-minute window does not count.
    let old = Conditions { fatigue: vec![(NOW - 1801, 5.0), (NOW - 60, 2.4)], ..ok_conditions() };
    assert_eq!(gate::skip_reason(&old, NOW), None);
}

fn concept(id: i64, name: &str, strength: f64, sources: Vec<i64>) -> Concept {
    Concept { id, name: name.into(), strength, confidence: 0.6, last_reinforced_at: NOW - id, sources }
}

/// Seed 1 with one neighbour 2 over an edge of `strength`.
fn snapshot(strength: f64) -> Snapshot {
    let pool = Pool {
        concepts: vec![
            concept(1, "coffee", 1.0, vec![10]),
            Concept { confidence: 0.3, ..concept(2, "mornings", 1.5, vec![10]) },
        ],
        episodes: vec![Episode {
            id: 10,
            gist: "User talked about coffee before early mornings".into(),
            topic: Some("routine".into()),
            salience: 7.0,
            created_at: NOW - 7200,
        }],
        interval_s: 300,
        ..Pool::default()
    };
    Snapshot {
        conditions: ok_conditions(),
        pool,
        graph: std::sync::Arc::new(Graph::new(
            vec![Node::new(1, "coffee"), Node::new(2, "mornings")],
            &[Edge { id: 100, source: 1, target: 2, weight: strength, both: false }],
        )),
        cooldowns: HashMap::new(),
        self_items: vec![],
    }
}

#[test]
fn the_energy_gate_rejects_a_weak_neighbourhood_and_passes_a_strong_one() {
    // 0.7 × 0.55 = 0.385: the seed's own 1.0 must not open the gate.
    let weak = cycle::seeded(&snapshot(0.55), NOW, &mut SplitMix64(1), Some(Strategy::Random));
    match weak {
        Front::Skipped(Skip::Weak { energy }) => assert!((energy - 0.385).abs() < 1e-9, "{energy}"),
        other => panic!("{other:?}"),
    }
    // 0.7 × 0.9 = 0.63 > 0.4.
    let strong = cycle::seeded(&snapshot(0.9), NOW, &mut SplitMix64(1), Some(Strategy::Random));
    let Front::Ready(r) = strong else { panic!("{strong:?}") };
    assert!((r.energy - 0.63).abs() < 1e-9);
    assert_eq!(r.top.iter().map(|t| t.1.as_str()).collect::<Vec<_>>(), ["mornings"]);
    assert_eq!(r.grounding.map(|e| e.id), Some(10));
    assert_eq!(gate::energy(&[(1, 1.0)], 1), 0.0, "a lone seed has no energy");
}

/// Drift reads the turn's integrate-and-fire: a node past a neighbour that fires is reached
/// (with that neighbour's leaked energy), one past a neighbour that does not is not, and an
/// inhibited one never counts however much it got first.
#[test]
fn drift_energy_is_the_graphs_drive_scaled_by_the_hop() {
    let e = |id, source, target, weight| Edge { id, source, target, weight, both: false };
    let nodes = (1..=6).map(|i| Node::new(i, format!("n{i}"))).collect();
    let g = Graph::new(nodes, &[e(1, 1, 2, 1.5), e(2, 2, 3, 0.7), e(3, 1, 4, 0.5), e(4, 4, 5, 0.9), e(5, 1, 6, -0.3)]);
    let got: HashMap<i64, f64> = super::activate(1, &g).into_iter().collect();
    let near = |id: i64, want: f64| assert!((got[&id] - want).abs() < 1e-9, "{id}: {} vs {want}", got[&id]);
    near(1, 0.7);
    near(2, 0.7); // fired: drive capped at 1
    near(3, 0.7 * 0.7 * 1.35); // 1.5 leaked to 1.35 before it fired
    near(4, 0.7 * 0.5);
    assert!(!got.contains_key(&5), "beyond a node that did not fire");
    assert!(!got.contains_key(&6), "inhibited");
    assert!(super::activate(99, &g).is_empty(), "an unknown seed reaches nothing");
}

/// The template names consolidated concepts before probationary or sentence-like grown ones,
/// whatever their energy.
#[test]
fn the_template_prefers_consolidated_concepts() {
    let mut s = snapshot(0.9);
    // Unlikely seeds (confidence < 0.4): the random draw seeds coffee.
    let low = |id, name| Concept { confidence: 0.3, ..concept(id, name, 1.0, vec![10]) };
    s.pool.concepts.push(low(3, "the user said the early train is always late"));
    s.pool.concepts.push(low(4, "tea"));
    let mut probation = Node::new(4, "tea");
    probation.probation = true;
    let e = |id, target, weight| Edge { id, source: 1, target, weight, both: false };
    s.graph = std::sync::Arc::new(Graph::new(
        vec![
            Node::new(1, "coffee"),
            Node::new(2, "mornings"),
            Node::new(3, "the user said the early train is always late"),
            probation,
        ],
        &[e(100, 2, 0.7), e(101, 3, 0.95), e(102, 4, 0.9)],
    ));
    let f = cycle::seeded(&s, NOW, &mut SplitMix64(1), Some(Strategy::Random));
    let Front::Ready(r) = f else { panic!("{f:?}") };
    assert_eq!(r.top[0].1, "the user said the early train is always late", "strongest first in the report");
    assert_eq!(r.for_template, ["mornings", "the user said the early train is always late", "tea"]);
    let t = synth::template(&r.seed_name, &r.for_template, r.energy, None);
    assert!(t.content.starts_with("coffee and mornings"), "{}", t.content);
}

#[test]
fn cooldowns_pass_over_seeds_and_drop_activated_concepts() {
    let mut s = snapshot(0.9);
    s.cooldowns.insert(2, NOW + 60);
    let f = cycle::seeded(&s, NOW, &mut SplitMix64(3), Some(Strategy::Decaying));
    // Concept 2 (the only other) is cooling: as a seed it is passed over, as a neighbour dropped.
    assert!(matches!(f, Front::Skipped(Skip::NothingLeft | Skip::Weak { .. } | Skip::NoSeed { .. })), "{f:?}");
    s.cooldowns.insert(1, NOW + 60);
    assert_eq!(seed::choose(&s.pool, &s.cooldowns, NOW, &mut SplitMix64(3), None), Err(seed::RETRIES + 1));
    s.cooldowns.clear();
    s.cooldowns.insert(1, NOW - 1);
    assert!(seed::choose(&s.pool, &s.cooldowns, NOW, &mut SplitMix64(3), Some(Strategy::Random)).is_ok());
}

#[test]
fn strategies_draw_from_their_sources() {
    let s = snapshot(0.9);
    let mut rng = SplitMix64(9);
    // Decaying: 0.2 < strength < 2.0, weakest first.
    assert_eq!(seed::candidates(Strategy::Decaying, &s.pool, NOW, &mut rng), [1, 2]);
    // Recent: concepts from the chosen episode, strongest first.
    assert_eq!(seed::candidates(Strategy::Recent, &s.pool, NOW, &mut rng), [2, 1]);
    // Salient: concepts named in the episode's gist.
    assert_eq!(seed::candidates(Strategy::Salient, &s.pool, NOW, &mut rng), [2, 1]);
    // Insight needs a topic with ≥ 3 interactions, and not more often than 5 intervals.
    assert!(seed::candidates(Strategy::Insight, &s.pool, NOW, &mut rng).is_empty());
    let mut p = s.pool.clone();
    p.topics = vec![("routine".into(), 3)];
    assert_eq!(seed::candidates(Strategy::Insight, &p, NOW, &mut rng), [2, 1]);
    p.last_insight_at = Some(NOW - 1000);
    assert!(seed::candidates(Strategy::Insight, &p, NOW, &mut rng).is_empty());
    // Temporal: episodes at this hour on an earlier day.
    p.episodes[0].created_at = NOW - 86_400;
    assert_eq!(seed::candidates(Strategy::Temporal, &p, NOW, &mut rng), [2, 1]);
    // The weights sum to one and the draw is deterministic for a seed.
    assert!((seed::WEIGHTS.iter().map(|w| w.1).sum::<f64>() - 1.0).abs() < 1e-9);
    let a: Vec<_> = (0..20).map(|i| seed::draw_strategy(&mut SplitMix64(i))).collect();
    let b: Vec<_> = (0..20).map(|i| seed::draw_strategy(&mut SplitMix64(i))).collect();
    assert_eq!(a, b);
}

#[test]
fn self_reflection_needs_items() {
    let mut s = snapshot(0.9);
    let none = (0..50)
        .filter(|&i| matches!(cycle::front(&s, NOW, &mut SplitMix64(i), None), Front::SelfReflection(_)))
        .count();
    assert_eq!(none, 0);
    s.self_items = vec!["3 open contradictions".into()];
    let some = (0..200)
        .filter(|&i| matches!(cycle::front(&s, NOW, &mut SplitMix64(i), None), Front::SelfReflection(_)))
        .count();
    assert!((20..80).contains(&some), "about 20 % of 200: {some}");
}

fn inputs() -> Inputs {
    Inputs {
        now: NOW,
        kind: Kind::Question,
        energy: 0.63,
        relevance: 0.8,
        novelty: 1.0,
        idle_s: Some(3600),
        comm: CommState::default(),
        strong_signals: 1,
        active_tasks: 0,
        last_plan_at: None,
        tool_hint: None,
        tool_suggested_at: None,
        thread_open: false,
        same_kind_reflected: 0,
        fatigue_fraction: 0.0,
        last_reconcile_at: None,
    }
}

fn rejected(i: &Inputs, a: Action) -> Option<String> {
    actions::route(i).1.into_iter().find(|s| s.action == a.name()).and_then(|s| s.rejected_by)
}

#[test]
fn each_action_has_its_gates() {
    let i = inputs();
    let (chosen, scores) = actions::route(&i);
    // 0.63 × 1.3 × 0.8 = 0.655 beats SEED_THREAD's 0.504 and REFLECT's 0.454.
    assert_eq!(chosen, Action::Communicate, "{scores:?}");
    assert_eq!(scores[0].action, "COMMUNICATE");
    assert!(rejected(&i, Action::Nothing).is_none());
    // COMMUNICATE: relevance, novelty, idle window, breaker, backoff.
    assert!(rejected(&Inputs { relevance: 0.3, ..inputs() }, Action::Communicate).unwrap().contains("relevance"));
    assert!(rejected(&Inputs { novelty: 0.6, ..inputs() }, Action::Communicate).unwrap().contains("novelty"));
    assert!(rejected(&Inputs { idle_s: Some(60), ..inputs() }, Action::Communicate).unwrap().contains("idle"));
    let paused = CommState { paused_until: Some(NOW + 1), ..CommState::default() };
    assert!(rejected(&Inputs { comm: paused, ..inputs() }, Action::Communicate).unwrap().contains("breaker"));
    let backing = CommState { last_sent_at: Some(NOW - 1800), level: 1, ..CommState::default() };
    assert!(rejected(&Inputs { comm: backing, ..inputs() }, Action::Communicate).unwrap().contains("backoff"));
    // SUGGEST needs a tool.
    assert!(rejected(&i, Action::Suggest).is_some());
    let hinted = Inputs { tool_hint: Some("reminder".into()), ..inputs() };
    assert!(rejected(&hinted, Action::Suggest).is_none());
    // Once per tool per 12 h.
    let again = Inputs { tool_suggested_at: Some(NOW - 11 * 3600), ..hinted.clone() };
    assert_eq!(rejected(&again, Action::Suggest).as_deref(), Some("12 h cooldown on reminder"));
    assert!(rejected(&Inputs { tool_suggested_at: Some(NOW - 12 * 3600), ..hinted }, Action::Suggest).is_none());
    // NURTURE: only after a day away.
    assert!(rejected(&i, Action::Nurture).is_some());
    assert!(rejected(&Inputs { idle_s: Some(90_000), ..inputs() }, Action::Nurture).is_none());
    // PLAN: activation ≥ 0.7, ≥ 2 signals, ≤ 5 tasks, 48 h cooldown.
    let plan = Inputs { energy: 0.8, strong_signals: 2, ..inputs() };
    assert!(rejected(&plan, Action::Plan).is_none());
    assert!(rejected(&Inputs { energy: 0.6, ..plan.clone() }, Action::Plan).is_some());
    assert!(rejected(&Inputs { strong_signals: 1, ..plan.clone() }, Action::Plan).is_some());
    assert!(rejected(&Inputs { active_tasks: 5, ..plan.clone() }, Action::Plan).is_some());
    assert!(rejected(&Inputs { last_plan_at: Some(NOW - 3600), ..plan }, Action::Plan).is_some());
    // SEED_THREAD: a question, no open thread on the seed.
    assert!(rejected(&i, Action::SeedThread).is_none());
    assert!(rejected(&Inputs { kind: Kind::Insight, ..inputs() }, Action::SeedThread).is_some());
    assert!(rejected(&Inputs { thread_open: true, ..inputs() }, Action::SeedThread).is_some());
    // REFLECT: energy, novelty, fatigue.
    assert!(rejected(&i, Action::Reflect).is_none());
    assert!(rejected(&Inputs { energy: 0.3, ..inputs() }, Action::Reflect).is_some());
    assert!(rejected(&Inputs { novelty: 0.7, ..inputs() }, Action::Reflect).is_some());
    assert!(rejected(&Inputs { fatigue_fraction: 0.4, ..inputs() }, Action::Reflect).is_some());
    // RECONCILE: energy ≥ 0.25, 30 min cooldown.
    assert!(rejected(&i, Action::Reconcile).is_none());
    assert!(rejected(&Inputs { energy: 0.2, ..inputs() }, Action::Reconcile).is_some());
    assert!(rejected(&Inputs { last_reconcile_at: Some(NOW - 600), ..inputs() }, Action::Reconcile).is_some());
}

#[test]
fn ties_go_to_the_higher_priority() {
    // energy 0.5, reflection: PLAN ineligible; SEED_THREAD ineligible; NURTURE 0.35 vs RECONCILE 0.35.
    let i = Inputs { kind: Kind::Reflection, energy: 0.5, relevance: 0.0, idle_s: Some(90_000), ..inputs() };
    let (chosen, scores) = actions::route(&i);
    assert_eq!(chosen, Action::Nurture, "{scores:?}");
    assert_eq!(scores[1].action, "RECONCILE");
    // With everything rejected, NOTHING is left.
    let none = Inputs { energy: 0.1, relevance: 0.0, kind: Kind::Insight, last_reconcile_at: Some(NOW), ..inputs() };
    assert_eq!(actions::route(&none).0, Action::Nothing);
}

#[test]
fn the_breaker_trips_after_two_unanswered_messages_and_an_answer_resets_backoff() {
    let mut c = CommState::default();
    c.record_sent(NOW);
    c.settle(None, NOW + 3600);
    assert_eq!((c.level, c.pending.len()), (0, 1), "not judged yet");
    c.settle(None, NOW + comm::ANSWER_WITHIN_S);
    assert_eq!(c.level, 1);
    assert_eq!(c.backoff_until(), Some(NOW + 2 * comm::IDLE_MIN_S));
    assert!(!c.breaker_open(NOW + comm::ANSWER_WITHIN_S));
    // A second failure more than 4 h after the first does not trip it; two within 4 h do.
    let t2 = NOW + comm::ANSWER_WITHIN_S + 600;
    c.record_sent(t2);
    c.settle(None, t2 + comm::ANSWER_WITHIN_S);
    assert!(!c.breaker_open(t2 + comm::ANSWER_WITHIN_S + 1));
    let (t3, t4) = (t2 + 2 * comm::ANSWER_WITHIN_S, t2 + 2 * comm::ANSWER_WITHIN_S + 3600);
    c.record_sent(t3);
    c.record_sent(t4);
    c.settle(None, t4 + comm::ANSWER_WITHIN_S);
    assert!(c.breaker_open(t4 + comm::ANSWER_WITHIN_S + 1));
    assert!(!c.breaker_open(t4 + comm::ANSWER_WITHIN_S + comm::PAUSE_S));
    // Backoff is capped at ×16.
    c.level = 9;
    c.record_sent(NOW);
    c.settle(None, NOW + comm::ANSWER_WITHIN_S);
    assert_eq!(c.backoff_until(), Some(NOW + 16 * comm::IDLE_MIN_S));
    // An answer resets it.
    let t3 = NOW + 100_000;
    c.record_sent(t3);
    c.settle(Some(t3 + 10), t3 + 20);
    assert_eq!(c.level, 0);
    assert!(
        comm::in_idle_window(Some(1800)) && !comm::in_idle_window(Some(1799)) && !comm::in_idle_window(Some(86_401))
    );
}

#[test]
fn quiet_hours_wrap_midnight_and_defer_to_their_end() {
    assert!(schedule::quiet_hour(23, 23, 8) && schedule::quiet_hour(3, 23, 8) && !schedule::quiet_hour(8, 23, 8));
    assert!(!schedule::quiet_hour(12, 23, 8) && schedule::quiet_hour(13, 13, 14) && !schedule::quiet_hour(5, 7, 7));
    // 2026-01-01 01:30 UTC, at UTC+1: 02:30 local, quiet until 08:00 local = 07:00 UTC.
    let t = 1_767_231_000;
    assert_eq!(schedule::local_hour(t, 3600), 2);
    assert!(schedule::is_quiet(t, 3600, 23, 8));
    assert_eq!(schedule::quiet_ends(t, 3600, 23, 8), 1_767_250_800);
    assert_eq!(schedule::quiet_ends(t + 86_400 / 2, 3600, 23, 8), t + 86_400 / 2, "noon is not quiet");
}

#[test]
fn the_schedule_jitters_and_sometimes_gaps() {
    let waits: Vec<u64> = (0..1000).map(|i| schedule::next_wait_s(300, &mut SplitMix64(i))).collect();
    assert!(waits.iter().all(|w| (210..=390).contains(w) || (540..=750).contains(w)), "{waits:?}");
    let long = waits.iter().filter(|w| **w >= 540).count();
    assert!((50..=160).contains(&long), "about 10 % long gaps: {long}");
}

#[test]
fn synthesis_parses_strict_json_and_falls_back_to_a_labelled_template() {
    let ok = synth::parse(&serde_json::json!({"type": "question", "content": "<think>hm</think>How is the new job?"}));
    assert_eq!(
        ok.as_ref().map(|t| (t.kind, t.content.as_str(), t.author)),
        Some((Kind::Question, "How is the new job?", synth::Author::Model))
    );
    assert!(synth::parse(&serde_json::json!({"type": "question", "content": "hm"})).is_none());
    assert!(synth::parse(&serde_json::json!({"type": "rant", "content": "long enough"})).is_none());
    let t = synth::template("coffee", &["mornings".into()], 0.63, Some("User talked about coffee."));
    assert_eq!((t.kind, t.author), (Kind::Question, synth::Author::Template));
    assert!(t.content.contains("coffee") && t.content.contains("mornings"), "{}", t.content);
    assert_eq!(synth::template("coffee", &["tea".into()], 0.7, None).kind, Kind::Hypothesis);
    assert_eq!(synth::template("coffee", &[], 0.7, None).kind, Kind::Reflection);
}

#[test]
fn novelty_and_relevance() {
    assert_eq!(actions::novelty("coffee in the morning", &[]), 1.0);
    assert_eq!(actions::novelty("coffee in the morning", &["Coffee in the morning!".into()]), 0.0);
    assert!((actions::relevance(Some(10.0), Some(0)) - 1.0).abs() < 1e-9);
    assert_eq!(actions::relevance(None, None), 0.0);
}
