//! End to end: the real binary in a real terminal (tmux), against the scripted
//! OpenAI-compatible endpoint. Type a message, watch the reply stream in and the Routing pane
//! fill, open the routing audit with F2, quit with Ctrl-Q and exit 0.
//!
//! Needs tmux (`scripts/deps.sh` installs it). The tmux server is private to the test (its
//! own socket in a temp dir) and is killed when the test ends, pass or fail.

#[path = "support/openai_double.rs"]
mod openai_double;

use openai_double::{Double, Reply};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A tmux server of our own, killed on drop.
struct Tmux {
    socket: PathBuf,
}

impl Tmux {
    fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux").arg("-S").arg(&self.socket).args(args).output().expect("run tmux");
        assert!(out.status.success(), "tmux {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "chalie"])
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "chalie"];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    fn type_text(&self, text: &str) {
        self.run(&["send-keys", "-t", "chalie", "-l", text]);
    }

    /// Poll the screen until `done` holds; every screen seen goes to `seen`.
    async fn wait(&self, what: &str, seen: &mut Vec<String>, done: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let s = self.screen();
            seen.push(s.clone());
            if done(&s) {
                return s;
            }
            assert!(Instant::now() < deadline, "timed out waiting for {what}; the screen:\n{s}");
            tokio::time::sleep(Duration::from_millis(40)).await;
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux").arg("-S").arg(&self.socket).arg("kill-server").output();
    }
}

fn config(dir: &Path, base_url: &str) -> PathBuf {
    let path = dir.join("config.toml");
    let text = format!(
        "[providers.double]\nkind = \"openai\"\nbase_url = \"{base_url}\"\n\n[models]\nprimary = \"double/double-chat\"\n\
         lightweight = \"double/double-chat\"\nstrong = \"double/double-chat\"\nembedding = \"double/double-embed\"\n\n\
         [llm]\ntriage = \"heuristic\"\n"
    );
    std::fs::write(&path, text).expect("write config");
    path
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn type_stream_audit_quit_in_tmux() {
    if Command::new("tmux").arg("-V").output().is_err() {
        panic!("tmux is not installed; scripts/deps.sh installs it");
    }
    let chunks: Vec<String> = [
        "**Green ", "tea** ", "likes ", "water ", "at ", "about ", "80 ", "°C, ", "steeped ", "for ", "two ",
        "minutes.",
    ]
    .map(String::from)
    .to_vec();
    let reply = Reply::Text { chunks, delay_ms: 120, logprobs: None };
    // Whatever else the engine asks the model gets the same answer.
    let double = Double::start(vec![reply.clone(), reply.clone(), reply]).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let config = config(dir.path(), &double.base_url());
    let exit_file = dir.path().join("exit");
    let command = format!(
        "env CHALIE_DATA_DIR={data} CHALIE_CONFIG={config} CHALIE_MODELS_DIR={models} {bin}; echo $? > {exit}; sleep 30",
        data = shell_quote(&dir.path().display().to_string()),
        config = shell_quote(&config.display().to_string()),
        models = shell_quote(&dir.path().join("models").display().to_string()),
        bin = shell_quote(env!("CARGO_BIN_EXE_chalie-tui")),
        exit = shell_quote(&exit_file.display().to_string()),
    );
    let tmux = Tmux { socket: dir.path().join("tmux.sock") };
    tmux.run(&["-f", "/dev/null", "new-session", "-d", "-s", "chalie", "-x", "120", "-y", "40", &command]);
    let mut seen = Vec::new();

    tmux.wait("the TUI", &mut seen, |s| s.contains("Routing") && s.contains("Uncertainties") && s.contains("Message"))
        .await;
    // The engine has started when the status bar lists the resolved models.
    tmux.wait("the models", &mut seen, |s| s.contains("double/double-chat") && !s.contains("starting")).await;

    tmux.type_text("How should I brew green tea?");
    tmux.keys(&["Enter"]);
    let done = tmux
        .wait("the streamed reply and the routing pane", &mut seen, |s| {
            s.contains("steeped for two minutes.") && s.contains("▸") && s.contains("topic")
        })
        .await;
    assert!(done.contains("How should I brew green tea?"), "{done}");
    // Markdown rendered: the ** markers are gone.
    assert!(done.contains("Green tea likes water") && !done.contains("**Green"), "{done}");
    // It streamed: some screen showed part of the reply.
    assert!(
        seen.iter().any(|s| s.contains("likes") && !s.contains("steeped for two minutes.")),
        "never saw a partial reply"
    );
    // The Routing pane: a bar per mode, confidence, margin, tie-break, time and topic.
    for needle in ["RESPOND", "CLARIFY", "ACT", "ACKNOWLEDGE", "IGNORE", "conf ", "margin ", "tie-break", " ms · topic"]
    {
        assert!(done.contains(needle), "routing pane lacks {needle:?}:\n{done}");
    }

    tmux.keys(&["F2"]);
    let audit =
        tmux.wait("the audit popup", &mut seen, |s| s.contains("Routing audit") && s.contains("1 decision")).await;
    assert!(audit.contains("conf") && audit.contains("tie"), "{audit}");
    tmux.keys(&["Enter"]);
    tmux.wait("the decision's detail", &mut seen, |s| s.contains("── Signals") && s.contains("── Scores")).await;
    tmux.keys(&["Escape"]);
    tmux.keys(&["Escape"]);
    tmux.wait("the audit to close", &mut seen, |s| !s.contains("Routing audit")).await;

    tmux.keys(&["C-q"]);
    let deadline = Instant::now() + Duration::from_secs(30);
    let code = loop {
        if let Ok(code) = std::fs::read_to_string(&exit_file)
            && !code.trim().is_empty()
        {
            break code;
        }
        assert!(Instant::now() < deadline, "chalie-tui did not exit after Ctrl-Q:\n{}", tmux.screen());
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(code.trim(), "0", "exit status");
    // The generation request was the streaming one the double answered.
    assert!(double.chat_requests().iter().any(|r| r.body["stream"] == true));
}
