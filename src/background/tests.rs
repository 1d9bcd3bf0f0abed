use super::board::{RunState, WorkerBoard, WorkerStatus};
use super::registry::{Registry, RegistryError, WorkerId, worker_for};
use super::worker::{PeriodicTask, QueueWorker, Ran};
use crate::events::EventBus;
use crate::store::{Db, Job, JobKind, JobState, JobsRepo, StoreError, open_in_memory};
use async_trait::async_trait;
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Generous bound for things that happen in milliseconds; never a timing assertion.
const BOUND: Duration = Duration::from_secs(20);

/// A worker of the encode queue that completes each job, or fails it the way its payload
/// says: `"err"` returns an error for the loop to record, `"recorded"` records the
/// failure itself as real handlers do.
struct Fake {
    poll: Duration,
    seen: Arc<Mutex<Vec<i64>>>,
}

#[async_trait]
impl QueueWorker for Fake {
    fn kind(&self) -> JobKind {
        JobKind::Encode
    }
    fn poll(&self) -> Duration {
        self.poll
    }
    async fn run(&mut self, db: &Db, job: Job, _stop: &CancellationToken) -> Result<Ran, StoreError> {
        self.seen.lock().unwrap().push(job.id);
        let id = job.id;
        match job.payload["do"].as_str() {
            Some("err") => Err(StoreError::Dimension { expected: 1, got: 2 }),
            Some("recorded") => {
                db.call(move |c| JobsRepo(c).fail(id, "no luck", 60)).await?;
                Ok(Ran::Failed("no luck".into()))
            }
            _ => {
                db.call(move |c| JobsRepo(c).complete(id)).await?;
                Ok(Ran::Done)
            }
        }
    }
}

fn fake(poll: Duration) -> (Fake, Arc<Mutex<Vec<i64>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    (Fake { poll, seen: seen.clone() }, seen)
}

async fn enqueue(db: &Db, what: &str, max_attempts: u32) -> i64 {
    let p = json!({ "do": what });
    db.call(move |c| JobsRepo(c).enqueue(JobKind::Encode, &p, max_attempts)).await.unwrap()
}

async fn state_of(db: &Db, id: i64) -> (JobState, Option<String>) {
    db.call(move |c| {
        let row = crate::store::fixtures::Fixture(c);
        Ok((row.value("jobs", "state", "id = ?1", [id]), row.value("jobs", "last_error", "id = ?1", [id])))
    })
    .await
    .unwrap()
}

