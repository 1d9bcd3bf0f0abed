//! Several writes as one commit: a turn's graph writes were one autocommit each, a WAL commit
//! per fired node and per learned edge (docs/cognition.md §9.4.12). A savepoint rather than a
//! transaction, so a caller already inside one simply nests.

use super::StoreError;
use rusqlite::Connection;

/// Run `f`'s writes as one unit: all of them kept, or (on an error) none.
pub fn in_savepoint<T>(c: &Connection, f: impl FnOnce() -> Result<T, StoreError>) -> Result<T, StoreError> {
    // Kept prepared: a turn opens several of these, and parsing each again was a few percent of it.
    c.prepare_cached("SAVEPOINT chalie_batch")?.execute([])?;
    match f() {
        Ok(v) => {
            c.prepare_cached("RELEASE chalie_batch")?.execute([])?;
            Ok(v)
        }
        Err(e) => {
            // The first error is the one to report; a failed rollback leaves the savepoint to
            // the connection's next transaction boundary.
            let _ = c.execute_batch("ROLLBACK TO chalie_batch; RELEASE chalie_batch");
            Err(e)
        }
    }
}

/// Run `f`'s reads as one read transaction when none is open. Outside a transaction SQLite
/// takes and drops the WAL read lock around every statement (a lock and an unlock of the
/// shared memory, each a system call, and the pager's checks), and a recall runs about a
/// hundred statements. Inside one already, `f` simply runs. For reads only: a write after
/// them would have to upgrade a snapshot that another connection may have moved past. Not
/// around the vector search, which takes its own snapshot (`vector_codes::nearest`).
pub fn in_read<T>(c: &Connection, f: impl FnOnce() -> Result<T, StoreError>) -> Result<T, StoreError> {
    if !c.is_autocommit() {
        return f();
    }
    c.prepare_cached("BEGIN")?.execute([])?;
    let result = f();
    // COMMIT, which for a reader only ends the snapshot; ended on an error too.
    let ended = c.prepare_cached("COMMIT")?.execute([]);
    let v = result?;
    ended?;
    Ok(v)
}

/// Run `f` and undo every write it made, whatever it returns: a look at what a turn would
/// read and decide (the reply prompt's preview while the user types) with the turn's own
/// code, leaving the database as it was. Nested like [`in_savepoint`].
pub fn rolled_back<T>(c: &Connection, f: impl FnOnce() -> Result<T, StoreError>) -> Result<T, StoreError> {
    c.execute_batch("SAVEPOINT chalie_preview")?;
    let result = f();
    c.execute_batch("ROLLBACK TO chalie_preview; RELEASE chalie_preview")?;
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(c: &Connection) -> i64 {
        c.query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0)).unwrap()
    }

    #[test]
    fn keeps_all_or_nothing() {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch("CREATE TABLE t (x INTEGER)").unwrap();
        in_savepoint(&c, || {
            c.execute("INSERT INTO t VALUES (1)", [])?;
            c.execute("INSERT INTO t VALUES (2)", [])?;
            Ok(())
        })
        .unwrap();
        assert_eq!(count(&c), 2);
        let failed: Result<(), StoreError> = in_savepoint(&c, || {
            c.execute("INSERT INTO t VALUES (3)", [])?;
            c.execute("INSERT INTO nowhere VALUES (4)", [])?;
            Ok(())
        });
        assert!(failed.is_err());
        assert_eq!(count(&c), 2, "the failed batch's first insert was rolled back");
        assert!(c.is_autocommit(), "no savepoint is left open");
    }

    /// The reads share one snapshot (another connection's commit between them is not seen),
    /// the transaction ends whatever `f` returns, and inside a savepoint it only runs `f`.
    #[test]
    fn reads_are_one_snapshot_and_leave_no_transaction_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        let c = Connection::open(&path).unwrap();
        c.execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)").unwrap();
        let other = Connection::open(&path).unwrap();
        let (before, after) = in_read(&c, || {
            let before = count(&c);
            other.execute("INSERT INTO t VALUES (2)", []).unwrap();
            Ok((before, count(&c)))
        })
        .unwrap();
        assert_eq!((before, after), (1, 1), "the second read is of the first read's snapshot");
        assert!(c.is_autocommit());
        assert_eq!(count(&c), 2, "after it, the other connection's row is seen");
        let failed: Result<(), StoreError> = in_read(&c, || {
            c.query_row("SELECT x FROM nowhere", [], |_| Ok(()))?;
            Ok(())
        });
        assert!(failed.is_err());
        assert!(c.is_autocommit(), "an error ends the transaction too");
        in_savepoint(&c, || {
            in_read(&c, || Ok(c.execute("INSERT INTO t VALUES (3)", [])?))?;
            assert!(!c.is_autocommit(), "still inside the savepoint");
            Ok(())
        })
        .unwrap();
        assert_eq!(count(&c), 3);
    }

    #[test]
    fn a_preview_writes_nothing_and_returns_what_it_read() {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)").unwrap();
        let seen = rolled_back(&c, || {
            in_savepoint(&c, || Ok(c.execute("INSERT INTO t VALUES (2)", [])?))?;
            Ok(count(&c))
        })
        .unwrap();
        assert_eq!(seen, 2, "inside, the preview reads its own writes");
        assert_eq!(count(&c), 1, "after it, none of them is left");
        assert!(c.is_autocommit());
        let failed: Result<(), StoreError> = rolled_back(&c, || {
            c.execute("INSERT INTO t VALUES (3)", [])?;
            c.execute("INSERT INTO nowhere VALUES (4)", [])?;
            Ok(())
        });
        assert!(failed.is_err());
        assert_eq!(count(&c), 1);
        assert!(c.is_autocommit());
    }
}
