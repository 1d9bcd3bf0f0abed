//! In-process copies of what recall's text sources ask the full-text indexes on every turn:
//! each word's episode count (which plans the full-text MATCH) and each word's newest
//! matching concepts (the keyword source's concept layer).
//!
//! Asking an FTS5 index for a word seeks the word in every segment of the index, and a
//! trigram index does that for each trigram of the word: 6–10 counts and ~40 trigram
//! lookups a message, ~0.25 ms of the turn at 100k memories, for answers that change only
//! when the rows do. A copy follows its table through `recall_text_state` (migration 0022):
//! between two views with the same `epoch` and `removals`, rows were only appended, so a copy
//! catches up by reading the rows past the largest id it has seen (an episode's words, a
//! concept's text) and starts again when `removals` moved. A copy is only ever brought
//! forward from a view that holds no uncommitted write of this connection (a write
//! transaction's view may be rolled back), and a view older than the copy reads the index
//! instead, as does a word the copy cannot follow exactly (see [`followed_word`],
//! [`like_word`]).

use super::super::StoreError;
use super::RecallRow;
use rusqlite::{Connection, MAIN_DB, OptionalExtension, TransactionState, params};
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

/// Databases whose copies are kept at once (tests open many; the app one).
const COPIES: usize = 4;
/// Words a copy keeps before it starts again (a few MB at most).
const WORDS: usize = 20_000;
/// Appended rows a copy reads to catch up; past this it starts again, which costs no more.
const CATCH_UP: i64 = 1_000;

/// The tables followed, by their `recall_text_state.tbl`.
#[derive(Clone, Copy)]
enum Table {
    Episodes = 0,
    Concepts = 1,
}

impl Table {
    fn stamp_sql(self) -> &'static str {
        match self {
            Table::Episodes => {
                "SELECT epoch, removals, (SELECT COALESCE(MAX(id), 0) FROM episodes)
                 FROM recall_text_state WHERE tbl = 0"
            }
            Table::Concepts => {
                "SELECT epoch, removals, (SELECT COALESCE(MAX(id), 0) FROM semantic_concepts)
                 FROM recall_text_state WHERE tbl = 1"
            }
        }
    }
}

/// Where a view of a table stands.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Stamp {
    epoch: i64,
    removals: i64,
    max_id: i64,
}

fn stamp(c: &Connection, table: Table) -> Result<Option<Stamp>, StoreError> {
    Ok(c.prepare_cached(table.stamp_sql())?
        .query_row([], |r| Ok(Stamp { epoch: r.get(0)?, removals: r.get(1)?, max_id: r.get(2)? }))
        .optional()?)
}

struct Copy<T> {
    stamp: Stamp,
    last_used: u64,
    data: T,
}

/// Episode counts by word, each counted up to `cap`.
#[derive(Default)]
struct Counts {
    cap: i64,
    by_word: HashMap<String, i64>,
}

/// The ids of the newest live concepts holding each word, newest first, at most `limit`.
#[derive(Default)]
struct Newest {
    limit: usize,
    by_word: HashMap<String, Vec<i64>>,
}

struct Copies {
    counts: Vec<Copy<Counts>>,
    newest: Vec<Copy<Newest>>,
    clock: u64,
}

static COPIES_HELD: Mutex<Copies> = Mutex::new(Copies { counts: Vec::new(), newest: Vec::new(), clock: 0 });

