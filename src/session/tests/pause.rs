//! A session log that cannot be written pauses and catches up; it never stops the session.

use super::super::*;
use crate::events::{EngineEvent, EventBus, Stamped};
use std::io::Write;

fn said(text: &str) -> Stamped {
    Stamped {
        ts: chrono::Utc::now(),
        event: EngineEvent::UserMessage { thread_id: "t".into(), exchange_id: "x".into(), text: text.into() },
    }
}

fn events(path: &std::path::Path) -> Vec<EngineEvent> {
    let log = read_log(path).unwrap();
    assert!(log.warnings.is_empty(), "{:?}", log.warnings);
    log.entries.into_iter().filter_map(|e| if let LogEntry::Event(s) = e { Some(s.event) } else { None }).collect()
}

fn texts(events: &[EngineEvent]) -> Vec<String> {
    events
        .iter()
        .map(|e| match e {
            EngineEvent::UserMessage { text, .. } => text.clone(),
            EngineEvent::Notice { message, .. } => {
                format!("notice: {}", message.split_whitespace().take(5).collect::<Vec<_>>().join(" "))
            }
            other => format!("{other:?}"),
        })
        .collect()
}

#[test]
fn a_log_that_cannot_be_made_at_start_waits_then_is_written_header_first() {
    let dir = tempfile::tempdir().unwrap();
    // Its directory cannot be made: a file stands where it should be.
    let sessions = dir.path().join("sessions");
    std::fs::write(&sessions, "in the way").unwrap();
    assert!(SessionWriter::create(&sessions, &Header::new("d")).is_err(), "the strict form refuses");
    let header = Header::new("d");
    let mut w = SessionWriter::create_or_pause(&sessions, &header).unwrap();
    let status = w.status();
    let why = status.paused().expect("paused");
    assert!(why.contains("session log is paused") && why.contains(&sessions.display().to_string()), "{why}");
    w.write(&said("one")).unwrap();
    w.write(&said("two")).unwrap();
    assert!(status.paused().is_some());
    std::fs::remove_file(&sessions).unwrap();
    // The next message tries again.
    w.write(&said("three")).unwrap();
    assert_eq!(status.paused(), None);
    assert_eq!(read_log(w.path()).unwrap().header, header);
    assert_eq!(
        texts(&events(w.path())),
        ["notice: the session log is paused:", "one", "two", "three", "notice: the session log is written"]
    );
}

#[test]
fn a_write_that_fails_mid_session_pauses_cuts_the_torn_line_and_catches_up_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = SessionWriter::create(dir.path(), &Header::new("d")).unwrap();
    let status = w.status();
    w.write(&said("before")).unwrap();
    let path = w.path().to_path_buf();
    // The disk fills: writes fail with ENOSPC, and one left half a line behind.
    w.point_at(std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap());
    w.write(&said("during 1")).unwrap();
    assert!(status.paused().unwrap().contains("No space left"), "{:?}", status.paused());
    std::fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(b"{\"ts\":\"2026-").unwrap();
    // Between messages the file is not retried at every event (it is after RETRY_EVERY).
    w.write(&Stamped {
        ts: chrono::Utc::now(),
        event: EngineEvent::ReplyChunk { exchange_id: "x".into(), text: "c".into() },
    })
    .unwrap();
    assert!(status.paused().is_some());
    w.write(&said("after")).unwrap();
    assert_eq!(status.paused(), None);
    let got = texts(&events(&path));
    assert_eq!(got[0], "before");
    assert_eq!(got[1], "during 1");
    assert_eq!(got[2], "notice: the session log is paused:");
    assert!(got[3].contains("ReplyChunk"), "{got:?}");
    assert_eq!(&got[4..], ["after", "notice: the session log is written"]);
}

#[test]
fn through_the_bus_the_pause_is_announced_and_logged_once() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    std::fs::write(&sessions, "in the way").unwrap();
    let bus = EventBus::new();
    let mut seen = bus.subscribe();
    let w = SessionWriter::create_or_pause(&sessions, &Header::new("d")).unwrap().with_bus(bus.downgrade());
    let path = w.path().to_path_buf();
    let status = w.status();
    let handle = spawn_writer(w, &bus);
    bus.emit(said("kept while paused").event);
    std::fs::remove_file(&sessions).unwrap();
    bus.emit(said("written").event);
    // The bus stays open until the log is written again, so the news goes out on it.
    for _ in 0..500 {
        if status.paused().is_none() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    drop(bus);
    handle.join().unwrap();
    assert_eq!(status.paused(), None);
    let got = texts(&events(&path));
    let resumed = got.iter().filter(|t| t.starts_with("notice: the session log is written")).count();
    assert_eq!(resumed, 1, "{got:?}");
    assert_eq!(got[..3], ["notice: the session log is paused:", "kept while paused", "written"]);
    // The resume notice went out on the bus (the TUI shows it).
    let mut on_bus = Vec::new();
    while let Ok(s) = seen.try_recv() {
        on_bus.push(s.event);
    }
    assert!(texts(&on_bus).iter().any(|t| t.starts_with("notice: the session log is written")), "{on_bus:?}");
}
