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
    let handle = spawn_writer(writer, bus.subscribe());
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
fn a_file_that_is_not_a_session_log_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.jsonl");
    std::fs::write(&path, "{\"hello\": 1}\n").unwrap();
    assert!(matches!(read_log(&path), Err(SessionError::NotASessionLog { .. })));
    std::fs::write(&path, "").unwrap();
    assert!(matches!(read_log(&path), Err(SessionError::NotASessionLog { .. })));
    assert!(matches!(read_log(&dir.path().join("missing")), Err(SessionError::Read { .. })));
}
