//! Hostile text and secrets through the real binary (issue 23): a model reply full of terminal
//! escape sequences must reach the terminal inert; an API key comes from the environment only
//! and reaches no file the program writes, which are all private to the user.

use crate::support::bin::{chalie, chalie_piped, chalie_with, json_lines, text};
use crate::support::harness::triage_reply;
use crate::support::openai_double::{Double, Reply};
use std::path::Path;

/// A tokio runtime serving the double while the binary (a separate process) talks to it.
fn serve(script: Vec<Reply>) -> (tokio::runtime::Runtime, Double) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let double = rt.block_on(Double::start(script));
    (rt, double)
}

/// Every role at the double, deterministic memory extraction; `extra` goes into the provider.
fn configure(data: &Path, base_url: &str, extra: &str) {
    let config = format!(
        "[providers.double]\nkind = \"openai\"\nbase_url = \"{base_url}\"\n{extra}\
         [models]\nprimary = \"double/m\"\nlightweight = \"double/m\"\nstrong = \"double/m\"\nembedding = \"double/e\"\n\
         [llm]\ntriage = \"llm\"\nmemory_extraction = \"heuristic\"\ncritic = \"heuristic\"\n"
    );
    std::fs::write(data.join("config.toml"), config).unwrap();
}

/// Bytes a terminal would act on: C0 controls other than newline and tab, DEL, C1 controls.
fn live_controls(out: &[u8]) -> Vec<char> {
    text(out).chars().filter(|c| c.is_control() && *c != '\n' && *c != '\t').collect()
}

/// Retitle the window, clear the screen, home the cursor, an 8-bit CSI, a clipboard write.
const HOSTILE: &str = "Sure.\x1b]2;pwned\x07\x1b[2J\x1b[H \u{9b}31mred\x1b]52;c;ZXZpbA==\x07 done";

#[test]
fn ask_shows_a_replys_escape_sequences_instead_of_obeying_them() {
    let dir = tempfile::tempdir().unwrap();
    let (_rt, double) = serve(vec![
        triage_reply("RESPOND", &[]),
        Reply::text(HOSTILE),
        triage_reply("RESPOND", &[]),
        Reply::text(HOSTILE),
    ]);
    configure(dir.path(), &double.base_url(), "");
    let out = chalie(dir.path(), &["ask", "--thread", "t", "What is the capital of France?"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(live_controls(&out.stdout), Vec::<char>::new(), "{:?}", text(&out.stdout));
    assert!(text(&out.stdout).contains("Sure.␛]2;pwned␇␛[2J␛[H ␛[31mred"), "{:?}", text(&out.stdout));

    // The JSON report carries the reply unchanged, with no raw control byte on the wire.
    let out = chalie(dir.path(), &["ask", "--json", "--thread", "t", "And the capital of Spain?"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(live_controls(&out.stdout), Vec::<char>::new(), "{:?}", text(&out.stdout));
    assert_eq!(json_lines(&out)[0]["response"], HOSTILE);
}

/// A key no file the program writes may contain, in any of the forms it could be written in.
const SECRET: &str = "sk-test-Kq7Zt2Vx9Lm4Np8Rs1Wy6Bc3";

/// Every file under `dir` whose bytes contain the key (or its base64 or hex form).
fn files_holding_the_key(dir: &Path) -> Vec<String> {
    let needles: Vec<Vec<u8>> = vec![
        SECRET.as_bytes().to_vec(),
        SECRET.bytes().map(|b| format!("{b:02x}")).collect::<String>().into_bytes(),
        // The distinctive tail alone: a key cut or masked on its way into a message.
        SECRET.as_bytes()[8..].to_vec(),
    ];
    let mut hits = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                if needles.iter().any(|n| bytes.windows(n.len()).any(|w| w == n.as_slice())) {
                    hits.push(path.display().to_string());
                }
            }
        }
    }
    hits
}

/// The mode bits of every file and directory under `dir` (not `dir` itself), by path.
#[cfg(unix)]
fn loose_modes(dir: &Path) -> Vec<String> {
    use std::os::unix::fs::PermissionsExt;
    let mut loose = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            let want = if path.is_dir() { 0o700 } else { 0o600 };
            if path.is_dir() {
                stack.push(path.clone());
            }
            if mode != want {
                loose.push(format!("{} {mode:o}", path.display()));
            }
        }
    }
    loose
}

