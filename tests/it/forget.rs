//! Forgetting as a user would ask for it, through the real binary (`ask`) against the scripted
//! endpoint: statements, then the request, then every file under the data dir (database, WAL,
//! session logs, diagnostics log) searched byte by byte, case-insensitively, for the secret,
//! and a later question in another thread whose prompts must carry no trace of it.

use crate::support::bin::{chalie, json_lines, text, write_double_config};
use crate::support::openai_double::{Double, Reply};
use serde_json::Value;
use std::path::{Path, PathBuf};

struct Session {
    _rt: tokio::runtime::Runtime,
    double: Double,
    dir: tempfile::TempDir,
}

/// A data dir whose config points every role at the double; triage by keywords, memory
/// extraction deterministic, so the double's script is only the replies.
fn session() -> Session {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let double = rt.block_on(Double::start(vec![Reply::text("Okay, noted."); 200]));
    let dir = tempfile::tempdir().unwrap();
    write_double_config(dir.path(), &double.base_url());
    Session { _rt: rt, double, dir }
}

impl Session {
    fn ask(&self, thread: &str, message: &str) -> Value {
        let out = chalie(self.dir.path(), &["ask", "--json", "--thread", thread, message]);
        assert!(out.status.success(), "{message}: {}", text(&out.stderr));
        json_lines(&out).remove(0)
    }

    /// Every file under the data dir holding `needle` (ASCII case ignored).
    fn files_with(&self, needle: &str) -> Vec<PathBuf> {
        let mut hits = Vec::new();
        walk(self.dir.path(), &needle.to_ascii_lowercase().into_bytes(), &mut hits);
        hits
    }

    /// Where a secret still is, for the failure message: the tables' rows and the log lines.
    fn where_is(&self, needle: &str) -> String {
        let mut out = Vec::new();
        let n = needle.to_lowercase();
        if let Ok(c) = rusqlite::Connection::open(self.dir.path().join("chalie.db")) {
            let tables: Vec<String> = c
                .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
                .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
                .unwrap_or_default();
            for t in tables {
                let Ok(mut s) = c.prepare(&format!("SELECT * FROM {t}")) else { continue };
                let cols = s.column_count();
                let Ok(mut rows) = s.query([]) else { continue };
                while let Ok(Some(r)) = rows.next() {
                    for i in 0..cols {
                        if let Ok(rusqlite::types::ValueRef::Text(b)) = r.get_ref(i)
                            && String::from_utf8_lossy(b).to_lowercase().contains(&n)
                        {
                            out.push(format!(
                                "{t}[{i}]: {}",
                                String::from_utf8_lossy(b).chars().take(300).collect::<String>()
                            ));
                        }
                    }
                }
            }
        }
        for p in self.files_with(needle).iter().filter(|p| p.extension().is_some_and(|e| e == "jsonl" || e == "log")) {
            for l in std::fs::read_to_string(p).unwrap_or_default().lines().filter(|l| l.to_lowercase().contains(&n)) {
                out.push(format!("{}: {}", p.display(), l.chars().take(300).collect::<String>()));
            }
        }
        out.join("\n")
    }

    /// Everything the double was sent from request `from` on, as one lower-cased text.
    fn sent_since(&self, from: usize) -> String {
        self.double.requests()[from..].iter().map(|r| r.body.to_string()).collect::<Vec<_>>().join("\n").to_lowercase()
    }
}

fn walk(dir: &Path, needle: &[u8], hits: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(&p, needle, hits);
        } else if holds(&std::fs::read(&p).unwrap().to_ascii_lowercase(), needle) {
            hits.push(p);
        }
    }
}

