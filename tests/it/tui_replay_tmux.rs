//! `chalie-tui --replay LOG` in a real terminal (tmux): a session recorded by the real binary
//! (`ask --batch` against the scripted double) plays back in the TUI, and the playback keys
//! work: pause, restart, step, jump to a turn, speed, play to the end, quit with status 0.
//!
//! Needs tmux (`scripts/deps.sh` installs it). The tmux server is private to the test.

use crate::support::openai_double::{Double, Reply};
use crate::support::tmux::{self, Tmux, quit, shell_quote};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Record three turns (a question, an ACT command, thanks) with the real binary.
async fn record(dir: &Path) -> PathBuf {
    // The ACT turn's planner and reply may or may not ask the model: every call after the
    // first gets the same answer, so the last turn's reply is known either way.
    let mut replies = vec![Reply::text("Paris is the capital of France.")];
    replies.extend((0..10).map(|_| Reply::text("You're welcome!")));
    let double = Double::start(replies).await;
    // The shared config has the memory workers extract without a model, so only the turns'
    // own calls reach the script.
    let config = tmux::config(dir, &double.base_url());
    let batch = dir.join("batch.txt");
    std::fs::write(&batch, "What is the capital of France?\nAdd milk and eggs to my shopping list\nThanks!\n").unwrap();
    let data = dir.join("recorded");
    let bin = env!("CARGO_BIN_EXE_chalie-tui");
    let out = tokio::task::spawn_blocking({
        let (data, config, batch) = (data.clone(), config.clone(), batch.clone());
        move || {
            Command::new(bin)
                .args(["ask", "--batch", batch.to_str().unwrap()])
                .env("CHALIE_DATA_DIR", &data)
                .env("CHALIE_CONFIG", &config)
                .env("CHALIE_MODELS_DIR", data.join("models"))
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let logs: Vec<PathBuf> = std::fs::read_dir(data.join("sessions")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(logs.len(), 1);
    logs[0].clone()
}

fn launch_replay(dir: &Path, log: &Path) -> Tmux {
    assert!(Command::new("tmux").arg("-V").output().is_ok(), "tmux is not installed; scripts/deps.sh installs it");
    let data = dir.join("player");
    let command = format!(
        "env CHALIE_DATA_DIR={data} CHALIE_CONFIG={config} {bin} --replay {log}; echo $? > {exit}; sleep 30",
        data = shell_quote(&data.display().to_string()),
        config = shell_quote(&dir.join("none.toml").display().to_string()),
        bin = shell_quote(env!("CARGO_BIN_EXE_chalie-tui")),
        log = shell_quote(&log.display().to_string()),
        exit = shell_quote(&data.join("exit").display().to_string()),
    );
    std::fs::create_dir_all(&data).unwrap();
    let tmux = Tmux { socket: dir.join("tmux.sock") };
    tmux.run(&["-f", "/dev/null", "new-session", "-d", "-s", "chalie", "-x", "140", "-y", "40", &command]);
    tmux
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn playback_controls_in_tmux() {
    let dir = tempfile::tempdir().unwrap();
    let log = record(dir.path()).await;
    let tmux = launch_replay(dir.path(), &log);
    let mut seen = Vec::new();

    // It plays by itself to the end, looking as the session did: chat, routing bars, ACT pane.
    let end = tmux
        .wait("playback to the end", &mut seen, |s| s.contains("REPLAY ■ end") && s.contains("You're welcome!"))
        .await;
    for needle in ["What is the capital of France?", "Paris is the capital of France.", "turn 3/3", "RESPOND", "conf "]
    {
        assert!(end.contains(needle), "{needle:?} missing:\n{end}");
    }
    assert!(end.contains("✓ list"), "the ACT pane shows the list action:\n{end}");

    // Pause, restart: an empty chat, nothing played.
    tmux.keys(&["Space"]);
    tmux.keys(&["Home"]);
    let start = tmux.wait("the restart", &mut seen, |s| s.contains("‖ paused") && s.contains("turn 0/3")).await;
    assert!(!start.contains("Paris is the capital"), "{start}");

    // Step: one event at a time, still paused; the first user message comes after the
    // session's opening events (the models it resolved).
    let mut stepped = String::new();
    for n in 1..=5 {
        tmux.keys(&["Right"]);
        stepped = tmux.wait("one step", &mut seen, |s| s.contains(&format!("event {n}/"))).await;
        if stepped.contains("turn 1/3") {
            break;
        }
    }
    assert!(stepped.contains("What is the capital of France?") && stepped.contains("‖ paused"), "{stepped}");
    assert!(!stepped.contains("Paris is the capital"), "{stepped}");

    // Jump to the next turn: everything before it is shown at once.
    tmux.keys(&["]"]);
    let jumped = tmux.wait("the jump to turn 2", &mut seen, |s| s.contains("turn 2/3")).await;
    assert!(jumped.contains("Paris is the capital of France.") && jumped.contains("Add milk and eggs"), "{jumped}");
    assert!(!jumped.contains("Thanks!"), "{jumped}");
    tmux.keys(&["["]);
    tmux.wait("back to turn 1", &mut seen, |s| s.contains("turn 1/3") && !s.contains("Add milk and eggs")).await;

    // Speed.
    tmux.keys(&["+"]);
    tmux.wait("double speed", &mut seen, |s| s.contains("×2")).await;
    tmux.keys(&["-", "-"]);
    tmux.wait("half speed", &mut seen, |s| s.contains("×0.5")).await;

    // Play on to the end again.
    tmux.keys(&["Space"]);
    tmux.wait("the end again", &mut seen, |s| s.contains("REPLAY ■ end") && s.contains("You're welcome!")).await;

    let code = quit(&tmux, &dir.path().join("player")).await;
    assert_eq!(code, "0");
}
