use super::pause::{Held, LogStatus, paused_message, resumed_message};
use super::{Header, SessionError};
use crate::events::{EngineEvent, EventBus, NoticeLevel, Stamped, WeakBus};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tokio::sync::broadcast::error::RecvError;

/// Appends events to one session log file, one whole line per write. When the file cannot be
/// written the log pauses instead of stopping (`pause.rs`): lines wait in memory and are
/// written once it can be again.
pub struct SessionWriter {
    path: PathBuf,
    /// `None` until (re)opened: at a paused start, and after any failure.
    out: Option<File>,
    /// Kept to start the file again if it is deleted while the program runs.
    header: Header,
    /// Bytes of whole lines in the file (0: not even the header yet). A line a failed write
    /// left half-written is cut back to this before anything else is written.
    good_len: u64,
    held: Option<Held>,
    status: Arc<LogStatus>,
    bus: Option<WeakBus>,
}

impl SessionWriter {
    /// Create `<dir>/<timestamp>-<id>.jsonl` and write its header.
    pub fn create(dir: &Path, header: &Header) -> Result<SessionWriter, SessionError> {
        let err = |source| SessionError::Write { path: dir.to_path_buf(), source };
        crate::files::create_private_dir(dir).map_err(err)?;
        let mut w = SessionWriter::planned(dir, header);
        let file = crate::files::private_append()
            .create_new(true)
            .open(&w.path)
            .map_err(|source| SessionError::Write { path: w.path.clone(), source })?;
        w.out = Some(file);
        w.append(&line(header)?).map_err(|source| SessionError::Write { path: w.path.clone(), source })?;
        Ok(w)
    }

    /// [`SessionWriter::create`], or, when the file cannot be made or written (no room, its
    /// directory unwritable), a writer that starts paused and makes it later. A read-only file
    /// system is still an error: that is a setup to fix, and nothing is written there.
    pub fn create_or_pause(dir: &Path, header: &Header) -> Result<SessionWriter, SessionError> {
        match SessionWriter::create(dir, header) {
            Ok(w) => Ok(w),
            Err(SessionError::Write { source, .. }) if source.kind() != std::io::ErrorKind::ReadOnlyFilesystem => {
                let mut w = SessionWriter::planned(dir, header);
                w.out = None;
                w.pause(&source, None);
                Ok(w)
            }
            Err(e) => Err(e),
        }
    }

    fn planned(dir: &Path, header: &Header) -> SessionWriter {
        let stamp = header.ts.format("%Y%m%d-%H%M%S");
        let short = header.session_id.get(header.session_id.len().saturating_sub(8)..).unwrap_or("session");
        SessionWriter {
            path: dir.join(format!("{stamp}-{short}.jsonl")),
            out: None,
            header: header.clone(),
            good_len: 0,
            held: None,
            status: Arc::default(),
            bus: None,
        }
    }

