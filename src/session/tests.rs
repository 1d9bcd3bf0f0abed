use super::*;
use crate::events::{EngineEvent, EventBus, NoticeLevel};
use std::io::Write;

fn user_msg(text: &str) -> EngineEvent {
    EngineEvent::UserMessage { thread_id: "t1".into(), exchange_id: "x1".into(), text: text.into() }
}

#[test]
fn round_trip_through_the_bus_with_a_torn_last_line() {
    let dir = tempfile::tempdir().unwrap();
    let header = Header::new("abc123");
    let writer = SessionWriter::create(dir.path(), &header).unwrap();
    let path = writer.path().to_path_buf();
    let bus = EventBus::new();
    let handle = spawn_writer(writer, &bus);
    bus.emit(user_msg("hello"));
    bus.notice(NoticeLevel::Warn, "endpoint down; using heuristics");
    drop(bus);
    handle.join().unwrap();

    // Simulate a crash mid-write: half a JSON object with no newline.
    std::fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(b"{\"ts\":\"2026-").unwrap();

    let log = read_log(&path).unwrap();
    assert_eq!(log.header, header);
    assert_eq!(log.entries.len(), 2);
    let LogEntry::Event(first) = &log.entries[0] else { panic!("not an event") };
    assert_eq!(first.event, user_msg("hello"));
    assert_eq!(log.warnings.len(), 1);
    assert!(log.warnings[0].contains("torn"), "{:?}", log.warnings);

    // Every line has ts and type.
    let text = std::fs::read_to_string(&path).unwrap();
    for line in text.lines().take(3) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(v.get("ts").is_some() && v.get("type").is_some(), "{line}");
    }
}

#[test]
fn unknown_event_types_are_kept_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let header = Header::new("d");
    let mut w = SessionWriter::create(dir.path(), &header).unwrap();
    w.write(&crate::events::Stamped { ts: chrono::Utc::now(), event: user_msg("a") }).unwrap();
    let path = w.path().to_path_buf();
    drop(w);
    let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
    writeln!(f, "{{\"ts\":\"2026-11-21T00:00:00Z\",\"type\":\"hologram\",\"x\":1}}").unwrap();
    writeln!(f, "not json at all").unwrap();
    let log = read_log(&path).unwrap();
    assert_eq!(log.entries.len(), 2);
    assert!(matches!(&log.entries[1], LogEntry::Unknown(v) if v["type"] == "hologram"));
    assert_eq!(log.warnings.len(), 2);
}

#[test]
fn a_log_deleted_while_running_starts_again_with_its_header_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let header = Header::new("d");
    let mut w = SessionWriter::create(dir.path(), &header).unwrap();
    let stamp = |e| crate::events::Stamped { ts: chrono::Utc::now(), event: e };
    w.write(&stamp(user_msg("before"))).unwrap();
    let path = w.path().to_path_buf();
    std::fs::remove_dir_all(dir.path()).unwrap();
    w.write(&stamp(user_msg("after"))).unwrap();
    let log = read_log(&path).unwrap();
    assert_eq!(log.header, header);
    let events: Vec<&EngineEvent> =
        log.entries.iter().filter_map(|e| if let LogEntry::Event(s) = e { Some(&s.event) } else { None }).collect();
    assert!(matches!(events[0], EngineEvent::Notice { message, .. } if message.contains("deleted")), "{events:?}");
    assert_eq!(events[1], &user_msg("after"));
}

#[test]
fn a_file_that_is_not_a_session_log_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.jsonl");
    std::fs::write(&path, "{\"hello\": 1}\n").unwrap();
    assert!(matches!(read_log(&path), Err(SessionError::NotASessionLog { .. })));
    std::fs::write(&path, "").unwrap();
    assert!(matches!(read_log(&path), Err(SessionError::NotASessionLog { .. })));
    assert!(matches!(read_log(&dir.path().join("missing")), Err(SessionError::Read { .. })));
}

