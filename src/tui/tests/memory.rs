//! The memory browser (F3): layers, search, detail with provenance, forgetting with a
//! confirmation, and what the app asks the worker for at each step.

use super::*;
use crate::store::{MemoryId, MemoryLayer, MemoryRow};
use crate::tui::keymap::Context;

fn row(id: &str, text: &str, reliability: Option<&str>, confidence: Option<f64>, prov: serde_json::Value) -> MemoryRow {
    let serde_json::Value::Object(provenance) = prov else { panic!("provenance is an object") };
    MemoryRow {
        id: id.parse().unwrap(),
        text: text.into(),
        reliability: reliability.map(str::to_string),
        confidence,
        created_at: T0 - 3600,
        updated_at: T0,
        expires_at: None,
        provenance,
    }
}

fn episodes() -> Vec<MemoryRow> {
    vec![
        row(
            "episode:2",
            "Debugged a borrow checker error in the parser; the fix was to clone the token.",
            Some("reliable"),
            None,
            json!({"thread_id": "t1", "exchange_id": "x2", "topic": "rust", "salience": 6, "activation_score": 1.2,
                   "access_count": 3, "last_accessed_at": T0 - 60}),
        ),
        row(
            "episode:1",
            "Planned a hiking trip to the Alps for July.",
            Some("uncertain"),
            None,
            json!({"thread_id": "t1", "exchange_id": "x1", "topic": "travel", "salience": 7, "activation_score": 1.0,
                   "access_count": 0, "last_accessed_at": null}),
        ),
    ]
}

fn traits() -> Vec<MemoryRow> {
    vec![
        row(
            "trait:1",
            "sister: Maria",
            Some("reliable"),
            Some(0.9),
            json!({"source": "explicit", "reinforcement_count": 3, "last_conflict_at": null}),
        ),
        row(
            "trait:2",
            "diet: vegetarian",
            Some("contradicted"),
            Some(0.42),
            json!({"source": "inferred", "reinforcement_count": 1, "last_conflict_at": T0 - 100}),
        ),
    ]
}

fn loaded(a: &mut App, layer: MemoryLayer, search: Option<&str>, rows: Vec<MemoryRow>) {
    a.on_view(ViewAnswer::Memory { layer, search: search.map(str::to_string), rows });
}

fn load(layer: MemoryLayer, search: Option<&str>) -> Option<Action> {
    Some(Action::LoadMemory { layer, search: search.map(str::to_string) })
}

/// F3 opened on traits, then Tab to episodes, both answered.
fn browsing_episodes() -> App {
    let mut a = app();
    assert_eq!(a.on_terminal(key(KeyCode::F(3))), load(MemoryLayer::Traits, None));
    loaded(&mut a, MemoryLayer::Traits, None, traits());
    assert_eq!(a.on_terminal(key(KeyCode::Tab)), load(MemoryLayer::Episodes, None), "Tab is the next layer here");
    loaded(&mut a, MemoryLayer::Traits, None, traits());
    assert!(a.memory.as_ref().unwrap().loading, "a late answer for the layer left behind is ignored");
    loaded(&mut a, MemoryLayer::Episodes, None, episodes());
    a
}

#[test]
fn memory_browser_lists_a_layer_with_reliability_marks() {
    let mut a = app();
    a.on_terminal(key(KeyCode::F(3)));
    loaded(&mut a, MemoryLayer::Traits, None, traits());
    let screen = draw(&mut a, 120, 40);
    assert!(screen.contains(" forget "), "hints come from the browser's own bindings: {screen}");
    insta::assert_snapshot!("memory_traits_120x40", screen);
    assert_eq!(a.on_terminal(key(KeyCode::Left)), load(MemoryLayer::World, None), "layers wrap around");
    assert_eq!(a.on_terminal(key(KeyCode::Esc)), None);
    assert!(a.memory.is_none(), "Esc closes");
}

#[test]
fn memory_browser_empty_layer_explains_itself() {
    let mut a = app();
    a.on_terminal(key(KeyCode::F(3)));
    insta::assert_snapshot!("memory_loading_80x24", draw(&mut a, 80, 24));
    loaded(&mut a, MemoryLayer::Traits, None, vec![]);
    insta::assert_snapshot!("memory_empty_80x24", draw(&mut a, 80, 24));
    // Nothing to open or forget.
    assert_eq!(a.on_terminal(key(KeyCode::Enter)), None);
    assert_eq!(a.on_terminal(key(KeyCode::Char('d'))), None);
    assert_eq!(a.context(), Context::Memory);
}

