//! The ACT loop end to end through the engine, against the scripted endpoint: model plans,
//! unusable plans falling back to the deterministic planner, every termination reason, the
//! skills' effects in the database, the pre-action reliability check, and the audit trail.

use crate::support::harness::{self, Harness, start_heuristic};
use crate::support::openai_double::Reply;
use chalie::cognition::router::Mode;
use chalie::events::EngineEvent;
use serde_json::{Value, json};

fn plan(actions: Value) -> Reply {
    Reply::text(&json!({ "actions": actions }).to_string())
}

/// Prose where a plan should be: the layer's two repair rounds get the same.
fn unusable() -> Vec<Reply> {
    vec![Reply::text("Sure, I will add that for you!"); 3]
}

fn iterations(r: &chalie::cognition::pipeline::TurnReport) -> Vec<(String, Vec<String>)> {
    r.act_iterations
        .iter()
        .map(|i| {
            let kinds = i.actions.iter().map(|a| a.kind.clone());
            (i.planner.clone(), kinds.collect())
        })
        .collect()
}

async fn cortex_rows(h: &Harness, exchange: &str) -> Vec<(i64, String, Option<String>)> {
    let x = exchange.to_string();
    h.read(move |c| {
        let mut s = c.prepare(
            "SELECT iteration_number, planner, termination_reason FROM cortex_iterations
             WHERE exchange_id = ?1 ORDER BY iteration_number",
        )?;
        let rows = s.query_map([x], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect::<Result<Vec<_>, _>>()?;
        Ok(rows)
    })
    .await
}

#[tokio::test]
async fn lists_work_when_every_plan_is_unusable() {
    let h = start_heuristic([unusable(), unusable(), unusable()].concat()).await;
    let r = h.say("t", "add eggs, milk and bread to my shopping list").await;
    assert_eq!(r.mode, Mode::Act);
    assert_eq!(iterations(&r), [("deterministic".to_string(), vec!["list".to_string()])]);
    assert_eq!(r.response, "Added eggs, milk and bread to shopping.");
    assert_eq!(r.reply_mode, Mode::Ignore, "every action a card: no text generated");
    assert!(r.fallbacks.contains(&"act_plan_invalid_output".to_string()), "{:?}", r.fallbacks);
    assert_eq!(r.act_iterations[0].results[0].data["added"], json!(["eggs", "milk", "bread"]));
    let rows = cortex_rows(&h, &r.exchange_id).await;
    assert_eq!(rows, [(0, "deterministic".to_string(), Some("empty_plan".to_string()))]);

    let r = h.say("t", "take milk off the list").await;
    assert_eq!(r.response, "Removed milk from shopping.");
    let r = h.say("t", "what's on my shopping list?").await;
    assert_eq!(r.response, "shopping (2): [ ] eggs; [ ] bread");
}

#[tokio::test]
async fn list_items_are_named_the_way_people_say_them() {
    let h = start_heuristic([unusable(), unusable(), unusable(), unusable(), unusable()].concat()).await;
    h.say("t", "add bread, oat milk and almond milk to my shopping list").await;
    let r = h.say("t", "take the bread off my shopping list").await;
    assert_eq!(r.response, "Removed bread from shopping.");
    // Two milks: the turn asks which, as CLARIFY, and removes nothing.
    let r = h.say("t", "take milk off the list").await;
    assert_eq!(r.response, "Which one: oat milk or almond milk?");
    assert_eq!(r.reply_mode, Mode::Clarify);
    assert_eq!(r.act_iterations[0].results[0].choices, ["oat milk", "almond milk"]);
    let r = h.say("t", "take the almond milk off the list").await;
    assert_eq!(r.response, "Removed almond milk from shopping.");
    let r = h.say("t", "take milk off the list").await;
    assert_eq!((r.response.as_str(), r.reply_mode), ("Removed oat milk from shopping.", Mode::Ignore));
}

#[tokio::test]
async fn a_valid_model_plan_runs_and_an_empty_one_ends_the_loop() {
    let h = start_heuristic(vec![
        plan(json!([{"type": "list", "params": {"action": "add", "name": "books", "items": ["Dune", "Emma"]}}])),
        plan(json!([])),
    ])
    .await;
    let mut events = h.bus.subscribe();
    let r = h.say("t", "put Dune and Emma on my books list").await;
    assert_eq!(r.mode, Mode::Act, "{} {:?}", r.router.reason, r.fallbacks);
    assert_eq!(iterations(&r), [("model".to_string(), vec!["list".to_string()])]);
    assert_eq!(r.act_termination.map(|t| t.as_str()), Some("empty_plan"));
    assert_eq!(r.response, "Added Dune and Emma to books.");
    let mut act_events = Vec::new();
    while let Ok(e) = events.try_recv() {
        if let EngineEvent::ActIteration { iteration, actions, termination, .. } = e.event {
            act_events.push((iteration, actions.len(), termination));
        }
    }
    assert_eq!(act_events, [(1, 1, None), (1, 1, Some("empty_plan".to_string()))]);
}

#[tokio::test]
async fn the_same_action_three_times_stops_the_loop() {
    let recall = || plan(json!([{"type": "recall", "params": {"query": "sister"}}]));
    let h = start_heuristic(vec![recall(), recall(), recall(), Reply::text("You haven't told me yet.")]).await;
    let r = h.say("t", "what did I tell you about my sister?").await;
    assert_eq!(r.act_termination.map(|t| t.as_str()), Some("repeated_action"));
    assert_eq!(r.act_iterations.len(), 2);
    assert_eq!(r.reply_mode, Mode::Respond, "recall is not a card: the model answers from the results");
    assert_eq!(r.response, "You haven't told me yet.");
}

#[tokio::test]
async fn the_iteration_cap_and_the_fatigue_budget() {
    let recall = |q: &str| plan(json!([{"type": "recall", "params": {"query": q}}]));
    let mut script: Vec<Reply> =
        ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"].iter().map(|q| recall(q)).collect();
    script.push(Reply::text("Nothing found."));
    let h = start_heuristic(script).await;
    let r = h.say("t", "what do you remember about my projects?").await;
    assert_eq!(r.act_termination.map(|t| t.as_str()), Some("max_iterations"));
    assert_eq!(r.act_iterations.len(), 5);

    let three = |k: usize| {
        plan(json!(
            (0..3).map(|i| json!({"type": "recall", "params": {"query": format!("q{k}{i}")}})).collect::<Vec<_>>()
        ))
    };
    let h = start_heuristic(vec![three(0), three(1), three(2), Reply::text("Done.")]).await;
    let r = h.say("t", "what do you remember about my projects?").await;
    assert_eq!(r.act_termination.map(|t| t.as_str()), Some("fatigue_exhausted"));
    assert_eq!(r.act_iterations.len(), 2, "3 + 3.9 = 6.9; a third (4.8) would pass 10");
    let fatigue = r.act_iterations[1].fatigue;
    assert!((fatigue - 6.9).abs() < 1e-9, "{fatigue}");
}

#[tokio::test]
async fn reminders_focus_and_recall_through_the_deterministic_planner() {
    let h = start_heuristic([unusable(), unusable(), unusable(), unusable(), unusable()].concat()).await;
    let r = h.say("t", "remind me to call mum tomorrow at 9am").await;
    let due = (chrono::Local::now() + chrono::Duration::days(1)).format("%Y-%m-%dT09:00").to_string();
    assert_eq!(r.act_iterations[0].results[0].data["reminder"]["due_at"], json!(due), "{:?}", r.act_iterations);
    assert!(r.response.starts_with("Reminder set: call mum"), "{}", r.response);

    let r = h.say("t", "what reminders do I have?").await;
    assert!(r.response.contains("call mum"), "{}", r.response);
    let r = h.say("t", "cancel my reminder to call mum").await;
    assert!(r.act_iterations[0].results[0].ok, "{:?}", r.act_iterations);
    let state: String = h.read(|c| Ok(c.query_row("SELECT state FROM reminders", [], |r| r.get(0))?)).await;
    assert_eq!(state, "cancelled");

    let r = h.say("t", "start a focus session on the tax return for 45 minutes").await;
    assert!(r.response.starts_with("Focus session on the tax return for 45 min"), "{}", r.response);
}

#[tokio::test]
async fn a_stated_fact_is_recalled_and_answered_from() {
    let mut script = unusable();
    script.extend(unusable());
    script.push(Reply::text("You told me your sister lives in Porto."));
    let h = start_heuristic(script).await;
    let r = h.say("t", "remember that my sister lives in Porto").await;
    assert_eq!(r.response, "Remembered: my sister lives in Porto.");
    let r = h.say("t2", "what did I tell you about my sister?").await;
    let hits = &r.act_iterations[0].results[0].data["hits"];
    assert!(hits[0]["text"].as_str().unwrap().contains("Porto"), "{hits}");
    assert_eq!(r.reply_mode, Mode::Respond);
    let generation = h.double.chat_requests().last().cloned().unwrap();
    assert!(harness::system_prompt(&generation).contains("Porto"), "the results are in the reply's context");
}

#[tokio::test]
async fn a_consequential_action_on_a_doubtful_memory_asks_first() {
    let h = start_heuristic(vec![
        plan(json!([
            {"type": "recall", "params": {"query": "dentist"}},
            {"type": "schedule", "params": {"action": "create", "message": "dentist", "due_at": "tomorrow at 10am"}}
        ])),
        Reply::text("Is your dentist appointment still on Tuesday at 10?"),
    ])
    .await;
    h.read(|c| {
        chalie::store::TurnRepo(c).set_explicit_trait("dentist", "Tuesday at 10", "general")?;
        c.execute("UPDATE user_traits SET reliability = 'uncertain'", [])?;
        Ok(())
    })
    .await;
    let r = h.say("t", "remind me about the dentist").await;
    assert_eq!(r.act_termination.map(|t| t.as_str()), Some("needs_confirmation"));
    assert_eq!(r.reply_mode, Mode::Clarify);
    assert!(r.fallbacks.contains(&"reliability_check".to_string()));
    assert_eq!(r.act_iterations[0].actions.len(), 1, "the schedule action did not run");
    let n: i64 = h.read(|c| Ok(c.query_row("SELECT COUNT(*) FROM reminders", [], |r| r.get(0))?)).await;
    assert_eq!(n, 0);
    assert!(r.response.ends_with('?'));
}

#[tokio::test]
async fn no_workable_plan_on_an_endpoint_lets_the_model_say_so() {
    let mut script = unusable();
    script.push(Reply::text("I couldn't work out what to do. What should I do with it?"));
    let h = start_heuristic(script).await;
    let r = h.say("t", "schedule something for my list please").await;
    assert_eq!(r.mode, Mode::Act, "{}", r.router.reason);
    assert!(r.act_iterations.is_empty());
    assert_eq!(r.act_termination.map(|t| t.as_str()), Some("empty_plan"));
    assert_eq!(r.reply_mode, Mode::Respond);
    let rows = cortex_rows(&h, &r.exchange_id).await;
    assert_eq!(rows, [(0, "model".to_string(), Some("empty_plan".to_string()))], "the stop is audited");
}

#[tokio::test]
async fn a_focus_session_is_known_to_every_later_turn() {
    let mut script = unusable();
    script.push(Reply::text("Paris."));
    let h = start_heuristic(script).await;
    h.say("t", "start a focus session on the tax return for 45 minutes").await;
    let r = h.say("t", "what is the capital of France?").await;
    assert_eq!(r.session.focus_on.as_deref(), Some("the tax return"));
    assert_eq!(r.session.focus, chalie::cognition::boundary::FocusLevel::Explicit);
    // A distraction is a new topic during the session (the boundary detector's bound is raised
    // by the explicit focus, so only a clear change counts); the double's embeddings decide here.
    assert_eq!(r.session.distraction, r.topic.is_new_topic);
    assert_eq!(r.router.signals["focus_distraction"], r.session.distraction, "recorded in the signal snapshot");
    let generation = h.double.chat_requests().last().cloned().unwrap();
    assert_eq!(harness::system_prompt(&generation).contains("focus session on the tax return"), r.session.distraction);
}

#[tokio::test]
async fn no_workable_plan_but_a_recalled_memory_answers_from_memory() {
    let h = start_heuristic([unusable(), unusable()].concat()).await;
    h.read(|c| {
        c.execute(
            "INSERT INTO episodes (gist, salience, created_at, updated_at)
             VALUES ('User said their new home address is 12 Rua Augusta, Lisbon', 6, 1700000000, 1700000000)",
            [],
        )?;
        Ok(())
    })
    .await;
    let r = h.say("t", "What is my current home address?").await;
    assert_eq!(r.mode, Mode::Act, "{}", r.router.reason);
    assert!(r.act_iterations.is_empty(), "the planner found nothing to do");
    assert!(r.response.contains("12 Rua Augusta"), "{}", r.response);
    assert!(!r.response.contains("work out"), "{}", r.response);
    assert_eq!(r.reply_source.as_str(), "memory");
    assert_eq!(r.answered_from.len(), 1);
    assert!(r.answered_from[0].starts_with("episode:"), "{:?}", r.answered_from);
    assert_eq!(r.reply_mode, Mode::Respond);
    let generations = h.calls().into_iter().filter(|c| matches!(c, harness::Call::Generation(_))).count();
    assert_eq!(generations, 0, "memory answered: no model call for the reply");
}

#[tokio::test]
async fn on_an_endpoint_the_model_still_writes_acknowledgements_and_answers() {
    let h = start_heuristic(vec![Reply::text("Nice to meet you, Ada!")]).await;
    let r = h.say("t", "Hi! My name is Ada").await;
    assert_eq!(r.mode, Mode::Acknowledge);
    assert_eq!(r.reply_source.as_str(), "model", "templates stand in for the built-in model only");
    assert_eq!(r.response, "Nice to meet you, Ada!");
}

#[tokio::test]
async fn piped_text_under_a_request_neither_hides_the_command_nor_is_read_as_one() {
    let h = start_heuristic([unusable(), unusable()].concat()).await;
    // What `echo "the kettle is broken" | chalie-tui ask "Keep an eye on …"` sends.
    let r = h.say("t", "Keep an eye on flights to Lisbon under 120 euros for May\n\nthe kettle is broken").await;
    assert_eq!(r.mode, Mode::Act, "{} {:?}", r.router.reason, r.fallbacks);
    assert_eq!(iterations(&r), [("deterministic".to_string(), vec!["persistent_task".to_string()])]);
    let action = &r.act_iterations[0].actions[0];
    assert_eq!(action.params["goal"], "Keep an eye on flights to Lisbon under 120 euros for May");
    assert_eq!(action.params["material"], "the kettle is broken", "the piped block rides along as material");
    assert!(r.act_iterations[0].results[0].ok, "{:?}", r.act_iterations[0].results);
}
