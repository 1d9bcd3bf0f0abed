//! Memory of the TUI over a long session with the built-in models loaded (issue 22).
//!
//! Drives the real app loop (`tui::run_loop` on a `TestBackend`, every frame drawn as in a
//! terminal) with typed keys: each message is typed character by character and sent with
//! Enter; the action goes to a turn task doing what the TUI's worker does (intake, then
//! `Engine::turn`), with the background tasks of `chalie-tui` running (`start_background`:
//! memory workers, scheduler, regulators). The models are the built-in ones: MiniLM embeds
//! every message, SmolLM2 writes every reply, its length capped at `--reply-tokens` (default
//! 24) so a thousand turns fit in minutes — the model, its KV cache and the prompt path are the
//! same at any length.
//!
//! After each reply it reads this process's resident set (`/proc/self/status`: VmRSS, VmHWM for
//! the peak, RssAnon) and glibc's account of its heap (`mallinfo2`: bytes live, bytes held), and
//! prints, at the end, one line:
//! `tui_soak: turns=… warmup=… rss_kb=<after warm-up>-><end> peak_rss_kb=… rss_slope_kb_per_turn=…
//! anon_kb=… anon_slope_kb_per_turn=… heap_in_use_kb=… heap_slope_kb_per_turn=… vector_rows=…
//! db_kb=…` (least squares over the turns after warm-up, a tenth of the run). The live heap is
//! what tells a leak from an allocator keeping freed pages; `vector_rows` counts what the process
//! keeps an index of (memory that grows with what is remembered), `db_kb` the database file,
//! memory-mapped, whose pages read are resident as file pages (VmRSS minus RssAnon).
//! `--curve FILE` writes every turn's reading; `--trim` calls `malloc_trim(0)` after each reply
//! (an experiment: what the allocator keeps that it could give back).
//!
//! To find what grows: `SOAK_EXIT_LIVE=1 heaptrack tui_soak --canned --turns N` exits right
//! after the last turn with everything alive, so heaptrack lists the live heap as leaked; two
//! lengths compared (`heaptrack_print -f long.zst -d short.zst --print-leaks 1`) name the
//! allocations that grow with turns.
//!
//! `cargo run --profile bench --example tui_soak -- [--turns 1000] [--reply-tokens 24] [--canned]`
//! (scripts/soak.sh runs it). Linux only (it reads /proc).

use async_trait::async_trait;
use chalie::config::{Config, Paths, Role};
use chalie::events::EngineEvent;
use chalie::llm::local::{CHAT_MODEL, EMBED_MODEL, LocalProvider};
use chalie::llm::{ChatRequest, Completion, Llm, LlmError, Provider, Route, Token};
use chalie::runtime::Runtime;
use chalie::tui::app::{Action, App};
use chalie::tui::{Sources, run_loop, settings};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The built-in chat model with replies cut at `cap` tokens, or, with `--canned`, no model at
/// all: every chat call answers a fixed sentence at once. That run is not the figure
/// (the model is not loaded); it finds memory growth outside the model in minutes, not hours.
struct Capped {
    inner: Arc<LocalProvider>,
    cap: u32,
    canned: bool,
}

const CANNED: &str = "Noted. Anything else on your mind?";

#[async_trait]
impl Provider for Capped {
    fn name(&self) -> &str {
        self.inner.name()
    }

    async fn chat(
        &self,
        model: &str,
        req: &ChatRequest,
        on_token: &mut (dyn FnMut(Token) + Send),
        cancel: &CancellationToken,
    ) -> Result<Completion, LlmError> {
        if self.canned {
            for word in CANNED.split_inclusive(' ') {
                on_token(Token { text: word.into(), logprob: None });
            }
            let tokens_out = CANNED.split(' ').count() as u32;
            return Ok(Completion {
                text: CANNED.into(),
                tokens_in: 0,
                tokens_out,
                finish: chalie::llm::FinishReason::Stop,
            });
        }
        let mut req = req.clone();
        req.max_tokens = req.max_tokens.min(self.cap);
        self.inner.chat(model, &req, on_token, cancel).await
    }

