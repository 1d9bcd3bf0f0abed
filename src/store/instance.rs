//! One engine per database. Two processes running the engine on one file would each start the
//! background workers, each re-queue the other's running jobs as "interrupted" at start-up
//! (so a job runs twice) and each fire due reminders. So the process that runs the engine (the
//! TUI, `ask`) holds an exclusive lock on `<database>.lock` for as long as it lives; a second
//! one is refused with a message naming the holder. Readers (`audit`, `memory`, `status`)
//! need no lock: WAL lets them read while the engine writes.
//!
//! The lock is the operating system's (`flock` on Unix): it goes away with the process, kill
//! -9 included, so a crash never leaves a stale lock behind.

use super::StoreError;
use std::fs::{File, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// Held while this process runs the engine on a database; dropping it releases the lock.
#[derive(Debug)]
pub struct InstanceLock {
    _file: File,
    path: PathBuf,
}

impl InstanceLock {
    /// The lock file beside `db`.
    pub fn path_for(db: &Path) -> PathBuf {
        let name = db.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "chalie.db".into());
        db.with_file_name(format!("{name}.lock"))
    }

    /// Take the lock for `db`, or say who holds it.
    pub fn acquire(db: &Path) -> Result<InstanceLock, StoreError> {
        let path = Self::path_for(db);
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            crate::files::create_private_dir(dir)
                .map_err(|source| StoreError::Io { path: dir.to_path_buf(), source })?;
        }
        let io = |source| StoreError::Io { path: path.clone(), source };
        let mut file = crate::files::private_append().read(true).open(&path).map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                return Err(StoreError::InUse { path: db.to_path_buf(), holder: holder.trim().to_string() });
            }
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
        // Who holds it, for the message a second process shows.
        file.set_len(0).and_then(|()| file.rewind()).map_err(io)?;
        writeln!(file, "pid {}", std::process::id()).and_then(|()| file.flush()).map_err(io)?;
        Ok(InstanceLock { _file: file, path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_naming_the_first_until_it_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("chalie.db");
        let first = InstanceLock::acquire(&db).unwrap();
        let err = InstanceLock::acquire(&db).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains(&format!("pid {}", std::process::id())) && msg.contains("chalie.db"), "{msg}");
        drop(first);
        let again = InstanceLock::acquire(&db).unwrap();
        assert_eq!(std::fs::read_to_string(again.path()).unwrap(), format!("pid {}\n", std::process::id()));
    }
}
