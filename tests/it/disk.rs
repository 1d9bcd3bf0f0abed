//! A full disk and a read-only data dir (issue 23, item 4): the message being sent is never
//! lost — kept and tried again, then given back with the reason — and a data dir the program
//! cannot write is refused with a clear message, leaving the database as it was.
//!
//! The page cap (`CHALIE_DB_MAX_PAGES`, applied when the store opens) gives a real
//! SQLITE_FULL everywhere; a small tmpfs gives a real full file system and a read-only one
//! where mounting is permitted (root), and the tests say why they skip elsewhere.

use crate::support::bin::{chalie, command, text, write_double_config};
use crate::support::openai_double::{Double, Reply};
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// `ask -` with `message` on stdin (a big one does not fit in an argument).
fn ask(data: &Path, env: &[(&str, &str)], message: &str) -> Output {
    use std::io::Write;
    let mut child = command(data)
        .args(["ask", "-"])
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = message.as_bytes().to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

fn user_lines(db: &Path) -> Vec<String> {
    let conn = Connection::open(db).unwrap();
    let mut stmt = conn.prepare("SELECT content FROM chat_history WHERE role = 'user' ORDER BY id").unwrap();
    stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
}

fn integrity(db: &Path) -> String {
    Connection::open(db).unwrap().query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap()
}

/// A big message with a mark to look for: big enough that it cannot fit in free pages.
fn big_message(mark: &str) -> String {
    format!("{mark} {}end", "please keep this line safe. ".repeat(12_000))
}

fn double(rt: &tokio::runtime::Runtime) -> Double {
    rt.block_on(Double::start((0..20).map(|i| Reply::text(&format!("reply {i}"))).collect()))
}

/// Full disk, portable form: the store capped at the pages it already has.
#[test]
fn a_full_database_keeps_the_message_says_why_and_takes_it_once_there_is_room() {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let double = double(&rt);
    write_double_config(dir.path(), &double.base_url());
    let first = ask(dir.path(), &[], "hello there");
    assert!(first.status.success(), "{}", text(&first.stderr));
    let db = dir.path().join("chalie.db");
    let pages: i64 = Connection::open(&db).unwrap().query_row("PRAGMA page_count", [], |r| r.get(0)).unwrap();

    let message = big_message("FULLMARK-1");
    let out = ask(dir.path(), &[("CHALIE_DB_MAX_PAGES", &pages.to_string())], &message);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("the disk is full"), "the reason is given: {}", &stderr[..stderr.len().min(600)]);
    assert!(stderr.contains("(4 tries)"), "tried again before giving up: {}", &stderr[..stderr.len().min(600)]);
    assert!(stderr.contains(&message), "the message is given back whole");
    assert_eq!(integrity(&db), "ok");
    assert_eq!(user_lines(&db), ["hello there"], "nothing half-written");

    let again = ask(dir.path(), &[], &message);
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert_eq!(user_lines(&db), ["hello there".to_string(), message], "saved once, once there is room");
}

/// The session log cannot be written while the database can (its directory cannot be made):
/// the turn goes on and is saved, and `ask` says why the log is paused.
#[test]
fn a_session_log_that_cannot_be_written_pauses_and_the_turn_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let double = double(&rt);
    write_double_config(dir.path(), &double.base_url());
    let sessions = dir.path().join("sessions");
    std::fs::write(&sessions, "in the way").unwrap();
    let out = ask(dir.path(), &[], "hello there");
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("the session log is paused") && stderr.contains("sessions"), "{stderr}");
    assert!(text(&out.stdout).contains("reply"), "the reply is printed: {}", text(&out.stdout));
    let db = dir.path().join("chalie.db");
    assert_eq!(user_lines(&db), ["hello there"]);
    std::fs::remove_file(&sessions).unwrap();
    let again = ask(dir.path(), &[], "and again");
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert!(!text(&again.stderr).contains("paused"), "{}", text(&again.stderr));
    assert_eq!(user_lines(&db), ["hello there", "and again"]);
}

