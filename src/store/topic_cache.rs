//! The in-process copy of a thread's topics as [`TurnRepo::topics`](super::TurnRepo::topics)
//! reads them: every turn used to read and un-blob the thread's 64 newest centroids (~96 KB)
//! to find what the turn before wrote. The copy follows the `topics` table through its stamp
//! (`topic_stamps`, migration 0023), which every write to the table draws anew: a copy holds
//! while the table has the stamp it was taken with, and a process brings its copy forward
//! over its own write of one topic when the stamp before that write was the copy's.

use super::stamped::StampedCopies;
use super::turn::{TOPICS_CONSIDERED, Topic};
use super::{CachedSql, StoreError};
use rusqlite::Connection;

/// The `topics` table's stamp now and the one before its last write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stamp {
    pub now: i64,
    pub before_last_write: i64,
}

pub(super) fn stamp(c: &Connection) -> Result<Stamp, StoreError> {
    Ok(c.row("SELECT topics, topics_prev FROM topic_stamps WHERE id = 0", [], |r| {
        Ok(Stamp { now: r.get(0)?, before_last_write: r.get(1)? })
    })?)
}

/// The threads' topics, each under the stamp it was read or brought forward at.
static COPIES: StampedCopies<Vec<Topic>> = StampedCopies::new();

/// The thread's topics when its copy was taken at `stamp`.
pub(super) fn get(thread_id: &str, stamp: i64) -> Option<Vec<Topic>> {
    COPIES.get(thread_id, stamp)
}

/// Keeps `topics`, read at `stamp`.
pub(super) fn put(thread_id: &str, stamp: i64, topics: &[Topic]) {
    COPIES.put(thread_id, stamp, topics.to_vec());
}

/// Whether the copy of the thread's topics is the one the table holds now (the turn's tests
/// check that a turn's own writes leave it so).
#[cfg(test)]
pub(crate) fn holds(c: &Connection, thread_id: &str) -> bool {
    stamp(c).is_ok_and(|s| get(thread_id, s.now).is_some())
}

/// After this process wrote `saved` (one upsert, so one stamp moved; the row as stored has
/// this thread and this name): the copy is brought forward when it held the table just
/// before the write and the result is exactly what a read would give. The other rows did not
/// move, so the copy holds the thread's newest of them; only a row moved down to the last
/// place of a full copy could have an unknown row above it, and that copy is dropped.
pub(super) fn saved(thread_id: &str, stamp: Stamp, saved: &Topic) {
    if saved.centroid.is_empty() {
        return;
    }
    COPIES.advance(thread_id, stamp.before_last_write, stamp.now, |topics| {
        let full = topics.len() >= TOPICS_CONSIDERED;
        let held = topics.iter().position(|t| t.id == saved.id);
        if let Some(i) = held {
            topics.remove(i);
        }
        // Most recently updated first, then the larger id: the read's ORDER BY.
        let at = topics.partition_point(|t| (t.updated_at, t.id) > (saved.updated_at, saved.id));
        if held.is_some() && full && at + 1 >= TOPICS_CONSIDERED {
            return false;
        }
        topics.insert(at, saved.clone());
        topics.truncate(TOPICS_CONSIDERED);
        true
    });
}

#[cfg(test)]
mod tests {
    use super::super::{Purge, TurnRepo, in_savepoint, open, rolled_back};
    use super::*;

    fn topic(id: i64, name: &str, updated_at: i64, seed: f32) -> Topic {
        Topic {
            id,
            name: name.into(),
            centroid: (0..8).map(|i| (i as f32 + seed).sin()).collect(),
            message_count: 1,
            avg_salience: 0.5,
            updated_at,
        }
    }

    /// What the copy answers is what the rows say, after every kind of write.
    fn same(c: &Connection, thread: &str) -> Vec<Topic> {
        let repo = TurnRepo(c);
        let (cached, read) = (repo.topics(thread).unwrap(), repo.read_topics(thread).unwrap());
        assert_eq!(cached, read);
        cached
    }

    fn brought_forward(c: &Connection, thread: &str) -> bool {
        get(thread, stamp(c).unwrap().now).is_some()
    }

