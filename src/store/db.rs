//! The async face of the store: one connection on a dedicated thread.

use super::StoreError;
use rusqlite::Connection;
use std::path::Path;
use std::sync::mpsc;
use tokio::sync::oneshot;

type Work = Box<dyn FnOnce(&mut Connection) + Send>;

/// A cheap, cloneable handle to the database thread.
///
/// Work runs in submission order, so one task's writes are seen by its later reads.
#[derive(Clone)]
pub struct Db {
    tx: mpsc::Sender<Work>,
}

impl Db {
    /// Open the database at `path` (migrating it) and start its thread.
    pub fn open(path: &Path) -> Result<Db, StoreError> {
        Ok(Self::spawn(super::open(path)?))
    }

    /// Wrap an already-open connection (tests use an in-memory one).
    pub fn spawn(mut conn: Connection) -> Db {
        let (tx, rx) = mpsc::channel::<Work>();
        std::thread::Builder::new()
            .name("chalie-db".into())
            .spawn(move || {
                for work in rx {
                    work(&mut conn);
                }
            })
            .map(|_| ())
            .unwrap_or_else(|e| tracing::error!("cannot start the database thread: {e}"));
        Db { tx }
    }

    /// Run `f` on the database thread and await its result.
    pub async fn call<R, F>(&self, f: F) -> Result<R, StoreError>
    where
        R: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<R, StoreError> + Send + 'static,
    {
        self.submit(f)?.await.map_err(|_| StoreError::Closed)?
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
        self.tx
            .send(Box::new(move |conn| {
                let _ = done.send(f(conn));
            }))
            .map_err(|_| StoreError::Closed)?;
        Ok(result)
    }
}
