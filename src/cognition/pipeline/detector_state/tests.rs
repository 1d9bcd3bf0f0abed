use super::*;
use crate::cognition::pipeline::phases::topic_stage;
use crate::cognition::topic::ClassifierParams;
use crate::store::{BoundaryWindow, boundary_window_rows, rolled_back};
use rusqlite::Connection;

/// Messages of a few topics with a contentless one now and then and a silence long enough to
/// reset the detector: each of the window's changes (a message in, one out, cleared).
fn conversation() -> Vec<(i64, String, Vec<f32>)> {
    let mut rng = crate::SplitMix64(91);
    let mut noise = |scale: f64| -> Vec<f32> { (0..384).map(|_| ((rng.next_f64() - 0.5) * scale) as f32).collect() };
    let bases: Vec<Vec<f32>> = (0..4).map(|_| noise(2.0)).collect();
    let mut at = crate::store::now_ts();
    (0..60)
        .map(|i| {
            at += if i == 37 { 10_000 } else { 20 };
            let topic = &bases[(i / 13) % bases.len()];
            let e: Vec<f32> = topic.iter().zip(noise(0.8)).map(|(a, b)| a + b).collect();
            let text = match i % 9 {
                4 => "ok".to_string(),
                _ => format!("message {i} about the garden plans and the {} things we said", i / 13),
            };
            (at, text, e)
        })
        .collect()
}

/// The state as the store has it: read from the rows, not the kept copy.
fn from_rows(c: &Connection, thread: &str, at: i64) -> Option<BoundaryState> {
    let row = TurnRepo(c).boundary_state(thread, at).unwrap()?;
    from_row(row, &BoundaryParams::default()).map(|s| s.state)
}

/// [`stored`] at the tables' stamp now.
fn stored_now(repo: &TurnRepo, thread: &str, at: i64, bp: &BoundaryParams) -> Option<Stored> {
    stored(repo, thread, repo.boundary_stamp().unwrap(), at, bp).unwrap()
}

/// Another thread's write: it moves the stamp, so the next turn reads the rows.
fn written_elsewhere(c: &Connection, at: i64) {
    TurnRepo(c).save_boundary_state("elsewhere", &BoundaryRow::default(), 0..0, at).unwrap();
}

/// What the same messages decide is the same whether the state comes from this process's
/// copy, from the rows every turn, or from the form stored before migration 0024 (the whole
/// state inline in the JSON, converted on every turn), and the rows hold exactly the state
/// kept in process, which is the one the old JSON form gives back.
#[test]
fn the_rows_decide_as_the_whole_state_did() {
    let (cp, bp) = (ClassifierParams::default(), BoundaryParams::default());
    let dbs: Vec<Connection> = (0..3).map(|_| crate::store::open_in_memory().unwrap()).collect();
    // One name each: the kept copies are per thread name, whatever the database.
    let threads = ["kept", "rows", "inline"];
    let (mut fired, mut windows) = (0, std::collections::BTreeSet::new());
    for (at, text, e) in conversation() {
        written_elsewhere(&dbs[1], at);
        if let Some(state) = from_rows(&dbs[2], threads[2], at) {
            let legacy = BoundaryRow { state: state.to_json(), ..BoundaryRow::default() };
            TurnRepo(&dbs[2]).save_boundary_state(threads[2], &legacy, 0..0, at - 1).unwrap();
        }
        let reports: Vec<_> = dbs
            .iter()
            .zip(threads)
            .map(|(c, thread)| topic_stage(c, thread, &text, Some(&e), at, (&cp, &bp)).unwrap().report)
            .collect();
        assert_eq!(reports[0], reports[1], "{text}");
        assert_eq!(reports[0], reports[2], "{text}");
        fired += usize::from(reports[0].is_new_topic);

        let (kept, _) = load(&TurnRepo(&dbs[0]), threads[0], at, &bp).unwrap();
        assert_eq!(stored_now(&TurnRepo(&dbs[0]), threads[0], at, &bp).map(|s| s.kept), Some(true));
        let json_form = BoundaryState::from_json(&kept.to_json(), bp.clone());
        for (c, thread) in dbs.iter().zip(threads) {
            let back = from_rows(c, thread, at);
            assert!(back == json_form, "{thread}, {text}: {:?}", back.map(|s| (s.msg_count, s.recent_seqs())));
            assert_eq!(boundary_window_rows(c, thread), kept.recent.len(), "only the window's rows are left");
        }
        windows.insert((kept.recent_seq, kept.recent.len()));
    }
    assert!(fired >= 3, "the conversation changes topic: {fired}");
    assert!(windows.iter().any(|&(s, n)| s > 0 && n == 10), "the window moved on while full");
    assert!(windows.iter().any(|&(s, n)| s > 0 && n < 10), "and was cleared by the silence");
}

