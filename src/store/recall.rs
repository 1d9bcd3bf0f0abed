//! The reads behind hybrid recall (`crate::memory::recall`): one row shape over every layer
//! it searches, by id (the vector source), by full text over episodes, and by substring over
//! the other layers. A read model across tables, like [`super::list_layer`]: recall ranks
//! layers against each other, so their rows must come back alike.

use super::StoreError;
use super::vectors::VecTable;
use rusqlite::{Connection, Row, params};
use std::collections::HashMap;

mod cache;

/// A row as recall scores it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecallRow {
    pub id: i64,
    pub text: String,
    /// When it was written or last changed.
    pub at: i64,
    pub reliability: String,
    /// On 0–1.
    pub importance: f64,
}

fn read(r: &Row<'_>) -> rusqlite::Result<RecallRow> {
    Ok(RecallRow { id: r.get(0)?, text: r.get(1)?, at: r.get(2)?, reliability: r.get(3)?, importance: r.get(4)? })
}

/// The layers the substring search covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeywordLayer {
    Traits,
    Facts,
    Gists,
    Concepts,
    Chat,
}

impl KeywordLayer {
    pub const ALL: [KeywordLayer; 5] =
        [KeywordLayer::Traits, KeywordLayer::Facts, KeywordLayer::Gists, KeywordLayer::Concepts, KeywordLayer::Chat];

    /// The layer name a hit carries.
    pub fn layer(self) -> &'static str {
        match self {
            KeywordLayer::Traits => "trait",
            KeywordLayer::Facts => "fact",
            KeywordLayer::Gists => "gist",
            KeywordLayer::Concepts => "concept",
            KeywordLayer::Chat => "chat",
        }
    }

    /// The name a layer filter uses.
    pub fn filter(self) -> &'static str {
        match self {
            KeywordLayer::Traits => "traits",
            KeywordLayer::Facts => "facts",
            KeywordLayer::Gists => "gists",
            KeywordLayer::Concepts => "concepts",
            KeywordLayer::Chat => "chat",
        }
    }

    /// The layer's table, its trigram index and the query: ?1 is a LIKE pattern, ?2 the clock,
    /// ?4 [`KEYWORD_LIMIT`]; `{from}`, `{ix}` and `{order}` come from [`keyword_sql`] (?3 is
    /// the index's query).
    fn sql(self) -> (&'static str, &'static str, &'static str) {
        match self {
            KeywordLayer::Traits => (
                "user_traits",
                "user_traits_trgm",
                "SELECT t.id, t.trait_key || ': ' || t.trait_value, t.updated_at, t.reliability, t.confidence FROM {from}
                 WHERE {ix} (t.trait_value LIKE ?1 OR t.trait_key LIKE ?1) AND t.reliability != 'superseded'
                   AND ?2 IS NOT NULL ORDER BY {order} DESC LIMIT ?4",
            ),
            KeywordLayer::Facts => (
                "facts",
                "facts_trgm",
                "SELECT t.id, t.key || ': ' || t.value, t.updated_at, t.reliability, t.confidence FROM {from}
                 WHERE {ix} (t.value LIKE ?1 OR t.key LIKE ?1) AND t.expires_at > ?2 AND t.reliability != 'superseded'
                 ORDER BY {order} DESC LIMIT ?4",
            ),
            KeywordLayer::Gists => (
                "gists",
                "gists_trgm",
                "SELECT t.id, t.content, t.created_at, t.reliability, t.confidence / 10.0 FROM {from}
                 WHERE {ix} t.content LIKE ?1 AND t.expires_at > ?2 AND t.is_cold_start = 0 ORDER BY {order} DESC LIMIT ?4",
            ),
            KeywordLayer::Concepts => (
                "semantic_concepts",
                "concepts_trgm",
                "SELECT t.id, t.name || ': ' || t.definition, t.updated_at, t.reliability,
                        (MIN(t.strength, 10.0) / 10.0 + t.confidence) / 2.0 FROM {from}
                 WHERE {ix} (t.name LIKE ?1 OR t.definition LIKE ?1) AND t.deleted_at IS NULL AND t.probation = 0
                   AND ?2 IS NOT NULL ORDER BY {order} DESC LIMIT ?4",
            ),
            KeywordLayer::Chat => (
                "chat_history",
                "chat_user_trgm",
                "SELECT t.id, t.content, t.created_at, 'reliable', 0.5 FROM {from}
                 WHERE {ix} t.role = 'user' AND t.content LIKE ?1 AND ?2 IS NOT NULL ORDER BY {order} DESC LIMIT ?4",
            ),
        }
    }
}

