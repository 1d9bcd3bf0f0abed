//! The router's learning loop end to end: the next message's verdict lands in the triage
//! calibration row, a weights version the stability regulator writes is used from the next
//! turn of a running engine, and `--rerun --weights-version N` replays a stored version.

use crate::support::harness::*;
use crate::support::openai_double::Reply;
use chalie::cognition::router::{DEFAULT_WEIGHTS_VERSION, RouterWeights};
use chalie::store::{RouterWeightsRepo, TurnRepo};
use serde_json::Value;

#[tokio::test]
async fn a_new_weights_version_routes_the_next_turn_and_feedback_fills_the_triage_outcome() {
    let h = start_heuristic(vec![Reply::text("Paris is the capital."), Reply::text("Sorry, here it is again.")]).await;
    let first = h.say("t", "What is the capital of France?").await;
    assert_eq!(h.decision(&first.exchange_id).await.weights_version, Some(i64::from(DEFAULT_WEIGHTS_VERSION)));
    assert_eq!(h.triage_rows(&first.exchange_id).await.len(), 1);

    // The regulator (or anyone) stores a new version while the engine runs.
    let mut w = RouterWeights::default();
    w.clarify.cold_boost = 0.12;
    w.version = DEFAULT_WEIGHTS_VERSION + 1;
    let text = serde_json::to_string(&w).unwrap();
    h.read(move |c| RouterWeightsRepo(c).insert(w.version, &text, "regulator", "test", 1)).await;

    let mut events = h.bus.subscribe();
    let second = h.say("t", "I meant the capital of the region around Lyon, not the country").await;
    // The verdict is logged once, naming the judged turn, its label and the cue.
    let judged: Vec<_> = drain(&mut events)
        .into_iter()
        .filter_map(|e| match e {
            chalie::events::EngineEvent::RouteJudged { exchange_id, by_exchange_id, label, cue, misroute, .. } => {
                Some((exchange_id, by_exchange_id, label, cue, misroute))
            }
            _ => None,
        })
        .collect();
    assert_eq!(judged.len(), 1, "{judged:?}");
    let (xid, by, label, cue, misroute) = &judged[0];
    assert_eq!((xid, by), (&first.exchange_id, &second.exchange_id));
    assert_eq!((label.as_str(), *misroute), ("missed_clarify", true));
    assert!(!cue.is_empty());
    let d = h.decision(&second.exchange_id).await;
    assert_eq!(d.weights_version, Some(i64::from(DEFAULT_WEIGHTS_VERSION + 1)), "picked up at the next turn");
    let snap = d.weight_snapshot.map_or(Value::Null, Value::from);
    assert_eq!(snap["clarify"]["cold_boost"].as_f64(), Some(0.12), "{snap}");

    // The second message judged the first reply: the label is on the first routing row and
    // on its triage row.
    let fb = h.decision(&first.exchange_id).await.feedback.expect("feedback on the first decision");
    assert_eq!(fb["label"], "missed_clarify");
    let outcomes = h.read(|c| TurnRepo(c).triage_outcomes(0, i64::MAX)).await;
    assert_eq!(outcomes.len(), 1, "{outcomes:?}");
    assert_eq!(outcomes[0].outcome["label"], "missed_clarify");
}

/// A day of 20 decisions (one in five ACT, the rest RESPOND), the first 8 judged `missed_clarify`.
fn seed(dir: &std::path::Path) {
    use chalie::store::{RoutingRecord, RoutingRepo};
    let conn = chalie::store::open(&dir.join("chalie.db")).unwrap();
    let now = chalie::store::now_ts();
    for i in 0..20 {
        let label = if i < 8 { "missed_clarify" } else { "correct_route" };
        RoutingRepo(&conn)
            .insert(&RoutingRecord {
                id: format!("r{i}"),
                thread_id: Some("t".into()),
                topic: "t".into(),
                exchange_id: Some(format!("x{i}")),
                selected_mode: if i % 5 == 4 { "ACT" } else { "RESPOND" }.into(),
                router_confidence: Some(0.4),
                scores: serde_json::json!({}),
                pre_routed: false,
                tiebreaker_used: false,
                tiebreaker_candidates: None,
                margin: None,
                effective_margin: None,
                signal_snapshot: Value::Null.into(),
                weight_snapshot: None,
                weights_version: Some(2),
                routing_time_ms: None,
                fallback: None,
                reasoning: None,
                feedback: Some(serde_json::json!({"label": label})),
                reflection: None,
                previous_mode: None,
                created_at: now - 3600 + i,
                regulator: None,
                adaptive: None,
            })
            .unwrap();
    }
}