    async fn embed(&self, model: &str, inputs: &[String]) -> Result<Vec<Vec<f32>>, LlmError> {
        self.inner.embed(model, inputs).await
    }
}

/// VmRSS, VmHWM and RssAnon of this process, and the allocator's account. Anonymous pages are the heap (and the
/// models' buffers); the rest of VmRSS is file pages: the model files and the database, both
/// memory-mapped, which grow with what is read of them and which the kernel can drop.
fn rss_kb() -> Sample {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    let (in_use, held) = heap::kb();
    Sample { rss: field("VmRSS:"), hwm: field("VmHWM:"), anon: field("RssAnon:"), in_use, held }
}

/// One reading after a reply, in kB.
#[derive(Clone, Copy)]
struct Sample {
    rss: u64,
    /// The peak resident set so far (VmHWM).
    hwm: u64,
    anon: u64,
    /// The allocator's live heap (see `heap`).
    in_use: u64,
    /// What the allocator holds from the system, live or free.
    held: u64,
}

/// glibc's own account of its heap (`mallinfo2`), to tell a growing live heap (a leak, or what
/// is remembered) from an allocator that keeps freed memory (fragmentation, arenas): resident
/// anonymous memory that grows while `in_use` stays flat is the allocator's, not ours.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod heap {
    #[repr(C)]
    #[derive(Default)]
    struct MallInfo2 {
        arena: usize,
        ordblks: usize,
        smblks: usize,
        hblks: usize,
        hblkhd: usize,
        usmblks: usize,
        fsmblks: usize,
        uordblks: usize,
        fordblks: usize,
        keepcost: usize,
    }
    unsafe extern "C" {
        fn mallinfo2() -> MallInfo2;
        fn malloc_trim(pad: usize) -> i32;
    }
    /// `--trim`: hand the allocator's free pages back to the system after every reply, to
    /// measure what the allocator keeps (the app does not do this).
    pub fn trim() {
        // SAFETY: malloc_trim takes a size and touches only the allocator's own free lists.
        unsafe { malloc_trim(0) };
    }
    /// (bytes handed out and not freed, bytes the allocator holds: its arenas plus mmapped
    /// blocks) in kB.
    pub fn kb() -> (u64, u64) {
        // SAFETY: mallinfo2 takes no arguments and returns a plain struct by value.
        let m = unsafe { mallinfo2() };
        (((m.uordblks + m.hblkhd) / 1024) as u64, ((m.arena + m.hblkhd) / 1024) as u64)
    }
}
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
mod heap {
    pub fn trim() {}
    pub fn kb() -> (u64, u64) {
        (0, 0)
    }
}

/// Least-squares slope of `ys` against their index.
fn slope(ys: &[f64]) -> f64 {
    let n = ys.len() as f64;
    if n < 2.0 {
        return 0.0;
    }
    let (mx, my) = ((n - 1.0) / 2.0, ys.iter().sum::<f64>() / n);
    let num: f64 = ys.iter().enumerate().map(|(i, y)| (i as f64 - mx) * (y - my)).sum();
    let den: f64 = (0..ys.len()).map(|i| (i as f64 - mx).powi(2)).sum();
    num / den
}

fn message(i: usize) -> String {
    match i % 5 {
        0 => format!("I went for walk number {i} by the river today and saw some herons"),
        1 => format!("what should I cook tonight if I have rice, eggs and {} tomatoes?", i % 7 + 1),
        2 => format!("remind me what we said about the budget for trip {}", i % 13),
        3 => format!("note {i}: the meeting moved to Thursday afternoon"),
        _ => format!("how many minutes are there in {} hours?", i % 24 + 1),
    }
}

/// The vector rows stored so far: each is also held in the process's vector index.
async fn vector_rows(db: &chalie::store::Db) -> Result<i64, chalie::store::StoreError> {
    db.call(|c| {
        let repo = chalie::store::VectorRepo(c);
        chalie::store::VecTable::ALL.iter().map(|t| repo.count(*t)).sum::<Result<i64, _>>()
    })
    .await
}

