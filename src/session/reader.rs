use super::{Header, SessionError};
use crate::events::Stamped;
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
    let text =
        std::fs::read_to_string(path).map_err(|source| SessionError::Read { path: path.to_path_buf(), source })?;
    let not_log = |reason: String| SessionError::NotASessionLog { path: path.to_path_buf(), reason };

    let mut lines = text.split_inclusive('\n').enumerate();
    let (_, first) = lines.next().ok_or_else(|| not_log("the file is empty".into()))?;
    let header: Header = serde_json::from_str(first.trim_end())
        .ok()
        .filter(|h: &Header| h.kind == Header::KIND)
        .ok_or_else(|| not_log("the first line is not a session header".into()))?;

    let mut entries = Vec::new();
    let mut warnings = Vec::new();
    for (i, raw) in lines {
        let complete = raw.ends_with('\n');
        let line = raw.trim_end();
        if line.is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(value) => match serde_json::from_value::<Stamped>(value.clone()) {
                Ok(ev) => entries.push(LogEntry::Event(ev)),
                Err(e) => {
                    let kind = value.get("type").and_then(Value::as_str).unwrap_or("?").to_string();
                    warnings.push(format!("line {}: event type `{kind}` not understood ({e})", i + 1));
                    entries.push(LogEntry::Unknown(value));
                }
            },
            Err(_) if !complete => {
                warnings.push(format!("line {}: torn last line skipped (the session ended mid-write)", i + 1));
            }
            Err(e) => warnings.push(format!("line {}: not JSON, skipped ({e})", i + 1)),
        }
    }
    Ok(SessionLog { header, entries, warnings })
}