    #[test]
    fn the_copy_follows_this_process_writes() {
        let dir = tempfile::tempdir().unwrap();
        let c = open(&dir.path().join("db.sqlite")).unwrap();
        let (thread, repo) = ("topic-cache-own", TurnRepo(&c));
        repo.save_topic("elsewhere", &topic(1, "other", 50, 0.0)).unwrap();
        for (i, t) in [(2, 100), (3, 100), (4, 101)].into_iter().enumerate() {
            repo.save_topic(thread, &topic(t.0, &format!("t{}", t.0), t.1, i as f32)).unwrap();
        }
        assert_eq!(same(&c, thread).iter().map(|t| t.id).collect::<Vec<_>>(), [4, 3, 2]);
        // An update of a held topic, one that sorts below another of the same second, a new one.
        repo.save_topic(thread, &topic(2, "t2", 102, 9.0)).unwrap();
        assert!(brought_forward(&c, thread));
        assert_eq!(same(&c, thread).iter().map(|t| t.id).collect::<Vec<_>>(), [2, 4, 3]);
        repo.save_topic(thread, &topic(3, "t3", 102, 7.0)).unwrap();
        assert!(brought_forward(&c, thread));
        assert_eq!(same(&c, thread).iter().map(|t| t.id).collect::<Vec<_>>(), [3, 2, 4]);
        repo.save_topic(thread, &topic(5, "t5", 103, 1.0)).unwrap();
        assert!(brought_forward(&c, thread));
        assert_eq!(same(&c, thread)[0].id, 5);
        // A row the upsert keeps under its own name is not brought forward from the copy.
        repo.save_topic(thread, &topic(5, "renamed", 104, 1.0)).unwrap();
        assert!(!brought_forward(&c, thread));
        assert_eq!(same(&c, thread)[0].name, "t5");
        // Another thread's write: this thread's copy is read again.
        repo.save_topic("elsewhere", &topic(1, "other", 105, 3.0)).unwrap();
        assert!(!brought_forward(&c, thread));
        same(&c, thread);
    }

    #[test]
    fn a_full_copy_keeps_the_newest() {
        let c = super::super::open_in_memory().unwrap();
        let (thread, repo) = ("topic-cache-full", TurnRepo(&c));
        let n = TOPICS_CONSIDERED as i64 + 3;
        for id in 1..=n {
            repo.save_topic(thread, &topic(id, &format!("t{id}"), 1_000 + id, id as f32)).unwrap();
        }
        assert_eq!(same(&c, thread).len(), TOPICS_CONSIDERED);
        // Moved down to the copy's last place: a row the copy never held takes it.
        repo.save_topic(thread, &topic(n, &format!("t{n}"), 1_004, 0.5)).unwrap();
        assert!(same(&c, thread).iter().all(|t| t.id != 3));
        assert!(same(&c, thread).iter().any(|t| t.id == n));
        // Moved to the front, and one the copy never held brought back.
        repo.save_topic(thread, &topic(n - 1, &format!("t{}", n - 1), 2_000, 0.25)).unwrap();
        repo.save_topic(thread, &topic(1, "t1", 2_001, 0.75)).unwrap();
        assert_eq!(same(&c, thread).iter().take(2).map(|t| t.id).collect::<Vec<_>>(), [1, n - 1]);
    }

    #[test]
    fn writes_from_elsewhere_are_seen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite");
        let (c, other) = (open(&path).unwrap(), open(&path).unwrap());
        let (thread, repo) = ("topic-cache-elsewhere", TurnRepo(&c));
        for id in 1..=3 {
            repo.save_topic(thread, &topic(id, &format!("garden {id}"), 100 + id, id as f32)).unwrap();
        }
        same(&c, thread);
        // Another connection (another process), by SQL of its own.
        other.execute("UPDATE topics SET message_count = 9 WHERE id = 2", []).unwrap();
        assert_eq!(same(&c, thread).iter().find(|t| t.id == 2).map(|t| t.message_count), Some(9));
        other.execute("UPDATE topics SET updated_at = 500 WHERE id = 1", []).unwrap();
        assert_eq!(same(&c, thread)[0].id, 1);
        // A savepoint rolled back, after this process brought its copy forward inside it.
        let before = same(&c, thread);
        rolled_back(&c, || {
            repo.save_topic(thread, &topic(2, "garden 2", 900, 5.0))?;
            assert_eq!(repo.topics(thread)?[0].id, 2);
            Ok(())
        })
        .unwrap();
        assert_eq!(same(&c, thread), before);
        let failed: Result<(), StoreError> = in_savepoint(&c, || {
            repo.save_topic(thread, &topic(4, "garden 4", 901, 5.0))?;
            repo.topics(thread)?;
            Err(StoreError::Closed)
        });
        assert!(failed.is_err());
        assert_eq!(same(&c, thread), before);
        // A forget: the name's words are replaced; a delete.
        TurnRepo(&other).save_topic(thread, &topic(5, "roses", 950, 2.0)).unwrap();
        assert_eq!(same(&c, thread)[0].name, "roses");
        super::super::purge::purge_in(&c, &Purge { needles: vec!["roses".into()], ..Purge::default() }).unwrap();
        assert_ne!(same(&c, thread)[0].name, "roses");
        other.execute("DELETE FROM topics WHERE id = 5", []).unwrap();
        assert_eq!(same(&c, thread)[0].id, 1);
    }
}
