//! Lists and reminders named the way people talk (issue 14, item 2): each sentence goes through
//! the deterministic planner and the dispatcher onto a SQLite database on disk, as a turn on
//! the built-in model does.

use chalie::cognition::act::dispatch::{ActionResult, dispatch};
use chalie::cognition::act::planner;
use chalie::cognition::act::skill::SkillContext;
use chrono::Local;
use rusqlite::Connection;
use serde_json::json;

struct Store {
    conn: Connection,
    _dir: tempfile::TempDir,
}

fn store() -> Store {
    let dir = tempfile::tempdir().expect("a temp dir");
    let conn = chalie::store::open(&dir.path().join("chalie.db")).expect("the database opens");
    Store { conn, _dir: dir }
}

/// What one sentence does: its single planned action, dispatched.
fn say(s: &Store, text: &str) -> ActionResult {
    let ctx = SkillContext::new("t", "x", "t", Local::now());
    let plan = planner::plan(text, ctx.now).unwrap_or_else(|| panic!("no plan for {text:?}"));
    assert_eq!(plan.len(), 1, "{text:?}");
    dispatch(&s.conn, &plan[0], &ctx, None)
}

fn items(s: &Store, list: &str) -> Vec<String> {
    let mut stmt = s
        .conn
        .prepare("SELECT i.content FROM list_items i JOIN lists l ON l.id = i.list_id WHERE l.name = ?1 ORDER BY i.id")
        .expect("a valid query");
    stmt.query_map([list], |r| r.get(0)).expect("rows").collect::<Result<_, _>>().expect("strings")
}

#[test]
fn the_reported_sentences_remove_what_they_name() {
    let s = store();
    assert_eq!(
        say(&s, "add bread, oat milk and eggs to my shopping list").summary,
        "Added bread, oat milk and eggs to shopping."
    );
    let r = say(&s, "take the bread off my shopping list");
    assert_eq!((r.ok, r.summary.as_str()), (true, "Removed bread from shopping."));
    let r = say(&s, "take milk off the list");
    assert_eq!((r.ok, r.summary.as_str()), (true, "Removed oat milk from shopping."));
    assert_eq!(items(&s, "shopping"), ["eggs"]);
    let r = say(&s, "check off the egg");
    assert_eq!(r.summary, "Checked off eggs on shopping.");
}

#[test]
fn several_fits_ask_which_and_change_nothing() {
    let s = store();
    say(&s, "add oat milk, almond milk and bread to my shopping list");
    let r = say(&s, "take milk off the list");
    assert!(r.ok && r.card, "{r:?}");
    assert_eq!(r.summary, "Which one: oat milk or almond milk?");
    assert_eq!(r.choices, ["oat milk", "almond milk"]);
    assert_eq!(items(&s, "shopping"), ["oat milk", "almond milk", "bread"]);
    let r = say(&s, "take the almond milk off my shopping list");
    assert_eq!(r.summary, "Removed almond milk from shopping.");
}

#[test]
fn list_names_by_synonym() {
    let s = store();
    say(&s, "add eggs to my shopping list");
    assert_eq!(say(&s, "put tomatoes on the groceries list").summary, "Added tomatoes to shopping.");
    assert_eq!(say(&s, "what's on my grocery list?").summary, "shopping (2): [ ] eggs; [ ] tomatoes");
    assert_eq!(say(&s, "remove the tomato from my groceries list").summary, "Removed tomatoes from shopping.");
    say(&s, "add file taxes to my to-do list");
    assert_eq!(say(&s, "remove taxes from my tasks list").summary, "Removed file taxes from to-do.");
    let lists: i64 = s.conn.query_row("SELECT COUNT(*) FROM lists", [], |r| r.get(0)).expect("a count");
    assert_eq!(lists, 2, "no list was created for a synonym");
}

#[test]
fn reminders_cancelled_by_description() {
    let s = store();
    let r = say(&s, "remind me to buy a birthday card tomorrow at 9am");
    assert!(r.ok, "{r:?}");
    say(&s, "remind me to call mum tomorrow at 10am");
    say(&s, "remind me to call mum about the party tomorrow at 11am");
    let r = say(&s, "cancel my reminder about the birthday cards");
    assert!(r.ok && r.summary.starts_with("Reminder cancelled: buy a birthday card"), "{r:?}");
    let r = say(&s, "cancel my reminder to mum");
    assert!(r.summary.starts_with("Which one: #2 call mum (tomorrow 10:00) or #3 call mum about the party"), "{r:?}");
    assert_eq!(r.choices.len(), 2);
    let pending: i64 =
        s.conn.query_row("SELECT COUNT(*) FROM reminders WHERE state = 'pending'", [], |r| r.get(0)).expect("a count");
    assert_eq!(pending, 2);
    assert_eq!(r.data["candidates"][0]["message"], json!("call mum"));
}
