//! Hybrid recall: every durable and short-lived layer, found three ways and fused.
//!
//! Stage 1 gathers candidates from independent sources, each ranked on its own:
//! - `vector`: k-nearest neighbours (k = [`KNN_K`]) of the query embedding over `episode_vec`,
//!   `concept_vec` and `trait_vec`, merged into one list by cosine distance (only when the
//!   caller has a 384-d embedding; skills run on the database thread and have none),
//!   neighbours below [`MIN_SIMILARITY`] dropped;
//! - `fts`: FTS5 over `episodes_fts` (gist, action), each content word as a quoted prefix
//!   term joined by OR (operators stripped), ranked by bm25;
//! - `keyword`: the substring search over traits, facts, gists, concepts and the user's chat
//!   lines that the `recall` skill has always done, ranked by the share of query words matched.
//!
//! Stage 2 fuses them by reciprocal-rank fusion, `rrf = Σ_sources 1 / (RRF_K + rank)`
//! (parameters §6.2: k = 60), then re-ranks with multipliers, each in (0, 1]:
//!
//! ```text
//! score = rrf × type_weight × (0.5 + 0.5·match) × (0.5 + 0.5·importance)
//!             × (0.5 + 0.5·recency) × reliability
//! match       = the hit's confidence: max(share of query words it contains, cosine similarity)
//! recency     = 0.5 ^ (age_days / RECENCY_HALF_LIFE_DAYS)          (half-life 30 days)
//! importance  = episode salience/10; trait and fact confidence; gist confidence/10;
//!               concept (min(strength,10)/10 + confidence)/2; chat 0.5
//! type_weight = trait 0.95, fact 0.90, gist 0.80, episode 0.70, concept 0.60, chat 0.50 (§2)
//! reliability = reliable 1.0, uncertain 0.7, contradicted 0.4; superseded rows are excluded
//! ```
//!
//! RRF alone rewards agreement between sources but barely separates rank 1 from rank 3 of
//! one source (1/61 vs 1/63) however different their similarity; the match factor restores
//! that. The halving floors (0.5 + 0.5·x) keep an old or weak memory findable: they reorder,
//! they never erase a match. Every [`Hit`] carries its provenance: the layer and row id, when it
//! was written, the sources that found it with their ranks, and the score parts.

use crate::cognition::signals::{is_content_word, normalize, words};
use crate::store::{EMBEDDING_DIM, StoreError, VecTable, VectorRepo};
use rusqlite::{Connection, params};
use serde::Serialize;
use std::collections::HashMap;

/// Reciprocal-rank fusion constant (parameters §6.2).
pub const RRF_K: f64 = 60.0;
/// Neighbours taken from each vector table.
pub const KNN_K: usize = 50;
/// Neighbours less similar than this (cosine) are not matches: kNN always returns k rows,
/// however unrelated, and RRF would credit the 50th as much as a close one. all-MiniLM-L6-v2
/// puts unrelated sentences near 0.04 and paraphrases near 0.64 (design.md).
pub const MIN_SIMILARITY: f64 = 0.2;
/// Candidates taken from the full-text index and from each keyword layer.
pub const SOURCE_LIMIT: usize = 50;
/// Recency halves every this many days.
pub const RECENCY_HALF_LIFE_DAYS: f64 = 30.0;

/// Every layer recall searches, by the names the `recall` skill's `layers` filter uses.
pub const LAYERS: [&str; 6] = ["traits", "facts", "gists", "episodes", "concepts", "chat"];

/// One recalled memory with its provenance.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    /// `trait`, `fact`, `gist`, `episode`, `concept` or `chat`.
    pub layer: &'static str,
    /// The row id in the layer's table.
    pub id: i64,
    pub text: String,
    /// When the row was written (or last updated, for layers that update in place).
    pub at: i64,
    /// How well it matches, 0–1: the larger of the share of the query's content words it
    /// contains and its cosine similarity to the query embedding.
    pub confidence: f64,
    /// Why it ranked, in words: the sources with their ranks, the words matched and the score parts.
    pub why: String,
    /// The memory's reliability state (`reliable` for layers that do not track one).
    pub reliability: String,
    /// The sources that found it, best first.
    pub sources: Vec<SourceRank>,
    /// The final score (higher is better) and its parts.
    pub score: f64,
    pub parts: ScoreParts,
}

