use super::{Header, SessionError};
use crate::events::Stamped;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use tokio::sync::broadcast::{self, error::RecvError};

/// Appends events to one session log file, flushing each line.
pub struct SessionWriter {
    path: PathBuf,
    out: BufWriter<File>,
    /// Kept to start the file again if it is deleted while the program runs.
    header: Header,
}

impl SessionWriter {
    /// Create `<dir>/<timestamp>-<id>.jsonl` and write its header.
    pub fn create(dir: &Path, header: &Header) -> Result<SessionWriter, SessionError> {
        let err = |source| SessionError::Write { path: dir.to_path_buf(), source };
        crate::files::create_private_dir(dir).map_err(err)?;
        let stamp = header.ts.format("%Y%m%d-%H%M%S");
        let short = header.session_id.get(header.session_id.len().saturating_sub(8)..).unwrap_or("session");
        let path = dir.join(format!("{stamp}-{short}.jsonl"));
        let file = crate::files::private_append()
            .create_new(true)
            .open(&path)
            .map_err(|source| SessionError::Write { path: path.clone(), source })?;
        let mut w = SessionWriter { path, out: BufWriter::new(file), header: header.clone() };
        w.write_json(header)?;
        Ok(w)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn write(&mut self, event: &Stamped) -> Result<(), SessionError> {
        // Writing on into a deleted file would lose the rest of the session without a word;
        // a stat per message (not per token) notices it.
        if matches!(event.event, crate::events::EngineEvent::UserMessage { .. }) && !self.path.exists() {
            self.restart(event.ts)?;
        }
        self.write_json(event)?;
        if matches!(event.event, crate::events::EngineEvent::Forgotten { .. }) {
            self.forget()?;
        }
        Ok(())
    }

    /// A forget happened: take the strings it removed from the database and remove them from
    /// every session log in this log's directory (this one included, which is then reopened),
    /// and from the diagnostics log.
    fn forget(&mut self) -> Result<(), SessionError> {
        let needles = crate::text::privacy::take_handed_over();
        if needles.is_empty() {
            return Ok(());
        }
        let err = |source| SessionError::Write { path: self.path.clone(), source };
        self.out.flush().map_err(err)?;
        if let Some(dir) = self.path.parent() {
            super::scrub::scrub_logs(dir, &needles)?;
        }
        let file = crate::files::private_append().open(&self.path).map_err(err)?;
        self.out = BufWriter::new(file);
        if let Err(e) = crate::logging::scrub_current(&needles) {
            tracing::warn!("the diagnostics log could not be rewritten after a forget: {e}");
        }
        Ok(())
    }

    /// The log was deleted under us: create it again at the same path, header first, and say
    /// so in it and in the diagnostics log.
    fn restart(&mut self, ts: chrono::DateTime<chrono::Utc>) -> Result<(), SessionError> {
        let err = |source| SessionError::Write { path: self.path.clone(), source };
        if let Some(dir) = self.path.parent() {
            crate::files::create_private_dir(dir).map_err(err)?;
        }
        let file = crate::files::private_append().create(true).open(&self.path).map_err(err)?;
        self.out = BufWriter::new(file);
        let header = self.header.clone();
        self.write_json(&header)?;
        let message = "the session log was deleted while running; it starts again here";
        tracing::warn!(path = %self.path.display(), "{message}");
        let notice =
            crate::events::EngineEvent::Notice { level: crate::events::NoticeLevel::Warn, message: message.into() };
        self.write_json(&Stamped { ts, event: notice })
    }

    fn write_json<T: serde::Serialize>(&mut self, value: &T) -> Result<(), SessionError> {
        let err = |source| SessionError::Write { path: self.path.clone(), source };
        let mut line = serde_json::to_vec(value).map_err(|e| err(e.into()))?;
        line.push(b'\n');
        self.out.write_all(&line).map_err(err)?;
        self.out.flush().map_err(err)
    }
}

/// Record every event from `rx` on a dedicated thread until the bus closes.
/// Returns the join handle so callers can wait for the final flush.
pub fn spawn_writer(mut writer: SessionWriter, mut rx: broadcast::Receiver<Stamped>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        loop {
            match rx.blocking_recv() {
                Ok(ev) => {
                    if let Err(e) = writer.write(&ev) {
                        tracing::error!("{}; session logging stops", crate::describe(&e));
                        return;
                    }
                }
                Err(RecvError::Lagged(n)) => {
                    tracing::warn!(missed = n, "session log fell behind the event bus");
                    let gap = crate::events::Stamped {
                        ts: chrono::Utc::now(),
                        event: crate::events::EngineEvent::Notice {
                            level: crate::events::NoticeLevel::Warn,
                            message: format!("session log missed {n} events"),
                        },
                    };
                    let _ = writer.write(&gap);
                }
                Err(RecvError::Closed) => return,
            }
        }
    })
}
