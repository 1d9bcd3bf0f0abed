//! What this process keeps of a table, per thread, under the table's stamp (`topic_stamps`,
//! migration 0023): a copy answers for the table while the table still has the stamp the copy
//! was taken or written at. Every write draws a new random stamp, so any other write (another
//! process's, a forget's, a savepoint rolled back) leaves the copy unmatched and the rows are
//! read again. The thread's topics (`topic_cache`) and the boundary detector's state
//! (`cognition::pipeline::detector_state`, under the stamp both of its tables move) are kept
//! this way.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Threads whose copies are kept (the oldest kept goes first). A write moves the stamp every
/// other thread's copy of that table was kept under, so in one database a single copy serves;
/// a few serve tests, which open many databases in one process.
const THREADS: usize = 4;

/// Per-thread copies of one table, each under the stamp it answers for.
pub(crate) struct StampedCopies<T> {
    copies: Mutex<Vec<Copy<T>>>,
}

struct Copy<T> {
    thread_id: String,
    stamp: i64,
    value: T,
}

impl<T: Clone> StampedCopies<T> {
    pub(crate) const fn new() -> Self {
        StampedCopies { copies: Mutex::new(Vec::new()) }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Copy<T>>> {
        self.copies.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The thread's copy when it was kept at `stamp`.
    pub(crate) fn get(&self, thread_id: &str, stamp: i64) -> Option<T> {
        self.lock().iter().find(|k| k.stamp == stamp && k.thread_id == thread_id).map(|k| k.value.clone())
    }

    /// Keep `value`, which the table held at `stamp`, as the thread's copy.
    pub(crate) fn put(&self, thread_id: &str, stamp: i64, value: T) {
        let mut copies = self.lock();
        copies.retain(|k| k.thread_id != thread_id);
        if copies.len() >= THREADS {
            copies.remove(0);
        }
        copies.push(Copy { thread_id: thread_id.to_string(), stamp, value });
    }

    /// Bring the thread's copy kept at `from` forward over one write that moved the table to
    /// `to`: `advance` applies the write to the copy, or says it cannot (false), and then the
    /// copy is dropped. Nothing happens when no copy was kept at `from`.
    pub(crate) fn advance(&self, thread_id: &str, from: i64, to: i64, advance: impl FnOnce(&mut T) -> bool) {
        let mut copies = self.lock();
        let Some(n) = copies.iter().position(|k| k.thread_id == thread_id && k.stamp == from) else { return };
        if advance(&mut copies[n].value) {
            copies[n].stamp = to;
        } else {
            copies.remove(n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_answers_only_for_its_own_thread_and_stamp() {
        let kept = StampedCopies::new();
        kept.put("a", 1, "one");
        kept.put("b", 1, "other");
        assert_eq!(kept.get("a", 1), Some("one"));
        assert_eq!(kept.get("a", 2), None);
        kept.put("a", 2, "two");
        assert_eq!(kept.get("a", 1), None, "a thread keeps one copy");
        assert_eq!(kept.get("a", 2), Some("two"));
        assert_eq!(kept.get("b", 1), Some("other"));
    }

    #[test]
    fn past_the_limit_the_oldest_thread_goes() {
        let kept = StampedCopies::new();
        for t in 0..=THREADS {
            kept.put(&format!("t{t}"), 7, t);
        }
        assert_eq!(kept.get("t0", 7), None);
        assert!((1..=THREADS).all(|t| kept.get(&format!("t{t}"), 7) == Some(t)));
    }

    #[test]
    fn advancing_moves_the_copy_or_drops_it() {
        let kept = StampedCopies::new();
        kept.put("a", 1, vec![1]);
        kept.advance("a", 5, 6, |v| {
            v.push(0);
            true
        });
        assert_eq!(kept.get("a", 1), Some(vec![1]), "no copy at that stamp: untouched");
        kept.advance("a", 1, 2, |v| {
            v.push(2);
            true
        });
        assert_eq!((kept.get("a", 1), kept.get("a", 2)), (None, Some(vec![1, 2])));
        kept.advance("a", 2, 3, |_| false);
        assert_eq!((kept.get("a", 2), kept.get("a", 3)), (None, None));
    }
}
