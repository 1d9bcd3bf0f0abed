//! `working_memory`: the last few turns of each thread (24 h).

use super::CachedSql;
use super::{StoreError, WmEntry};
use rusqlite::{Connection, OptionalExtension, params};

pub struct WorkingMemoryRepo<'c>(pub &'c Connection);

impl WorkingMemoryRepo<'_> {
    /// The thread's newest `limit` live entries, oldest first.
    pub fn recent(&self, thread_id: &str, now: i64, limit: usize) -> Result<Vec<WmEntry>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT role, content, created_at FROM (
                 SELECT id, role, content, created_at FROM working_memory
                 WHERE thread_id = ?1 AND expires_at > ?2 ORDER BY id DESC LIMIT ?3
             ) ORDER BY id",
        )?;
        let rows = stmt.query_map(params![thread_id, now, limit as i64], |r| {
            Ok(WmEntry { role: r.get(0)?, content: r.get(1)?, created_at: r.get(2)? })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Append one entry and move the whole thread's expiry to `expires_at`.
    pub fn append(
        &self,
        thread_id: &str,
        role: &str,
        content: &str,
        now: i64,
        expires_at: i64,
    ) -> Result<(), StoreError> {
        self.0.exec(
            "INSERT INTO working_memory (thread_id, role, content, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![thread_id, role, content, now, expires_at],
        )?;
        self.0
            .exec("UPDATE working_memory SET expires_at = ?2 WHERE thread_id = ?1", params![thread_id, expires_at])?;
        Ok(())
    }

    /// Before `incoming` entries are appended: if they would take the thread past `cap`, keep
    /// only its newest `keep` (a block at a time, so between drops what stays keeps its place
    /// at the front).
    pub fn make_room(&self, thread_id: &str, incoming: usize, cap: usize, keep: usize) -> Result<(), StoreError> {
        self.0.exec(
            "DELETE FROM working_memory WHERE thread_id = ?1
                 AND (SELECT COUNT(*) FROM working_memory WHERE thread_id = ?1) + ?2 > ?3
                 AND id NOT IN (SELECT id FROM working_memory WHERE thread_id = ?1 ORDER BY id DESC LIMIT ?4)",
            params![thread_id, incoming as i64, cap as i64, keep as i64],
        )?;
        Ok(())
    }

    /// How many live entries the most recently active thread has (0 when none is live).
    pub fn latest_thread_len(&self, now: i64) -> Result<i64, StoreError> {
        let thread: Option<String> = self
            .0
            .row(
                "SELECT thread_id FROM working_memory WHERE expires_at > ?1 ORDER BY id DESC LIMIT 1",
                params![now],
                |r| r.get(0),
            )
            .optional()?;
        let Some(t) = thread else { return Ok(0) };
        Ok(self.0.row(
            "SELECT COUNT(*) FROM working_memory WHERE thread_id = ?1 AND expires_at > ?2",
            params![t, now],
            |r| r.get(0),
        )?)
    }
}

#[cfg(test)]
mod tests {
    use crate::store::{TurnRepo, WORKING_MEMORY_CAP, WORKING_MEMORY_ENTRIES, open_in_memory};

    /// Working memory grows to the cap and then drops a block at once, before the exchange
    /// that would overflow it: between drops the conversation's first entries stay the same
    /// (what a prompt cache needs), it always starts with a user's message, and the router's
    /// window is always the newest four.
    #[test]
    fn working_memory_drops_a_block_before_an_exchange_would_overflow_it() {
        let conn = open_in_memory().unwrap();
        let repo = TurnRepo(&conn);
        let mut seen = Vec::new();
        for x in 0..8 {
            let (u, a) = (format!("u{x}"), format!("a{x}"));
            repo.append_exchange_to_working_memory("t", Some(&u), Some(&a), 100).unwrap();
            let all: Vec<String> = repo.conversation("t", 100).unwrap().into_iter().map(|e| e.content).collect();
            let newest: Vec<String> = repo.working_memory("t", 100).unwrap().into_iter().map(|e| e.content).collect();
            assert!(all.len() <= WORKING_MEMORY_CAP);
            assert_eq!(newest, all[all.len().saturating_sub(WORKING_MEMORY_ENTRIES)..], "after exchange {x}");
            seen.push((all[0].clone(), all.len()));
        }
        let want = [("u0", 2), ("u0", 4), ("u0", 6), ("u0", 8), ("u3", 4), ("u3", 6), ("u3", 8), ("u6", 4)];
        assert_eq!(seen, want.map(|(f, n)| (f.to_string(), n)));
        // A message without a reply counts as one entry.
        repo.append_exchange_to_working_memory("t", Some("u8"), None, 100).unwrap();
        let all: Vec<String> = repo.conversation("t", 100).unwrap().into_iter().map(|e| e.content).collect();
        assert_eq!(all, ["u6", "a6", "u7", "a7", "u8"]);
    }
}
