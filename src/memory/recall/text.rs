//! The text sources of hybrid recall: full text over episodes (`fts`) and the substring
//! search over the other layers (`keyword`).

use super::{Pool, Row, SOURCE_LIMIT, SourceRank, layer_rank, row_of};
use crate::store::{KeywordLayer, RecallRepo, StoreError};
use crate::text::normalize;
use rusqlite::Connection;

/// An FTS5 MATCH expression: each term quoted (which strips every operator a user could type),
/// joined by OR.
fn fts_expression(terms: &[String]) -> String {
    terms.iter().map(|t| format!("\"{}\"", t.replace('"', "\"\""))).collect::<Vec<_>>().join(" OR ")
}

/// What the full-text source searches: the terms, and whether even the rarest of them matches
/// more than [`FTS_ROW_BUDGET`] episodes.
struct Plan {
    terms: Vec<String>,
    over_budget: bool,
}

/// The words the MATCH searches: each content word and its plural ("trip" finding "trips"),
/// the rarest first while the episodes they match sum to [`FTS_ROW_BUDGET`] (the rarest is
/// always kept), and none that matches nothing.
///
/// Ranking costs about a microsecond per matching row (bm25 reads each row's length and
/// counts every match of each term for its IDF), and a common word ("man", "today") matches a
/// large share of a big store while adding little to bm25 (its IDF is near zero), so the rows
/// ranked are bounded by the budget. Each word is counted by a walk that stops past the budget
/// (FTS5 keeps no document counts: its vocabulary table walks every match, milliseconds for
/// a common word at a million episodes), and a word counted before is answered from an
/// in-process copy that follows the episodes written since (`RecallRepo::fts_rows_capped_all`).
/// Prefix terms are not searched: FTS5 merges every
/// expansion of a prefix before the first row, a cost no LIMIT bounds ("w17"* matched ten
/// times the rows of "w17" in the 100k bench).
fn planned_terms(c: &Connection, terms: &[String]) -> Result<Plan, StoreError> {
    let repo = RecallRepo(c);
    let mut forms: Vec<String> = Vec::with_capacity(terms.len() * 2);
    for t in terms {
        let plural = format!("{t}s");
        for f in [t.clone(), plural] {
            if !forms.contains(&f) && (f == *t || !t.ends_with('s')) {
                forms.push(f);
            }
        }
    }
    let costs = repo.fts_rows_capped_all(&forms, FTS_ROW_BUDGET + 1)?;
    // A form that matches nothing is left out before the budget, so that it can never stand
    // in for the rarest word that does match.
    let live: Vec<usize> = (0..forms.len()).filter(|&i| costs[i] > 0).collect();
    let live_costs: Vec<i64> = live.iter().map(|&i| costs[i]).collect();
    let kept: Vec<usize> = rarest_within(&live_costs, FTS_ROW_BUDGET).into_iter().map(|j| live[j]).collect();
    let spent: i64 = kept.iter().map(|&i| costs[i]).sum();
    let terms = kept.into_iter().map(|i| forms[i].clone()).collect();
    Ok(Plan { terms, over_budget: spent > FTS_ROW_BUDGET })
}

/// The indexes (in query order) of the rarest terms whose rows sum to at most `budget`; the
/// rarest term is kept even over budget, so a query never loses its full-text source.
fn rarest_within(rows: &[i64], budget: i64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by_key(|&i| (rows[i], i));
    let mut spent = 0;
    let mut kept = Vec::new();
    for i in order {
        if !kept.is_empty() && spent + rows[i] > budget {
            break;
        }
        spent += rows[i];
        kept.push(i);
    }
    kept.sort_unstable();
    kept
}

/// See [`planned_terms`]: at most this many matching episodes are ranked by bm25 (about half
/// a millisecond).
pub const FTS_ROW_BUDGET: i64 = 500;

pub(super) fn fts_source(c: &Connection, terms: &[String], pool: &mut Pool) -> Result<(), StoreError> {
    let plan = planned_terms(c, terms)?;
    if plan.terms.is_empty() {
        return Ok(());
    }
    let expression = fts_expression(&plan.terms);
    let repo = RecallRepo(c);
    // When even the rarest word is over budget, its IDF says next to nothing about any one row:
    // its newest live matches stand in, by recency (their bm25 reads 0), read in one walk down
    // the index that joins each match's episode and stops at the limit.
    if plan.over_budget {
        for (i, row) in repo.fts_newest(&expression, SOURCE_LIMIT)?.into_iter().enumerate() {
            pool.add("episode", row_of(row), SourceRank { source: "fts", rank: i + 1, value: 0.0 });
        }
        return Ok(());
    }
    // bm25 over the index alone, then the episode rows of the best: joining first would read an
    // episode row for every match before the LIMIT. Deleted and superseded episodes are skipped,
    // so a few spare ids are taken, and more when they run out.
    let mut want = SOURCE_LIMIT * 2;
    loop {
        let ids = repo.fts_ranked(&expression, want)?;
        let mut rows = repo.fts_episodes(&ids.iter().map(|(id, _)| *id).collect::<Vec<_>>())?;
        let mut rank = 0;
        let mut found = Vec::new();
        for (id, bm25) in &ids {
            if rank == SOURCE_LIMIT {
                break;
            }
            if let Some(row) = rows.remove(id).map(row_of) {
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
        for rows in repo.keyword_all(kind, terms, now)? {
            for row in rows {
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
    use super::rarest_within;

    #[test]
    fn common_terms_beyond_the_budget_are_dropped() {
        // "lisbon" 40 rows, "time" 501 (the count stops there), "trip" 300, "today" 501.
        assert_eq!(rarest_within(&[40, 501, 300, 501], 500), vec![0, 2]);
    }

    #[test]
    fn the_rarest_term_stays_even_over_budget() {
        assert_eq!(rarest_within(&[501, 501], 500), vec![0]);
        assert_eq!(rarest_within(&[9_000, 7_000], 4_000), vec![1]);
    }

    #[test]
    fn a_query_within_budget_keeps_every_term_in_order() {
        assert_eq!(rarest_within(&[0, 300, 100], 500), vec![0, 1, 2]);
        assert!(rarest_within(&[], 500).is_empty());
    }
}
