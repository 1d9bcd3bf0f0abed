//! The text sources of hybrid recall: full text over episodes (`fts`) and the substring
//! search over the other layers (`keyword`).

use super::{Pool, Row, SOURCE_LIMIT, SourceRank, layer_rank, row_of};
use crate::store::{KeywordLayer, RecallRepo, StoreError, TRIGRAM};
use crate::text::normalize;
use rusqlite::Connection;

/// An FTS5 MATCH expression: each term quoted (which strips every operator a user could type),
/// as a prefix where `prefix` says so, joined by OR.
fn fts_expression(terms: &[String], prefix: &[bool]) -> String {
    let term = |(t, p): (&String, &bool)| format!("\"{}\"{}", t.replace('"', "\"\""), if *p { "*" } else { "" });
    terms.iter().zip(prefix).map(term).collect::<Vec<_>>().join(" OR ")
}

/// The terms the MATCH searches, each with whether it is a prefix ("trip" finding "trips").
///
/// bm25 costs about a microsecond per matching row, so two bounds keep the walk short at any
/// store size. A short prefix can match far more rows than its word (in the 100k bench "w17"*
/// matches 21.6k gists where "w17" matches 2k), so a term is a prefix only while its expansions
/// add at most [`PREFIX_EXTRA_ROWS`] rows or as many as the word itself. And common words
/// ("time", "today") match a large share of a big store while adding little to bm25 (their IDF
/// is low), so only the rarest terms are kept while their rows sum to [`FTS_ROW_BUDGET`]
/// (the rarest is always kept): see [`rarest_within`].
fn planned_terms(c: &Connection, terms: &[String]) -> Result<(Vec<String>, Vec<bool>), StoreError> {
    let repo = RecallRepo(c);
    let mut costs = Vec::with_capacity(terms.len());
    for t in terms {
        let (word, all) = repo.fts_term_counts(t)?;
        let prefix = all - word <= word.max(PREFIX_EXTRA_ROWS);
        costs.push(TermCost { rows: if prefix { all } else { word }, prefix });
    }
    let kept = rarest_within(&costs, FTS_ROW_BUDGET);
    Ok((kept.iter().map(|&i| terms[i].clone()).collect(), kept.iter().map(|&i| costs[i].prefix).collect()))
}

/// What one term costs bm25: the rows it matches as searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct TermCost {
    rows: i64,
    prefix: bool,
}

/// The indexes (in query order) of the rarest terms whose rows sum to at most `budget`; the
/// rarest term is kept even over budget, so a query never loses its full-text source.
fn rarest_within(costs: &[TermCost], budget: i64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..costs.len()).collect();
    order.sort_by_key(|&i| (costs[i].rows, i));
    let mut spent = 0;
    let mut kept = Vec::new();
    for i in order {
        if !kept.is_empty() && spent + costs[i].rows > budget {
            break;
        }
        spent += costs[i].rows;
        kept.push(i);
    }
    kept.sort_unstable();
    kept
}

/// See [`planned_terms`].
pub const PREFIX_EXTRA_ROWS: i64 = 1_000;

/// See [`planned_terms`].
pub const FTS_ROW_BUDGET: i64 = 4_000;

pub(super) fn fts_source(c: &Connection, terms: &[String], pool: &mut Pool) -> Result<(), StoreError> {
    let (kept, prefix) = planned_terms(c, terms)?;
    let expression = fts_expression(&kept, &prefix);
    // bm25 over the index alone, then the episode rows of the best: joining first would read an
    // episode row for every match before the LIMIT. Deleted and superseded episodes are skipped,
    // so a few spare ids are taken, and more when they run out.
    let repo = RecallRepo(c);
    let mut want = SOURCE_LIMIT * 2;
    loop {
        let ids = repo.fts_ranked(&expression, want)?;
        let mut rank = 0;
        let mut found = Vec::new();
        for (id, bm25) in &ids {
            if rank == SOURCE_LIMIT {
                break;
            }
            if let Some(row) = repo.fts_episode(*id)?.map(row_of) {
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
    let repo = RecallRepo(c);
    for kind in KeywordLayer::ALL {
        let layer = kind.layer();
        if !wants(kind.filter()) {
            continue;
        }
        for term in terms {
            let indexed = term.chars().count() >= TRIGRAM;
            for row in repo.keyword(kind, term, now, indexed)? {
                let row = row_of(row);
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

/// The share of `terms` that occur in `text` (substring, case-insensitive).
pub(super) fn term_share(text: &str, terms: &[String]) -> f64 {
    if terms.is_empty() {
        return 0.0;
    }
    let t = normalize(text);
    terms.iter().filter(|w| t.contains(w.as_str())).count() as f64 / terms.len() as f64
}

#[cfg(test)]
mod tests {
    use super::{TermCost, rarest_within};

    fn costs(rows: &[i64]) -> Vec<TermCost> {
        rows.iter().map(|&rows| TermCost { rows, prefix: false }).collect()
    }

    #[test]
    fn common_terms_beyond_the_budget_are_dropped() {
        // "lisbon" 40 rows, "time" 30k, "trip" 900, "today" 12k: the two common words go.
        assert_eq!(rarest_within(&costs(&[40, 30_000, 900, 12_000]), 4_000), vec![0, 2]);
    }

    #[test]
    fn the_rarest_term_stays_even_over_budget() {
        assert_eq!(rarest_within(&costs(&[9_000, 7_000]), 4_000), vec![1]);
    }

    #[test]
    fn a_query_within_budget_keeps_every_term_in_order() {
        assert_eq!(rarest_within(&costs(&[0, 3_000, 1_000]), 4_000), vec![0, 1, 2]);
        assert!(rarest_within(&[], 4_000).is_empty());
    }
}
