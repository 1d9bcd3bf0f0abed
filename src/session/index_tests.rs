use super::*;
use crate::session::parse_log;
use chrono::TimeZone;

fn stamped(at_ms: i64, event: EngineEvent) -> String {
    let ts = Utc.timestamp_millis_opt(1_763_726_400_000 + at_ms).single().unwrap();
    serde_json::to_string(&Stamped { ts, event }).unwrap()
}

fn user(x: &str) -> EngineEvent {
    EngineEvent::UserMessage { thread_id: "t".into(), exchange_id: x.into(), text: format!("question {x}") }
}

fn chunk(x: &str) -> EngineEvent {
    EngineEvent::ReplyChunk { exchange_id: x.into(), text: "part".into() }
}

/// Every kind of line the reader knows: writer-shaped, reordered fields, an unknown type, a
/// value with no type, not JSON, a model download, and a torn last line.
fn damaged_log() -> String {
    let header = serde_json::to_string(&crate::session::Header::new("digest")).unwrap();
    let reordered = {
        let v: serde_json::Value = serde_json::from_str(&stamped(150, chunk("x1"))).unwrap();
        let mut m = serde_json::Map::new();
        m.insert("type".into(), v["type"].clone());
        for (k, val) in v.as_object().unwrap() {
            m.insert(k.clone(), val.clone());
        }
        serde_json::Value::Object(m).to_string()
    };
    let lines = [
        header,
        stamped(0, user("x1")),
        stamped(100, chunk("x1")),
        reordered,
        r#"{"ts":"2025-11-21T12:00:00Z","type":"from_the_future","x":1}"#.to_string(),
        r#"{"type":"also_from_the_future"}"#.to_string(),
        r#"{"no_type":true}"#.to_string(),
        "not json at all".to_string(),
        String::new(),
        stamped(200, EngineEvent::ModelFetch { step: "s".into(), done: 0, total: 1, finished: false, error: None }),
        stamped(300, user("x2")),
        stamped(400, chunk("x2")),
    ];
    lines.join("\n") + "\n" + r#"{"ts":"2025-11-21T12:00:01Z","type":"reply_ch"#
}

#[test]
fn an_index_plays_the_events_a_full_read_plays() {
    let text = damaged_log();
    let full = LogIndex::from_log(parse_log(&text).unwrap());
    let lazy = LogIndex::from_text(text).unwrap();
    // The one line it cannot judge without parsing: the writer-shaped unknown type, which
    // plays as nothing.
    assert_eq!(lazy.len(), full.len() + 1);
    let played: Vec<Stamped> = (0..lazy.len()).filter_map(|i| lazy.event(i)).collect();
    let all: Vec<Stamped> = (0..full.len()).filter_map(|i| full.event(i)).collect();
    assert_eq!(played, all);
    assert_eq!(all.len(), 5, "two user messages, three chunks; the download is left out");
    let users = |ix: &LogIndex| -> Vec<String> {
        ix.turns()
            .iter()
            .map(|&i| match ix.event(i).map(|s| s.event) {
                Some(EngineEvent::UserMessage { text, .. }) => text,
                other => panic!("{other:?}"),
            })
            .collect()
    };
    assert_eq!(users(&lazy), vec!["question x1", "question x2"]);
    assert_eq!(users(&lazy), users(&full));
    for i in 0..lazy.len() {
        if let Some(s) = lazy.event(i) {
            assert_eq!(lazy.ts(i), Some(s.ts));
        }
    }
}

#[test]
fn an_index_warns_as_the_reader_does_about_what_it_reads_at_once() {
    let text = damaged_log();
    let read = parse_log(&text).unwrap().warnings;
    let lazy = LogIndex::from_text(text).unwrap().warnings;
    // The reader also names the writer-shaped line of an unknown type (line 5).
    let expected: Vec<String> = read.into_iter().filter(|w| !w.starts_with("line 5:")).collect();
    assert_eq!(lazy, expected);
    assert_eq!(lazy.len(), 4, "{lazy:?}");
    assert!(lazy.last().is_some_and(|w| w.contains("torn last line")), "{lazy:?}");
}

#[test]
fn an_index_of_the_committed_fixture_matches_its_full_read() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/replay_session.jsonl");
    let lazy = LogIndex::read(&path).unwrap();
    let full = LogIndex::from_log(crate::session::read_log(&path).unwrap());
    assert_eq!(lazy.len(), full.len());
    assert_eq!(lazy.turns(), full.turns());
    assert!(lazy.warnings.is_empty());
    for i in 0..lazy.len() {
        assert_eq!(lazy.event(i), full.event(i), "event {i}");
    }
    assert!(LogIndex::from_text("{\"not\":\"a header\"}\n".into()).is_err());
}