/// Whether `data` holds `needle` other than by chance inside a hex digest: the deletion audit
/// keeps a SHA-256 of what was forgotten, and a 4-digit PIN turns up in one of its 64 hex digits
/// about once in a thousand runs. A digest reveals nothing, so a match wholly inside a run of 32
/// or more hex digits does not count.
/// Likewise a match wholly inside a timestamp's fraction of a second (`…:46.155284921Z`, in
/// every session-log line): a PIN's digits turn up there in a few runs out of a hundred.
fn holds(data: &[u8], needle: &[u8]) -> bool {
    let hex = |b: &u8| b.is_ascii_hexdigit();
    let digit = |b: &u8| b.is_ascii_digit();
    (0..data.len().saturating_sub(needle.len() - 1)).filter(|&i| data[i..].starts_with(needle)).any(|i| {
        let left = data[..i].iter().rev().take_while(|b| hex(b)).count();
        let right = data[i..].iter().take_while(|b| hex(b)).count();
        let in_digest = needle.iter().all(hex) && left + right >= 32;
        let start = i - data[..i].iter().rev().take_while(|b| digit(b)).count();
        let end = i + data[i..].iter().take_while(|b| digit(b)).count();
        let fraction = needle.iter().all(digit)
            && start >= 4
            && data[start - 1] == b'.'
            && data[start - 4] == b':'
            && data[start - 3..start - 1].iter().all(digit)
            && matches!(data.get(end), Some(b'z' | b'Z' | b'+' | b'-'));
        !(in_digest || fraction)
    })
}

#[test]
fn a_secret_inside_a_digest_is_not_a_hit() {
    let digest = b"e90bfac2bba0ad67da34921607940f71a333fbdd042817ab87b5f50f30cc237d";
    assert!(!holds(digest, b"4921"));
    assert!(holds(b"my pin is 4921.", b"4921"));
    assert!(holds(b"\x03pin4921\x00", b"4921"), "beside a short word it is still the secret");
    let stamp = br#"{"ts":"2026-11-25t17:45:46.155284921z","type":"llm_start"}"#;
    assert!(!holds(stamp, b"4921"), "inside a timestamp's fraction of a second");
    assert!(holds(b"at 12:30.4921 sharp", b"4921"), "digits after a time but no timestamp's end are kept");
}

/// Tell `statements`, ask to `forget`, then check that no `secrets` are left anywhere and
/// that a question in another thread sends none of them. Returns the forget turn's report.
fn forgets(statements: &[&str], forget: &str, secrets: &[&str]) -> (Session, Value) {
    let s = session();
    for st in statements {
        s.ask("a", st);
    }
    for secret in secrets {
        assert!(!s.files_with(secret).is_empty(), "the test is void: {secret:?} was never stored");
    }
    let report = s.ask("a", forget);
    let step = &report["act_iterations"][0]["results"][0];
    assert_eq!(step["type"], "forget", "{forget}: {report}");
    assert!(step["ok"].as_bool().unwrap_or(false), "{report}");
    let reply = report["response"].as_str().unwrap_or_default().to_lowercase();
    assert!(reply.contains("forgotten"), "the reply says what happened: {reply}");
    for secret in secrets {
        assert!(!reply.contains(&secret.to_lowercase()), "the reply repeats {secret:?}: {reply}");
        let hits = s.files_with(secret);
        assert!(hits.is_empty(), "{secret:?} is still on disk after {forget:?}: {hits:?}\n{}", s.where_is(secret));
    }
    assert!(journals(s.dir.path()).is_empty(), "a finished forget leaves no journal");
    let from = s.double.requests().len();
    s.ask("b", "What do you know about me and what I told you before?");
    let sent = s.sent_since(from);
    assert!(!sent.is_empty(), "the later question reached the model");
    for secret in secrets {
        assert!(!sent.contains(&secret.to_lowercase()), "{secret:?} reached a later prompt");
    }
    (s, report)
}