    /// Say on `bus` when the log pauses and when it is written again (the TUI shows notices).
    pub fn with_bus(mut self, bus: WeakBus) -> SessionWriter {
        self.bus = Some(bus);
        self
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Make the next writes go to `file` (a test's `/dev/full`), as a disk filling up would.
    #[cfg(test)]
    pub(super) fn point_at(&mut self, file: File) {
        self.out = Some(file);
    }

    /// Shared with the front-ends, which say when the log is paused.
    pub fn status(&self) -> Arc<LogStatus> {
        self.status.clone()
    }

    /// Record one event. Failing to write pauses the log rather than failing the caller; only
    /// an event that cannot be serialised is an error.
    pub fn write(&mut self, event: &Stamped) -> Result<(), SessionError> {
        let user = matches!(event.event, EngineEvent::UserMessage { .. });
        // Writing on into a deleted file would lose the rest of the session without a word;
        // a stat per message (not per token) notices it.
        if user && self.held.is_none() && !self.path.exists() {
            self.restart(event.ts)?;
        }
        let line = line(event)?;
        match &mut self.held {
            Some(held) => {
                held.push(line);
                let now = Instant::now();
                if user || held.due(now) {
                    held.tried(now);
                    self.resume();
                }
            }
            None => {
                if let Err(e) = self.append(&line) {
                    self.pause(&e, Some(line));
                }
            }
        }
        if matches!(event.event, EngineEvent::Forgotten { .. }) {
            self.forget();
        }
        Ok(())
    }

    /// The bus closed: a last try at whatever still waits.
    fn close(&mut self) {
        if self.held.is_some() {
            self.resume();
        }
        if let Some(held) = &self.held {
            tracing::error!(
                path = %self.path.display(),
                lost = held.lines.len() as u64 + held.dropped,
                "the session log could not be written before the end; its last events are lost"
            );
        }
    }

    /// Write one line at the end of the file, opening it (header first when it has none) if
    /// needed. On failure the file is let go, so the next try opens it afresh.
    fn append(&mut self, line: &[u8]) -> std::io::Result<()> {
        let result = self.append_open(line);
        if result.is_err() {
            self.out = None;
        }
        result
    }

    fn append_open(&mut self, line: &[u8]) -> std::io::Result<()> {
        if self.out.is_none() {
            self.open()?;
        }
        let Some(out) = self.out.as_mut() else { return Err(std::io::Error::other("session log not open")) };
        out.write_all(line)?;
        self.good_len += line.len() as u64;
        Ok(())
    }

    /// Open the file again where the last whole line ended; one that is gone or shorter than
    /// what was written (deleted, replaced) starts again with the header.
    fn open(&mut self) -> std::io::Result<()> {
        if let Some(dir) = self.path.parent() {
            crate::files::create_private_dir(dir)?;
        }
        let file = crate::files::private_append().open(&self.path)?;
        if file.metadata()?.len() < self.good_len {
            self.good_len = 0;
        }
        file.set_len(self.good_len)?;
        self.out = Some(file);
        if self.good_len == 0 {
            let header = line(&self.header).map_err(std::io::Error::other)?;
            let out = self.out.as_mut().ok_or_else(|| std::io::Error::other("session log not open"))?;
            out.write_all(&header)?;
            self.good_len = header.len() as u64;
        }
        Ok(())
    }

    /// Stop writing to the file: `line` (the one that failed) and those after it wait.
    fn pause(&mut self, error: &std::io::Error, line: Option<Vec<u8>>) {
        self.out = None;
        let mut held = Held::new();
        if let Some(line) = line {
            held.push(line);
        }
        self.held = Some(held);
        let why = paused_message(&self.path, error);
        tracing::warn!("{why}");
        self.status.set(Some(why.clone()));
        self.announce(NoticeLevel::Warn, why);
    }

    /// Try to write what waits, oldest first; stays paused at the first line that fails.
    fn resume(&mut self) {
        let Some(mut held) = self.held.take() else { return };
        let mut kept = 0;
        while let Some(line) = held.shift() {
            if let Err(e) = self.append(&line) {
                held.unshift(line);
                tracing::debug!(path = %self.path.display(), "session log still paused: {e}");
                self.held = Some(held);
                return;
            }
            kept += 1;
        }
        let message = resumed_message(held.since, kept, held.dropped);
        tracing::info!("{message}");
        self.status.set(None);
        self.announce(NoticeLevel::Info, message);
    }

    /// Tell the person (through the bus while it is open, which also logs it) or, with nobody
    /// listening, the log itself.
    fn announce(&mut self, level: NoticeLevel, message: String) {
        if self.bus.as_ref().is_some_and(|b| b.notice(level, message.clone())) {
            return;
        }
        let notice = Stamped { ts: chrono::Utc::now(), event: EngineEvent::Notice { level, message } };
        if let Ok(line) = line(&notice) {
            match &mut self.held {
                Some(held) => held.push(line),
                None => {
                    if let Err(e) = self.append(&line) {
                        self.pause(&e, Some(line));
                    }
                }
            }
        }
    }

    /// A forget happened: take the strings it removed from the database and remove them from
    /// every session log in this log's directory (this one included, which is then reopened),
    /// from the lines still waiting to be written, and from the diagnostics log.
    fn forget(&mut self) {
        let needles = crate::text::privacy::take_handed_over();
        if needles.is_empty() {
            return;
        }
        if let Some(held) = &mut self.held {
            held.scrub(&needles);
        }
        if let Some(dir) = self.path.parent()
            && let Err(e) = super::scrub::scrub_logs(dir, &needles)
        {
            tracing::error!("the session logs could not be rewritten after a forget: {}", crate::describe(&e));
        }
        // The file was replaced by its rewritten copy: append to that one, after its last line.
        self.out = None;
        self.good_len = std::fs::metadata(&self.path).map_or(0, |m| m.len());
        if let Err(e) = crate::logging::scrub_current(&needles) {
            tracing::warn!("the diagnostics log could not be rewritten after a forget: {e}");
        }
        super::journal::settle(&needles);
    }

    /// The log was deleted under us: create it again at the same path, header first, and say
    /// so in it and in the diagnostics log.
    fn restart(&mut self, ts: chrono::DateTime<chrono::Utc>) -> Result<(), SessionError> {
        self.out = None;
        self.good_len = 0;
        let message = "the session log was deleted while running; it starts again here";
        tracing::warn!(path = %self.path.display(), "{message}");
        let notice = Stamped { ts, event: EngineEvent::Notice { level: NoticeLevel::Warn, message: message.into() } };
        let line = line(&notice)?;
        if let Err(e) = self.append(&line) {
            self.pause(&e, Some(line));
        }
        Ok(())
    }
}

/// One JSON value as a log line.
fn line<T: serde::Serialize>(value: &T) -> Result<Vec<u8>, SessionError> {
    let mut line = serde_json::to_vec(value).map_err(|e| SessionError::Encode(e.to_string()))?;
    line.push(b'\n');
    Ok(line)
}

/// The writer thread's state, shared with the one handle that ends the session.
struct Shared {
    /// `None` once the session has ended: nothing more is written, so what the end scrubs
    /// (`Runtime::finish`) stays scrubbed. Held for each whole write.
    writer: Mutex<Option<SessionWriter>>,
    /// Events taken off the bus, missed ones included.
    taken: AtomicU64,
}

impl Shared {
    fn writer(&self) -> std::sync::MutexGuard<'_, Option<SessionWriter>> {
        self.writer.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The session log's writer thread, as [`spawn_writer`] started it.
pub struct WriterHandle {
    thread: JoinHandle<()>,
    shared: Arc<Shared>,
    /// The bus's count of sent events when the writer subscribed.
    base: u64,
}

impl WriterHandle {
    /// Wait for the thread, which ends when the bus closes.
    pub fn join(self) -> std::thread::Result<()> {
        self.thread.join()
    }

    /// End the log: wait until the writer has taken every one of the first `sent` events of
    /// the bus (`EventBus::sent`, read once the session's work is done) or the bus closed
    /// under it, giving up only when it makes no progress for `stall`; then write what
    /// waits and stop. A forget's rewrite of the logs happens on this thread, so a session
    /// must not end before it has. True when the writer caught up.
    pub fn settle(self, sent: u64, stall: Duration) -> bool {
        let mut last = (self.shared.taken.load(Ordering::Acquire), Instant::now());
        let caught_up = loop {
            let taken = self.shared.taken.load(Ordering::Acquire);
            if self.base + taken >= sent || self.thread.is_finished() {
                break true;
            }
            if taken != last.0 {
                last = (taken, Instant::now());
            } else if last.1.elapsed() >= stall {
                break false;
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        if let Some(mut writer) = self.shared.writer().take() {
            writer.close();
        }
        if self.thread.is_finished() {
            let _ = self.thread.join();
        }
        caught_up
    }
}

/// Record every event of `bus` on a dedicated thread until the bus closes or the session is
/// ended ([`WriterHandle::settle`]). Subscribe it before anything is emitted.
pub fn spawn_writer(writer: SessionWriter, bus: &EventBus) -> WriterHandle {
    let mut rx = bus.subscribe();
    let base = bus.sent();
    let shared = Arc::new(Shared { writer: Mutex::new(Some(writer)), taken: AtomicU64::new(0) });
    let mine = shared.clone();
    let thread = std::thread::spawn(move || {
        loop {
            let ev = rx.blocking_recv();
            let mut slot = mine.writer();
            let Some(writer) = slot.as_mut() else { return };
            match ev {
                Ok(ev) => {
                    if let Err(e) = writer.write(&ev) {
                        tracing::error!("{}; event not logged", crate::describe(&e));
                    }
                    mine.taken.fetch_add(1, Ordering::Release);
                }
                Err(RecvError::Lagged(n)) => {
                    tracing::warn!(missed = n, "session log fell behind the event bus");
                    let gap = Stamped {
                        ts: chrono::Utc::now(),
                        event: EngineEvent::Notice {
                            level: NoticeLevel::Warn,
                            message: format!("session log missed {n} events"),
                        },
                    };
                    let _ = writer.write(&gap);
                    mine.taken.fetch_add(n, Ordering::Release);
                }
                Err(RecvError::Closed) => {
                    writer.close();
                    *slot = None;
                    return;
                }
            }
        }
    });
    WriterHandle { thread, shared, base }
}