#[test]
fn a_key_from_the_environment_reaches_the_server_and_no_file_the_program_writes() {
    let dir = tempfile::tempdir().unwrap();
    // The second session's server rejects the key and, like some do, quotes it back.
    let rejected = || Reply::Status {
        code: 401,
        body: format!(
            r#"{{"error":{{"message":"Incorrect API key provided: {SECRET}","type":"invalid_request_error"}}}}"#
        ),
    };
    let (_rt, double) = serve(vec![
        triage_reply("RESPOND", &[]),
        Reply::text("Paris is the capital of France."),
        rejected(),
        rejected(),
        rejected(),
        rejected(),
        rejected(),
        rejected(),
    ]);
    configure(dir.path(), &double.base_url(), "api_key_env = \"CHALIE_TEST_KEY\"\n");
    let env = [("CHALIE_TEST_KEY", SECRET), ("CHALIE_LOG", "debug")];
    let config = dir.path().join("config.toml");
    let out = chalie_with(dir.path(), &config, &env, &["ask", "--json", "What is the capital of France?"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = chalie_with(dir.path(), &config, &env, &["ask", "--json", "And the capital of Spain?"]);
    assert_eq!(out.status.code(), Some(1), "the rejected key fails the turn: {}", text(&out.stderr));
    for stream in [&out.stdout, &out.stderr] {
        assert!(!text(stream).contains(&SECRET[8..]), "{}", text(stream));
    }
    let authorised = double
        .chat_requests()
        .iter()
        .filter(|r| r.header("authorization") == Some(&format!("Bearer {SECRET}")))
        .count();
    assert!(authorised >= 3, "the key was sent: {authorised} requests");
    // The program's own files only: the config is the test's.
    std::fs::remove_file(&config).unwrap();
    assert_eq!(files_holding_the_key(dir.path()), Vec::<String>::new());
    #[cfg(unix)]
    assert_eq!(loose_modes(dir.path()), Vec::<String>::new());
}

#[test]
fn a_config_holding_a_key_inline_is_refused_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    configure(dir.path(), "http://127.0.0.1:9/v1", &format!("api_key = \"{SECRET}\"\n"));
    let out = chalie(dir.path(), &["ask", "hello"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    let at = format!("{}:4:", dir.path().join("config.toml").display());
    assert!(err.contains(&at) && err.contains("api_key_env"), "{err}");
    assert!(!err.contains(&SECRET[8..]), "the message repeats the key: {err}");
    assert!(!dir.path().join("chalie.db").exists(), "nothing runs on a refused config");
}

#[test]
fn a_damaged_database_is_refused_with_a_way_out_and_never_written() {
    let dir = tempfile::tempdir().unwrap();
    configure(dir.path(), "http://127.0.0.1:9/v1", "");
    let db = dir.path().join("chalie.db");
    // Random-looking bytes, and a real database with its header page overwritten.
    let mut junk = Vec::new();
    let mut rng = chalie::SplitMix64(23);
    while junk.len() < 64 << 10 {
        junk.extend_from_slice(&rng.next_u64().to_le_bytes());
    }
    for bytes in [junk, b"SQLite format 3\0".iter().copied().chain(std::iter::repeat_n(0xA5, 8192)).collect()] {
        std::fs::write(&db, &bytes).unwrap();
        for args in [&["ask", "hello"][..], &["status"], &["audit"], &["memory", "facts"]] {
            let out = chalie(dir.path(), args);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {}", text(&out.stderr));
            let err = text(&out.stderr);
            assert!(err.contains("not a readable chalie-tui database") && err.contains("mv '"), "{args:?}: {err}");
            assert_eq!(std::fs::read(&db).unwrap(), bytes, "{args:?} changed the file");
        }
    }
}

#[test]
fn a_one_megabyte_paste_and_a_message_of_only_control_characters_are_taken_in() {
    let dir = tempfile::tempdir().unwrap();
    let (_rt, double) = serve(vec![Reply::text("That is a long log."), Reply::text("I see only control characters.")]);
    configure(dir.path(), &double.base_url(), "");
    // Heuristic triage: the two scripted replies are the two generations.
    let config = std::fs::read_to_string(dir.path().join("config.toml")).unwrap();
    std::fs::write(dir.path().join("config.toml"), config.replace("triage = \"llm\"", "triage = \"heuristic\""))
        .unwrap();
    let line = "2026-11-24 12:00:01 ERROR worker 7: connection reset by peer, retrying\n";
    let paste = line.repeat((1 << 20) / line.len() + 1);
    let out = chalie_piped(dir.path(), &["ask", "--json", "--thread", "t", "-"], paste.as_bytes());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(json_lines(&out)[0]["failed"], serde_json::Value::Null, "{}", text(&out.stdout));

    let controls = "\x1b[2J\x1b]2;x\x07\x00\x01\x08\x7f\u{9b}6n\x1b[6n";
    let out = chalie_piped(dir.path(), &["ask", "--thread", "t", "-"], controls.as_bytes());
    assert!(out.status.success(), "{}{}", text(&out.stderr), text(&out.stdout));
    assert_eq!(live_controls(&out.stdout), Vec::<char>::new(), "{:?}", text(&out.stdout));

    // Both were accepted: the whole paste and the control characters are in the history.
    let conn = rusqlite::Connection::open(dir.path().join("chalie.db")).unwrap();
    let users: Vec<String> = conn
        .prepare("SELECT content FROM chat_history WHERE role = 'user' ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(users.len(), 2, "{:?}", users.iter().map(|u| u.len()).collect::<Vec<_>>());
    assert_eq!(users[0], paste.trim_end());
    assert_eq!(users[1], controls);
}

/// The paths and config the binary would use for `data`, for starting the runtime in-process
/// the way the TUI does.
fn runtime_inputs(data: &Path) -> (chalie::config::Paths, chalie::config::Config) {
    let paths = chalie::config::Paths::resolve(&chalie::config::ProcessEnv, Some(&data.join("config.toml")), None);
    let paths = chalie::config::Paths {
        data_dir: data.to_path_buf(),
        db_file: data.join("chalie.db"),
        models_dir: data.join("models"),
        ..paths
    };
    let config = chalie::config::Config::from_user_toml(
        &paths.config_file,
        &std::fs::read_to_string(&paths.config_file).unwrap(),
    )
    .unwrap();
    (paths, config)
}

#[test]
fn a_second_engine_on_one_database_is_refused_in_either_order() {
    let dir = tempfile::tempdir().unwrap();
    let slow = Reply::Text { chunks: vec!["Paris.".into()], delay_ms: 3000, logprobs: None };
    let (_rt, double) = serve(vec![slow, Reply::text("Madrid.")]);
    configure(dir.path(), &double.base_url(), "");
    let config = std::fs::read_to_string(dir.path().join("config.toml")).unwrap();
    std::fs::write(dir.path().join("config.toml"), config.replace("triage = \"llm\"", "triage = \"heuristic\""))
        .unwrap();

    // `ask` first (its reply takes 3 s), then the TUI's start-up: refused, naming ask's pid.
    let ask = {
        let data = dir.path().to_path_buf();
        std::thread::spawn(move || chalie(&data, &["ask", "What is the capital of France?"]))
    };
    let lock = dir.path().join("chalie.db.lock");
    let mut waited = 0;
    while !std::fs::read_to_string(&lock).is_ok_and(|s| s.starts_with("pid")) && waited < 200 {
        std::thread::sleep(std::time::Duration::from_millis(50));
        waited += 1;
    }
    let (paths, config) = runtime_inputs(dir.path());
    let err = chalie::runtime::Runtime::start(paths.clone(), config.clone()).err().expect("a second engine started");
    let msg = format!("{err:#}");
    assert!(msg.contains("another chalie-tui (pid ") && msg.contains("--db FILE"), "{msg}");
    let out = ask.join().unwrap();
    assert!(out.status.success(), "the first one is undisturbed: {}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "Paris.\n");

    // The TUI's runtime first, then `ask`: refused with the same message, exit 1, no reply asked.
    let tui = chalie::runtime::Runtime::start(paths, config).expect("the lock went with the first process");
    let out = chalie(dir.path(), &["ask", "And of Spain?"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(&format!("another chalie-tui (pid {})", std::process::id())),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(double.chat_requests().len(), 1, "the refused ask called no model");
    // Readers are not engines: they work alongside.
    let out = chalie(dir.path(), &["audit"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    tui.finish();
    let out = chalie(dir.path(), &["ask", "And of Spain?"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}