#[test]
fn older_and_newer_headers_read_with_a_warning() {
    // Schema 1 wrote no `schema` field; a newer version's header has fields this one lacks.
    let old = "{\"type\":\"session_header\",\"ts\":\"2026-01-01T00:00:00Z\",\"version\":\"0.0.9\",\"session_id\":\"s\",\"config_digest\":\"d\"}\n";
    let log = parse_log(old).unwrap();
    assert_eq!((log.header.schema, log.header.version.as_str()), (1, "0.0.9"));
    assert!(log.warnings[0].contains("log schema 1"), "{:?}", log.warnings);

    let newer = "{\"type\":\"session_header\",\"schema\":7,\"flux\":true}\n\
        {\"ts\":\"2026-01-01T00:00:00Z\",\"type\":\"user_message\",\"thread_id\":\"t\",\"exchange_id\":\"x\",\"text\":\"hi\"}\n\
        {\"ts\":\"2026-01-01T00:00:00Z\",\"type\":\"user_message\",\"thread_id\":\"t\"}\n\
        [1,2,3]\n";
    let log = parse_log(newer).unwrap();
    assert_eq!(log.header.schema, 7);
    assert_eq!(log.entries.len(), 2, "the good event, and the bad one kept raw");
    assert!(matches!(&log.entries[0], LogEntry::Event(e) if e.event == user_msg_x("hi")));
    let w = log.warnings.join("\n");
    assert!(w.contains("log schema 7") && w.contains("does not understand") && w.contains("no `type`"), "{w}");
}

#[test]
fn bytes_that_are_not_text_are_not_a_log_and_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.bin");
    std::fs::write(&path, [0xff, 0xfe, 0x00, b'\n', 0xc3]).unwrap();
    assert!(matches!(read_log(&path), Err(SessionError::NotASessionLog { .. })));
    // Every prefix of a real log either reads or is refused, without a panic.
    let good = format!(
        "{}\n{}\n",
        serde_json::to_string(&Header::new("d")).unwrap(),
        serde_json::to_string(&crate::events::Stamped { ts: chrono::Utc::now(), event: user_msg("hello") }).unwrap()
    );
    for cut in 0..good.len() {
        if let Ok(log) = parse_log(&good[..cut]) {
            assert!(log.entries.len() <= 1);
        }
    }
}

fn user_msg_x(text: &str) -> EngineEvent {
    EngineEvent::UserMessage { thread_id: "t".into(), exchange_id: "x".into(), text: text.into() }
}

#[test]
fn a_large_log_read_in_parallel_keeps_order_and_line_numbers() {
    // Multi-byte characters everywhere, so a chunk boundary lands inside one.
    let pad = "xé→".repeat(330);
    let mut text = serde_json::to_string(&Header::new("d")).unwrap() + "\n";
    let n = 3000; // ~6 MB: over the parallel threshold
    for i in 0..n {
        let ev = crate::events::Stamped { ts: chrono::Utc::now(), event: user_msg(&format!("{i} {pad}")) };
        text.push_str(&serde_json::to_string(&ev).unwrap());
        text.push('\n');
        if i == 1500 {
            text.push_str("garbage\n"); // line 1503: header, 1501 events, then this
        }
    }
    text.push_str("{\"ts\":\"2026"); // torn: line n + 3
    let log = parse_log(&text).unwrap();
    assert_eq!(log.entries.len(), n);
    for (i, e) in log.entries.iter().enumerate() {
        let LogEntry::Event(s) = e else { panic!("line {i} not an event") };
        let EngineEvent::UserMessage { text, .. } = &s.event else { panic!("wrong event") };
        assert!(text.starts_with(&format!("{i} ")), "order kept at {i}");
    }
    assert_eq!(log.warnings.len(), 2, "{:?}", log.warnings);
    assert!(log.warnings[0].starts_with("line 1503: not JSON"), "{:?}", log.warnings);
    assert!(log.warnings[1].starts_with(&format!("line {}: torn", n + 3)), "{:?}", log.warnings);
}

