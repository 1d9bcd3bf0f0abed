//! Running the real binary against a temporary data dir, as a user would.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary under test: `CHALIE_TEST_BIN` when set (a soak run outside the shared build
/// lock keeps its own copy, so another build cannot swap it between rounds), else cargo's.
pub fn exe() -> PathBuf {
    std::env::var_os("CHALIE_TEST_BIN").map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_chalie-tui")), PathBuf::from)
}

/// `chalie-tui` with its data, models and config (`config.toml`) under `data` and diagnostics
/// at their default level: the environment every harness that spawns the binary repeats.
pub fn command(data: &Path) -> Command {
    let mut cmd = Command::new(exe());
    cmd.env("CHALIE_DATA_DIR", data)
        .env("CHALIE_CONFIG", data.join("config.toml"))
        .env("CHALIE_MODELS_DIR", data.join("models"))
        .env_remove("CHALIE_LOG");
    cmd
}

/// `chalie-tui ARGS` with its data, models and config under `data` (config `config.toml`),
/// diagnostics left at their default level.
pub fn chalie(data: &Path, args: &[&str]) -> Output {
    chalie_with(data, &data.join("config.toml"), &[], args)
}

/// [`chalie`] with another config file and extra environment variables.
pub fn chalie_with(data: &Path, config: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    command(data).args(args).env("CHALIE_CONFIG", config).envs(env.iter().copied()).output().expect("run chalie-tui")
}

/// Write `data/config.toml`: every role on the scripted double at `base_url`, triage and
/// memory extraction heuristic (so the double's replies are the turns' replies, in order).
pub fn write_double_config(data: &Path, base_url: &str) {
    let config = format!(
        "[providers.double]\nkind = \"openai\"\nbase_url = \"{base_url}\"\n\
         [models]\nprimary = \"double/m\"\nlightweight = \"double/m\"\nstrong = \"double/m\"\nembedding = \"double/e\"\n\
         [llm]\ntriage = \"heuristic\"\nmemory_extraction = \"heuristic\"\ncritic = \"heuristic\"\n"
    );
    std::fs::write(data.join("config.toml"), config).expect("write config.toml");
}

/// Process output as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Standard output read as one JSON object per line (`--json`, `--batch`, `--rerun`).
pub fn json_lines(out: &Output) -> Vec<Value> {
    text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not one JSON object per line ({e}): {l}")))
        .collect()
}

/// [`chalie`] with `input` piped on stdin (written from a thread, so a large input cannot
/// deadlock against the child's output).
pub fn chalie_piped(data: &Path, args: &[&str], input: &[u8]) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = command(data)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run chalie-tui");
    let mut stdin = child.stdin.take().expect("piped stdin");
    let input = input.to_vec();
    // The child may stop reading early (input too large): a broken pipe is then expected.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("wait for chalie-tui");
    writer.join().expect("stdin writer");
    out
}