/// One source's opinion of a hit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SourceRank {
    /// `vector`, `fts` or `keyword`.
    pub source: &'static str,
    /// 1-based rank within that source.
    pub rank: usize,
    /// vector: cosine similarity; fts: bm25 (lower is better); keyword: share of words matched.
    pub value: f64,
}

/// The factors of a hit's score (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default)]
pub struct ScoreParts {
    pub rrf: f64,
    pub type_weight: f64,
    /// The hit's confidence (0–1).
    pub matched: f64,
    pub importance: f64,
    pub recency: f64,
    pub reliability: f64,
}

/// A recall with every option; [`hybrid_recall`] is the common case.
#[derive(Debug, Clone, Copy)]
pub struct RecallRequest<'a> {
    pub query: &'a str,
    pub embedding: Option<&'a [f32]>,
    /// Names from [`LAYERS`]; empty means all.
    pub layers: &'a [String],
    pub limit: usize,
    /// Unix seconds: recency and the expiry of short-lived layers are measured against it.
    pub now: i64,
}

/// Search every layer for `query` (and near `query_embedding`, when given) and return the
/// best `limit` hits, best first.
pub fn hybrid_recall(
    c: &Connection,
    query: &str,
    query_embedding: Option<&[f32]>,
    limit: usize,
    now: i64,
) -> Result<Vec<Hit>, StoreError> {
    recall_with(c, &RecallRequest { query, embedding: query_embedding, layers: &[], limit, now })
}

/// The query's content words, lower-cased: what the full-text and keyword sources look for.
pub fn query_terms(query: &str) -> Vec<String> {
    let lower = normalize(query);
    let mut out: Vec<String> = Vec::new();
    for w in words(&lower) {
        if is_content_word(w) && !out.iter().any(|o| o == w) {
            out.push(w.to_string());
        }
    }
    out
}

/// The reliability multiplier; `None` for states recall excludes.
pub fn reliability_multiplier(state: &str) -> Option<f64> {
    match state {
        "reliable" => Some(1.0),
        "uncertain" => Some(0.7),
        "contradicted" => Some(0.4),
        "superseded" => None,
        _ => Some(0.7),
    }
}

/// `0.5 ^ (age_days / half_life)`; 1 for rows from the future.
pub fn recency(at: i64, now: i64) -> f64 {
    let days = (now - at).max(0) as f64 / 86_400.0;
    0.5f64.powf(days / RECENCY_HALF_LIFE_DAYS)
}

fn type_weight(layer: &str) -> f64 {
    match layer {
        "trait" => 0.95,
        "fact" => 0.90,
        "gist" => 0.80,
        "episode" => 0.70,
        "concept" => 0.60,
        _ => 0.50,
    }
}

/// Tie order among equally good keyword matches: durable layers before the chat log.
fn layer_rank(layer: &str) -> u8 {
    match layer {
        "trait" => 0,
        "fact" => 1,
        "episode" => 2,
        "concept" => 3,
        "gist" => 4,
        _ => 5,
    }
}

struct Candidate {
    layer: &'static str,
    id: i64,
    text: String,
    at: i64,
    reliability: String,
    importance: f64,
    similarity: f64,
    sources: Vec<SourceRank>,
}

/// A row as the sources read it: id, text, at, reliability, importance.
type Row = (i64, String, i64, String, f64);

fn read_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
}

