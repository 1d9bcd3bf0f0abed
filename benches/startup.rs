//! How fast the binary starts, spawned as a person would start it.
//!
//! - `startup/version`: `chalie-tui --version`, spawn to exit. It reads no config, opens no
//!   database and asks no network.
//! - `startup/first_frame`: `chalie-tui` with `CHALIE_EXIT_AFTER_FIRST_FRAME=1`, spawn to the
//!   line it prints on stderr once the first frame is drawn (into memory: the bench has no
//!   terminal). Every start step runs: config, log, store open on an existing database,
//!   session log, background workers; the models load and providers are probed after it, in
//!   the background (the process then waits for them before it exits; that is not timed).
//!
//! Each figure is timed around one spawned process (`samples` of them after a warm-up), so the
//! operating system's process start is included. `CHALIE_BENCH_BIN` times another build of the
//! binary instead (an older one, for a before/after).
//! `cargo bench --bench startup`

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use chalie::tui::FIRST_FRAME_LINE;
use criterion::{Criterion, criterion_group, criterion_main};

#[path = "support/benchfig.rs"]
mod benchfig;

fn binary() -> PathBuf {
    std::env::var_os("CHALIE_BENCH_BIN").map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_chalie-tui")), PathBuf::from)
}

/// The binary with its every path inside `data` (an absent config: the built-in defaults).
fn chalie(data: &Path) -> Command {
    let mut cmd = Command::new(binary());
    cmd.env("CHALIE_DATA_DIR", data)
        .env("CHALIE_CONFIG", data.join("config.toml"))
        .env_remove("CHALIE_EXIT_AFTER_FIRST_FRAME")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

fn version(data: &Path) {
    let status = chalie(data).arg("--version").status().expect("the binary starts");
    assert!(status.success());
}

/// Milliseconds from spawn to the first-frame line; then waits for the process to end.
fn first_frame(data: &Path) -> f64 {
    let start = Instant::now();
    let mut child = chalie(data)
        .env("CHALIE_EXIT_AFTER_FIRST_FRAME", "1")
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let stderr = child.stderr.take().expect("piped stderr");
    let mut lines = BufReader::new(stderr).lines();
    let mut elapsed = None;
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.expect("stderr reads");
        if line == FIRST_FRAME_LINE {
            elapsed = Some(start.elapsed().as_secs_f64() * 1e3);
            break;
        }
        seen.push(line);
    }
    for _ in lines {} // the rest, so the process never blocks on a full pipe
    let status = child.wait().expect("the process ends");
    let Some(ms) = elapsed else { panic!("no first frame ({status}): {}", seen.join("\n")) };
    assert!(status.success(), "{status}: {}", seen.join("\n"));
    ms
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path();
    // The first start creates the database; every timed one opens an existing one.
    first_frame(data);

    let mut group = c.benchmark_group("startup");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("version", |b| b.iter(|| version(data)));
    group.finish();

    let ours = benchfig::samples(3, 100, || version(data));
    benchfig::print("startup/version", &ours, None, "<30ms");
    let frames: Vec<f64> = (0..30).map(|_| first_frame(data)).collect();
    benchfig::print("startup/first_frame", &frames, None, "<100ms");
}

criterion_group!(benches, bench);
criterion_main!(benches);
