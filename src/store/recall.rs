//! The reads behind hybrid recall (`crate::memory::recall`): one row shape over every layer
//! it searches, by id (the vector source), by full text over episodes, and by substring over
//! the other layers. A read model across tables, like [`super::list_layer`]: recall ranks
//! layers against each other, so their rows must come back alike.

use super::StoreError;
use super::vectors::VecTable;
use rusqlite::{Connection, OptionalExtension, Row, params};

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

    /// The trigram index and the query: ?1 is a LIKE pattern, ?2 the clock, and `{ix}` narrows
    /// the rows to the index's matches for ?3 (see [`keyword_sql`]).
    fn sql(self) -> (&'static str, &'static str) {
        match self {
            KeywordLayer::Traits => (
                "user_traits_trgm",
                "SELECT id, trait_key || ': ' || trait_value, updated_at, reliability, confidence FROM user_traits
                 WHERE {ix} (trait_value LIKE ?1 OR trait_key LIKE ?1) AND reliability != 'superseded'
                   AND ?2 IS NOT NULL LIMIT 50",
            ),
            KeywordLayer::Facts => (
                "facts_trgm",
                "SELECT id, key || ': ' || value, updated_at, reliability, confidence FROM facts
                 WHERE {ix} (value LIKE ?1 OR key LIKE ?1) AND expires_at > ?2 AND reliability != 'superseded' LIMIT 50",
            ),
            KeywordLayer::Gists => (
                "gists_trgm",
                "SELECT id, content, created_at, reliability, confidence / 10.0 FROM gists
                 WHERE {ix} content LIKE ?1 AND expires_at > ?2 AND is_cold_start = 0 LIMIT 50",
            ),
            KeywordLayer::Concepts => (
                "concepts_trgm",
                "SELECT id, name || ': ' || definition, updated_at, reliability,
                        (MIN(strength, 10.0) / 10.0 + confidence) / 2.0 FROM semantic_concepts
                 WHERE {ix} (name LIKE ?1 OR definition LIKE ?1) AND deleted_at IS NULL AND probation = 0
                   AND ?2 IS NOT NULL LIMIT 50",
            ),
            KeywordLayer::Chat => (
                "chat_user_trgm",
                "SELECT id, content, created_at, 'reliable', 0.5 FROM chat_history
                 WHERE {ix} role = 'user' AND content LIKE ?1 AND ?2 IS NOT NULL ORDER BY id DESC LIMIT 50",
            ),
        }
    }
}

/// A trigram index answers substring queries of at least this many characters.
pub const TRIGRAM: usize = 3;

/// A keyword layer's SQL with `{ix}` filled: when `indexed`, only the rows whose trigram
/// index matches the quoted word ?3 (a superset of the rows the LIKE keeps, so the result is
/// the same, without the table scan); otherwise the plain scan (?3 unused).
fn keyword_sql(sql: &str, index: &str, indexed: bool) -> String {
    let ix = if indexed {
        format!("id IN (SELECT rowid FROM {index} WHERE {index} MATCH ?3) AND")
    } else {
        "?3 IS NOT NULL AND".to_string()
    };
    sql.replace("{ix}", &ix)
}

pub struct RecallRepo<'c>(pub &'c Connection);

impl RecallRepo<'_> {
    /// How many episodes hold `term` as a word, and how many hold a word starting with it.
    pub fn fts_term_counts(&self, term: &str) -> Result<(i64, i64), StoreError> {
        let mut exact =
            self.0.prepare_cached("SELECT coalesce(sum(doc), 0) FROM episodes_fts_vocab WHERE term = ?1")?;
        let mut range = self
            .0
            .prepare_cached("SELECT coalesce(sum(doc), 0) FROM episodes_fts_vocab WHERE term >= ?1 AND term <= ?2")?;
        let word: i64 = exact.query_row(params![term], |r| r.get(0))?;
        let all: i64 = range.query_row(params![term, format!("{term}\u{10FFFF}")], |r| r.get(0))?;
        Ok((word, all))
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

    /// An episode full text may return: live and not superseded.
    pub fn fts_episode(&self, id: i64) -> Result<Option<RecallRow>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT id, gist, created_at, reliability, salience / 10.0 FROM episodes
             WHERE id = ?1 AND deleted_at IS NULL AND reliability != 'superseded'",
        )?;
        Ok(stmt.query_row(params![id], read).optional()?)
    }

    /// The row a vector of `table` embeds, if it is live.
    pub fn embedded(&self, table: VecTable, id: i64) -> Result<Option<RecallRow>, StoreError> {
        let sql = match table {
            VecTable::Episodes => {
                "SELECT id, gist, created_at, reliability, salience / 10.0 FROM episodes
                 WHERE id = ?1 AND deleted_at IS NULL"
            }
            VecTable::Concepts => {
                "SELECT id, name || ': ' || definition, updated_at, reliability,
                        (MIN(strength, 10.0) / 10.0 + confidence) / 2.0
                 FROM semantic_concepts WHERE id = ?1 AND deleted_at IS NULL AND probation = 0"
            }
            VecTable::Traits => {
                "SELECT id, trait_key || ': ' || trait_value, updated_at, reliability, confidence
                 FROM user_traits WHERE id = ?1"
            }
            VecTable::Facts => {
                "SELECT id, key || ': ' || value, updated_at, reliability, confidence FROM facts WHERE id = ?1"
            }
        };
        Ok(self.0.prepare_cached(sql)?.query_row(params![id], read).optional()?)
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
        let (index, sql) = layer.sql();
        let mut stmt = self.0.prepare_cached(&keyword_sql(sql, index, indexed))?;
        let phrase = format!("\"{}\"", term.replace('"', "\"\""));
        let rows = stmt.query_map(params![format!("%{term}%"), now, phrase], read)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