/// Candidates keyed by (layer, id), in first-seen order.
#[derive(Default)]
struct Pool {
    items: Vec<Candidate>,
    index: HashMap<(&'static str, i64), usize>,
}

impl Pool {
    fn add(&mut self, layer: &'static str, row: Row, source: SourceRank) {
        let (id, text, at, reliability, importance) = row;
        if reliability_multiplier(&reliability).is_none() {
            return;
        }
        let i = *self.index.entry((layer, id)).or_insert_with(|| {
            self.items.push(Candidate {
                layer,
                id,
                text,
                at,
                reliability,
                importance: importance.clamp(0.0, 1.0),
                similarity: 0.0,
                sources: Vec::new(),
            });
            self.items.len() - 1
        });
        let c = &mut self.items[i];
        if source.source == "vector" {
            c.similarity = c.similarity.max(source.value);
        }
        if !c.sources.iter().any(|s| s.source == source.source) {
            c.sources.push(source);
        }
    }
}

/// [`hybrid_recall`] with a layer filter.
pub fn recall_with(c: &Connection, req: &RecallRequest<'_>) -> Result<Vec<Hit>, StoreError> {
    let wants = |l: &str| req.layers.is_empty() || req.layers.iter().any(|x| x == l);
    let terms = query_terms(req.query);
    let mut pool = Pool::default();
    match req.embedding {
        Some(e) if e.len() == EMBEDDING_DIM => vector_source(c, e, &wants, &mut pool)?,
        Some(e) => tracing::warn!(dims = e.len(), "query embedding does not fit the vector tables; text recall only"),
        None => {}
    }
    if wants("episodes") && !terms.is_empty() {
        fts_source(c, &terms, &mut pool)?;
    }
    if !terms.is_empty() {
        keyword_source(c, req.query, &terms, req.now, &wants, &mut pool)?;
    }
    let mut hits: Vec<Hit> = pool.items.into_iter().map(|cand| score(cand, &terms, req.now)).collect();
    hits.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(b.confidence.total_cmp(&a.confidence))
            .then(layer_rank(a.layer).cmp(&layer_rank(b.layer)))
            .then(b.at.cmp(&a.at))
    });
    hits.truncate(req.limit);
    Ok(hits)
}

