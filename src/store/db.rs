//! The async face of the store: one connection on a dedicated thread.

use super::StoreError;
use rusqlite::Connection;
use std::path::Path;
use std::sync::mpsc;
use tokio::sync::oneshot;

type Work = Box<dyn FnOnce(&mut Connection) + Send>;

/// How long the thread looks for its next piece of work before it sleeps. A turn's calls come
/// a few tens of microseconds apart (the turn decides between them), and waking a sleeping
/// thread costs about as long again on every call; after a quiet spell it sleeps as before.
const SPIN: std::time::Duration = std::time::Duration::from_micros(60);

/// How long a foreground [`Db::call`] looks for its result before it sleeps on it: longer than
/// a turn's calls take at 100k memories (the commit's ~0.2 ms, the topic stage's ~0.4).
const CALLER_SPIN: std::time::Duration = std::time::Duration::from_millis(1);

/// Wait for the next ring (false once every handle is gone): looking for one for [`SPIN`],
/// then asleep.
fn next_ring(rings: &mpsc::Receiver<()>) -> bool {
    let start = std::time::Instant::now();
    loop {
        match rings.try_recv() {
            Ok(()) => return true,
            Err(mpsc::TryRecvError::Disconnected) => return false,
            Err(mpsc::TryRecvError::Empty) if start.elapsed() < SPIN => std::hint::spin_loop(),
            Err(mpsc::TryRecvError::Empty) => return rings.recv().is_ok(),
        }
    }
}

/// A cheap, cloneable handle to the database thread.
///
/// The thread serves two lanes: the foreground (a turn, the front-ends) and the background
/// (the workers and timed tasks, through [`Db::background`]). Waiting foreground work always
/// runs first, so a turn's reads and commit wait at most for the one background call already
/// running, not for a queue of consolidation writes. Within a lane work runs in submission
/// order, so one task's writes are seen by its later reads.
#[derive(Clone)]
pub struct Db {
    foreground: mpsc::Sender<Work>,
    background: mpsc::Sender<Work>,
    /// One ring per piece of work sent, after it is in its lane: the thread sleeps on this.
    bell: mpsc::Sender<()>,
    /// Whether this handle's work goes to the background lane.
    in_background: bool,
}

impl Db {
    /// Open the database at `path` (migrating it) and start its thread.
    pub fn open(path: &Path) -> Result<Db, StoreError> {
        Ok(Self::spawn(super::open(path)?))
    }

    /// Wrap an already-open connection (tests use an in-memory one).
    pub fn spawn(mut conn: Connection) -> Db {
        let (foreground, fg) = mpsc::channel::<Work>();
        let (background, bg) = mpsc::channel::<Work>();
        let (bell, rings) = mpsc::channel::<()>();
        std::thread::Builder::new()
            .name("chalie-db".into())
            .spawn(move || {
                // Every ring follows its work into a lane, so each ring finds at least one
                // piece waiting; the foreground's is taken first.
                while next_ring(&rings) {
                    if let Ok(work) = fg.try_recv().or_else(|_| bg.try_recv()) {
                        run(work, &mut conn);
                    }
                }
            })
            .map(|_| ())
            .unwrap_or_else(|e| tracing::error!("cannot start the database thread: {e}"));
        Db { foreground, background, bell, in_background: false }
    }

    /// This handle's twin for background work: the same thread and connection, served only
    /// when no foreground work waits.
    pub fn background(&self) -> Db {
        Db { in_background: true, ..self.clone() }
    }

    /// Run `f` on the database thread and await its result. A foreground call looks for it
    /// first ([`look_for`]).
    pub async fn call<R, F>(&self, f: F) -> Result<R, StoreError>
    where
        R: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<R, StoreError> + Send + 'static,
    {
        let mut result = self.submit(f)?;
        if !self.in_background
            && let Some(r) = look_for(&mut result).await
        {
            return r;
        }
        result.await.map_err(|_| StoreError::Closed)?
    }

    /// Run `f` on the database thread from synchronous code (never from a runtime worker).
    pub fn call_blocking<R, F>(&self, f: F) -> Result<R, StoreError>
    where
        R: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<R, StoreError> + Send + 'static,
    {
        self.submit(f)?.blocking_recv().map_err(|_| StoreError::Closed)?
    }

    fn submit<R, F>(&self, f: F) -> Result<oneshot::Receiver<Result<R, StoreError>>, StoreError>
    where
        R: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<R, StoreError> + Send + 'static,
    {
        let (done, result) = oneshot::channel();
        let lane = if self.in_background { &self.background } else { &self.foreground };
        lane.send(Box::new(move |conn| {
            let _ = done.send(f(conn));
        }))
        .map_err(|_| StoreError::Closed)?;
        self.bell.send(()).map_err(|_| StoreError::Closed)?;
        Ok(result)
    }
}