#[test]
fn memory_detail_shows_provenance_and_forgetting_asks_first() {
    let mut a = browsing_episodes();
    a.on_terminal(key(KeyCode::Down));
    assert_eq!(a.on_terminal(key(KeyCode::Enter)), None, "the detail needs no second read");
    let detail = draw(&mut a, 120, 40);
    assert!(detail.contains("exchange_id") && detail.contains("x1"), "{detail}");
    insta::assert_snapshot!("memory_detail_120x40", detail);

    assert_eq!(a.on_terminal(key(KeyCode::Char('d'))), None, "d only asks");
    assert_eq!(a.context(), Context::MemoryConfirm);
    insta::assert_snapshot!("memory_confirm_120x40", draw(&mut a, 120, 40));
    assert_eq!(a.on_terminal(key(KeyCode::Char('n'))), None);
    assert_eq!(a.context(), Context::MemoryDetail, "No returns to where d was pressed");

    a.on_terminal(key(KeyCode::Char('d')));
    let id: MemoryId = "episode:1".parse().unwrap();
    assert_eq!(a.on_terminal(key(KeyCode::Char('y'))), Some(Action::ForgetMemory(id)));
    a.on_engine(&ev(6, EngineEvent::MemoryForgotten { id, error: None }));
    let m = a.memory.as_ref().unwrap();
    assert_eq!(m.rows.iter().map(|r| r.id.to_string()).collect::<Vec<_>>(), ["episode:2"]);
    assert_eq!(a.context(), Context::Memory);
    assert!(draw(&mut a, 120, 40).contains("Forgot episode:1."));

    // A refused forget keeps the row and says why.
    a.on_terminal(key(KeyCode::Char('d')));
    let other: MemoryId = "episode:2".parse().unwrap();
    assert_eq!(a.on_terminal(key(KeyCode::Char('y'))), Some(Action::ForgetMemory(other)));
    a.on_engine(&ev(
        7,
        EngineEvent::MemoryForgotten { id: other, error: Some("episode:2 was already forgotten".into()) },
    ));
    assert_eq!(a.memory.as_ref().unwrap().rows.len(), 1);
    assert!(draw(&mut a, 120, 40).contains("Could not forget episode:2"));
}

#[test]
fn memory_search_filters_as_you_type() {
    let mut a = browsing_episodes();
    assert_eq!(a.on_terminal(key(KeyCode::Char('/'))), None);
    assert_eq!(a.context(), Context::MemorySearch);
    assert_eq!(a.on_terminal(key(KeyCode::Char('h'))), load(MemoryLayer::Episodes, Some("h")));
    assert_eq!(a.on_terminal(key(KeyCode::Char('?'))), load(MemoryLayer::Episodes, Some("h?")), "? is text here");
    assert!(a.help.is_none());
    assert_eq!(a.on_terminal(key(KeyCode::Backspace)), load(MemoryLayer::Episodes, Some("h")));
    assert_eq!(a.on_terminal(key(KeyCode::Char('i'))), load(MemoryLayer::Episodes, Some("hi")));
    loaded(&mut a, MemoryLayer::Episodes, Some("h"), episodes());
    let hiking = vec![episodes().remove(1)];
    loaded(&mut a, MemoryLayer::Episodes, Some("hi"), hiking);
    assert_eq!(a.memory.as_ref().unwrap().rows.len(), 1, "only the answer to the current text counts");
    assert_eq!(a.on_terminal(key(KeyCode::Enter)), None, "Enter keeps the filter");
    let screen = draw(&mut a, 120, 40);
    assert!(screen.contains("search: hi") && screen.contains("hiking"), "{screen}");
    a.on_terminal(key(KeyCode::Char('/')));
    assert_eq!(a.on_terminal(key(KeyCode::Esc)), load(MemoryLayer::Episodes, None), "Esc in the box clears it");
    assert_eq!(a.context(), Context::Memory);
}

#[test]
fn memory_browser_and_audit_do_not_stack() {
    let mut a = app();
    a.on_terminal(key(KeyCode::F(2)));
    assert!(a.audit.is_some());
    a.on_terminal(key(KeyCode::F(3)));
    assert!(a.audit.is_none() && a.memory.is_some());
    assert_eq!(a.on_terminal(key(KeyCode::F(3))), None);
    assert!(a.memory.is_none(), "F3 again closes it");
}
