//! Hostile text and secrets through the real binary (issue 23): a model reply full of terminal
//! escape sequences must reach the terminal inert; an API key comes from the environment only
//! and reaches no file the program writes, which are all private to the user.

use crate::support::bin::{chalie, chalie_with, json_lines, text};
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
         [llm]\ntriage = \"llm\"\nmemory_extraction = \"heuristic\"\n"
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
