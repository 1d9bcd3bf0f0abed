//! The audit's routing-stats tab (docs/cognition.md §15.1): Tab / ← → switch to it, it reads
//! the statistics `audit --stats` prints and shows red flags and the reflection note.

use super::*;
use crate::cognition::router::stats::routing_stats;

/// A day where RESPOND took 17 of 20 turns and the user re-explained four of them.
fn stats() -> crate::cognition::router::stats::RoutingStats {
    let rows: Vec<RoutingRecord> = (0..20)
        .map(|i| {
            let mut r = record(&format!("d{i}"));
            r.selected_mode = match i {
                0 | 1 => "CLARIFY",
                2 => "ACT",
                _ => "RESPOND",
            }
            .into();
            r.tiebreaker_candidates = (i % 5 == 0).then(|| json!(["RESPOND", "CLARIFY"]));
            let label = if (3..7).contains(&i) { "missed_clarify" } else { "correct_route" };
            r.feedback = (i < 16).then(|| json!({"label": label}));
            r
        })
        .collect();
    routing_stats(&rows)
}

#[test]
fn the_stats_tab_shows_the_distribution_with_red_flags() {
    let mut a = populated();
    assert_eq!(a.on_terminal(key(KeyCode::F(2))), Some(Action::LoadAudit(None)));
    a.on_view(ViewAnswer::Audit { mode: None, rows: audit_rows() });
    assert!(draw(&mut a, 120, 40).contains("Tab  stats tab"), "the key is in F2's hints");
    assert_eq!(a.on_terminal(key(KeyCode::Tab)), Some(Action::LoadRoutingStats));
    assert!(draw(&mut a, 120, 40).contains("Reading the routing statistics"));
    a.on_view(ViewAnswer::RoutingStats { stats: Box::new(stats()) });
    let screen = draw(&mut a, 120, 40);
    assert!(screen.contains("RESPOND          17   85.0 %  outside healthy"), "{screen}");
    assert!(screen.contains("IGNORE            0    0.0 %  healthy"), "{screen}");
    assert!(screen.contains("misroute     25.0 %"), "4 of 16 judged: {screen}");
    assert!(screen.contains("reflection skipped"), "the strong model is built in: {screen}");
    insta::assert_snapshot!("audit_stats_tab_120x40", screen);
    // ← goes back to the decisions, → to the stats again; a committed turn re-reads the tab.
    assert_eq!(a.on_terminal(key(KeyCode::Left)), Some(Action::LoadAudit(None)));
    assert!(draw(&mut a, 120, 40).contains("Routing audit · all modes"));
    assert_eq!(a.on_terminal(key(KeyCode::Right)), Some(Action::LoadRoutingStats));
    a.audit.as_mut().unwrap().stale = true;
    assert_eq!(a.take_audit_refresh(), Some(Action::LoadRoutingStats));
}

#[test]
fn the_stats_tab_flags_a_dead_mode_and_says_nothing_of_reflection_on_a_remote_model() {
    let mut a = App::new(settings());
    let mut roles = models();
    roles[2].builtin = false;
    a.on_engine(&ev(0, EngineEvent::ModelsResolved { roles, missing_builtin: vec![], missing_builtin_bytes: 0 }));
    a.on_terminal(key(KeyCode::F(2)));
    a.on_terminal(key(KeyCode::Tab));
    a.on_view(ViewAnswer::RoutingStats { stats: Box::new(stats()) });
    let screen = draw(&mut a, 120, 40);
    assert!(!screen.contains("reflection skipped"), "{screen}");
    assert!(screen.contains("ACKNOWLEDGE 0.0 % RED FLAG"), "no ACKNOWLEDGE at all is flagged: {screen}");
}
