//! A forget's words on disk from just before its commit until the logs no longer hold them.
//!
//! The database forgets inside the turn's commit, but the session and diagnostics logs are
//! rewritten after it (by the log writer, when the `forgotten` event reaches it). A kill between
//! the two would leave the words in the files for good: the database no longer has them, so
//! nothing could find them again. The journal closes that window. It is written and synced
//! before the commit, removed once a rewrite has taken all of its words, and replayed by the
//! next start when a kill came first ([`pending`]). It lives in the data directory, private
//! like every file there, for the milliseconds a forget takes.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

const PREFIX: &str = "forget-journal-";

/// Where this process writes journals: the data directory, set when the runtime starts.
/// Unset (tests of the engine alone), no journal is written and forgets work as before.
static DIR: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Journal this process's forgets in `dir`.
pub fn set_dir(dir: &Path) {
    if let Ok(mut d) = DIR.lock() {
        *d = Some(dir.to_path_buf());
    }
}

/// Record `needles` before the commit that forgets them. The file, when one was written: the
/// caller removes it if the commit fails ([`discard`]); the log writer removes it once the
/// logs are rewritten ([`settle`]).
pub fn write(needles: &[String]) -> Option<PathBuf> {
    let dir = DIR.lock().ok()?.clone()?;
    if needles.is_empty() {
        return None;
    }
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let path = dir.join(format!("{PREFIX}{stamp}-{}.json", std::process::id()));
    let written = serde_json::to_vec(needles).map_err(std::io::Error::other).and_then(|body| {
        use std::io::Write;
        let mut f = crate::files::private_create(&path)?;
        f.write_all(&body)?;
        f.sync_all()
    });
    match written {
        Ok(()) => Some(path),
        Err(e) => {
            // The forget still happens; only its crash window stays open.
            tracing::warn!(path = %path.display(), "the forget journal could not be written: {e}");
            let _ = std::fs::remove_file(&path);
            None
        }
    }
}

/// A journal whose forget did not commit.
pub fn discard(path: &Path) {
    let _ = std::fs::remove_file(path);
}

/// The logs were rewritten without `scrubbed`: every journal whose words are all among them
/// is done. One whose words are not all there belongs to a forget whose rewrite is still to come.
pub fn settle(scrubbed: &[String]) {
    let Some(dir) = DIR.lock().ok().and_then(|d| d.clone()) else { return };
    for (path, needles) in pending(&dir) {
        if needles.iter().all(|n| scrubbed.contains(n)) {
            discard(&path);
        }
    }
}

/// The journals left in `dir`, with their words: forgets whose logs may still hold them. An
/// unreadable journal is reported and kept (it may be the only record of its words).
pub fn pending(dir: &Path) -> Vec<(PathBuf, Vec<String>)> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let is_journal = path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(PREFIX));
        if !is_journal {
            continue;
        }
        match std::fs::read(&path)
            .map_err(|e| e.to_string())
            .and_then(|b| serde_json::from_slice::<Vec<String>>(&b).map_err(|e| e.to_string()))
        {
            Ok(needles) => out.push((path, needles)),
            Err(e) => tracing::warn!(path = %path.display(), "a forget journal cannot be read: {e}"),
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_journal_lasts_until_a_rewrite_has_taken_all_its_words() {
        let dir = tempfile::tempdir().unwrap();
        // Journals found in a directory, read back whole; other files are not journals.
        std::fs::write(dir.path().join("chalie.db"), b"x").unwrap();
        let path = |n: &str| dir.path().join(format!("{PREFIX}{n}.json"));
        std::fs::write(path("1"), br#"["Zed5","Town5"]"#).unwrap();
        std::fs::write(path("2"), br#"["Okafor"]"#).unwrap();
        std::fs::write(path("3"), b"not json").unwrap();
        let found = pending(dir.path());
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].1, ["Zed5", "Town5"]);

        set_dir(dir.path());
        settle(&["Zed5".into(), "Okafor".into()]);
        let left: Vec<_> = pending(dir.path()).into_iter().map(|(_, n)| n).collect();
        assert_eq!(left, [vec!["Zed5".to_string(), "Town5".into()]], "Town5 was not rewritten yet");
        assert!(path("3").exists(), "an unreadable journal is kept");

        let written = write(&["Priya".into()]).unwrap();
        assert_eq!(std::fs::read_to_string(&written).unwrap(), r#"["Priya"]"#);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&written).unwrap().permissions().mode() & 0o777, 0o600);
        }
        settle(&["Town5".into(), "Zed5".into(), "Priya".into()]);
        assert!(pending(dir.path()).is_empty());
    }
}
