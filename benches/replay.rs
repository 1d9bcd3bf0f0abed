//! How fast a long session log loads for `--replay`.
//!
//! The input is the committed fixture (`tests/data/replay_session.jsonl`, a real session
//! recorded through the binary and the scripted double), its turns repeated to 10,000, with
//! every recorded embedding widened to the built-in model's 384 dimensions so the file is the
//! size a real session of that length would be (the bench prints the size).
//!
//! - `replay/read_log_10k_turns`: read and parse the file (every line to a typed event).
//! - `replay/load_for_playback_10k_turns`: what `--replay` does before its first frame: index
//!   the file's lines (`session::LogIndex`; each event is parsed when it is played) and build
//!   the playback state the TUI starts from.
//! - `replay/load_for_rerun_10k_turns`: the whole read, plus the turn list and the recorded
//!   calls a rerun answers from.
//!
//! Both loads also print a `BENCHFIG` line (playback against the full read it replaced, in the
//! same run; benches/support/benchfig.rs), from their own timed runs. `cargo bench --bench replay`

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chalie::events::{EngineEvent, Stamped};
use chalie::llm::replay::ReplayBook;
use chalie::session::{LogEntry, LogIndex, PackedVectors, read_log, recorded_turns};
use chalie::tui::replay::Player;
use criterion::{Criterion, criterion_group, criterion_main};

#[path = "support/benchfig.rs"]
mod benchfig;

const TURNS: usize = 10_000;
/// Timed loads per figure (a full read takes about a second).
const SAMPLES: usize = 10;

/// Write the 10,000-turn log; returns its path.
fn long_log(dir: &Path) -> PathBuf {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/replay_session.jsonl");
    let text = std::fs::read_to_string(&fixture).expect("the committed fixture");
    let mut lines = text.lines();
    let header = lines.next().expect("a header").to_string();
    let wide = PackedVectors(vec![(0..384).map(|i| (i as f32 * 0.37).sin()).collect()]);
    // Re-encoded through `Stamped` as the writer encodes it, so each line keeps the writer's
    // field order (`ts`, then `type`) that the playback index reads lines by.
    let body: Vec<String> = lines
        .map(|l| {
            let Ok(mut s) = serde_json::from_str::<Stamped>(l) else { return l.to_string() };
            if let EngineEvent::LlmEmbedded { vectors, .. } = &mut s.event {
                *vectors = wide.clone();
            }
            serde_json::to_string(&s).expect("events serialise")
        })
        .collect();
    let per_copy = body.iter().filter(|l| l.contains("\"type\":\"user_message\"")).count().max(1);
    let mut out = header + "\n";
    for _ in 0..TURNS.div_ceil(per_copy) {
        for l in &body {
            out.push_str(l);
            out.push('\n');
        }
    }
    let path = dir.join("long-session.jsonl");
    std::fs::write(&path, out).expect("write the long log");
    path
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = long_log(dir.path());
    let log = read_log(&path).expect("the long log reads");
    let turns = recorded_turns(&log).len();
    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    eprintln!("replay bench: {turns} turns, {} events, {:.1} MB", log.entries.len(), bytes as f64 / 1e6);
    assert!(turns >= TURNS && log.warnings.is_empty());

    let mut group = c.benchmark_group("replay");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    group.bench_function("read_log_10k_turns", |b| b.iter(|| read_log(black_box(&path))));
    let playback = || {
        let log = LogIndex::read(black_box(&path)).expect("indexes");
        Player::indexed(log, "bench").len()
    };
    let rerun = || {
        let log = read_log(black_box(&path)).expect("reads");
        let events = log.entries.iter().filter_map(|e| match e {
            LogEntry::Event(s) => Some(&s.event),
            LogEntry::Unknown(_) => None,
        });
        (recorded_turns(&log).len(), ReplayBook::from_events(events).len())
    };
    group.bench_function("load_for_playback_10k_turns", |b| b.iter(playback));
    group.bench_function("load_for_rerun_10k_turns", |b| b.iter(rerun));
    group.finish();

    // The reference: playback as it loaded before the index, every event parsed up front.
    let full_playback = || {
        let log = read_log(black_box(&path)).expect("reads");
        (recorded_turns(&log).len(), Player::new(log, "bench").len())
    };
    let (playback_ms, full_ms) = benchfig::paired(1, SAMPLES, playback, full_playback);
    benchfig::print("replay/load_for_playback_10k_turns", &playback_ms, Some(("full_read", &full_ms)), "<150ms");
    let rerun_ms = benchfig::samples(1, SAMPLES, rerun);
    benchfig::print("replay/load_for_rerun_10k_turns", &rerun_ms, None, "-");
}

criterion_group!(benches, bench);
criterion_main!(benches);
