use super::*;
use crate::store::purge::{Purge, purge_in};
use crate::store::{open, open_in_memory, rolled_back};
use rusqlite::Connection;

fn unit(i: usize) -> Vec<f32> {
    (0..384).map(|j| if j == i % 384 { 1.0 } else { 0.0 }).collect()
}

/// A state whose window holds messages `seqs` (message `s` is `unit(s)`, weight `s / 100`).
fn row(json: &str, seqs: Range<u64>) -> BoundaryRow {
    let messages = seqs.clone().map(|s| (s as f32 / 100.0, unit(s as usize))).collect();
    BoundaryRow {
        state: json.to_string(),
        ewma_fast: Some(vec![0.25; 384]),
        ewma_slow: Some(vec![-0.5; 384]),
        window: Some(BoundaryWindow { first_seq: seqs.start, messages }),
    }
}

fn rows(c: &Connection) -> Vec<(String, i64)> {
    let mut stmt = c.prepare("SELECT thread_id, seq FROM boundary_recent ORDER BY thread_id, seq").unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
}

fn seqs(thread: &str, s: Range<i64>) -> Vec<(String, i64)> {
    s.map(|s| (thread.to_string(), s)).collect()
}

/// A state comes back as written, window included; a save writes the messages not stored yet
/// and deletes the ones that left, and leaves other threads' alone.
#[test]
fn the_window_moves_by_its_new_messages() {
    let c = open_in_memory().unwrap();
    let repo = TurnRepo(&c);
    repo.save_boundary_state("other", &row("{}", 0..3), 0..0, 100).unwrap();
    let first = row("{\"msg_count\":4}", 0..4);
    repo.save_boundary_state("t", &first, 0..0, 100).unwrap();
    assert_eq!(repo.boundary_state("t", 100).unwrap(), Some(first));
    let moved = row("{\"msg_count\":5}", 2..5);
    // Message 2 and 3 as stored say otherwise: a save with them counted as stored keeps them.
    c.execute("UPDATE boundary_recent SET weight = 9 WHERE thread_id = 't' AND seq = 2", []).unwrap();
    repo.save_boundary_state("t", &moved, 0..4, 101).unwrap();
    let back = repo.boundary_state("t", 101).unwrap().unwrap();
    assert_eq!(back.window.as_ref().map(|w| (w.first_seq, w.messages[0].0, w.messages[2].0)), Some((2, 9.0, 0.04)));
    assert_eq!(rows(&c), [seqs("other", 0..3), seqs("t", 2..5)].concat());
    // Written again as not stored, every message is.
    repo.save_boundary_state("t", &moved, 0..0, 102).unwrap();
    assert_eq!(repo.boundary_state("t", 102).unwrap(), Some(moved));
}

/// A state stored before migration 0024 (its window inline in the JSON) reads with no window;
/// its next save in the new form writes the whole window.
#[test]
fn an_inline_state_reads_as_before_and_converts_on_save() {
    let c = open_in_memory().unwrap();
    let repo = TurnRepo(&c);
    let json = r#"{"msg_count":3,"ewma_fast":"AAAAPwAAgD4=","recent":[[0.75,"AACAPwAAAAA="]]}"#;
    c.execute(
        "INSERT INTO boundary_state (thread_id, state, updated_at, expires_at) VALUES ('t', ?1, 1, 1000)",
        [json],
    )
    .unwrap();
    let old = repo.boundary_state("t", 10).unwrap().unwrap();
    assert_eq!(old, BoundaryRow { state: json.into(), ewma_fast: None, ewma_slow: None, window: None });
    let new = row("{}", 0..1);
    repo.save_boundary_state("t", &new, 0..0, 10).unwrap();
    assert_eq!(repo.boundary_state("t", 10).unwrap(), Some(new));
    // And back to the inline form (what a test writes for an old state): the rows go.
    repo.save_boundary_state("t", &old, 0..1, 10).unwrap();
    assert_eq!((repo.boundary_state("t", 10).unwrap(), rows(&c)), (Some(old), vec![]));
}