fn lock() -> std::sync::MutexGuard<'static, Copies> {
    COPIES_HELD.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The copy that answers for a view stamped `now`, brought up to it (`catch_up` applies the
/// rows appended past the id it is given, or says the copy must start again); `None` when
/// the index must answer.
fn settle<T: Default>(
    copies: &mut Vec<Copy<T>>,
    clock: u64,
    now: Stamp,
    writing: bool,
    catch_up: impl FnOnce(&mut T, i64) -> Result<bool, StoreError>,
) -> Result<Option<usize>, StoreError> {
    let i = match copies.iter().position(|k| k.stamp.epoch == now.epoch) {
        Some(i) if copies[i].stamp == now => i,
        // Bringing a copy forward from a view that may yet be rolled back could leave it
        // ahead of the database.
        _ if writing => return Ok(None),
        Some(i) => {
            let had = copies[i].stamp;
            if had.removals == now.removals && had.max_id < now.max_id {
                if !catch_up(&mut copies[i].data, had.max_id)? {
                    copies[i].data = T::default();
                }
            } else if had.removals < now.removals {
                copies[i].data = T::default();
            } else {
                // A view older than the copy.
                return Ok(None);
            }
            copies[i].stamp = now;
            i
        }
        None => {
            if copies.len() >= COPIES
                && let Some(oldest) = (0..copies.len()).min_by_key(|&j| copies[j].last_used)
            {
                copies.swap_remove(oldest);
            }
            copies.push(Copy { stamp: now, last_used: clock, data: T::default() });
            copies.len() - 1
        }
    };
    copies[i].last_used = clock;
    Ok(Some(i))
}

fn writing(c: &Connection) -> Result<bool, StoreError> {
    Ok(c.transaction_state(Some(MAIN_DB))? == TransactionState::Write)
}

/// The copy of `table` that answers for this connection's view, brought up to it, with the
/// lock held: `None` when the index must answer (see [`settle`]). `copies` picks the kind.
fn held_copy<T: Default>(
    c: &Connection,
    table: Table,
    copies: impl FnOnce(&mut Copies) -> &mut Vec<Copy<T>>,
    catch_up: impl FnOnce(&mut T, i64) -> Result<bool, StoreError>,
) -> Result<Option<(std::sync::MutexGuard<'static, Copies>, usize)>, StoreError> {
    let Some(now) = stamp(c, table)? else { return Ok(None) };
    let writing = writing(c)?;
    let mut held = lock();
    held.clock += 1;
    let clock = held.clock;
    let settled = settle(copies(&mut held), clock, now, writing, catch_up)?;
    Ok(settled.map(|i| (held, i)))
}

/// Keep `word`'s answer, starting the copy's words again once it holds [`WORDS`].
fn remember<V>(by_word: &mut HashMap<String, V>, word: &str, value: V) {
    if by_word.len() >= WORDS {
        by_word.clear();
    }
    by_word.insert(word.to_string(), value);
}

/// A word whose episode count the copy can follow: lower-case ASCII letters and digits,
/// which FTS5's default tokenizer (unicode61) reads as the one token it is.
fn followed_word(word: &str) -> bool {
    !word.is_empty() && word.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

/// The distinct tokens unicode61 (remove_diacritics 1) makes of `text`, added to `out`, when
/// this can be sure of them: runs of ASCII letters and digits, lower-cased. False when
/// `text` holds a character that may belong to a token (a non-ASCII letter or digit, a
/// combining diacritic, a private-use character), whose folding this does not copy;
/// every other character separates tokens, as in unicode61.
fn ascii_tokens(text: &str, out: &mut HashSet<String>) -> bool {
    let mut start = None;
    for (i, ch) in text.char_indices() {
        if ch.is_ascii_alphanumeric() {
            start.get_or_insert(i);
            continue;
        }
        if !ch.is_ascii() && (ch.is_alphanumeric() || diacritic(ch) || private_use(ch)) {
            return false;
        }
        if let Some(s) = start.take() {
            out.insert(text[s..i].to_ascii_lowercase());
        }
    }
    if let Some(s) = start {
        out.insert(text[s..].to_ascii_lowercase());
    }
    true
}

/// The combining marks unicode61 keeps inside a token (`sqlite3Fts5UnicodeIsdiacritic`'s range).
fn diacritic(ch: char) -> bool {
    (768..=817).contains(&u32::from(ch))
}

/// Unicode's private-use areas (category Co), token characters to unicode61.
fn private_use(ch: char) -> bool {
    matches!(u32::from(ch), 0xE000..=0xF8FF | 0xF0000..=0xFFFFD | 0x100000..=0x10FFFD)
}

/// How many episodes hold each of `words`, each counted up to `cap`: from the copy where it
/// has the word, else from `count` (the index), which the copy then keeps.
pub(super) fn episode_counts(
    c: &Connection,
    words: &[String],
    cap: i64,
    count: impl Fn(&str) -> Result<i64, StoreError>,
) -> Result<Vec<i64>, StoreError> {
    let held =
        held_copy(c, Table::Episodes, |h| &mut h.counts, |data: &mut Counts, since| count_appended(c, data, since))?;
    let Some((mut held, i)) = held else {
        return words.iter().map(|w| count(w)).collect();
    };
    let copy = &mut held.counts[i].data;
    if copy.cap != cap {
        *copy = Counts { cap, by_word: HashMap::new() };
    }
    let mut out = Vec::with_capacity(words.len());
    for w in words {
        let n = match copy.by_word.get(w) {
            Some(&n) => n,
            None => {
                let n = count(w)?;
                if followed_word(w) {
                    remember(&mut copy.by_word, w, n);
                }
                n
            }
        };
        out.push(n);
    }
    Ok(out)
}

/// Count the words of the episodes appended past `since` into `data`; false when the copy
/// must start again (too many, or words it cannot read as the index does).
fn count_appended(c: &Connection, data: &mut Counts, since: i64) -> Result<bool, StoreError> {
    if data.by_word.is_empty() {
        return Ok(true);
    }
    let mut stmt = c.prepare_cached("SELECT gist, action FROM episodes WHERE id > ?1 ORDER BY id LIMIT ?2")?;
    let rows: Vec<(Option<String>, Option<String>)> =
        stmt.query_map(params![since, CATCH_UP + 1], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<Result<_, _>>()?;
    if rows.len() as i64 > CATCH_UP {
        return Ok(false);
    }
    let mut tokens = HashSet::new();
    for (gist, action) in rows {
        tokens.clear();
        for text in [gist, action].into_iter().flatten() {
            if !ascii_tokens(&text, &mut tokens) {
                return Ok(false);
            }
        }
        for t in &tokens {
            if let Some(n) = data.by_word.get_mut(t) {
                // A count at the cap says "at least the cap"; it stays there.
                *n = (*n + 1).min(data.cap);
            }
        }
    }
    Ok(true)
}

/// A word whose LIKE '%word%' the copy can follow: ASCII without LIKE's wildcards, so a row
/// holds it exactly when the row's ASCII-lower-cased text contains it lower-cased.
fn like_word(word: &str) -> bool {
    !word.is_empty() && word.is_ascii() && !word.contains(['%', '_'])
}

/// For each of `words`, the newest live concepts holding it (at most `limit`, newest first):
/// ids from the copy where it has the word, their rows read in one statement; else the rows
/// of `search` (the trigram index), whose ids the copy then keeps.
pub(super) fn newest_concepts(
    c: &Connection,
    words: &[String],
    limit: usize,
    search: impl Fn(&str) -> Result<Vec<RecallRow>, StoreError>,
) -> Result<Vec<Vec<RecallRow>>, StoreError> {
    let held =
        held_copy(c, Table::Concepts, |h| &mut h.newest, |data: &mut Newest, since| concepts_appended(c, data, since))?;
    let Some((mut held, i)) = held else {
        return words.iter().map(|w| search(w)).collect();
    };
    let copy = &mut held.newest[i].data;
    if copy.limit != limit {
        *copy = Newest { limit, by_word: HashMap::new() };
    }
    // Each word's rows, or the ids its rows are to be read by.
    let mut found: Vec<Result<Vec<RecallRow>, Vec<i64>>> = Vec::with_capacity(words.len());
    for w in words {
        match copy.by_word.get(w) {
            Some(ids) => found.push(Err(ids.clone())),
            None => {
                let rows = search(w)?;
                if like_word(w) {
                    remember(&mut copy.by_word, w, rows.iter().map(|r| r.id).collect());
                }
                found.push(Ok(rows));
            }
        }
    }
    drop(held);
    let wanted: Vec<i64> = found.iter().filter_map(|f| f.as_ref().err()).flatten().copied().collect();
    let by_id = concept_rows(c, &wanted)?;
    Ok(found
        .into_iter()
        .map(|f| match f {
            Ok(rows) => rows,
            Err(ids) => ids.iter().filter_map(|id| by_id.get(id).cloned()).collect(),
        })
        .collect())
}

/// The recall rows of the live concepts among `ids`, by id (as the keyword source reads them).
fn concept_rows(c: &Connection, ids: &[i64]) -> Result<HashMap<i64, RecallRow>, StoreError> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let list = serde_json::to_string(ids)?;
    let mut stmt = c.prepare_cached(
        "SELECT t.id, t.name || ': ' || t.definition, t.updated_at, t.reliability,
                (MIN(t.strength, 10.0) / 10.0 + t.confidence) / 2.0
         FROM semantic_concepts t WHERE t.id IN (SELECT value FROM json_each(?1))
           AND t.deleted_at IS NULL AND t.probation = 0",
    )?;
    let rows = stmt.query_map(params![list], super::read)?;
    let mut out = HashMap::with_capacity(ids.len());
    for r in rows {
        let r = r?;
        out.insert(r.id, r);
    }
    Ok(out)
}

/// Put the live concepts appended past `since` in front of the words they hold; false when
/// the copy must start again (too many).
fn concepts_appended(c: &Connection, data: &mut Newest, since: i64) -> Result<bool, StoreError> {
    if data.by_word.is_empty() {
        return Ok(true);
    }
    let mut stmt = c.prepare_cached(
        "SELECT id, name, definition FROM semantic_concepts
         WHERE id > ?1 AND deleted_at IS NULL AND probation = 0 ORDER BY id LIMIT ?2",
    )?;
    let rows: Vec<(i64, Option<String>, Option<String>)> = stmt
        .query_map(params![since, CATCH_UP + 1], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()?;
    if rows.len() as i64 > CATCH_UP {
        return Ok(false);
    }
    for (id, name, definition) in rows {
        let (name, definition) =
            (name.unwrap_or_default().to_ascii_lowercase(), definition.unwrap_or_default().to_ascii_lowercase());
        for (word, ids) in data.by_word.iter_mut() {
            // Recall's words are lower-cased already; only another caller's would be copied here.
            let word: std::borrow::Cow<'_, str> = if word.bytes().any(|b| b.is_ascii_uppercase()) {
                word.to_ascii_lowercase().into()
            } else {
                word.as_str().into()
            };
            if name.contains(word.as_ref()) || definition.contains(word.as_ref()) {
                // Ids ascend here, so each is the newest so far.
                ids.insert(0, id);
                ids.truncate(data.limit);
            }
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests;
