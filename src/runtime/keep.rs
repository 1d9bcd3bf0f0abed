//! A message the disk has no room for is not dropped: it stays in memory and is saved again
//! after a pause, and the person is told why while it waits (issue 23: a full disk).

use super::Runtime;
use crate::events::NoticeLevel;
use crate::store::StoreError;
use std::time::Duration;

/// The pauses between tries of a message the disk had no room for; the last one repeats.
pub const FULL_DISK_PAUSES: [Duration; 4] =
    [Duration::from_millis(250), Duration::from_secs(1), Duration::from_secs(2), Duration::from_secs(5)];

/// How many tries `ask` gives a message before it gives up and prints it back.
pub const ASK_TRIES: usize = 4;

#[derive(Debug, thiserror::Error)]
pub enum IntakeError {
    /// The message is returned whole, so that giving up never loses it.
    #[error(
        "the disk is full (or cannot be written): your message was not saved ({tries} tries); free some space and \
         send it again. It was:\n{text}"
    )]
    DiskFull { tries: usize, text: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The pause before try number `done + 1`.
pub fn pause_after(done: usize) -> Duration {
    FULL_DISK_PAUSES[done.saturating_sub(1).min(FULL_DISK_PAUSES.len() - 1)]
}

impl Runtime {
    /// [`Runtime::intake`] that holds on to the message through a full disk: tried again
    /// after each of [`FULL_DISK_PAUSES`], `tries` times in all (`None`: until it is saved),
    /// with one notice saying why it waits. Any other store error is returned at once.
    pub async fn intake_kept(
        &self,
        thread: Option<String>,
        text: String,
        tries: Option<usize>,
    ) -> Result<(String, String), IntakeError> {
        let mut done = 0;
        loop {
            match self.intake(thread.clone(), text.clone()).await {
                Ok(saved) => {
                    if done > 0 {
                        self.bus.notice(NoticeLevel::Info, "there was room again: the waiting message is saved");
                    }
                    return Ok(saved);
                }
                Err(e) if e.is_disk_full() => {
                    done += 1;
                    if tries.is_some_and(|t| done >= t) {
                        return Err(IntakeError::DiskFull { tries: done, text });
                    }
                    if done == 1 {
                        self.bus.notice(
                            NoticeLevel::Error,
                            "the disk is full (or cannot be written): your message is kept and will be saved as soon as there is room",
                        );
                    }
                    tracing::warn!(tries = done, "message not saved: the disk is full; trying again");
                    tokio::time::sleep(pause_after(done)).await;
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pauses_grow_then_hold() {
        assert_eq!(pause_after(1), Duration::from_millis(250));
        assert_eq!(pause_after(3), Duration::from_secs(2));
        assert_eq!(pause_after(4), Duration::from_secs(5));
        assert_eq!(pause_after(40), Duration::from_secs(5));
    }
}