/// `router regulate` over a day of decisions whose RESPOND turns the user kept re-explaining:
/// `--dry-run` says what it would move and stores nothing, the real cycle stores version 3 by
/// `regulator`, a config pin keeps the parameter still, and `audit --stats --json` reports the
/// same window.
#[test]
fn router_regulate_and_audit_stats_on_the_command_line() {
    use crate::support::bin::{chalie, chalie_with, json_lines, text};
    let dir = tempfile::tempdir().unwrap();
    seed(dir.path());
    let stats = json_lines(&chalie(dir.path(), &["audit", "--stats", "--json"]));
    assert_eq!(stats[0]["decisions"], 20);
    assert_eq!(stats[0]["misroute_rate"].as_f64(), Some(0.4));

    let dry = chalie(dir.path(), &["router", "regulate", "--dry-run"]);
    let out = text(&dry.stdout);
    assert!(dry.status.success(), "{}", text(&dry.stderr));
    assert!(out.contains("clarify.cold_boost 0.100 → 0.120") && out.contains("dry run: nothing stored"), "{out}");

    let real = json_lines(&chalie(dir.path(), &["router", "regulate", "--json"]));
    assert_eq!(real[0]["new_version"], 3, "{}", real[0]);
    let conn = chalie::store::open(&dir.path().join("chalie.db")).unwrap();
    let v = RouterWeightsRepo(&conn).latest().unwrap().unwrap();
    assert_eq!((v.version, v.author.as_str()), (3, "regulator"));

    // Both missed-clarify levers pinned by the config: neither moves, and no other label's
    // lever is tried (the misroutes are all missed clarifies), so nothing is stored.
    let dir = tempfile::tempdir().unwrap();
    seed(dir.path());
    let config = dir.path().join("pinned.toml");
    std::fs::write(&config, "[router.weights]\nclarify.cold_boost = 0.1\nclarify.dangling_reference = 0.3\n").unwrap();
    let out = chalie_with(dir.path(), &config, &[], &["router", "regulate", "--json"]);
    let pinned = json_lines(&out);
    assert_eq!(pinned[0]["new_version"], Value::Null, "{}", pinned[0]);
    assert!(pinned[0]["plan"]["skipped"][0].as_str().unwrap_or("").contains("pinned"), "{}", pinned[0]);
}

/// `--replay LOG --rerun --weights-version N --db FILE`: a recorded turn is routed with the
/// version the regulator stored, not with the built-in weights. Version 3 lowers `respond.base`
/// to its bound (the control of the RESPOND-overuse pressure, several cycles' worth of steps),
/// which moves the recorded general-knowledge question off RESPOND; without the flag the same
/// rerun routes it as recorded.
#[test]
fn a_rerun_with_a_regulator_version_routes_a_recorded_turn_differently() {
    use crate::support::bin::{chalie, json_lines, text};
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        "[providers.gone]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9\"\n[models]\nprimary = \"gone/chat\"\n\
         lightweight = \"gone/chat\"\nstrong = \"gone/chat\"\nembedding = \"gone/embed\"\n[llm]\ntriage = \"heuristic\"\n\
         memory_extraction = \"heuristic\"\ncritic = \"heuristic\"\n",
    )
    .unwrap();
    let db = dir.path().join("regulated.db");
    let conn = chalie::store::open(&db).unwrap();
    let mut w = RouterWeights::default();
    let floor = RouterWeights::bound("respond.base").map_or(0.30, |(min, _)| min);
    w.set("respond.base", floor).unwrap();
    w.version = DEFAULT_WEIGHTS_VERSION + 1;
    let reason = format!("respond.base {:.3} → {floor:.3}", RouterWeights::default().respond.base);
    RouterWeightsRepo(&conn).insert(w.version, &serde_json::to_string(&w).unwrap(), "regulator", &reason, 1).unwrap();
    drop(conn);

    let log = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/replay_session.jsonl");
    let log = log.to_str().unwrap();
    let rerun = |extra: &[&str]| {
        let data = dir.path().join(format!("rerun{}", extra.len()));
        std::fs::create_dir_all(&data).unwrap();
        std::fs::copy(&config, data.join("config.toml")).unwrap();
        let mut args = vec!["--replay", log, "--rerun", "--headless"];
        args.extend_from_slice(extra);
        let out = chalie(&data, &args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        json_lines(&out)
    };
    let question = |turns: &[Value]| {
        turns
            .iter()
            .find(|t| t["text"] == "What is the capital of France?")
            .map(|t| t["mode"].as_str().unwrap_or("").to_string())
            .unwrap_or_default()
    };
    let version = w.version.to_string();
    let plain = rerun(&[]);
    let regulated = rerun(&["--db", db.to_str().unwrap(), "--weights-version", &version]);
    assert_eq!(question(&plain), "RESPOND", "{plain:?}");
    assert_ne!(question(&regulated), "RESPOND", "{regulated:?}");
    assert_eq!(plain.len(), regulated.len(), "every recorded turn is rerun");
}