fn vector_source(
    c: &Connection,
    embedding: &[f32],
    wants: &dyn Fn(&str) -> bool,
    pool: &mut Pool,
) -> Result<(), StoreError> {
    let tables: [(VecTable, &'static str, &'static str, &str); 3] = [
        (
            VecTable::Episodes,
            "episode",
            "episodes",
            "SELECT id, gist, created_at, reliability, salience / 10.0 FROM episodes
             WHERE id = ?1 AND deleted_at IS NULL",
        ),
        (
            VecTable::Concepts,
            "concept",
            "concepts",
            "SELECT id, name || ': ' || definition, updated_at, reliability,
                    (MIN(strength, 10.0) / 10.0 + confidence) / 2.0
             FROM semantic_concepts WHERE id = ?1 AND deleted_at IS NULL",
        ),
        (
            VecTable::Traits,
            "trait",
            "traits",
            "SELECT id, trait_key || ': ' || trait_value, updated_at, reliability, confidence
             FROM user_traits WHERE id = ?1",
        ),
    ];
    let repo = VectorRepo(c);
    let mut found: Vec<(f32, &'static str, Row)> = Vec::new();
    for (table, layer, filter, sql) in tables {
        if !wants(filter) {
            continue;
        }
        let mut stmt = c.prepare_cached(sql)?;
        for (id, distance) in repo.knn(table, embedding, KNN_K)? {
            let mut rows = stmt.query_map(params![id], read_row)?;
            if let Some(row) = rows.next().transpose()? {
                found.push((distance, layer, row));
            }
        }
    }
    found.retain(|f| 1.0 - f64::from(f.0) >= MIN_SIMILARITY);
    found.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (i, (distance, layer, row)) in found.into_iter().enumerate() {
        let similarity = (1.0 - f64::from(distance)).clamp(0.0, 1.0);
        pool.add(layer, row, SourceRank { source: "vector", rank: i + 1, value: similarity });
    }
    Ok(())
}

/// An FTS5 MATCH expression: each term a quoted prefix, joined by OR. Quoting strips every
/// operator a user could type.
fn fts_expression(terms: &[String]) -> String {
    terms.iter().map(|t| format!("\"{}\"*", t.replace('"', "\"\""))).collect::<Vec<_>>().join(" OR ")
}

fn fts_source(c: &Connection, terms: &[String], pool: &mut Pool) -> Result<(), StoreError> {
    let mut stmt = c.prepare_cached(
        "SELECT e.id, e.gist, e.created_at, e.reliability, e.salience / 10.0, bm25(episodes_fts)
         FROM episodes_fts JOIN episodes e ON e.id = episodes_fts.rowid
         WHERE episodes_fts MATCH ?1 AND e.deleted_at IS NULL AND e.reliability != 'superseded'
         ORDER BY bm25(episodes_fts) LIMIT ?2",
    )?;
    let rows = stmt
        .query_map(params![fts_expression(terms), SOURCE_LIMIT as i64], |r| Ok((read_row(r)?, r.get::<_, f64>(5)?)))?;
    for (i, row) in rows.enumerate() {
        let (row, bm25) = row?;
        pool.add("episode", row, SourceRank { source: "fts", rank: i + 1, value: bm25 });
    }
    Ok(())
}

fn keyword_source(
    c: &Connection,
    query: &str,
    terms: &[String],
    now: i64,
    wants: &dyn Fn(&str) -> bool,
    pool: &mut Pool,
) -> Result<(), StoreError> {
    // (layer, filter name, SQL): ?1 is a LIKE pattern, ?2 the clock.
    let layers: [(&'static str, &str, &str); 5] = [
        (
            "trait",
            "traits",
            "SELECT id, trait_key || ': ' || trait_value, updated_at, reliability, confidence FROM user_traits
             WHERE (trait_value LIKE ?1 OR trait_key LIKE ?1) AND reliability != 'superseded' AND ?2 IS NOT NULL
             LIMIT 50",
        ),
        (
            "fact",
            "facts",
            "SELECT id, key || ': ' || value, updated_at, 'reliable', confidence FROM facts
             WHERE (value LIKE ?1 OR key LIKE ?1) AND expires_at > ?2 LIMIT 50",
        ),
        (
            "gist",
            "gists",
            "SELECT id, content, created_at, 'reliable', confidence / 10.0 FROM gists
             WHERE content LIKE ?1 AND expires_at > ?2 AND is_cold_start = 0 LIMIT 50",
        ),
        (
            "concept",
            "concepts",
            "SELECT id, name || ': ' || definition, updated_at, reliability,
                    (MIN(strength, 10.0) / 10.0 + confidence) / 2.0 FROM semantic_concepts
             WHERE (name LIKE ?1 OR definition LIKE ?1) AND deleted_at IS NULL AND ?2 IS NOT NULL LIMIT 50",
        ),
        (
            "chat",
            "chat",
            "SELECT id, content, created_at, 'reliable', 0.5 FROM chat_history
             WHERE role = 'user' AND content LIKE ?1 AND ?2 IS NOT NULL ORDER BY id DESC LIMIT 50",
        ),
    ];
    let lower_query = normalize(query);
    let patterns: Vec<String> = terms.iter().map(|t| format!("%{t}%")).collect();
    let mut found: Vec<(&'static str, Row)> = Vec::new();
    for (layer, filter, sql) in layers {
        if !wants(filter) {
            continue;
        }
        let mut stmt = c.prepare_cached(sql)?;
        for pat in &patterns {
            for row in stmt.query_map(params![pat, now], read_row)? {
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

/// The share of `terms` that occur in `text` (substring, case-insensitive).
fn term_share(text: &str, terms: &[String]) -> f64 {
    if terms.is_empty() {
        return 0.0;
    }
    let t = normalize(text);
    terms.iter().filter(|w| t.contains(w.as_str())).count() as f64 / terms.len() as f64
}

fn score(c: Candidate, terms: &[String], now: i64) -> Hit {
    let rrf: f64 = c.sources.iter().map(|s| 1.0 / (RRF_K + s.rank as f64)).sum();
    let normalized = normalize(&c.text);
    let matched: Vec<&str> = terms.iter().filter(|w| normalized.contains(w.as_str())).map(String::as_str).collect();
    let share = if terms.is_empty() { 0.0 } else { matched.len() as f64 / terms.len() as f64 };
    let confidence = share.max(c.similarity);
    let parts = ScoreParts {
        rrf,
        type_weight: type_weight(c.layer),
        matched: confidence,
        importance: c.importance,
        recency: recency(c.at, now),
        reliability: reliability_multiplier(&c.reliability).unwrap_or(0.0),
    };
    let score = parts.rrf
        * parts.type_weight
        * (0.5 + 0.5 * parts.matched)
        * (0.5 + 0.5 * parts.importance)
        * (0.5 + 0.5 * parts.recency)
        * parts.reliability;
    let mut why: Vec<String> = c
        .sources
        .iter()
        .map(|s| match s.source {
            "vector" => format!("vector #{} (cos {:.2})", s.rank, s.value),
            "fts" => format!("fts #{} (bm25 {:.2})", s.rank, s.value),
            _ => format!("keyword #{}", s.rank),
        })
        .collect();
    if !matched.is_empty() {
        why.push(format!("matches {}", matched.join(", ")));
    }
    let why = format!(
        "{}; score {:.4} = rrf {:.4} × type {:.2} × match {:.2} × importance {:.2} × recency {:.2} × reliability {:.1}",
        why.join(", "),
        score,
        parts.rrf,
        parts.type_weight,
        parts.matched,
        parts.importance,
        parts.recency,
        parts.reliability
    );
    Hit {
        layer: c.layer,
        id: c.id,
        text: c.text,
        at: c.at,
        confidence,
        why,
        reliability: c.reliability,
        sources: c.sources,
        score,
        parts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SplitMix64;
    use crate::store::open_in_memory;

    const DAY: i64 = 86_400;
    const NOW: i64 = 1_800_000_000;

    fn random_unit(rng: &mut SplitMix64) -> Vec<f32> {
        let v: Vec<f32> = (0..EMBEDDING_DIM).map(|_| rng.next_f64() as f32 * 2.0 - 1.0).collect();
        unit(v)
    }

    fn unit(v: Vec<f32>) -> Vec<f32> {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(f32::EPSILON);
        v.into_iter().map(|x| x / n).collect()
    }

    /// `base` nudged by noise of size `eps`: a near neighbour.
    fn near(base: &[f32], rng: &mut SplitMix64, eps: f32) -> Vec<f32> {
        unit(base.iter().map(|x| x + eps * (rng.next_f64() as f32 * 2.0 - 1.0)).collect())
    }

    fn episode(c: &Connection, gist: &str, salience: i64, at: i64, reliability: &str, v: Option<&[f32]>) -> i64 {
        c.execute(
            "INSERT INTO episodes (gist, salience, freshness, created_at, updated_at, reliability)
             VALUES (?1, ?2, ?2 / 10.0, ?3, ?3, ?4)",
            params![gist, salience, at, reliability],
        )
        .unwrap();
        let id = c.last_insert_rowid();
        if let Some(v) = v {
            VectorRepo(c).upsert(VecTable::Episodes, id, v).unwrap();
        }
        id
    }

    #[test]
    fn vector_neighbour_ranks_first_with_provenance() {
        let c = open_in_memory().unwrap();
        let mut rng = SplitMix64(7);
        let target = random_unit(&mut rng);
        let mut ids = Vec::new();
        for i in 0..40 {
            let v = random_unit(&mut rng);
            ids.push(episode(&c, &format!("unrelated note number {i}"), 5, NOW - DAY, "reliable", Some(&v)));
        }
        let wanted = episode(&c, "dinner with Ana on Friday", 5, NOW - DAY, "reliable", Some(&target));
        let query = near(&target, &mut rng, 0.05);
        let hits = hybrid_recall(&c, "what did we plan", Some(&query), 5, NOW).unwrap();
        assert_eq!(hits[0].layer, "episode");
        assert_eq!(hits[0].id, wanted, "{hits:#?}");
        assert_eq!(hits[0].sources[0].source, "vector");
        assert_eq!(hits[0].sources[0].rank, 1);
        assert!(hits[0].confidence > 0.8, "cosine of a near neighbour: {}", hits[0].confidence);
        assert!(hits[0].why.contains("vector #1"), "{}", hits[0].why);
        assert_eq!(hits[0].at, NOW - DAY);
        assert_eq!(hits.len(), 1, "random vectors are not matches (cosine < MIN_SIMILARITY): {hits:#?}");
        // A looser query keeps more neighbours, best first.
        let half: Vec<f32> = unit(target.iter().zip(&random_unit(&mut rng)).map(|(a, b)| a + 0.3 * b).collect());
        let more = hybrid_recall(&c, "what did we plan", Some(&half), 5, NOW).unwrap();
        assert_eq!(more[0].id, wanted);
        assert!(more.windows(2).all(|w| w[0].score >= w[1].score), "best first");
    }

    #[test]
    fn sources_fuse_and_agreement_wins() {
        let c = open_in_memory().unwrap();
        let mut rng = SplitMix64(11);
        let target = random_unit(&mut rng);
        // Only the vector source finds this one.
        let vec_only =
            episode(&c, "something about weekends", 5, NOW, "reliable", Some(&near(&target, &mut rng, 0.01)));
        // Both the vector and the full-text source find this one.
        let both = episode(&c, "the Porto trip itinerary", 5, NOW, "reliable", Some(&near(&target, &mut rng, 0.2)));
        // Only full text.
        let fts_only = episode(&c, "Porto restaurants list", 5, NOW, "reliable", None);
        let hits = hybrid_recall(&c, "Porto trip", Some(&target), 10, NOW).unwrap();
        let pos = |id: i64| hits.iter().position(|h| h.id == id).unwrap();
        assert_eq!(pos(both), 0, "found by two sources: {hits:#?}");
        assert!(pos(vec_only) < hits.len() && pos(fts_only) < hits.len());
        let h = &hits[0];
        let names: Vec<&str> = h.sources.iter().map(|s| s.source).collect();
        assert!(names.contains(&"vector") && names.contains(&"fts"), "{names:?}");
        assert!(h.why.contains("matches porto, trip"), "{}", h.why);
        let expected = h.sources.iter().map(|s| 1.0 / (RRF_K + s.rank as f64)).sum::<f64>();
        assert!((h.parts.rrf - expected).abs() < 1e-12);
    }

    #[test]
    fn reliability_recency_and_salience_rerank() {
        let c = open_in_memory().unwrap();
        let same = |gist: &str, sal: i64, at: i64, rel: &str| episode(&c, gist, sal, at, rel, None);
        let fresh = same("budget review meeting", 5, NOW, "reliable");
        let old = same("budget review meeting", 5, NOW - 60 * DAY, "reliable");
        let doubted = same("budget review meeting", 5, NOW, "contradicted");
        let gone = same("budget review meeting", 5, NOW, "superseded");
        let salient = same("budget review meeting", 10, NOW, "reliable");
        let hits = hybrid_recall(&c, "budget review", None, 10, NOW).unwrap();
        let ids: Vec<i64> = hits.iter().map(|h| h.id).collect();
        assert!(!ids.contains(&gone), "superseded is excluded: {ids:?}");
        let score = |id: i64| hits.iter().find(|h| h.id == id).unwrap();
        // Equal text: fts ranks tie on bm25, so compare the multipliers, not the order alone.
        assert!((score(old).parts.recency - 0.25).abs() < 1e-9, "two half-lives");
        assert_eq!(score(doubted).parts.reliability, 0.4);
        assert_eq!(score(fresh).parts.reliability, 1.0);
        assert!((score(salient).parts.importance - 1.0).abs() < 1e-9);
        assert_eq!(ids[0], salient, "{hits:#?}");
        assert_eq!(*ids.last().unwrap(), doubted, "{hits:#?}");
        assert!(score(fresh).score > score(old).score);
    }

    #[test]
    fn layers_and_keyword_source() {
        let c = open_in_memory().unwrap();
        c.execute(
            "INSERT INTO facts (topic, key, value, confidence, created_at, updated_at, expires_at)
             VALUES ('t', 'sister_city', 'my sister lives in Porto', 0.9, ?1, ?1, ?2)",
            params![NOW, NOW + DAY],
        )
        .unwrap();
        c.execute(
            "INSERT INTO user_traits (trait_key, trait_value, confidence, created_at, updated_at, reliability)
             VALUES ('sister', 'lives in Porto', 0.8, ?1, ?1, 'superseded')",
            params![NOW],
        )
        .unwrap();
        let mut rng = SplitMix64(3);
        let tv = random_unit(&mut rng);
        c.execute(
            "INSERT INTO semantic_concepts (name, definition, created_at, updated_at) VALUES ('rust', 'a language', ?1, ?1)",
            params![NOW],
        )
        .unwrap();
        VectorRepo(&c).upsert(VecTable::Concepts, c.last_insert_rowid(), &tv).unwrap();
        let hits = hybrid_recall(&c, "sister Porto", Some(&tv), 10, NOW).unwrap();
        assert!(hits.iter().all(|h| h.layer != "trait"), "superseded trait excluded: {hits:#?}");
        assert!(hits.iter().any(|h| h.layer == "fact" && h.sources[0].source == "keyword"));
        assert!(hits.iter().any(|h| h.layer == "concept" && h.sources[0].source == "vector"));
        let only: Vec<String> = vec!["facts".into()];
        let req = RecallRequest { query: "sister Porto", embedding: Some(&tv), layers: &only, limit: 10, now: NOW };
        let hits = recall_with(&c, &req).unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].layer, "fact");
        assert_eq!(hits[0].confidence, 1.0);
        // An embedding of the wrong size degrades to text recall instead of failing.
        let hits = hybrid_recall(&c, "sister Porto", Some(&[0.5; 8]), 10, NOW).unwrap();
        assert!(hits.iter().all(|h| h.sources.iter().all(|s| s.source != "vector")), "{hits:#?}");
        assert!(!hits.is_empty());
        // Expired facts are not recalled.
        assert!(hybrid_recall(&c, "sister Porto", None, 10, NOW + 2 * DAY).unwrap().is_empty());
    }

    #[test]
    fn fts_strips_operators() {
        let c = open_in_memory().unwrap();
        episode(&c, "notes on \"quoted\" NEAR things", 5, NOW, "reliable", None);
        for q in ["NEAR( AND OR", "\"quoted\" -things*", "col:things ^notes"] {
            let hits = hybrid_recall(&c, q, None, 5, NOW).unwrap();
            assert!(!hits.is_empty(), "{q}");
        }
        assert!(hybrid_recall(&c, "the a", None, 5, NOW).unwrap().is_empty(), "no content words: no hits");
    }

    #[test]
    fn recency_halves_every_thirty_days() {
        assert_eq!(recency(NOW, NOW), 1.0);
        assert!((recency(NOW - 30 * DAY, NOW) - 0.5).abs() < 1e-12);
        assert_eq!(recency(NOW + DAY, NOW), 1.0);
        assert_eq!(reliability_multiplier("superseded"), None);
    }
}