/// A window whose rows are not all there, or a bad number, is an unreadable state; an expired
/// one is none; the next save of a new state leaves only its own window's rows.
#[test]
fn a_broken_or_expired_window_is_no_state() {
    let c = open_in_memory().unwrap();
    let repo = TurnRepo(&c);
    repo.save_boundary_state("t", &row("{}", 5..9), 0..0, 100).unwrap();
    assert_eq!(repo.boundary_state("t", 100 + BOUNDARY_TTL_S).unwrap(), None, "expired");
    c.execute("DELETE FROM boundary_recent WHERE seq = 7", []).unwrap();
    assert_eq!(repo.boundary_state("t", 100).unwrap(), None, "a row missing");
    repo.save_boundary_state("t", &row("{}", 5..9), 0..0, 100).unwrap();
    c.execute("UPDATE boundary_state SET recent_seq = -1", []).unwrap();
    assert_eq!(repo.boundary_state("t", 100).unwrap(), None, "a negative number");
    c.execute("UPDATE boundary_state SET recent_seq = NULL", []).unwrap();
    assert_eq!(repo.boundary_state("t", 100).unwrap(), None, "a length without a number");
    repo.save_boundary_state("t", &row("{}", 0..2), 0..0, 100).unwrap();
    assert_eq!(rows(&c), seqs("t", 0..2));
}

/// The stamp moves on every write to either table, and a rolled-back write puts the old one
/// back with the old rows (what the state kept in `cognition::pipeline::detector_state`
/// relies on).
#[test]
fn the_boundary_stamp_moves_on_every_write() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.sqlite");
    let (c, other) = (open(&path).unwrap(), open(&path).unwrap());
    let repo = TurnRepo(&c);
    let mut seen = vec![repo.boundary_stamp().unwrap()];
    let mut moved = |at: i64| {
        assert!(!seen.contains(&at), "a stamp comes back after a write");
        seen.push(at);
    };
    moved(repo.save_boundary_state("a", &row("{}", 0..2), 0..0, 100).unwrap());
    moved(repo.save_boundary_state("a", &row("{}", 0..2), 0..2, 100).unwrap());
    let kept = repo.save_boundary_state("b", &row("{}", 0..1), 0..0, 100).unwrap();
    moved(kept);
    let before = (repo.boundary_state("b", 100).unwrap(), rows(&c));
    rolled_back(&c, || repo.save_boundary_state("b", &row("{\"acc\":1.0}", 1..3), 0..1, 101)).unwrap();
    assert_eq!(repo.boundary_stamp().unwrap(), kept, "a rolled-back write puts its stamp back");
    assert_eq!((repo.boundary_state("b", 100).unwrap(), rows(&c)), before, "and its rows");
    other.execute("UPDATE boundary_state SET state = '{}' WHERE thread_id = 'a'", []).unwrap();
    moved(repo.boundary_stamp().unwrap());
    other.execute("UPDATE boundary_recent SET weight = 0.5 WHERE thread_id = 'a'", []).unwrap();
    moved(repo.boundary_stamp().unwrap());
    other.execute("DELETE FROM boundary_recent WHERE thread_id = 'a' AND seq = 1", []).unwrap();
    moved(repo.boundary_stamp().unwrap());
    other.execute("INSERT INTO boundary_recent VALUES ('a', 1, 0.5, x'00')", []).unwrap();
    moved(repo.boundary_stamp().unwrap());
    other.execute("DELETE FROM boundary_state WHERE thread_id = 'a'", []).unwrap();
    moved(repo.boundary_stamp().unwrap());
}

/// A forget reaches the state's JSON as before; the window (numbers only) stays whole and the
/// state stays readable.
#[test]
fn a_forget_leaves_the_window_readable() {
    let c = open_in_memory().unwrap();
    let repo = TurnRepo(&c);
    let before = row(r#"{"msg_count":4,"note":"roses"}"#, 3..7);
    repo.save_boundary_state("t", &before, 0..0, 100).unwrap();
    purge_in(&c, &Purge { needles: vec!["roses".into()], ..Purge::default() }).unwrap();
    let after = repo.boundary_state("t", 100).unwrap().unwrap();
    assert!(!after.state.contains("roses") && after.state.contains("msg_count"), "{}", after.state);
    assert_eq!(BoundaryRow { state: before.state.clone(), ..after }, before);
}
