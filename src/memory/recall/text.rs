//! The text sources of hybrid recall: full text over episodes (`fts`) and the substring
//! search over the other layers (`keyword`).

use super::{Pool, Row, SOURCE_LIMIT, SourceRank, layer_rank, read_row};
use crate::store::StoreError;
use crate::text::normalize;
use rusqlite::{Connection, OptionalExtension, params};

/// An FTS5 MATCH expression: each term quoted (which strips every operator a user could type),
/// as a prefix where `prefix` says so, joined by OR.
fn fts_expression(terms: &[String], prefix: &[bool]) -> String {
    let term = |(t, p): (&String, &bool)| format!("\"{}\"{}", t.replace('"', "\"\""), if *p { "*" } else { "" });
    terms.iter().zip(prefix).map(term).collect::<Vec<_>>().join(" OR ")
}

/// Whether each term is searched as a prefix ("trip" finding "trips"). bm25 costs about a
/// microsecond per matching row, and a short prefix can match far more rows than its word: in
/// the 100k bench "w17"* matches 21.6k gists where "w17" matches 2k. So a term is a prefix
/// only while its expansions add at most [`PREFIX_EXTRA_ROWS`] rows or as many as the word itself.
fn prefix_terms(c: &Connection, terms: &[String]) -> Result<Vec<bool>, StoreError> {
    let mut exact = c.prepare_cached("SELECT coalesce(sum(doc), 0) FROM episodes_fts_vocab WHERE term = ?1")?;
    let mut range =
        c.prepare_cached("SELECT coalesce(sum(doc), 0) FROM episodes_fts_vocab WHERE term >= ?1 AND term <= ?2")?;
    let mut out = Vec::with_capacity(terms.len());
    for t in terms {
        let word: i64 = exact.query_row(params![t], |r| r.get(0))?;
        let all: i64 = range.query_row(params![t, format!("{t}\u{10FFFF}")], |r| r.get(0))?;
        out.push(all - word <= word.max(PREFIX_EXTRA_ROWS));
    }
    Ok(out)
}

/// See [`prefix_terms`].
pub const PREFIX_EXTRA_ROWS: i64 = 1_000;