/// The database file and its WAL, in kB: memory-mapped, so the pages read of it are resident
/// (file pages, not anonymous) and grow with what is stored.
fn db_kb(db_file: &std::path::Path) -> u64 {
    let wal = db_file.with_extension("db-wal");
    [db_file, wal.as_path()].iter().filter_map(|p| std::fs::metadata(p).ok()).map(|m| m.len() / 1024).sum()
}

/// `--curve FILE`: every turn's reading, one line each, for a plot.
fn curve_path() -> Option<PathBuf> {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == "--curve").and_then(|i| args.get(i + 1)).map(PathBuf::from)
}

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)?.parse().ok()).unwrap_or(default)
}

fn main() -> anyhow::Result<()> {
    let turns = arg("--turns", 1000);
    let cap = arg("--reply-tokens", 24) as u32;
    let canned = std::env::args().any(|a| a == "--canned");
    let trim = std::env::args().any(|a| a == "--trim");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let models = std::env::var_os("CHALIE_MODELS_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target/models"));
    chalie::llm::local::fetch::Fetcher::default().fetch(&models, &mut |_| {})?;
    let dir = tempfile::tempdir()?;
    let paths = Paths::in_dir(dir.path(), &models);
    let tok = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let rt = Runtime::start(paths, Config::defaults())?;
    let local = Arc::new(LocalProvider::new("local", &models));
    let capped: Arc<dyn Provider> = Arc::new(Capped { inner: local.clone(), cap, canned });
    let routes = Role::ALL.map(|role| {
        let route = match role {
            Role::Embedding => Route { provider: local.clone(), model: EMBED_MODEL.into(), builtin: true },
            _ => Route { provider: capped.clone(), model: CHAT_MODEL.into(), builtin: true },
        };
        (role, route)
    });
    let llm = Arc::new(Llm::new(rt.bus.clone(), rt.config.llm.clone(), routes));

    let summary = tok.block_on(async {
        let engine =
            Arc::new(chalie::cognition::pipeline::Engine::start(rt.db.clone(), llm.clone(), rt.bus.clone()).await?);
        rt.provide_llm(llm);
        let background = rt.start_background();
        let mut app = App::new(settings(&rt));
        let mut terminal = Terminal::new(TestBackend::new(120, 40))?;
        let (answers_tx, answers) = mpsc::unbounded_channel();
        let (input_tx, input) = mpsc::channel(4096);
        let sources = Sources { input, engine: rt.bus.subscribe(), answers };

        // What the worker does with a sent message: store it, then answer it.
        let (turn_tx, mut turn_rx) = mpsc::unbounded_channel::<String>();
        let (rt_turn, engine_turn) = (rt.clone(), engine.clone());
        tokio::spawn(async move {
            let mut thread = None;
            let cancel = CancellationToken::new();
            while let Some(text) = turn_rx.recv().await {
                let Ok((t, x)) = rt_turn.intake(thread.clone(), text.clone()).await else { continue };
                thread = Some(t.clone());
                if let Err(e) = engine_turn.turn(&t, &x, &text, &cancel).await {
                    rt_turn.bus.emit(EngineEvent::TurnFailed { exchange_id: x, error: e.to_string() });
                }
            }
        });

        // The user: type a message, press Enter, wait for the reply, note the memory.
        let mut replies = rt.bus.subscribe();
        let db = rt.db.clone();
        let db_file = rt.paths.db_file.clone();
        let typist = tokio::spawn(async move {
            let key = |c| Ok(Event::Key(KeyEvent::new(c, KeyModifiers::NONE)));
            let mut samples = Vec::with_capacity(turns);
            // Written as the run goes, so a run stopped early still leaves its curve.
            let mut curve = curve_path().and_then(|p| std::fs::File::create(p).ok());
            if let Some(f) = curve.as_mut() {
                let _ = writeln!(f, "turn rss_kb anon_kb heap_in_use_kb heap_held_kb");
            }
            let (mut failed, clock) = (0usize, Instant::now());
            for i in 0..turns {
                for c in message(i).chars() {
                    input_tx.send(key(KeyCode::Char(c))).await.ok();
                }
                input_tx.send(key(KeyCode::Enter)).await.ok();
                loop {
                    match replies.recv().await {
                        Ok(e) => match e.event {
                            EngineEvent::ReplyDone { .. } => break,
                            EngineEvent::TurnFailed { .. } => {
                                failed += 1;
                                break;
                            }
                            _ => {}
                        },
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                        Err(_) => return (samples, failed, clock.elapsed()),
                    }
                }
                if trim {
                    heap::trim();
                }
                samples.push(rss_kb());
                if let Some(f) = curve.as_mut() {
                    let s = samples[i];
                    let _ = writeln!(f, "{} {} {} {} {}", i + 1, s.rss, s.anon, s.in_use, s.held);
                }
                if (i + 1) % 100 == 0 {
                    let s = samples[i];
                    eprintln!(
                        "{} turns, rss {} kB (anon {} kB; heap in use {} kB of {} kB held), {} vectors, \
                         database {} kB, {:.0} s",
                        i + 1,
                        s.rss,
                        s.anon,
                        s.in_use,
                        s.held,
                        vector_rows(&db).await.unwrap_or(-1),
                        db_kb(&db_file),
                        clock.elapsed().as_secs_f64()
                    );
                }
            }
            (samples, failed, clock.elapsed())
        });
        let drawn = run_loop(&mut terminal, &mut app, sources, |action| {
            if let Action::Send(text) = action {
                let _ = turn_tx.send(text);
            }
            true
        });
        // The loop ends when the typist is done and drops its end of the input.
        drawn.await?;
        if std::env::var_os("SOAK_EXIT_LIVE").is_some() {
            // Diagnosis: end with everything still alive, so a heap profiler lists it as leaked.
            std::process::exit(0);
        }
        drop(answers_tx);
        background.cancel();
        let typed = typist.await?;
        // What the turns stored that the process keeps an index of: every vector row is held
        // in memory (its int8 row and binary code, ~0.4 kB), growth with what is remembered,
        // not with turns as such.
        let vectors = vector_rows(&rt.db).await?;
        anyhow::Ok((typed, vectors))
    })?;

    let ((samples, failed, took), vectors) = summary;
    let db = db_kb(&rt.paths.db_file);
    let warm = (turns / 10).max(1);
    let series = |f: fn(&Sample) -> u64| samples.iter().skip(warm - 1).map(|s| f(s) as f64).collect::<Vec<f64>>();
    let (after, anon, in_use) = (series(|s| s.rss), series(|s| s.anon), series(|s| s.in_use));
    let ends = |v: &[f64]| (v.first().copied().unwrap_or(0.0), v.last().copied().unwrap_or(0.0));
    let ((warm_kb, end_kb), (anon_warm, anon_end)) = (ends(&after), ends(&anon));
    let (heap_warm, heap_end) = ends(&in_use);
    let peak = samples.iter().map(|s| s.hwm).max().unwrap_or(0);
    println!(
        "tui_soak: turns={} failed={failed} reply_tokens<={cap} warmup={warm} rss_kb={warm_kb:.0}->{end_kb:.0} \
         peak_rss_kb={peak} rss_slope_kb_per_turn={:.3} anon_kb={anon_warm:.0}->{anon_end:.0} \
         anon_slope_kb_per_turn={:.3} heap_in_use_kb={heap_warm:.0}->{heap_end:.0} \
         heap_slope_kb_per_turn={:.3} vector_rows={vectors} db_kb={db} seconds={:.0}",
        samples.len(),
        slope(&after),
        slope(&anon),
        slope(&in_use),
        took.as_secs_f64()
    );
    rt.finish();
    Ok(())
}