/// [`forgets`] for secret-shaped statements, which the end of a session masks on its own
/// (`[privacy] keep_secrets_in_history`): statements and request in one session (`--batch`),
/// so it is the forget that removes them; that they were there is read from what the model
/// was sent during the session.
fn forgets_in_session(statements: &[&str], forget: &str, secrets: &[&str]) -> (Session, Value) {
    let s = session();
    let batch = s.dir.path().join("batch.txt");
    std::fs::write(&batch, format!("{}\n{forget}\n", statements.join("\n"))).unwrap();
    let out = chalie(s.dir.path(), &["ask", "--json", "--batch", batch.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    std::fs::remove_file(&batch).unwrap();
    let report = json_lines(&out).pop().unwrap();
    let step = &report["act_iterations"][0]["results"][0];
    assert_eq!(step["type"], "forget", "{report}");
    assert_eq!(step["data"]["forgotten_messages"], 1, "{report}");
    let sent = s.sent_since(0);
    for secret in secrets {
        assert!(sent.contains(&secret.to_lowercase()), "the test is void: {secret:?} was never seen");
        let hits = s.files_with(secret);
        assert!(hits.is_empty(), "{secret:?} is still on disk after {forget:?}: {hits:?}\n{}", s.where_is(secret));
    }
    assert!(journals(s.dir.path()).is_empty(), "a finished forget leaves no journal");
    let from = s.double.requests().len();
    s.ask("b", "What do you know about me and what I told you before?");
    let sent = s.sent_since(from);
    for secret in secrets {
        assert!(!sent.contains(&secret.to_lowercase()), "{secret:?} reached a later prompt");
    }
    (s, report)
}

#[test]
fn a_pin_is_forgotten_when_asked() {
    forgets_in_session(&["The PIN for my bank card is 4921"], "Actually, please forget that PIN.", &["4921"]);
}

#[test]
fn a_passport_number() {
    let (s, _) =
        forgets(&["My passport number is X8841207", "I like green tea"], "forget my passport number", &["X8841207"]);
    // The rewritten session logs still replay, turn for turn.
    let logs: Vec<PathBuf> =
        std::fs::read_dir(s.dir.path().join("sessions")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(logs.len(), 4, "one log per `ask`: {logs:?}");
    for log in logs {
        let out = chalie(s.dir.path(), &["--replay", log.to_str().unwrap(), "--headless"]);
        assert!(out.status.success(), "{}: {}", log.display(), text(&out.stderr));
        assert_eq!(json_lines(&out).len(), 1, "{}", text(&out.stdout));
    }
}

#[test]
fn everything_about_therapy() {
    forgets(
        &["I started therapy with Dr. Okafor last month", "My therapy sessions with Okafor are on Tuesdays"],
        "please delete what I told you about my therapy, I don't want it kept",
        &["Okafor"],
    );
}

#[test]
fn all_of_jordan() {
    forgets(
        &["My ex Jordan still texts me every week", "Jordan moved to Lisbon last spring"],
        "I'm done talking about Jordan, forget all of it",
        &["Jordan", "Lisbon"],
    );
}

#[test]
fn a_work_email() {
    forgets(
        &["My work email is priya.n@globex-corp.com"],
        "remove my work email from your memory",
        &["priya.n@globex-corp.com", "globex"],
    );
}

#[test]
fn the_last_thing_i_said() {
    let (s, _) = forgets(
        &["I had pasta for lunch", "My locker combination is 31-07-22"],
        "forget the last thing I said",
        &["31-07-22"],
    );
    assert!(!s.files_with("pasta for lunch").is_empty(), "only the last thing goes");
}

#[test]
fn a_card_number_and_a_later_fresh_mention() {
    let (s, _) = forgets_in_session(
        &["my card number is 4111 1111 1111 1111"],
        "forget my card number",
        &["4111 1111 1111 1111"],
    );
    // A later mention is new information, stored normally.
    s.ask("a", "My new locker is number 5521");
    assert!(!s.files_with("5521").is_empty());
}

/// A slot learned during the turn ("I'm vegetarian" → diet) has no link to its exchange and a
/// value too common to hunt as a string: it goes by slot and value, the superseded row too.
#[test]
fn a_slot_learned_from_a_forgotten_line_goes_with_it() {
    let s = session();
    s.ask("a", "I'm vegetarian");
    s.ask("a", "I'm vegan now");
    assert!(memory_text(s.dir.path()).contains("vegetarian"), "learned as a trait: {}", memory_text(s.dir.path()));
    let r = s.ask("a", "forget what I told you about being vegetarian");
    assert_eq!(r["act_iterations"][0]["results"][0]["data"]["forgotten_messages"], 1, "{r}");
    assert!(s.files_with("vegetarian").is_empty(), "{}", s.where_is("vegetarian"));
    assert!(memory_text(s.dir.path()).contains("vegan"), "the current value stays");
}

/// Forgetting the statement that superseded a value takes the new value, not the older row
/// of the same key (a key alone does not say which row an exchange wrote).
#[test]
fn forgetting_a_change_keeps_the_value_it_replaced() {
    let s = session();
    s.ask("a", "I live in Porto");
    s.ask("a", "I moved to Lisbon");
    let r = s.ask("a", "forget the last thing I said");
    assert_eq!(r["act_iterations"][0]["results"][0]["data"]["forgotten_messages"], 1, "{r}");
    assert!(s.files_with("Lisbon").is_empty(), "{}", s.where_is("Lisbon"));
    assert!(memory_text(s.dir.path()).contains("Porto"), "the older value stays: {}", memory_text(s.dir.path()));
}

#[test]
fn an_unclear_request_asks_and_forgets_nothing() {
    let s = session();
    s.ask("a", "My sister lives in Porto");
    s.ask("a", "My sister's birthday is on May 3");
    let r = s.ask("a", "forget about my sister");
    assert_eq!(r["reply_mode"], "CLARIFY", "{r}");
    let choices = r["act_iterations"][0]["results"][0]["choices"].as_array().cloned().unwrap_or_default();
    assert_eq!(choices.len(), 2, "{r}");
    assert!(!s.files_with("Porto").is_empty(), "nothing is forgotten before the user says which");
    let r = s.ask("a", "forget everything about my sister");
    assert_eq!(r["act_iterations"][0]["results"][0]["data"]["forgotten_messages"], 2, "{r}");
    assert!(s.files_with("Porto").is_empty());
}

#[test]
fn memory_forget_by_id_goes_as_deep() {
    let s = session();
    s.ask("a", "My passport number is X8841207");
    let out = chalie(s.dir.path(), &["memory", "--json", "episodes"]);
    let rows: Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = rows[0]["id"].as_str().unwrap().to_string();
    let out = chalie(s.dir.path(), &["memory", "forget", &id]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!text(&out.stdout).contains("X8841207"), "{}", text(&out.stdout));
    let hits = s.files_with("X8841207");
    assert!(hits.is_empty(), "still on disk: {hits:?}");
}

fn chat_lines(dir: &Path) -> Vec<String> {
    let c = rusqlite::Connection::open(dir.join("chalie.db")).unwrap();
    let mut s = c.prepare("SELECT content FROM chat_history WHERE role = 'user' ORDER BY id").unwrap();
    s.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
}

fn memory_text(dir: &Path) -> String {
    ["traits", "facts", "gists"]
        .iter()
        .map(|l| text(&chalie(dir, &["memory", "--json", l]).stdout))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn secrets_stay_for_their_session_then_are_masked_and_never_become_memories() {
    let s = session();
    let key = "sk-proj-Q7rT2mX9vB4nL8kP3wZ6";
    s.ask("a", &format!("my api key is {key}"));
    s.ask("a", "my password is Tr0ub4dor&3 for the router");
    // `ask` ended each session: the lines are masked, the rest of the turn kept, and no
    // copy is left anywhere (topic names, audit rows, session logs).
    let lines = chat_lines(s.dir.path());
    assert_eq!(lines, ["my api key is [secret]", "my password is [secret] for the router"]);
    for secret in [key, "Tr0ub4dor"] {
        assert!(s.files_with(secret).is_empty(), "{}", s.where_is(secret));
    }
    let mem = memory_text(s.dir.path());
    assert!(!mem.contains(key) && !mem.contains("Tr0ub4dor"), "a secret became a memory: {mem}");
}

#[test]
fn with_keep_secrets_off_a_secret_is_never_stored_nor_sent() {
    let s = session();
    let cfg = s.dir.path().join("config.toml");
    let mut config = std::fs::read_to_string(&cfg).unwrap();
    config.push_str("[privacy]\nkeep_secrets_in_history = false\n");
    std::fs::write(&cfg, config).unwrap();
    s.ask("a", "my ssn is 219-09-9999, keep it safe");
    assert_eq!(chat_lines(s.dir.path()), ["my ssn is [secret], keep it safe"]);
    assert!(s.files_with("219-09-9999").is_empty(), "{}", s.where_is("219-09-9999"));
    assert!(!s.sent_since(0).contains("219-09-9999"), "the model saw it");
}

/// The forget is part of its turn's commit: when the purge cannot finish, the turn is not
/// committed either (no routing row, no reply line), so "Forgotten." is never on record while
/// the words are still stored; asked again, it is carried out.
#[test]
fn a_forget_whose_purge_fails_commits_nothing_of_its_turn() {
    let s = session();
    s.ask("a", "My cousin Zed7 lives in Town7.");
    let db = s.dir.path().join("chalie.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "CREATE TRIGGER fail_forget BEFORE INSERT ON memory_deletions BEGIN SELECT RAISE(ABORT, 'disk trouble'); END;",
    )
    .unwrap();
    let out = chalie(s.dir.path(), &["ask", "--json", "--thread", "a", "Forget everything about Zed7."]);
    let count = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap();
    let request = "(SELECT exchange_id FROM chat_history WHERE content = 'Forget everything about Zed7.')";
    assert_eq!(
        count(&format!("SELECT COUNT(*) FROM chat_history WHERE exchange_id IN {request}")),
        1,
        "the message is kept"
    );
    assert_eq!(
        count(&format!("SELECT COUNT(*) FROM routing_decisions WHERE exchange_id IN {request}")),
        0,
        "no part of the turn is committed: {}",
        text(&out.stdout)
    );
    assert_eq!(
        count("SELECT COUNT(*) FROM chat_history WHERE content LIKE '%Zed7 lives%'"),
        1,
        "nothing half forgotten"
    );
    assert!(journals(s.dir.path()).is_empty(), "a forget that did not commit leaves no journal");
    conn.execute_batch("DROP TRIGGER fail_forget;").unwrap();
    let report = s.ask("a", "Forget everything about Zed7.");
    assert!(report["response"].as_str().unwrap_or_default().to_lowercase().contains("forgotten"), "{report}");
    assert_eq!(
        count("SELECT COUNT(*) FROM chat_history WHERE content LIKE '%Zed7%' AND content NOT LIKE 'Forget%'"),
        0
    );
}

/// The forget journals (`session::journal`) in a data dir.
fn journals(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("forget-journal-")))
        .collect()
}

/// A kill between a forget's commit and the log writer's rewrite leaves the journal written
/// before the commit: the next start rewrites the logs from it and removes it. (A forget that
/// runs to its end leaves none, which `forgets_in_session` checks.)
#[test]
fn a_forget_killed_before_its_logs_were_rewritten_is_finished_by_the_next_start() {
    let s = session();
    s.ask("a", "My cousin Vantrel9 lives in Porto");
    let in_files = |s: &Session| -> Vec<PathBuf> {
        let db = |p: &PathBuf| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("chalie.db"));
        s.files_with("Vantrel9").into_iter().filter(|p| !db(p)).collect()
    };
    assert!(!in_files(&s).is_empty(), "the test is void: the word is in no log");
    std::fs::write(s.dir.path().join("forget-journal-1-1.json"), r#"["Vantrel9"]"#).unwrap();
    s.ask("b", "what should I cook tonight?");
    assert_eq!(in_files(&s), Vec::<PathBuf>::new());
    assert!(journals(s.dir.path()).is_empty());
}