async fn until(board: &WorkerBoard, id: WorkerId, what: impl Fn(&WorkerStatus) -> bool) -> WorkerStatus {
    tokio::time::timeout(BOUND, async {
        loop {
            if let Some(s) = board.snapshot().into_iter().find(|s| s.id == id && what(s)) {
                return s;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the board reaches the expected state")
}

#[tokio::test]
async fn the_queue_loop_claims_completes_records_a_failure_and_moves_on() {
    let db = Db::spawn(open_in_memory().unwrap());
    let (bus, board, stop) = (EventBus::new(), WorkerBoard::new(), CancellationToken::new());
    let ok = enqueue(&db, "ok", 3).await;
    let err = enqueue(&db, "err", 1).await;
    let recorded = enqueue(&db, "recorded", 3).await;
    let last = enqueue(&db, "ok", 3).await;
    let (worker, seen) = fake(Duration::from_millis(10));
    let running = Registry::new(board.clone()).queue(WorkerId::Episodic, worker).start(&db, &bus, &stop).unwrap();

    let s = until(&board, WorkerId::Episodic, |s| s.runs >= 4 && s.depth == Some(1)).await;
    assert_eq!(*seen.lock().unwrap(), vec![ok, err, recorded, last], "each job once, in order");
    assert_eq!(state_of(&db, ok).await, (JobState::Done, None));
    let (state, error) = state_of(&db, err).await;
    assert_eq!(state, JobState::Failed, "out of attempts after the loop recorded the error");
    assert!(error.is_some_and(|e| e.contains("dimensions")));
    assert_eq!(state_of(&db, recorded).await, (JobState::Queued, Some("no luck".into())), "retried later");
    assert_eq!(state_of(&db, last).await.0, JobState::Done, "a failure does not stop the queue");
    assert!(s.last_run.is_some());
    assert!(s.last_error.is_some());

    stop.cancel();
    tokio::time::timeout(BOUND, running.join()).await.expect("stops on cancel");
    assert_eq!(board.snapshot().iter().find(|s| s.id == WorkerId::Episodic).unwrap().state, RunState::Stopped);
}

#[tokio::test]
async fn an_idle_worker_wakes_on_notify_and_stops_on_cancel() {
    let db = Db::spawn(open_in_memory().unwrap());
    let (bus, board, stop) = (EventBus::new(), WorkerBoard::new(), CancellationToken::new());
    // An hour's poll: only the wake-up can bring the job in within the test.
    let (worker, seen) = fake(Duration::from_secs(3600));
    let running = Registry::new(board.clone()).queue(WorkerId::Episodic, worker).start(&db, &bus, &stop).unwrap();
    until(&board, WorkerId::Episodic, |s| s.state == RunState::Idle && s.depth == Some(0)).await;

    let id = enqueue(&db, "ok", 3).await;
    running.wake(WorkerId::Episodic);
    until(&board, WorkerId::Episodic, |s| s.runs == 1).await;
    assert_eq!(*seen.lock().unwrap(), vec![id]);
    assert_eq!(state_of(&db, id).await.0, JobState::Done);

    stop.cancel();
    tokio::time::timeout(BOUND, running.join()).await.expect("an idle worker stops on cancel");
}

/// A worker whose one job runs until the test releases it.
struct Holding {
    started: Arc<tokio::sync::Notify>,
    release: Arc<tokio::sync::Notify>,
}

#[async_trait]
impl QueueWorker for Holding {
    fn kind(&self) -> JobKind {
        JobKind::Encode
    }
    fn poll(&self) -> Duration {
        Duration::from_secs(3600)
    }
    async fn run(&mut self, db: &Db, job: Job, _stop: &CancellationToken) -> Result<Ran, StoreError> {
        self.started.notify_one();
        self.release.notified().await;
        let id = job.id;
        db.call(move |c| JobsRepo(c).complete(id)).await?;
        Ok(Ran::Done)
    }
}

/// A busy worker used to keep a bus receiver it did not read while its job ran, and with it
/// every event sent meanwhile (the TUI soak's memory grew with each turn's events that way).
#[tokio::test]
async fn a_worker_holds_no_event_while_its_job_runs_and_still_wakes_when_idle() {
    let db = Db::spawn(open_in_memory().unwrap());
    let (bus, board, stop) = (EventBus::new(), WorkerBoard::new(), CancellationToken::new());
    let (started, release) = (Arc::new(tokio::sync::Notify::new()), Arc::new(tokio::sync::Notify::new()));
    let worker = Holding { started: started.clone(), release: release.clone() };
    let first = enqueue(&db, "ok", 3).await;
    let running = Registry::new(board.clone()).queue(WorkerId::Episodic, worker).start(&db, &bus, &stop).unwrap();
    tokio::time::timeout(BOUND, started.notified()).await.expect("the job starts");
    for i in 0..500 {
        bus.notice(crate::events::NoticeLevel::Info, format!("n{i}"));
    }
    assert_eq!(bus.queued(), 0, "no receiver is left unread while the job runs");
    release.notify_one();
    until(&board, WorkerId::Episodic, |s| s.runs == 1 && s.state == RunState::Idle && s.depth == Some(0)).await;
    assert_eq!(state_of(&db, first).await.0, JobState::Done);

    // Idle again: a job queued now is taken on the registry's wake-up, as before.
    let second = enqueue(&db, "ok", 3).await;
    running.wake(WorkerId::Episodic);
    tokio::time::timeout(BOUND, started.notified()).await.expect("the second job starts");
    release.notify_one();
    until(&board, WorkerId::Episodic, |s| s.runs == 2).await;
    assert_eq!(state_of(&db, second).await.0, JobState::Done);

    stop.cancel();
    tokio::time::timeout(BOUND, running.join()).await.expect("stops on cancel");
}

struct Ticker {
    nows: Arc<Mutex<Vec<i64>>>,
}

#[async_trait]
impl PeriodicTask for Ticker {
    async fn first_wait(&mut self, _db: &Db, _now: i64) -> Result<Duration, StoreError> {
        Ok(Duration::ZERO)
    }
    fn every(&self) -> Duration {
        Duration::from_millis(5)
    }
    async fn run(&mut self, _db: &Db, now: i64) -> Result<(), StoreError> {
        let mut n = self.nows.lock().unwrap();
        n.push(now);
        if n.len() == 2 { Err(StoreError::Dimension { expected: 1, got: 3 }) } else { Ok(()) }
    }
}

#[tokio::test]
async fn the_periodic_loop_passes_now_records_errors_and_keeps_going() {
    let db = Db::spawn(open_in_memory().unwrap());
    let (bus, board, stop) = (EventBus::new(), WorkerBoard::new(), CancellationToken::new());
    let nows = Arc::new(Mutex::new(Vec::new()));
    let ticker = Ticker { nows: nows.clone() };
    let running = Registry::new(board.clone()).periodic(WorkerId::Decay, ticker).start(&db, &bus, &stop).unwrap();
    let s = until(&board, WorkerId::Decay, |s| s.runs >= 3).await;
    assert!(s.last_error.is_some_and(|e| e.contains("3 dimensions")), "the second run's error is kept");
    assert!(nows.lock().unwrap().iter().all(|t| *t > 0));
    stop.cancel();
    tokio::time::timeout(BOUND, running.join()).await.expect("stops on cancel");
}

#[test]
fn every_job_kind_has_a_worker_that_drains_it() {
    for kind in JobKind::ALL {
        assert_eq!(worker_for(kind).queue(), Some(kind), "{kind}");
        assert_eq!(JobKind::parse(kind.as_str()), Some(kind));
    }
    let queues: Vec<JobKind> = WorkerId::ALL.iter().filter_map(|w| w.queue()).collect();
    assert_eq!(queues.len(), JobKind::ALL.len(), "one worker per queue, no more");
}

#[tokio::test]
async fn the_registry_refuses_gaps_duplicates_and_a_worker_under_another_name() {
    let (db, bus, stop) = (Db::spawn(open_in_memory().unwrap()), EventBus::new(), CancellationToken::new());
    let (a, _) = fake(Duration::from_secs(1));
    let only_encode = Registry::new(WorkerBoard::new()).queue(WorkerId::Episodic, a);
    assert_eq!(only_encode.require_every_queue(), Err(RegistryError::Unclaimed(JobKind::Chunk)));
    let (a, _) = fake(Duration::from_secs(1));
    let (b, _) = fake(Duration::from_secs(1));
    let twice = Registry::new(WorkerBoard::new()).queue(WorkerId::Episodic, a).queue(WorkerId::Episodic, b);
    assert_eq!(twice.start(&db, &bus, &stop).err(), Some(RegistryError::Duplicate(WorkerId::Episodic)));
    let (c, _) = fake(Duration::from_secs(1));
    let wrong = Registry::new(WorkerBoard::new()).queue(WorkerId::Chunker, c);
    let err = wrong.start(&db, &bus, &stop).err();
    assert_eq!(err, Some(RegistryError::WrongQueue { id: WorkerId::Chunker, got: JobKind::Encode }));
}

#[test]
fn the_status_report_lists_every_worker_with_depth_and_last_error() {
    let c = open_in_memory().unwrap();
    let jobs = JobsRepo(&c);
    jobs.enqueue(JobKind::Encode, &json!({}), 3).unwrap();
    let failing = jobs.enqueue(JobKind::Chunk, &json!({}), 1).unwrap();
    jobs.claim(JobKind::Chunk).unwrap().unwrap();
    jobs.fail(failing, "disk full", 0).unwrap();
    let now = crate::store::now_ts();

    let r = super::status::report(&c, None, now).unwrap();
    assert_eq!(r.lines.iter().map(|l| l.id).collect::<Vec<_>>(), WorkerId::ALL.to_vec());
    let text = r.to_string();
    assert_eq!(text.lines().count(), WorkerId::ALL.len(), "{text}");
    for id in WorkerId::ALL {
        assert!(text.contains(id.name()), "{text}");
    }
    let line = |name: &str| text.lines().find(|l| l.starts_with(name)).unwrap().to_string();
    assert!(line("episodic").contains("queue 1"), "{text}");
    assert!(line("chunker").contains("queue 0") && line("chunker").contains("error: disk full"), "{text}");
    assert!(line("chunker").contains("0s ago"), "{text}");
    assert!(line("scheduler").contains("not running here") && line("scheduler").contains("never"), "{text}");

    // The running app's board wins for state and last run.
    let board = WorkerBoard::new();
    board.slot(WorkerId::Scheduler).set_state(RunState::Idle);
    board.slot(WorkerId::Scheduler).ran(now - 120, None);
    let r = super::status::report(&c, Some(&board.snapshot()), now).unwrap();
    let text = r.to_string();
    assert!(line_of(&text, "scheduler").contains("idle") && line_of(&text, "scheduler").contains("2m ago"), "{text}");
    let rows = super::StatusReport::from_board(&board.snapshot(), now).rows();
    assert_eq!(rows.len(), WorkerId::ALL.len());
}

fn line_of(text: &str, name: &str) -> String {
    text.lines().find(|l| l.starts_with(name)).unwrap_or_default().to_string()
}

#[test]
fn job_states_round_trip_through_the_table() {
    let c = open_in_memory().unwrap();
    let jobs = JobsRepo(&c);
    let id = jobs.enqueue(JobKind::Encode, &json!({"exchange_id": "x"}), 3).unwrap();
    assert_eq!(jobs.exchange_state(JobKind::Encode, "x").unwrap(), Some(JobState::Queued));
    jobs.claim(JobKind::Encode).unwrap().unwrap();
    assert_eq!(jobs.exchange_state(JobKind::Encode, "x").unwrap(), Some(JobState::Running));
    jobs.complete(id).unwrap();
    let state = jobs.exchange_state(JobKind::Encode, "x").unwrap();
    assert_eq!(state, Some(JobState::Done));
    assert!(state.is_some_and(JobState::is_finished));
    assert_eq!(jobs.exchange_state(JobKind::Chunk, "x").unwrap(), None);
}

/// Jobs an older version left on a queue no worker claims (the silence gap's `episode`) are
/// closed at start, so "is the queue empty?" can become true again.
#[test]
fn jobs_on_a_queue_no_worker_claims_are_retired() {
    let c = open_in_memory().unwrap();
    let zero = 0i64;
    crate::store::fixtures::Fixture(&c).insert(
        "jobs",
        &[
            ("queue", &"episode"),
            ("payload", &"{}"),
            ("max_attempts", &3),
            ("run_after", &zero),
            ("created_at", &zero),
            ("updated_at", &zero),
        ],
    );
    let jobs = JobsRepo(&c);
    jobs.enqueue(JobKind::Semantic, &json!({}), 3).unwrap();
    assert_eq!(jobs.retire_unclaimable().unwrap(), 1);
    assert_eq!(jobs.pending_count().unwrap(), 1, "a known queue's job is left alone");
    let episode: JobState = crate::store::fixtures::Fixture(&c).value("jobs", "state", "queue = 'episode'", []);
    assert_eq!(episode, JobState::Failed);
}