/// A trigram index answers substring queries of at least this many characters.
pub const TRIGRAM: usize = 3;

/// The rows a keyword layer returns for one word, newest first.
pub const KEYWORD_LIMIT: usize = 50;

/// A keyword layer's SQL, newest rows first. When `indexed`, the trigram index is the outer
/// loop, walked newest first: its matches for the quoted word ?3 are a superset of the rows the
/// LIKE keeps, so the result is the same as the scan's, and the walk stops at the 50th row kept
/// (an `id IN (SELECT …)` over the index collected every match first, tens of thousands for
/// a common word). Otherwise the plain scan of the table (?3 unused).
fn keyword_sql(sql: &str, table: &str, index: &str, indexed: bool) -> String {
    let (from, ix, order) = if indexed {
        (format!("{index} x JOIN {table} t ON t.id = x.rowid"), format!("x.{index} MATCH ?3 AND"), "x.rowid")
    } else {
        (format!("{table} t"), "?3 IS NOT NULL AND".to_string(), "t.id")
    };
    sql.replace("{from}", &from).replace("{ix}", &ix).replace("{order}", order)
}

pub struct RecallRepo<'c>(pub &'c Connection);

impl RecallRepo<'_> {
    /// How many episodes hold the word `term`, counted up to `cap`: the walk stops there, so a
    /// common word costs no more than a rare one (FTS5's vocabulary table counts every match).
    pub fn fts_rows_capped(&self, term: &str, cap: i64) -> Result<i64, StoreError> {
        let mut stmt = self
            .0
            .prepare_cached("SELECT count(*) FROM (SELECT 1 FROM episodes_fts WHERE episodes_fts MATCH ?1 LIMIT ?2)")?;
        Ok(stmt.query_row(params![format!("\"{}\"", term.replace('"', "\"\"")), cap], |r| r.get(0))?)
    }

    /// [`RecallRepo::fts_rows_capped`] for each of `words`, in one snapshot: a word counted
    /// before is answered by the in-process copy (`cache`), which follows the episodes
    /// written since, so only a new word costs the index's seeks.
    pub fn fts_rows_capped_all(&self, words: &[String], cap: i64) -> Result<Vec<i64>, StoreError> {
        super::in_read(self.0, || cache::episode_counts(self.0, words, cap, |w| self.fts_rows_capped(w, cap)))
    }

    /// The `limit` newest live, not superseded episodes matching an FTS5 MATCH expression,
    /// newest first: a walk down the index in rowid order, each match's row read as it comes,
    /// that stops at `limit` (no ranking, so nothing is read past the last row kept).
    pub fn fts_newest(&self, expression: &str, limit: usize) -> Result<Vec<RecallRow>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT e.id, e.gist, e.created_at, e.reliability, e.salience / 10.0
             FROM episodes_fts f JOIN episodes e ON e.id = f.rowid
             WHERE episodes_fts MATCH ?1 AND e.deleted_at IS NULL AND e.reliability != 'superseded'
             ORDER BY f.rowid DESC LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![expression, limit as i64], read)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The `limit` best episode ids for an FTS5 MATCH expression, best first, with their bm25
    /// (over the index alone: joining first would read an episode row for every match).
    pub fn fts_ranked(&self, expression: &str, limit: usize) -> Result<Vec<(i64, f64)>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT rowid, bm25(episodes_fts) FROM episodes_fts WHERE episodes_fts MATCH ?1
             ORDER BY bm25(episodes_fts) LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![expression, limit as i64], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The episodes among `ids` full text may return (live and not superseded), by id: the
    /// vector source's read of the same rows ([`Self::embedded`]), less the superseded ones.
    pub fn fts_episodes(&self, ids: &[i64]) -> Result<HashMap<i64, RecallRow>, StoreError> {
        let mut rows = self.embedded(VecTable::Episodes, ids)?;
        rows.retain(|_, r| r.reliability != "superseded");
        Ok(rows)
    }

    /// The live rows the vectors `ids` of `table` embed, by id: one statement for the vector
    /// source's neighbours rather than one each (at 1M memories their ~100 point reads, each
    /// a descent into a 1 GB file, were a sixth of the topic stage).
    pub fn embedded(&self, table: VecTable, ids: &[i64]) -> Result<HashMap<i64, RecallRow>, StoreError> {
        if ids.is_empty() {
            return Ok(HashMap::new());
        }
        let sql = match table {
            VecTable::Episodes => {
                "SELECT id, gist, created_at, reliability, salience / 10.0 FROM episodes
                 WHERE id IN (SELECT value FROM json_each(?1)) AND deleted_at IS NULL"
            }
            VecTable::Concepts => {
                "SELECT id, name || ': ' || definition, updated_at, reliability,
                        (MIN(strength, 10.0) / 10.0 + confidence) / 2.0
                 FROM semantic_concepts
                 WHERE id IN (SELECT value FROM json_each(?1)) AND deleted_at IS NULL AND probation = 0"
            }
            VecTable::Traits => {
                "SELECT id, trait_key || ': ' || trait_value, updated_at, reliability, confidence
                 FROM user_traits WHERE id IN (SELECT value FROM json_each(?1))"
            }
            VecTable::Facts => {
                "SELECT id, key || ': ' || value, updated_at, reliability, confidence FROM facts
                 WHERE id IN (SELECT value FROM json_each(?1))"
            }
        };
        let mut stmt = self.0.prepare_cached(sql)?;
        let rows = stmt.query_map(params![serde_json::to_string(ids)?], read)?;
        rows.map(|r| r.map(|r| (r.id, r)).map_err(StoreError::from)).collect()
    }

    /// The rows of `layer` containing `term` (any case), at most 50. `indexed` narrows the
    /// scan through the layer's trigram index first (only for terms of [`TRIGRAM`] or more
    /// characters); the rows are the same either way.
    pub fn keyword(
        &self,
        layer: KeywordLayer,
        term: &str,
        now: i64,
        indexed: bool,
    ) -> Result<Vec<RecallRow>, StoreError> {
        let (table, index, sql) = layer.sql();
        let mut stmt = self.0.prepare_cached(&keyword_sql(sql, table, index, indexed))?;
        let phrase = format!("\"{}\"", term.replace('"', "\"\""));
        let rows = stmt.query_map(params![format!("%{term}%"), now, phrase, KEYWORD_LIMIT as i64], read)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// [`RecallRepo::keyword`] for each of `words` (through the trigram index for words of
    /// [`TRIGRAM`] or more characters), in one snapshot. The concepts, which the turn
    /// searches, come from the in-process copy of each word's newest matches where it has the
    /// word (their rows read in one statement), so only a new word costs the index's seeks;
    /// the other layers' rows hang on the clock (expiry) and are searched each time.
    pub fn keyword_all(
        &self,
        layer: KeywordLayer,
        words: &[String],
        now: i64,
    ) -> Result<Vec<Vec<RecallRow>>, StoreError> {
        let search = |w: &str| self.keyword(layer, w, now, w.chars().count() >= TRIGRAM);
        match layer {
            KeywordLayer::Concepts => {
                super::in_read(self.0, || cache::newest_concepts(self.0, words, KEYWORD_LIMIT, search))
            }
            _ => words.iter().map(|w| search(w)).collect(),
        }
    }
}
