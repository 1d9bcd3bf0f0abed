//! A session log opened for playback without parsing it. A long session's log is mostly model
//! tokens and embedding vectors (a 10k-turn log is ~100 MB and 300k events); parsing all of it
//! before the first frame took over a second (docs/architecture.md §9, replay). Playback shows
//! one event at a time, so the log is indexed instead: where each line is, which lines are user
//! messages (the turn keys), and the few lines that need the careful reading of
//! [`super::read_log`]; an event is parsed when it is played.
//!
//! The index reads a line in the writer's shape (`{"ts":"…","type":"…",…}`) by its first two
//! fields alone. A line of another shape, a torn one or one that is not JSON goes through the
//! reader's own line logic, with the same warnings. A line in the writer's shape whose event
//! does not parse (a type a newer version added, a damaged timestamp) is found when it is
//! played and plays as nothing; only the headless and rerun paths, which read everything, warn
//! about those.

use super::reader::{parse_event, parse_header, read_line};
use super::{Header, LogEntry, SessionError, SessionLog};
use crate::events::{EngineEvent, Stamped};
use chrono::{DateTime, Utc};
use std::path::Path;

/// One event of the log: where its line is, or the event itself when it was read at once.
#[derive(Debug, Clone)]
enum Slot {
    Line { start: usize, end: usize },
    Read(Box<Stamped>),
}

/// The events of a log in order, parsed on demand.
#[derive(Debug, Clone)]
pub struct LogIndex {
    pub header: Header,
    /// What the reader would say about the lines read at once, as `line N: …`.
    pub warnings: Vec<String>,
    text: String,
    slots: Vec<Slot>,
    /// Slot of each user message.
    turns: Vec<usize>,
}

/// The event type a writer-shaped line names, read off its front.
fn tag(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("{\"ts\":\"")?;
    let after = &rest[rest.find('"')?..];
    after.strip_prefix("\",\"type\":\"").and_then(|r| r.split_once('"')).map(|(t, _)| t)
}

/// The timestamp at the front of a writer-shaped line.
fn line_ts(line: &str) -> Option<DateTime<Utc>> {
    let rest = line.strip_prefix("{\"ts\":\"")?;
    rest[..rest.find('"')?].parse().ok()
}

/// Playback leaves out what belongs to the machine the session ran on rather than the session:
/// model downloads, and missing built-in files (the first-run screen would cover the replay).
fn for_playback(mut s: Stamped) -> Option<Stamped> {
    match &mut s.event {
        EngineEvent::ModelFetch { .. } => return None,
        EngineEvent::ModelsResolved { missing_builtin, missing_builtin_bytes, .. } => {
            missing_builtin.clear();
            *missing_builtin_bytes = 0;
        }
        _ => {}
    }
    Some(s)
}

impl LogIndex {
    /// Index the log at `path`.
    pub fn read(path: &Path) -> Result<LogIndex, SessionError> {
        let bytes = std::fs::read(path).map_err(|source| SessionError::Read { path: path.to_path_buf(), source })?;
        // Checking is far cheaper than the lossy copy; only a damaged file pays for that.
        let text = String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        LogIndex::from_text(text).map_err(|reason| SessionError::NotASessionLog { path: path.to_path_buf(), reason })
    }

    /// [`LogIndex::read`] over text in memory; `Err` says why it is not a session log.
    pub fn from_text(text: String) -> Result<LogIndex, String> {
        let first = text.split_inclusive('\n').next().ok_or_else(|| "the file is empty".to_string())?;
        let (header, mut warnings) = parse_header(first.trim_end())?;
        let (mut slots, mut turns) = (Vec::new(), Vec::new());
        let mut start = first.len();
        let mut number = 1; // the header
        while start < text.len() {
            let end = text[start..].find('\n').map_or(text.len(), |i| start + i + 1);
            number += 1;
            let raw = &text[start..end];
            let line = raw.trim_end();
            match tag(line).filter(|_| raw.ends_with('\n')) {
                Some("model_fetch") => {}
                Some(kind) => {
                    if kind == "user_message" {
                        turns.push(slots.len());
                    }
                    slots.push(Slot::Line { start, end: start + line.len() });
                }
                None => {
                    let (entry, issue) = read_line(raw);
                    warnings.extend(issue.map(|w| format!("line {number}: {w}")));
                    if let Some(s) = entry.and_then(|e| match e {
                        LogEntry::Event(s) => for_playback(s),
                        LogEntry::Unknown(_) => None,
                    }) {
                        if matches!(s.event, EngineEvent::UserMessage { .. }) {
                            turns.push(slots.len());
                        }
                        slots.push(Slot::Read(Box::new(s)));
                    }
                }
            }
            start = end;
        }
        Ok(LogIndex { header, warnings, text, slots, turns })
    }

    /// An index over a log already read (every event held, none left to parse).
    pub fn from_log(log: SessionLog) -> LogIndex {
        let slots: Vec<Slot> = log
            .entries
            .into_iter()
            .filter_map(|e| match e {
                LogEntry::Event(s) => for_playback(s),
                LogEntry::Unknown(_) => None,
            })
            .map(|s| Slot::Read(Box::new(s)))
            .collect();
        let turns = (0..slots.len())
            .filter(|&i| matches!(&slots[i], Slot::Read(s) if matches!(s.event, EngineEvent::UserMessage { .. })))
            .collect();
        LogIndex { header: log.header, warnings: log.warnings, text: String::new(), slots, turns }
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Event indexes of the user messages.
    pub fn turns(&self) -> &[usize] {
        &self.turns
    }

    /// When event `i` happened.
    pub fn ts(&self, i: usize) -> Option<DateTime<Utc>> {
        match self.slots.get(i)? {
            Slot::Line { start, end } => line_ts(&self.text[*start..*end]),
            Slot::Read(s) => Some(s.ts),
        }
    }

    /// Event `i`, parsed now; `None` past the end or for a line this version cannot read.
    pub fn event(&self, i: usize) -> Option<Stamped> {
        match self.slots.get(i)? {
            Slot::Line { start, end } => parse_event(&self.text[*start..*end]).and_then(for_playback),
            Slot::Read(s) => Some((**s).clone()),
        }
    }
}

#[cfg(test)]
#[path = "index_tests.rs"]
mod tests;