pub(super) fn fts_source(c: &Connection, terms: &[String], pool: &mut Pool) -> Result<(), StoreError> {
    let expression = fts_expression(terms, &prefix_terms(c, terms)?);
    // bm25 over the index alone, then the episode rows of the best: joining first would read an
    // episode row for every match before the LIMIT. Deleted and superseded episodes are skipped,
    // so a few spare ids are taken, and more when they run out.
    let mut ranked = c.prepare_cached(
        "SELECT rowid, bm25(episodes_fts) FROM episodes_fts WHERE episodes_fts MATCH ?1
         ORDER BY bm25(episodes_fts) LIMIT ?2",
    )?;
    let mut episode = c.prepare_cached(
        "SELECT id, gist, created_at, reliability, salience / 10.0 FROM episodes
         WHERE id = ?1 AND deleted_at IS NULL AND reliability != 'superseded'",
    )?;
    let mut want = SOURCE_LIMIT * 2;
    loop {
        let ids: Vec<(i64, f64)> = ranked
            .query_map(params![expression, want as i64], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        let mut rank = 0;
        let mut found = Vec::new();
        for (id, bm25) in &ids {
            if rank == SOURCE_LIMIT {
                break;
            }
            if let Some(row) = episode.query_row(params![id], read_row).optional()? {
                rank += 1;
                found.push((row, *bm25, rank));
            }
        }
        if rank == SOURCE_LIMIT || ids.len() < want {
            for (row, bm25, rank) in found {
                pool.add("episode", row, SourceRank { source: "fts", rank, value: bm25 });
            }
            return Ok(());
        }
        want *= 4;
    }
}

/// The keyword layers: (layer, filter name, trigram index, SQL). ?1 is a LIKE pattern, ?2 the
/// clock, and `{ix}` narrows the rows to the index's matches for ?3 (see `keyword_sql`).
pub(super) const KEYWORD_LAYERS: [(&str, &str, &str, &str); 5] = [
    (
        "trait",
        "traits",
        "user_traits_trgm",
        "SELECT id, trait_key || ': ' || trait_value, updated_at, reliability, confidence FROM user_traits
         WHERE {ix} (trait_value LIKE ?1 OR trait_key LIKE ?1) AND reliability != 'superseded'
           AND ?2 IS NOT NULL LIMIT 50",
    ),
    (
        "fact",
        "facts",
        "facts_trgm",
        "SELECT id, key || ': ' || value, updated_at, 'reliable', confidence FROM facts
         WHERE {ix} (value LIKE ?1 OR key LIKE ?1) AND expires_at > ?2 LIMIT 50",
    ),
    (
        "gist",
        "gists",
        "gists_trgm",
        "SELECT id, content, created_at, 'reliable', confidence / 10.0 FROM gists
         WHERE {ix} content LIKE ?1 AND expires_at > ?2 AND is_cold_start = 0 LIMIT 50",
    ),
    (
        "concept",
        "concepts",
        "concepts_trgm",
        "SELECT id, name || ': ' || definition, updated_at, reliability,
                (MIN(strength, 10.0) / 10.0 + confidence) / 2.0 FROM semantic_concepts
         WHERE {ix} (name LIKE ?1 OR definition LIKE ?1) AND deleted_at IS NULL AND ?2 IS NOT NULL LIMIT 50",
    ),
    (
        "chat",
        "chat",
        "chat_user_trgm",
        "SELECT id, content, created_at, 'reliable', 0.5 FROM chat_history
         WHERE {ix} role = 'user' AND content LIKE ?1 AND ?2 IS NOT NULL ORDER BY id DESC LIMIT 50",
    ),
];

pub(super) fn keyword_source(
    c: &Connection,
    query: &str,
    terms: &[String],
    now: i64,
    wants: &dyn Fn(&str) -> bool,
    pool: &mut Pool,
) -> Result<(), StoreError> {
    let lower_query = normalize(query);
    let mut found: Vec<(&'static str, Row)> = Vec::new();
    for (layer, filter, index, sql) in KEYWORD_LAYERS {
        if !wants(filter) {
            continue;
        }
        for term in terms {
            let indexed = term.chars().count() >= TRIGRAM;
            let mut stmt = c.prepare_cached(&keyword_sql(sql, index, indexed))?;
            let phrase = format!("\"{}\"", term.replace('"', "\"\""));
            for row in stmt.query_map(params![format!("%{term}%"), now, phrase], read_row)? {
                let row = row?;
                // The message being answered is in the chat log too: it is not a memory of itself.
                if layer == "chat" && normalize(&row.1).contains(&lower_query) {
                    continue;
                }
                if !found.iter().any(|(l, r)| *l == layer && r.0 == row.0) {
                    found.push((layer, row));
                }
            }
        }
    }
    let mut scored: Vec<(f64, &'static str, Row)> =
        found.into_iter().map(|(layer, row)| (term_share(&row.1, terms), layer, row)).collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(layer_rank(a.1).cmp(&layer_rank(b.1))).then(b.2.2.cmp(&a.2.2)));
    for (i, (share, layer, row)) in scored.into_iter().enumerate() {
        pool.add(layer, row, SourceRank { source: "keyword", rank: i + 1, value: share });
    }
    Ok(())
}

/// A trigram index answers substring queries of at least this many characters.
pub(super) const TRIGRAM: usize = 3;

/// A keyword layer's SQL with `{ix}` filled: when `indexed`, only the rows whose trigram
/// index matches the quoted word ?3 (a superset of the rows the LIKE keeps, so the result is
/// the same, without the table scan); otherwise the plain scan (?3 unused).
pub(super) fn keyword_sql(sql: &str, index: &str, indexed: bool) -> String {
    let ix = if indexed {
        format!("id IN (SELECT rowid FROM {index} WHERE {index} MATCH ?3) AND")
    } else {
        "?3 IS NOT NULL AND".to_string()
    };
    sql.replace("{ix}", &ix)
}

/// The share of `terms` that occur in `text` (substring, case-insensitive).
pub(super) fn term_share(text: &str, terms: &[String]) -> f64 {
    if terms.is_empty() {
        return 0.0;
    }
    let t = normalize(text);
    terms.iter().filter(|w| t.contains(w.as_str())).count() as f64 / terms.len() as f64
}
