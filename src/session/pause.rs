//! A session log that cannot be written (a full disk, its directory gone or made unwritable)
//! is no reason to refuse or lose a turn: the conversation goes on, the lines wait in memory
//! (up to [`HOLD_BYTES`]) and are written, in order, once the file takes them again. The
//! rest of the program reads [`LogStatus`] to tell the person the log is paused, and why.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The most the waiting lines may hold; past it, later lines are counted and dropped, so a
/// long stretch without room costs bounded memory. A turn's events are a few kilobytes.
pub const HOLD_BYTES: usize = 16 << 20;

/// How often a paused log tries the file again between messages (a new message always tries).
pub const RETRY_EVERY: Duration = Duration::from_secs(1);

/// Whether the session log is paused, and why: written by the writer thread, read by the
/// front-ends to say so.
#[derive(Debug, Default)]
pub struct LogStatus {
    paused: Mutex<Option<String>>,
}

impl LogStatus {
    /// The sentence to show while the log is paused; `None` while it is written.
    pub fn paused(&self) -> Option<String> {
        self.paused.lock().map_or(None, |p| p.clone())
    }

    pub(super) fn set(&self, why: Option<String>) {
        if let Ok(mut p) = self.paused.lock() {
            *p = why;
        }
    }
}

/// Lines that could not be written yet, oldest first.
pub(super) struct Held {
    pub lines: VecDeque<Vec<u8>>,
    bytes: usize,
    /// Lines dropped because [`HOLD_BYTES`] was reached.
    pub dropped: u64,
    pub since: chrono::DateTime<chrono::Utc>,
    last_try: Instant,
}

impl Held {
    pub fn new() -> Held {
        Held { lines: VecDeque::new(), bytes: 0, dropped: 0, since: chrono::Utc::now(), last_try: Instant::now() }
    }

    pub fn push(&mut self, line: Vec<u8>) {
        if self.bytes + line.len() > HOLD_BYTES {
            self.dropped += 1;
        } else {
            self.bytes += line.len();
            self.lines.push_back(line);
        }
    }

    /// Put back a line taken off the front when writing it failed again.
    pub fn unshift(&mut self, line: Vec<u8>) {
        self.bytes += line.len();
        self.lines.push_front(line);
    }

    pub fn shift(&mut self) -> Option<Vec<u8>> {
        let line = self.lines.pop_front()?;
        self.bytes -= line.len();
        Some(line)
    }

    /// Whether it is time to try the file again.
    pub fn due(&self, now: Instant) -> bool {
        now.duration_since(self.last_try) >= RETRY_EVERY
    }

    pub fn tried(&mut self, now: Instant) {
        self.last_try = now;
    }

    /// A forget reaches the waiting lines too: they are the log's lines, only not written yet.
    pub fn scrub(&mut self, needles: &[String]) {
        for line in &mut self.lines {
            let text = String::from_utf8_lossy(line);
            let clean = super::scrub::scrub_line(&text, needles);
            if clean != text {
                self.bytes = self.bytes - line.len() + clean.len();
                *line = clean.into_bytes();
            }
        }
    }
}

/// What the person reads while the log is paused.
pub(super) fn paused_message(path: &std::path::Path, error: &std::io::Error) -> String {
    format!(
        "the session log is paused: cannot write {}: {error}; the conversation goes on, and the log is written \
         again (with what happened meanwhile) once there is room",
        path.display()
    )
}

/// What the log and the person read once it is written again.
pub(super) fn resumed_message(since: chrono::DateTime<chrono::Utc>, kept: usize, dropped: u64) -> String {
    let mut m = format!(
        "the session log is written again after a pause since {}: {kept} events kept",
        since.format("%Y-%m-%d %H:%M:%S UTC")
    );
    if dropped > 0 {
        m.push_str(&format!(", {dropped} dropped (more than {} MiB waited)", HOLD_BYTES >> 20));
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_lines_keep_their_order_and_their_bound() {
        let mut h = Held::new();
        h.push(b"a\n".to_vec());
        h.push(vec![b'x'; HOLD_BYTES]);
        h.push(b"b\n".to_vec());
        assert_eq!(h.dropped, 1);
        let first = h.shift().unwrap();
        h.unshift(first);
        assert_eq!(h.lines.iter().map(|l| l.as_slice()).collect::<Vec<_>>(), [b"a\n", b"b\n"]);
    }

    #[test]
    fn a_forget_reaches_the_waiting_lines() {
        let mut h = Held::new();
        h.push(b"{\"text\":\"my pin is 4921\"}\n".to_vec());
        h.scrub(&["4921".to_string()]);
        assert_eq!(h.shift().unwrap(), b"{\"text\":\"my pin is [forgotten]\"}\n");
        assert_eq!(h.bytes, 0);
    }
}
