//! Several writes as one commit: a turn's graph writes were one autocommit each, a WAL commit
//! per fired node and per learned edge (docs/cognition.md §9.4.12). A savepoint rather than a
//! transaction, so a caller already inside one simply nests.

use super::StoreError;
use rusqlite::Connection;

/// Run `f`'s writes as one unit: all of them kept, or (on an error) none.
pub fn in_savepoint<T>(c: &Connection, f: impl FnOnce() -> Result<T, StoreError>) -> Result<T, StoreError> {
    c.execute_batch("SAVEPOINT chalie_batch")?;
    match f() {
        Ok(v) => {
            c.execute_batch("RELEASE chalie_batch")?;
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
}
