//! The adaptive layer in the audit's detail (docs/cognition.md §18.8): the directives a reply's
//! prompt carried, what produced each, and which the built-in model's budget cut.

use super::*;

#[test]
fn audit_detail_shows_the_directives_a_reply_was_sent() {
    let mut a = populated();
    a.on_terminal(key(KeyCode::F(2)));
    a.on_view(ViewAnswer::Audit { mode: None, rows: audit_rows() });
    let Some(Action::LoadDecision(id)) = a.on_terminal(key(KeyCode::Enter)) else { panic!("no detail opened") };
    let mut r = record(&id);
    r.adaptive = Some(serde_json::json!({
        "directives": [
            {"slot": "load", "side": "low", "origin": "load", "text": "Keep this reply short and simple."},
            {"slot": "length", "side": "low", "origin": "micro", "text": "No emojis."}],
        "load": "high", "energy": null, "challenge": 5.5, "observations": 4,
        "sent": ["Keep this reply short and simple."]}));
    a.on_view(ViewAnswer::AuditDetail { id, record: Some(Box::new(r)) });
    let screen = draw(&mut a, 140, 90);
    assert!(screen.contains("── Adaptive"), "{screen}");
    assert!(screen.contains("load     Keep this reply short and simple."), "{screen}");
    assert!(screen.contains("No emojis.  (not sent: over the built-in model's budget)"), "{screen}");
    assert!(screen.contains("load high · energy - · challenge 5.5 · 4 style observations"), "{screen}");
}
