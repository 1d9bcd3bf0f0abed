use super::{Header, LOG_SCHEMA, SessionError};
use crate::events::{EngineEvent, Stamped};
use serde_json::Value;
use std::path::Path;

/// One line of a session log after the header.
#[derive(Debug, Clone, PartialEq)]
pub enum LogEntry {
    Event(Stamped),
    /// A well-formed line of a type this version does not know (written by a newer one).
    Unknown(Value),
}

/// A session log read back: what could be read, and warnings about what could not.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionLog {
    pub header: Header,
    pub entries: Vec<LogEntry>,
    pub warnings: Vec<String>,
}

/// Read a session log, skipping (with a warning) a torn last line and keeping lines of
/// unknown types as raw JSON. A file whose first line is not a header is an error.
pub fn read_log(path: &Path) -> Result<SessionLog, SessionError> {
    let bytes = std::fs::read(path).map_err(|source| SessionError::Read { path: path.to_path_buf(), source })?;
    parse_log(&String::from_utf8_lossy(&bytes))
        .map_err(|reason| SessionError::NotASessionLog { path: path.to_path_buf(), reason })
}

/// Logs smaller than this are read on the calling thread; larger ones in parallel chunks.
const PARALLEL_FROM: usize = 4 << 20;

/// [`read_log`] over text already in memory; `Err` says why it is not a session log.
pub fn parse_log(text: &str) -> Result<SessionLog, String> {
    let first = text.split_inclusive('\n').next().ok_or_else(|| "the file is empty".to_string())?;
    let (header, mut warnings) = parse_header(first.trim_end())?;
    let body = &text[first.len()..];

    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    let chunks = if body.len() < PARALLEL_FROM || threads == 1 {
        vec![parse_lines(body)]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = split_at_lines(body, threads)
                .into_iter()
                .map(|chunk| scope.spawn(move || parse_lines(chunk)))
                .collect();
            // A panicking parser thread is a bug; its chunk reads as lost rather than taking
            // the replay down.
            handles.into_iter().map(|h| h.join().unwrap_or_default()).collect()
        })
    };
    let mut entries = Vec::new();
    let mut line_base = 1; // the header
    for chunk in chunks {
        entries.extend(chunk.entries);
        warnings.extend(chunk.issues.into_iter().map(|(i, w)| format!("line {}: {w}", line_base + i + 1)));
        line_base += chunk.lines;
    }
    Ok(SessionLog { header, entries, warnings })
}

/// `text` cut into about `n` pieces, each ending at a line end (the last at the text's end).
fn split_at_lines(text: &str, n: usize) -> Vec<&str> {
    let mut out = Vec::with_capacity(n);
    let mut rest = text;
    let size = text.len().div_ceil(n.max(1));
    while rest.len() > size {
        // Bytes, not `str` slicing: `size` may fall inside a character; a cut just after a
        // newline never does.
        let cut = rest.as_bytes()[size..].iter().position(|&b| b == b'\n').map_or(rest.len(), |i| size + i + 1);
        let (chunk, tail) = rest.split_at(cut);
        out.push(chunk);
        rest = tail;
    }
    if !rest.is_empty() {
        out.push(rest);
    }
    out
}

/// What one run of lines held; `issues` are `(line index in the run, message)`.
#[derive(Default)]
struct Chunk {
    entries: Vec<LogEntry>,
    issues: Vec<(usize, String)>,
    lines: usize,
}

fn parse_lines(text: &str) -> Chunk {
    let mut c = Chunk::default();
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        c.lines = i + 1;
        let (entry, issue) = read_line(raw);
        c.entries.extend(entry);
        if let Some(w) = issue {
            c.issues.push((i, w));
        }
    }
    c
}

/// One line with its line end (a last line without one may be torn): what it holds, and what
/// to warn about it.
pub(super) fn read_line(raw: &str) -> (Option<LogEntry>, Option<String>) {
    let complete = raw.ends_with('\n');
    let line = raw.trim_end();
    if line.is_empty() {
        return (None, None);
    }
    // The common case parses once; only a line that fails is looked at again to say why.
    if let Some(ev) = parse_event(line) {
        return (Some(LogEntry::Event(ev)), None);
    }
    match serde_json::from_str::<Value>(line) {
        Ok(value) if value.get("type").and_then(Value::as_str).is_some() => {
            let kind = value.get("type").and_then(Value::as_str).unwrap_or_default();
            let why = match serde_json::from_value::<Stamped>(value.clone()) {
                Err(e) if e.to_string().starts_with("unknown variant") => "is not known to this version".into(),
                Err(e) => format!("has fields this version does not understand ({e})"),
                Ok(_) => "could not be read".into(),
            };
            let issue = format!("event type `{kind}` {why}; kept, not replayed");
            (Some(LogEntry::Unknown(value)), Some(issue))
        }
        Ok(_) => (None, Some("a JSON value with no `type`, skipped".into())),
        Err(_) if !complete => (None, Some("torn last line skipped (the session ended mid-write)".into())),
        Err(e) => (None, Some(format!("not JSON, skipped ({e})"))),
    }
}

