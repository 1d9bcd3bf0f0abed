//! Threads and the chat history shown in the chat pane.

use super::CachedSql;
use super::{StoreError, now_ts};
use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChatMessage {
    pub id: i64,
    pub thread_id: String,
    pub exchange_id: String,
    pub role: String,
    pub content: String,
    pub mode: Option<String>,
    pub topic: Option<String>,
    pub created_at: i64,
}

pub struct ChatRepo<'c>(pub &'c Connection);

/// One conversation as a list shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Conversation {
    pub thread_id: String,
    /// The first topic its messages were filed under, else the start of its first message.
    pub title: String,
    pub last_at: i64,
    pub messages: i64,
}

impl ChatRepo<'_> {
    /// Create the thread if it does not exist and mark it active.
    pub fn touch_thread(&self, thread_id: &str) -> Result<(), StoreError> {
        let now = now_ts();
        self.0.exec(
            "INSERT INTO threads (id, created_at, last_active_at) VALUES (?1, ?2, ?2)
             ON CONFLICT(id) DO UPDATE SET last_active_at = excluded.last_active_at",
            params![thread_id, now],
        )?;
        Ok(())
    }

    /// The most recently active thread, if any.
    pub fn latest_thread(&self) -> Result<Option<String>, StoreError> {
        Ok(self
            .0
            .row("SELECT id FROM threads ORDER BY last_active_at DESC, rowid DESC LIMIT 1", [], |r| r.get(0))
            .optional()?)
    }

    /// Conversations with at least one message, most recently active first; with `search`,
    /// only those where some message contains it (any case). A conversation whose every line
    /// was forgotten (deleted from the list) is no longer one to come back to.
    pub fn conversations(&self, search: Option<&str>, limit: usize) -> Result<Vec<Conversation>, StoreError> {
        let pattern = search.map(|s| format!("%{}%", s.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_")));
        let mut stmt = self.0.prepare_cached(
            "SELECT t.id,
                    COALESCE((SELECT topic FROM chat_history WHERE thread_id = t.id AND topic IS NOT NULL AND topic != ''
                              ORDER BY id LIMIT 1),
                             (SELECT substr(content, 1, 60) FROM chat_history WHERE thread_id = t.id AND role = 'user'
                              ORDER BY id LIMIT 1), ''),
                    MAX(h.created_at), COUNT(h.id)
             FROM threads t JOIN chat_history h ON h.thread_id = t.id
             WHERE ?1 IS NULL OR EXISTS (SELECT 1 FROM chat_history s WHERE s.thread_id = t.id
                                         AND s.content LIKE ?1 ESCAPE '\\')
             GROUP BY t.id
             HAVING SUM(h.content != ?3) > 0
             ORDER BY MAX(h.created_at) DESC, MAX(h.id) DESC
             LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![pattern, limit as i64, super::FORGOTTEN_LINE], |r| {
            Ok(Conversation { thread_id: r.get(0)?, title: r.get(1)?, last_at: r.get(2)?, messages: r.get(3)? })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Append one message (creating its thread). Returns the row id.
    pub fn append(
        &self,
        thread_id: &str,
        exchange_id: &str,
        role: &str,
        content: &str,
        mode: Option<&str>,
        topic: Option<&str>,
    ) -> Result<i64, StoreError> {
        self.append_at(thread_id, exchange_id, role, content, (mode, topic), now_ts())
    }

    /// [`ChatRepo::append`] at a given time (imports, and days of history in tests).
    pub fn append_at(
        &self,
        thread_id: &str,
        exchange_id: &str,
        role: &str,
        content: &str,
        (mode, topic): (Option<&str>, Option<&str>),
        at: i64,
    ) -> Result<i64, StoreError> {
        self.touch_thread(thread_id)?;
        self.0.exec(
            "INSERT INTO chat_history (thread_id, exchange_id, role, content, mode, topic, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![thread_id, exchange_id, role, content, mode, topic, at],
        )?;
        Ok(self.0.last_insert_rowid())
    }

    /// The user's message of an exchange (what a routing decision routed).
    pub fn user_text(&self, exchange_id: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .0
            .row(
                "SELECT content FROM chat_history WHERE exchange_id = ?1 AND role = 'user' ORDER BY id LIMIT 1",
                params![exchange_id],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// The last `limit` messages of a thread, oldest first.
    pub fn recent(&self, thread_id: &str, limit: usize) -> Result<Vec<ChatMessage>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT id, thread_id, exchange_id, role, content, mode, topic, created_at FROM (
                 SELECT * FROM chat_history WHERE thread_id = ?1 ORDER BY id DESC LIMIT ?2
             ) ORDER BY id",
        )?;
        let rows = stmt.query_map(params![thread_id, limit as i64], chat_message)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Up to `limit` messages of a thread from before exchange `before` (its first stored line),
    /// oldest first: the page the chat pane shows above what it holds. Empty when `before` is
    /// not stored (a purge took it).
    pub fn before(&self, thread_id: &str, before: &str, limit: usize) -> Result<Vec<ChatMessage>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT id, thread_id, exchange_id, role, content, mode, topic, created_at FROM (
                 SELECT * FROM chat_history WHERE thread_id = ?1
                   AND id < (SELECT MIN(id) FROM chat_history WHERE exchange_id = ?2)
                 ORDER BY id DESC LIMIT ?3
             ) ORDER BY id",
        )?;
        let rows = stmt.query_map(params![thread_id, before, limit as i64], chat_message)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The topics of the thread's newest `n` user messages that have one, newest first.
    pub fn recent_user_topics(&self, thread_id: &str, n: usize) -> Result<Vec<String>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT topic FROM chat_history WHERE thread_id = ?1 AND role = 'user' AND topic IS NOT NULL
             ORDER BY id DESC LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![thread_id, n as i64], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every user message filed under a topic in `[from, to)`: (thread, topic, time), by thread
    /// then time (the topic stability regulator's health signals).
    pub fn user_topics_between(&self, from: i64, to: i64) -> Result<Vec<(String, String, i64)>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT thread_id, topic, created_at FROM chat_history
             WHERE role = 'user' AND topic IS NOT NULL AND topic != '' AND created_at >= ?1 AND created_at < ?2
             ORDER BY thread_id, created_at, id",
        )?;
        let rows = stmt.query_map(params![from, to], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Creation times of the thread's user messages outside `exchange_id`, newest first.
    pub fn user_message_times_before(
        &self,
        thread_id: &str,
        exchange_id: &str,
        limit: usize,
    ) -> Result<Vec<i64>, StoreError> {
        self.user_message_times_while(thread_id, exchange_id, limit, |_| true)
    }

    /// [`Self::user_message_times_before`], read only until `more` says no to a time (that time
    /// is the last one returned): a session's start is found without reading the thread's
    /// older messages.
    pub fn user_message_times_while(
        &self,
        thread_id: &str,
        exchange_id: &str,
        limit: usize,
        mut more: impl FnMut(i64) -> bool,
    ) -> Result<Vec<i64>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT created_at FROM chat_history WHERE thread_id = ?1 AND role = 'user'
                 AND id NOT IN (SELECT id FROM chat_history WHERE exchange_id = ?2 AND role = 'user')
             ORDER BY id DESC LIMIT ?3",
        )?;
        let mut out = Vec::new();
        for t in stmt.query_map(params![thread_id, exchange_id, limit as i64], |r| r.get(0))? {
            let t = t?;
            out.push(t);
            if !more(t) {
                break;
            }
        }
        Ok(out)
    }

    /// Stamp the exchange's user message with the mode it was answered in and its topic.
    pub fn set_user_mode_and_topic(
        &self,
        thread_id: &str,
        exchange_id: &str,
        mode: &str,
        topic: &str,
    ) -> Result<(), StoreError> {
        self.0.exec(
            "UPDATE chat_history SET mode = ?3, topic = ?4
             WHERE thread_id = ?1 AND exchange_id = ?2 AND role = 'user'",
            params![thread_id, exchange_id, mode, topic],
        )?;
        Ok(())
    }
}

/// A `chat_history` row in `recent`'s and `before`'s column order.
fn chat_message(r: &rusqlite::Row<'_>) -> rusqlite::Result<ChatMessage> {
    Ok(ChatMessage {
        id: r.get(0)?,
        thread_id: r.get(1)?,
        exchange_id: r.get(2)?,
        role: r.get(3)?,
        content: r.get(4)?,
        mode: r.get(5)?,
        topic: r.get(6)?,
        created_at: r.get(7)?,
    })
}

#[cfg(test)]
mod conversation_tests {
    use super::*;

    #[test]
    fn conversations_are_titled_counted_and_searchable() {
        let c = crate::store::open_in_memory().unwrap();
        let repo = ChatRepo(&c);
        repo.append("a", "x1", "user", "Plan a trip to Lisbon", None, Some("lisbon-trip")).unwrap();
        repo.append("a", "x1", "assistant", "Gladly: when?", None, None).unwrap();
        repo.append("b", "x2", "user", "What is 100% of 7_000?", None, None).unwrap();
        c.execute("UPDATE chat_history SET created_at = created_at + 10 WHERE thread_id = 'b'", []).unwrap();

        let all = repo.conversations(None, 10).unwrap();
        let ids: Vec<&str> = all.iter().map(|c| c.thread_id.as_str()).collect();
        assert_eq!(ids, ["b", "a"], "newest first");
        assert_eq!((all[1].title.as_str(), all[1].messages), ("lisbon-trip", 2));
        assert_eq!(all[0].title, "What is 100% of 7_000?", "no topic: the first message");

        let found = repo.conversations(Some("GLADLY"), 10).unwrap();
        assert_eq!(found.iter().map(|c| c.thread_id.as_str()).collect::<Vec<_>>(), ["a"]);
        assert_eq!(found[0].messages, 2, "the count is the whole conversation's");
        assert_eq!(repo.conversations(Some("100%"), 10).unwrap().len(), 1);
        assert!(repo.conversations(Some("0%"), 10).unwrap().len() == 1);
        assert!(repo.conversations(Some("_"), 10).unwrap().iter().all(|c| c.thread_id == "b"), "_ is literal");
    }

    #[test]
    fn a_page_before_an_exchange_is_that_thread_s_older_lines_oldest_first() {
        let c = crate::store::open_in_memory().unwrap();
        let repo = ChatRepo(&c);
        for i in 0..5 {
            repo.append("a", &format!("x{i}"), "user", &format!("question {i}"), None, None).unwrap();
            repo.append("b", &format!("y{i}"), "user", "elsewhere", None, None).unwrap();
            repo.append("a", &format!("x{i}"), "assistant", &format!("answer {i}"), Some("RESPOND"), None).unwrap();
        }
        let text = |rows: Vec<ChatMessage>| rows.into_iter().map(|m| m.content).collect::<Vec<_>>();
        assert_eq!(text(repo.before("a", "x3", 3).unwrap()), ["answer 1", "question 2", "answer 2"]);
        assert_eq!(text(repo.before("a", "x1", 10).unwrap()), ["question 0", "answer 0"]);
        assert!(repo.before("a", "x0", 10).unwrap().is_empty(), "nothing before the first exchange");
        assert!(repo.before("a", "gone", 10).unwrap().is_empty(), "an exchange no longer stored has no page");
    }
}
