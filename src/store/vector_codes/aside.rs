//! One thread beside the database thread for vector searches, so a turn's recall scans its
//! vector tables on the second core while the database thread reads the text sources and
//! decides the topic (docs/architecture.md §9). Once the turn is routed the thread is idle,
//! and writes out the routing audit row's snapshots while the reply is planned. The searches
//! need no connection: the caller catches each table's cached copy up first ([`super::ready`])
//! and the thread searches the copies ([`super::nearest_in`]).
//!
//! A thread that lives as long as the process rather than one per search: starting a thread
//! costs about as much as the scan of a 100k table it would overlap.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, OnceLock, mpsc};

type Job = Box<dyn FnOnce() + Send>;

/// The search thread's queue; `None` when the thread could not be started (work then runs on
/// the caller's thread).
static QUEUE: OnceLock<Option<mpsc::Sender<Job>>> = OnceLock::new();

fn queue() -> Option<&'static mpsc::Sender<Job>> {
    QUEUE
        .get_or_init(|| {
            let (tx, rx) = mpsc::channel::<Job>();
            let spawned = std::thread::Builder::new().name("chalie-vsearch".into()).spawn(move || {
                for job in rx {
                    // A panicking search drops its result's sender, which its caller sees as
                    // `None`; the thread goes on serving the next.
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                }
            });
            match spawned {
                Ok(_) => Some(tx),
                Err(e) => {
                    tracing::warn!("cannot start the vector search thread, searching inline: {e}");
                    None
                }
            }
        })
        .as_ref()
}

/// Jobs handed to the search thread and not finished.
static PENDING: AtomicUsize = AtomicUsize::new(0);
/// Rung when the last pending job finishes, for [`wait_idle`].
static IDLE: (Mutex<()>, Condvar) = (Mutex::new(()), Condvar::new());

/// Whether the search thread has work handed to it and not finished: it wants a processor.
pub(crate) fn busy() -> bool {
    PENDING.load(Ordering::Acquire) > 0
}

/// Sleep until the search thread has no work (at once if it has none). A caller that spins
/// for the database thread's answer (`Db::call`) sleeps here meanwhile: on two cores a third
/// busy thread would leave one of the search's two threads waiting. The thread's jobs never
/// wait on the database thread or a runtime (they search cached copies and write out text),
/// so this sleep always ends.
pub(crate) fn wait_idle() {
    let mut guard = IDLE.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    while busy() {
        guard = IDLE.1.wait(guard).unwrap_or_else(|poisoned| poisoned.into_inner());
    }
}

/// Work handed to the search thread, or already done where there is none.
pub(crate) enum Aside<T> {
    Running(mpsc::Receiver<T>),
    Done(T),
}

/// Run `f` on the search thread; [`Aside::wait`] returns its result.
pub(crate) fn run<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Aside<T> {
    let Some(queue) = queue() else { return Aside::Done(f()) };
    let (tx, rx) = mpsc::sync_channel(1);
    // Counted until it is done, even if it panics (the guard drops as the panic unwinds).
    struct Done;
    impl Drop for Done {
        fn drop(&mut self) {
            if PENDING.fetch_sub(1, Ordering::AcqRel) == 1 {
                // Under the lock, so a waiter between its check and its sleep cannot miss it.
                drop(IDLE.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
                IDLE.1.notify_all();
            }
        }
    }
    PENDING.fetch_add(1, Ordering::AcqRel);
    // The caller may have stopped waiting (its turn was dropped): the result is simply not taken.
    let job: Job = Box::new(move || {
        let _done = Done;
        let _ = tx.send(f());
    });
    match queue.send(job) {
        Ok(()) => Aside::Running(rx),
        // The thread is gone: the job comes back and runs here (its result waits in `rx`).
        Err(mpsc::SendError(job)) => {
            job();
            Aside::Running(rx)
        }
    }
}

impl<T> Aside<T> {
    /// The result; `None` if the work panicked on the search thread.
    pub(crate) fn wait(self) -> Option<T> {
        match self {
            Aside::Running(rx) => rx.recv().ok(),
            Aside::Done(v) => Some(v),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_runs_on_the_search_thread_and_comes_back() {
        let caller = std::thread::current().id();
        let (value, on) = run(move || (6 * 7, std::thread::current().id())).wait().unwrap();
        assert_eq!(value, 42);
        assert_ne!(on, caller, "the work ran beside the caller, not on it");
    }

    #[test]
    fn the_thread_is_busy_until_its_work_is_done() {
        use std::sync::Arc;
        use std::sync::atomic::AtomicBool;
        let (release, hold) = mpsc::channel::<()>();
        let finished = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&finished);
        let held = run(move || {
            let released = hold.recv().is_ok();
            flag.store(true, Ordering::SeqCst);
            released
        });
        assert!(busy(), "a job waits on the thread");
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            release.send(())
        });
        // Sleeps until the job is released and done (other tests' jobs in this process are short).
        wait_idle();
        assert!(finished.load(Ordering::SeqCst), "woken only once the job was done");
        assert!(releaser.join().unwrap().is_ok());
        assert_eq!(held.wait(), Some(true));
    }

    #[test]
    fn a_panicking_job_reports_none_and_the_thread_keeps_serving() {
        let failed: Aside<i32> = run(|| panic!("a search that fails"));
        assert_eq!(failed.wait(), None);
        let caller = std::thread::current().id();
        let (value, on) = run(move || (1 + 1, std::thread::current().id())).wait().unwrap();
        assert_eq!(value, 2);
        assert_ne!(on, caller, "the search thread survived the panic");
    }
}