#[test]
fn events_read_by_the_fast_paths_round_trip() {
    let events = [
        EngineEvent::LlmToken { call_id: "c".into(), text: "Hel\"lo".into(), logprob: Some(-0.25) },
        EngineEvent::LlmToken { call_id: "c".into(), text: "\n".into(), logprob: None },
        EngineEvent::ReplyChunk { exchange_id: "x".into(), text: "wörld ".into() },
        EngineEvent::LlmEmbedded { call_id: "e".into(), vectors: PackedVectors(vec![vec![0.5, -0.125], vec![]]) },
        user_msg("the general path"),
    ];
    let mut text = serde_json::to_string(&Header::new("d")).unwrap() + "\n";
    let stamped: Vec<crate::events::Stamped> =
        events.iter().map(|e| crate::events::Stamped { ts: chrono::Utc::now(), event: e.clone() }).collect();
    for s in &stamped {
        text.push_str(&serde_json::to_string(s).unwrap());
        text.push('\n');
    }
    let log = parse_log(&text).unwrap();
    assert!(log.warnings.is_empty(), "{:?}", log.warnings);
    let back: Vec<crate::events::Stamped> = log
        .entries
        .into_iter()
        .map(|e| match e {
            LogEntry::Event(s) => s,
            LogEntry::Unknown(v) => panic!("not read: {v}"),
        })
        .collect();
    assert_eq!(back, stamped);
}

#[test]
fn turn_timings_travel_through_the_log() {
    use crate::vocab::Mode;
    use crate::vocab::report::Timings;
    let dir = tempfile::tempdir().unwrap();
    let mut w = SessionWriter::create(dir.path(), &Header::new("d")).unwrap();
    let timings = Timings { routing: 0.25, generation: 812.5, total: 840.0, ..Timings::default() };
    let done = |timings_ms| EngineEvent::ReplyDone {
        thread_id: "t1".into(),
        exchange_id: "x1".into(),
        mode: Mode::Respond,
        text: "Paris.".into(),
        cancelled: false,
        failed: None,
        timings_ms,
        reply_source: None,
    };
    w.write(&crate::events::Stamped { ts: chrono::Utc::now(), event: user_msg("capital of France?") }).unwrap();
    w.write(&crate::events::Stamped { ts: chrono::Utc::now(), event: done(Some(timings)) }).unwrap();
    let log = read_log(w.path()).unwrap();
    let turns = recorded_turns(&log);
    assert_eq!(turns[0].timings_ms, Some(timings));
    assert_eq!(turns[0].reply.as_deref(), Some("Paris."));
    // A line from before timings were recorded still reads.
    let old = serde_json::to_string(&crate::events::Stamped { ts: chrono::Utc::now(), event: done(None) }).unwrap();
    assert!(!old.contains("timings_ms"), "{old}");
}

mod pause;
mod schema;

/// `Runtime::finish` ends the log with `settle`: it must wait for a backlog the writer has
/// not reached (a forget's rewrite of the logs among it) even while a straggler keeps the bus
/// open, and nothing may be written after it, where the end's own scrub would miss it.
#[test]
fn the_end_waits_for_the_writer_s_backlog_and_its_forget_and_nothing_is_written_after() {
    let dir = tempfile::tempdir().unwrap();
    let writer = SessionWriter::create(dir.path(), &Header::new("end")).unwrap();
    let path = writer.path().to_path_buf();
    let bus = EventBus::new();
    let handle = spawn_writer(writer, &bus);
    for i in 0..2000 {
        bus.emit(user_msg(&format!("message {i} about Qorvex7")));
    }
    crate::text::privacy::hand_over(&["Qorvex7".to_string()]);
    bus.emit(EngineEvent::Forgotten { exchanges: vec!["x1".into()], rows: 2000 });
    assert!(handle.settle(bus.sent(), std::time::Duration::from_secs(60)), "the writer caught up");
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.matches("\"type\":\"user_message\"").count(), 2000);
    assert!(!text.contains("Qorvex7"), "the forget's rewrite ran before the end");
    bus.emit(user_msg("said after the end"));
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert!(!std::fs::read_to_string(&path).unwrap().contains("after the end"));
}