/// The F2 audit's stats tab and `audit --stats --json` read one function over the same
/// database, so the tab shows the figures the command prints.
#[tokio::test]
async fn the_audit_stats_tab_shows_what_audit_stats_json_prints() {
    use chalie::events::{EngineEvent, Stamped};
    use chalie::tui::app::{Action, App, Settings};
    use chalie::tui::query::{Queries, ViewAnswer};
    use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
    let dir = tempfile::tempdir().unwrap();
    seed(dir.path());
    let json =
        crate::support::bin::json_lines(&crate::support::bin::chalie(dir.path(), &["audit", "--stats", "--json"]))
            .remove(0);

    let db = chalie::store::Db::spawn(chalie::store::open(&dir.path().join("chalie.db")).unwrap());
    let (queries, mut answers) = Queries::spawn(&db);
    let mut app = App::new(Settings::default());
    let resolved = EngineEvent::ModelsResolved { roles: vec![], missing_builtin: vec![], missing_builtin_bytes: 0 };
    app.on_engine(&Stamped { ts: chrono::Utc::now(), event: resolved });
    let key = |c| Event::Key(KeyEvent::new(c, KeyModifiers::NONE));
    app.on_terminal(key(KeyCode::F(2)));
    assert_eq!(app.on_terminal(key(KeyCode::Tab)), Some(Action::LoadRoutingStats));
    queries.routing_stats();
    loop {
        let answer = tokio::time::timeout(std::time::Duration::from_secs(30), answers.recv()).await.unwrap().unwrap();
        if let ViewAnswer::RoutingStats { .. } = answer {
            app.on_view(answer);
            break;
        }
    }
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 40)).unwrap();
    chalie::tui::draw(&mut terminal, &mut app).unwrap();
    let screen = terminal.backend().to_string();
    let f = |k: &str| json[k].as_f64().unwrap();
    assert!(screen.contains(&format!("{} decisions, {} judged", json["decisions"], json["labelled"])), "{screen}");
    for m in json["modes"].as_array().unwrap() {
        let row = format!(
            "{:<13}{:>6}{:>7.1} %  {}",
            m["mode"].as_str().unwrap(),
            m["count"].as_u64().unwrap(),
            m["percent"].as_f64().unwrap(),
            m["verdict"].as_str().unwrap()
        );
        assert!(screen.contains(&row), "{row}\n{screen}");
    }
    assert!(screen.contains(&format!("entropy      {:.2}", f("entropy"))), "{screen}");
    assert!(screen.contains(&format!("tie-break    {:.1} %", 100.0 * f("tie_break_rate"))), "{screen}");
    assert!(screen.contains(&format!("misroute     {:.1} %", 100.0 * f("misroute_rate"))), "{screen}");
    assert!(screen.contains(&format!("misroutes {:.1} %", 100.0 * f("respond_misroute_rate"))), "{screen}");
    assert_eq!(f("misroute_rate"), 0.4, "the seeded day");
}
