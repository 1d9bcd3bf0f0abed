//! The forget purge's reads of the chat and the session-end masking of secrets: what a
//! request is resolved against, and the pass that lets a secret leave with its session.

use super::{FORGOTTEN_LINE, Purge, purge};
use crate::store::{StoreError, now_ts};
use rusqlite::Connection;

/// The chat lines a forget request may mean: the user's own lines of every thread, newest
/// first (`(exchange_id, thread_id, text)`), skipping lines already forgotten.
pub fn user_lines(c: &Connection, limit: usize) -> Result<Vec<(String, String, String)>, StoreError> {
    let mut stmt = c.prepare_cached(
        "SELECT exchange_id, thread_id, content FROM chat_history WHERE role = 'user' AND content != ?1
         ORDER BY id DESC LIMIT ?2",
    )?;
    let rows =
        stmt.query_map(rusqlite::params![FORGOTTEN_LINE, limit as i64], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The user's lines of `exchanges`.
pub fn user_lines_of(c: &Connection, exchanges: &[String]) -> Result<Vec<String>, StoreError> {
    let mut out = Vec::new();
    let mut stmt = c.prepare_cached("SELECT content FROM chat_history WHERE exchange_id = ?1 AND role = 'user'")?;
    for x in exchanges {
        for r in stmt.query_map([x], |r| r.get::<_, String>(0))? {
            out.push(r?);
        }
    }
    Ok(out)
}

/// Every line of one thread, oldest first (`(exchange_id, role, text)`): what forgetting the
/// whole conversation reaches.
pub fn thread_lines(c: &Connection, thread_id: &str) -> Result<Vec<(String, String, String)>, StoreError> {
    let mut stmt =
        c.prepare_cached("SELECT exchange_id, role, content FROM chat_history WHERE thread_id = ?1 ORDER BY id")?;
    let rows = stmt.query_map([thread_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Mask the secrets (`text::privacy`) in the chat lines, working memory and job payloads
/// written since the last pass, and purge every other copy of them: run when a session
/// starts and when it ends, so a secret kept for its session (`[privacy]
/// keep_secrets_in_history`) leaves with it, even after a crash. The pass remembers how far
/// it got, so each row is read once. Returns the strings purged (for the caller to remove
/// from the log files too).
pub fn mask_secrets(conn: &mut Connection) -> Result<Vec<String>, StoreError> {
    let tx = conn.transaction()?;
    let mut found: Vec<String> = Vec::new();
    for (table, col) in [("chat_history", "content"), ("working_memory", "content"), ("jobs", "payload")] {
        let key = format!("masked_to.{table}");
        let from: i64 = tx
            .query_row("SELECT value FROM kv_state WHERE namespace = 'privacy' AND key = ?1", [&key], |r| {
                r.get::<_, String>(0)
            })
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let rows: Vec<(i64, String)> = {
            let mut stmt = tx.prepare(&format!("SELECT rowid, {col} FROM {table} WHERE rowid > ?1 ORDER BY rowid"))?;
            let rows = stmt.query_map([from], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect::<Result<_, _>>()?
        };
        let Some(last) = rows.last().map(|(id, _)| *id) else { continue };
        for (id, text) in rows {
            if let std::borrow::Cow::Owned(masked) = crate::text::privacy::mask(&text) {
                tx.execute(&format!("UPDATE {table} SET {col} = ?2 WHERE rowid = ?1"), rusqlite::params![id, masked])?;
                found.extend(crate::text::needles::secret_needles(&text));
            }
        }
        tx.execute(
            "INSERT INTO kv_state (namespace, key, value, updated_at) VALUES ('privacy', ?1, ?2, ?3)
             ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
            rusqlite::params![key, last.to_string(), now_ts()],
        )?;
    }
    tx.commit()?;
    found.sort();
    found.dedup();
    if !found.is_empty() {
        // Copies made during the session (a topic name, an audit row) go the way of a forget.
        let p = Purge { needles: found.clone(), kind: "secret".into(), ..Purge::default() };
        purge(conn, &p)?;
    }
    Ok(found)
}