/// A call's result if it comes within [`CALLER_SPIN`], looked for instead of waited on: a
/// runtime thread that sleeps on the result is woken ~30 µs after it is sent, on each of the
/// four or so calls a turn makes before its first token (a tenth of the deterministic turn at
/// 100k memories, docs/architecture.md §9). It looks between the runtime's other tasks, so they
/// run meanwhile. While the vector search thread has work it sleeps instead
/// ([`aside::wait_idle`](super::vector_codes::aside::wait_idle)), then looks again: the search
/// ends before the call does (its rows are read after it).
async fn look_for<R>(result: &mut oneshot::Receiver<Result<R, StoreError>>) -> Option<Result<R, StoreError>> {
    use super::vector_codes::aside;
    use oneshot::error::TryRecvError;
    let mut start = std::time::Instant::now();
    while start.elapsed() < CALLER_SPIN {
        match result.try_recv() {
            Ok(r) => return Some(r),
            Err(TryRecvError::Closed) => return Some(Err(StoreError::Closed)),
            Err(TryRecvError::Empty) if aside::busy() => {
                aside::wait_idle();
                start = std::time::Instant::now();
            }
            Err(TryRecvError::Empty) => {
                std::thread::yield_now();
                tokio::task::yield_now().await;
            }
        }
    }
    None
}

/// Run one piece of work. A panicking call drops its result's sender (its caller sees
/// [`StoreError::Closed`]) and the thread goes on serving the next; whatever transaction or
/// savepoint the call left open is rolled back first, so its half-done writes never ride along
/// with a later call's commit.
fn run(work: Work, conn: &mut Connection) {
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(conn))).is_err()
        && !conn.is_autocommit()
        && let Err(e) = conn.execute_batch("ROLLBACK")
    {
        tracing::error!("cannot roll back what a failed database call left open: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[test]
    fn waiting_foreground_work_runs_before_queued_background_work_and_each_lane_keeps_its_order() {
        let db = Db::spawn(Connection::open_in_memory().unwrap());
        let bg = db.background();
        let order = Arc::new(Mutex::new(Vec::new()));
        let (release, gate) = mpsc::channel::<()>();
        // Hold the thread so both lanes fill up behind it.
        let held = db
            .submit(move |_| {
                gate.recv().ok();
                Ok(())
            })
            .unwrap();
        let push = |db: &Db, label: String| {
            let order = order.clone();
            db.submit(move |_| {
                order.lock().unwrap().push(label);
                Ok(())
            })
            .unwrap()
        };
        let mut waits: Vec<_> = (0..4).map(|i| push(&bg, format!("b{i}"))).collect();
        waits.push(push(&db, "f0".into()));
        waits.push(push(&bg, "b4".into()));
        waits.push(push(&db, "f1".into()));
        release.send(()).unwrap();
        held.blocking_recv().unwrap().unwrap();
        for w in waits {
            w.blocking_recv().unwrap().unwrap();
        }
        assert_eq!(*order.lock().unwrap(), ["f0", "f1", "b0", "b1", "b2", "b3", "b4"]);
    }

    #[test]
    fn a_background_handle_keeps_the_thread_serving_after_the_first_handle_is_gone() {
        let db = Db::spawn(Connection::open_in_memory().unwrap());
        let bg = db.background();
        drop(db);
        let n: i64 = bg.call_blocking(|c| Ok(c.query_row("SELECT 41 + 1", [], |r| r.get(0))?)).unwrap();
        assert_eq!(n, 42);
    }

    /// The foreground call finds its answer by looking for it, the background one by waiting;
    /// either way a failed call reports the thread's loss of it, and the next call is served.
    #[tokio::test]
    async fn an_awaited_call_returns_its_result_or_its_failure_in_either_lane() {
        let db = Db::spawn(Connection::open_in_memory().unwrap());
        for handle in [db.clone(), db.background()] {
            let n: i64 = handle.call(|c| Ok(c.query_row("SELECT 6 * 7", [], |r| r.get(0))?)).await.unwrap();
            assert_eq!(n, 42);
            let failed = handle.call(|_| -> Result<(), StoreError> { panic!("a call that fails") }).await;
            assert!(matches!(failed, Err(StoreError::Closed)), "{failed:?}");
            // A call slower than the looking lasts is waited for.
            let slow = handle
                .call(|_| {
                    std::thread::sleep(CALLER_SPIN * 3);
                    Ok(7)
                })
                .await;
            assert_eq!(slow.unwrap(), 7);
        }
    }

    #[test]
    fn a_call_that_panics_mid_savepoint_leaves_nothing_behind_and_the_thread_serves_on() {
        let db = Db::spawn(Connection::open_in_memory().unwrap());
        db.call_blocking(|c| Ok(c.execute_batch("CREATE TABLE t (x INTEGER)")?)).unwrap();
        let panicked = db.call_blocking(|c| -> Result<(), StoreError> {
            super::super::in_savepoint(c, || {
                c.execute("INSERT INTO t VALUES (7)", [])?;
                panic!("a bug mid-write");
            })
        });
        assert!(matches!(panicked, Err(StoreError::Closed)));
        let (open, n) = db
            .call_blocking(|c| {
                Ok((!c.is_autocommit(), c.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0))?))
            })
            .unwrap();
        assert!(!open, "the savepoint the panic left open was rolled back");
        assert_eq!(n, 0);
        db.call_blocking(|c| Ok(c.execute("INSERT INTO t VALUES (8)", [])?)).unwrap();
        let n: i64 = db.call_blocking(|c| Ok(c.query_row("SELECT count(*) FROM t", [], |r| r.get(0))?)).unwrap();
        assert_eq!(n, 1, "a later write commits");
    }
}