/// A tmpfs mounted under a temporary dir, unmounted on drop; `None` (with the reason
/// printed) where this process may not mount.
struct Mount {
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl Mount {
    fn tmpfs(size: &str) -> Option<Mount> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m");
        std::fs::create_dir(&path).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},mode=0700"), "tmpfs"])
            .arg(&path)
            .output();
        match out {
            Ok(o) if o.status.success() => Some(Mount { path, _dir: dir }),
            Ok(o) => {
                println!("skipped: cannot mount a tmpfs here: {}", text(&o.stderr).trim());
                None
            }
            Err(e) => {
                println!("skipped: no mount command: {e}");
                None
            }
        }
    }

    fn remount(&self, how: &str) {
        let out = Command::new("mount").args(["-o", &format!("remount,{how}")]).arg(&self.path).output().unwrap();
        assert!(out.status.success(), "remount {how}: {}", text(&out.stderr));
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.path).status();
    }
}

/// Full disk, real form: a tmpfs filled to the last byte. The session log cannot be written
/// either: it pauses (and says so) rather than refusing the session, and the message is kept,
/// tried again and given back as on a full database.
#[test]
fn a_full_file_system_keeps_the_message_and_says_why() {
    let Some(mount) = Mount::tmpfs("24m") else { return };
    let data = mount.path.as_path();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let double = double(&rt);
    write_double_config(data, &double.base_url());
    let first = ask(data, &[], "hello there");
    assert!(first.status.success(), "{}", text(&first.stderr));
    // The disk fills while another process holds the database (as an open TUI does): its
    // WAL index stays mapped, so the next start can read and it is the message's write that
    // finds no room. (With nobody holding it, the start's first read fails already, on the
    // index's creation: a plain error, with nothing typed yet to keep.)
    let db = data.join("chalie.db");
    let held = Connection::open(&db).unwrap();
    let _: i64 = held.query_row("SELECT COUNT(*) FROM chat_history", [], |r| r.get(0)).unwrap();
    // Fill what is left of the file system.
    let filler = data.join("filler");
    {
        use std::io::Write;
        let mut f = std::fs::File::create(&filler).unwrap();
        let block = vec![0u8; 64 * 1024];
        while f.write_all(&block).is_ok() {}
        let _ = f.sync_all();
    }
    let message = big_message("FULLMARK-2");
    let out = ask(data, &[], &message);
    let stderr = text(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{}", &stderr[..stderr.len().min(600)]);
    assert!(stderr.contains("the disk is full"), "{}", &stderr[..stderr.len().min(600)]);
    assert!(stderr.contains("(4 tries)"), "tried again before giving up: {}", &stderr[..stderr.len().min(600)]);
    assert!(stderr.contains(&message), "the message is given back whole: {}", &stderr[..stderr.len().min(600)]);
    assert!(
        stderr.contains("the session log is paused") && stderr.contains("No space left"),
        "the log's pause is explained, not a reason to stop: {}",
        &stderr[..stderr.len().min(600)]
    );
    std::fs::remove_file(&filler).unwrap();
    drop(held);
    assert_eq!(integrity(&db), "ok");
    assert_eq!(user_lines(&db), ["hello there"]);
    let again = ask(data, &[], &message);
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert!(!text(&again.stderr).contains("session log is paused"), "{}", text(&again.stderr));
    assert_eq!(user_lines(&db), ["hello there".to_string(), message.clone()]);
    // With room again, the session logs read back and one of them holds the message.
    let logged = std::fs::read_dir(data.join("sessions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| chalie::session::read_log(p).is_ok())
        .any(|p| std::fs::read_to_string(&p).unwrap().contains("FULLMARK-2"));
    assert!(logged, "the message is in a session log");
}

/// A data dir on a file system mounted read-only: refused with a clear message (exit 2), the
/// database left as it was.
#[test]
fn a_read_only_data_dir_is_refused_clearly_and_nothing_is_lost() {
    let Some(mount) = Mount::tmpfs("24m") else { return };
    let data = mount.path.as_path();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let double = double(&rt);
    write_double_config(data, &double.base_url());
    let first = ask(data, &[], "hello there");
    assert!(first.status.success(), "{}", text(&first.stderr));
    let db = data.join("chalie.db");
    let before = std::fs::read(&db).unwrap();
    mount.remount("ro");
    let out = ask(data, &[], "a message to a read-only place");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("read-only"), "{stderr}");
    assert!(stderr.contains(&data.display().to_string()), "names the place: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let listed = chalie(data, &["memory", "episodes"]);
    assert!(!text(&listed.stderr).contains("panicked"), "{}", text(&listed.stderr));
    mount.remount("rw");
    assert_eq!(std::fs::read(&db).unwrap(), before, "the database is untouched");
    assert_eq!(integrity(&db), "ok");
    assert_eq!(user_lines(&db), ["hello there"]);
}