/// One event line. The writer puts `ts` first, so the fast path reads it off the front and
/// the event from the whole line (the tagged enum ignores `ts`), which skips the buffering
/// `#[serde(flatten)]` costs; any other shape goes through the derived path.
pub(super) fn parse_event(line: &str) -> Option<Stamped> {
    if let Some(rest) = line.strip_prefix("{\"ts\":\"")
        && let Some(end) = rest.find('"')
        && let Ok(ts) = rest[..end].parse::<chrono::DateTime<chrono::Utc>>()
    {
        let after_ts = &rest[end..];
        let event = match after_ts.strip_prefix("\",\"type\":\"").and_then(|r| r.split_once('"')) {
            Some(("llm_token", _)) => serde_json::from_str::<TokenLine>(line).ok().map(TokenLine::into_event),
            Some(("reply_chunk", _)) => {
                serde_json::from_str::<ReplyChunkLine>(line).ok().map(ReplyChunkLine::into_event)
            }
            Some(("llm_embedded", _)) => serde_json::from_str::<EmbeddedLine>(line).ok().map(EmbeddedLine::into_event),
            _ => None,
        };
        return event.or_else(|| serde_json::from_str(line).ok()).map(|event| Stamped { ts, event });
    }
    serde_json::from_str::<Stamped>(line).ok()
}

// The most frequent (tokens, chunks) and the largest (vectors) events, read straight into their
// fields: the tagged enum would first copy every field into a buffer to find the tag. The
// struct literals below stop compiling if the variants gain a field, so they cannot drift.

#[derive(serde::Deserialize)]
struct TokenLine {
    call_id: String,
    text: String,
    #[serde(default)]
    logprob: Option<f64>,
}

impl TokenLine {
    fn into_event(self) -> EngineEvent {
        EngineEvent::LlmToken { call_id: self.call_id, text: self.text, logprob: self.logprob }
    }
}

#[derive(serde::Deserialize)]
struct ReplyChunkLine {
    exchange_id: String,
    text: String,
}

impl ReplyChunkLine {
    fn into_event(self) -> EngineEvent {
        EngineEvent::ReplyChunk { exchange_id: self.exchange_id, text: self.text }
    }
}

#[derive(serde::Deserialize)]
struct EmbeddedLine {
    call_id: String,
    vectors: super::PackedVectors,
}

impl EmbeddedLine {
    fn into_event(self) -> EngineEvent {
        EngineEvent::LlmEmbedded { call_id: self.call_id, vectors: self.vectors }
    }
}

/// The header, leniently: an older version's header may lack fields this one writes.
pub(super) fn parse_header(line: &str) -> Result<(Header, Vec<String>), String> {
    let not_header = || "the first line is not a session header".to_string();
    let value: Value = serde_json::from_str(line).map_err(|_| not_header())?;
    if value.get("type").and_then(Value::as_str) != Some(Header::KIND) {
        return Err(not_header());
    }
    let text = |key: &str| value.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
    let schema = value.get("schema").and_then(Value::as_u64).and_then(|s| u32::try_from(s).ok()).unwrap_or(1);
    let ts = value
        .get("ts")
        .and_then(Value::as_str)
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        .map(|t| t.with_timezone(&chrono::Utc))
        .unwrap_or_default();
    let header = Header {
        kind: Header::KIND.to_string(),
        ts,
        version: text("version"),
        schema,
        session_id: text("session_id"),
        config_digest: text("config_digest"),
    };
    let mut warnings = Vec::new();
    if schema > LOG_SCHEMA {
        warnings.push(format!(
            "written by chalie-tui {} (log schema {schema}; this version reads {LOG_SCHEMA}): events it added are skipped",
            header.version
        ));
    } else if schema < 2 {
        // Schema 3 only added an event and two defaulted fields: a schema-2 log reads and reruns whole.
        warnings.push(format!(
            "written by chalie-tui {} (log schema {schema}, before embeddings were logged): playback is complete, \
             but a rerun answers embedding calls as failed",
            header.version
        ));
    }
    Ok((header, warnings))
}
