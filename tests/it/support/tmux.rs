//! A private tmux server running the real binary, for end-to-end terminal tests.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A tmux server of our own, killed on drop.
pub struct Tmux {
    pub socket: PathBuf,
}

impl Tmux {
    pub fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux").arg("-S").arg(&self.socket).args(args).output().expect("run tmux");
        assert!(out.status.success(), "tmux {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "chalie"])
    }

    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "chalie"];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    pub fn type_text(&self, text: &str) {
        self.run(&["send-keys", "-t", "chalie", "-l", text]);
    }

    /// Poll the screen until `done` holds; every screen seen goes to `seen`.
    pub async fn wait(&self, what: &str, seen: &mut Vec<String>, done: impl Fn(&str) -> bool) -> String {
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

pub fn config(dir: &Path, base_url: &str) -> PathBuf {
    let path = dir.join("config.toml");
    let text = format!(
        "[providers.double]\nkind = \"openai\"\nbase_url = \"{base_url}\"\n\n[models]\nprimary = \"double/double-chat\"\n\
         lightweight = \"double/double-chat\"\nstrong = \"double/double-chat\"\nembedding = \"double/double-embed\"\n\n\
         [llm]\ntriage = \"heuristic\"\nmemory_extraction = \"heuristic\"\ncritic = \"heuristic\"\n"
    );
    std::fs::write(&path, text).expect("write config");
    path
}

pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Start chalie-tui in a 120x40 tmux session with `data` as its data dir and `config`;
/// its exit status lands in `<data>/exit`.
pub fn launch(data: &Path, config: &Path) -> Tmux {
    assert!(Command::new("tmux").arg("-V").output().is_ok(), "tmux is not installed; scripts/deps.sh installs it");
    let command = format!(
        "env CHALIE_DATA_DIR={data} CHALIE_CONFIG={config} CHALIE_MODELS_DIR={models} {bin}; echo $? > {exit}; sleep 30",
        data = shell_quote(&data.display().to_string()),
        config = shell_quote(&config.display().to_string()),
        models = shell_quote(&data.join("models").display().to_string()),
        bin = shell_quote(env!("CARGO_BIN_EXE_chalie-tui")),
        exit = shell_quote(&data.join("exit").display().to_string()),
    );
    let tmux = Tmux { socket: data.join("tmux.sock") };
    tmux.run(&["-f", "/dev/null", "new-session", "-d", "-s", "chalie", "-x", "120", "-y", "40", &command]);
    tmux
}

/// Quit with Ctrl-Q and return the exit status.
pub async fn quit(tmux: &Tmux, data: &Path) -> String {
    tmux.keys(&["C-q"]);
    let exit_file = data.join("exit");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(code) = std::fs::read_to_string(&exit_file)
            && !code.trim().is_empty()
        {
            return code.trim().to_string();
        }
        assert!(Instant::now() < deadline, "chalie-tui did not exit after Ctrl-Q:\n{}", tmux.screen());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