/// The boundary state kept in process is the one the stored rows give back, turn after turn;
/// a state another writer stored, a rolled-back turn's, or an expired one is not taken from
/// what this process kept.
#[test]
fn the_kept_boundary_state_is_the_stored_one() {
    let c = crate::store::open_in_memory().unwrap();
    let (cp, bp) = (ClassifierParams::default(), BoundaryParams::default());
    let mut rng = crate::SplitMix64(44);
    let thread = "kept-boundary-thread";
    let now = crate::store::now_ts();
    let repo = TurnRepo(&c);
    let mut embedding = || -> Vec<f32> { (0..384).map(|_| rng.next_f64() as f32 - 0.5).collect() };
    let text = "we keep talking about the same garden plans";
    let stored = |at: i64| stored_now(&repo, thread, at, &bp).map(|s| (s.kept, s.state));
    for i in 0..12 {
        topic_stage(&c, thread, text, Some(&embedding()), now + i, (&cp, &bp)).unwrap();
        assert_eq!(stored(now + i), from_rows(&c, thread, now + i).map(|s| (true, s)), "turn {i}");
        assert!(crate::store::topics_kept(&c, thread), "the turn's own topic write keeps the copy, turn {i}");
    }

    let mine = stored(now + 12).map(|(_, s)| s);
    let mut row = repo.boundary_state(thread, now + 12).unwrap().unwrap();
    row.state = row.state.replacen("\"msg_count\":", "\"msg_count\":1", 1);
    let seqs = row.window.as_ref().map_or(0..0, BoundaryWindow::seqs);
    repo.save_boundary_state(thread, &row, seqs, now + 12).unwrap();
    assert_eq!(stored(now + 12), from_rows(&c, thread, now + 12).map(|s| (false, s)), "another writer's state is read");
    assert_ne!(from_rows(&c, thread, now + 12), mine);

    topic_stage(&c, thread, text, Some(&embedding()), now + 13, (&cp, &bp)).unwrap();
    let kept = stored(now + 13);
    assert_eq!(kept, from_rows(&c, thread, now + 13).map(|s| (true, s)));
    rolled_back(&c, || topic_stage(&c, thread, text, Some(&embedding()), now + 14, (&cp, &bp))).unwrap();
    assert_eq!(stored(now + 14).map(|(_, s)| s), kept.map(|(_, s)| s), "the rolled-back turn's state is not kept");
    assert_eq!(stored(now + 14).map(|(k, _)| k), Some(false));

    assert_eq!(stored(now + 14 + BOUNDARY_TTL_S), None, "an expired state is not kept");
}

/// An expired state starts cold, and its window's rows are not taken for the new one's: the
/// first save leaves only the new window, whose numbers start again.
#[test]
fn an_expired_state_leaves_no_rows_behind() {
    let c = crate::store::open_in_memory().unwrap();
    let (cp, bp) = (ClassifierParams::default(), BoundaryParams::default());
    let thread = "expiring";
    let conversation = conversation();
    let turn = |at: i64, (_, text, e): &(i64, String, Vec<f32>)| {
        topic_stage(&c, thread, text, Some(e), at, (&cp, &bp)).unwrap();
        let (kept, stored) = load(&TurnRepo(&c), thread, at, &bp).unwrap();
        assert!(from_rows(&c, thread, at) == BoundaryState::from_json(&kept.to_json(), bp.clone()));
        assert_eq!((boundary_window_rows(&c, thread), stored.seqs), (kept.recent.len(), kept.recent_seqs()));
        kept
    };
    for m in &conversation[..14] {
        turn(m.0, m);
    }
    let later = conversation[13].0 + BOUNDARY_TTL_S + 1;
    let (state, stored) = load(&TurnRepo(&c), thread, later, &bp).unwrap();
    assert_eq!((state.msg_count, stored.seqs), (0, 0..0), "cold");
    let seqs: Vec<_> =
        conversation[14..24].iter().enumerate().map(|(i, m)| turn(later + i as i64, m).recent_seq).collect();
    assert_eq!(seqs[0], 0, "{seqs:?}");
}

/// A write by anyone else between a turn's read of the state and its write (another
/// process's, here one that also took a row of the window) makes what the turn knew of the
/// rows unknown: the whole window is written.
#[test]
fn a_write_between_the_read_and_the_save_rewrites_the_window() {
    let c = crate::store::open_in_memory().unwrap();
    let (cp, bp) = (ClassifierParams::default(), BoundaryParams::default());
    let thread = "raced";
    let conversation = conversation();
    for (at, text, e) in &conversation[..12] {
        topic_stage(&c, thread, text, Some(e), *at, (&cp, &bp)).unwrap();
    }
    let at = conversation[12].0;
    let (mut state, stored) = load(&TurnRepo(&c), thread, at, &bp).unwrap();
    assert!(stored.seqs.end - stored.seqs.start >= 3, "{stored:?}");
    let mut row = TurnRepo(&c).boundary_state(thread, at).unwrap().unwrap();
    if let Some(w) = &mut row.window {
        w.messages.pop();
    }
    TurnRepo(&c).save_boundary_state(thread, &row, stored.seqs.clone(), at).unwrap();
    state.update(&conversation[12].2, 0.5, at, crate::cognition::boundary::FocusLevel::None);
    save(&TurnRepo(&c), thread, state.clone(), stored, at).unwrap();
    assert!(from_rows(&c, thread, at) == BoundaryState::from_json(&state.to_json(), bp.clone()));
}
