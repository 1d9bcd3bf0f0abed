//! Files and directories the program creates are private to the user: a directory 0700, a
//! file 0600. The database, the diagnostics log and the session logs hold the user's
//! conversations and memories, and other accounts on the machine have no business reading
//! them. Only what we create (or own outright, like the database file) is tightened; a
//! directory the user pointed us at keeps its mode.

use std::fs::OpenOptions;
use std::io;
use std::path::Path;

/// Create `dir` and any missing parents, each new one 0700.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Options for appending to a file that, when created, is 0600.
pub fn private_append() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
}

/// Create (or truncate) the file at `path` for writing; a file it creates is 0600. For the
/// temporary copy a rewrite renames over the original.
pub fn private_create(path: &Path) -> io::Result<std::fs::File> {
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

/// Make sure the file at `path` exists and is 0600, creating it empty if needed. For files
/// another library opens (SQLite, the log appender), which keep the mode of an existing file;
/// SQLite gives its -wal and -shm files the mode of the database. An existing file is only
/// re-moded, never opened for writing (it may be read-only on purpose).
pub fn ensure_private_file(path: &Path) -> io::Result<()> {
    match std::fs::metadata(path) {
        Ok(meta) => {
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let mode = meta.permissions().mode();
                // Best effort: a file someone else owns still opens, just not tightened.
                if mode & 0o077 != 0 {
                    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode & 0o700));
                }
            }
            #[cfg(not(unix))]
            let _ = meta;
            Ok(())
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => private_append().open(path).map(drop),
        Err(e) => Err(e),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn created_dirs_are_0700_and_files_0600_and_a_loose_file_is_tightened() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a/b");
        create_private_dir(&dir).unwrap();
        assert_eq!((mode(&root.path().join("a")), mode(&dir)), (0o700, 0o700));
        let file = dir.join("x.log");
        ensure_private_file(&file).unwrap();
        assert_eq!(mode(&file), 0o600);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        ensure_private_file(&file).unwrap();
        assert_eq!(mode(&file), 0o600);
    }
}
