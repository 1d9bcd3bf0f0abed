//! Hybrid recall: every durable and short-lived layer, found three ways and fused.
//!
//! Stage 1 gathers candidates from independent sources, each ranked on its own:
//! - `vector`: k-nearest neighbours (k = [`KNN_K`]) of the query embedding over `episode_vec`,
//!   `concept_vec` and `trait_vec` (`VectorRepo::search`: a binary-code prefilter over the
//!   lists a coarse quantiser picks, with exact cosine re-scoring, measured against the exact
//!   brute force in `benches/recall.rs` and `benches/recall_1m.rs`), merged into one list by
//!   cosine distance (only when the
//!   caller has a 384-d embedding; skills run on the database thread and have none),
//!   neighbours below [`MIN_SIMILARITY`] dropped;
//! - `fts`: FTS5 over `episodes_fts` (gist, action), each content word and its plural as a
//!   quoted term joined by OR (operators stripped), the rarest terms only once their rows pass
//!   [`FTS_ROW_BUDGET`], ranked by bm25 (by recency when even the rarest is over budget);
//! - `keyword`: the substring search over traits, facts, gists, concepts and the user's chat
//!   lines that the `recall` skill has always done, ranked by the share of query words matched;
//!   trigram indexes (migration 0002) narrow each LIKE to the rows that can match.
//!
//! Stage 2 fuses them by reciprocal-rank fusion, `rrf = Σ_sources 1 / (RRF_K + rank)`
//! (docs/cognition.md §9.8: k = 60), then re-ranks with multipliers, each in (0, 1]:
//!
//! ```text
//! score = rrf × type_weight × (0.5 + 0.5·match) × (0.5 + 0.5·importance)
//!             × (0.5 + 0.5·recency) × reliability
//! match       = the hit's confidence: max(share of query words it contains, cosine similarity)
//! recency     = 0.5 ^ (age_days / RECENCY_HALF_LIFE_DAYS)          (half-life 30 days)
//! importance  = episode salience/10; trait and fact confidence; gist confidence/10;
//!               concept (min(strength,10)/10 + confidence)/2; chat 0.5
//! type_weight = trait 0.95, fact 0.90, gist 0.80, episode 0.70, concept 0.60, chat 0.50 (docs/cognition.md §4.3)
//! reliability = reliable 1.0, uncertain 0.6, contradicted 0.4 (docs/cognition.md §4.3, floor 0.3); superseded excluded
//! ```
//!
//! RRF alone rewards agreement between sources but barely separates rank 1 from rank 3 of
//! one source (1/61 vs 1/63) however different their similarity; the match factor restores
//! that. The halving floors (0.5 + 0.5·x) keep an old or weak memory findable: they reorder,
//! they never erase a match. Every [`Hit`] carries its provenance: the layer and row id, when it
//! was written, the sources that found it with their ranks, and the score parts.

use crate::store::{RecallRepo, RecallRow, StartedSearch, StoreError, VecTable, VectorRepo, embedding_dim};
use crate::text::{is_content_word, normalize, words};
use rusqlite::Connection;
use serde::Serialize;
use std::collections::HashMap;

/// Reciprocal-rank fusion constant (docs/cognition.md §9.8).
pub const RRF_K: f64 = 60.0;
/// Neighbours taken from each vector table.
pub const KNN_K: usize = 50;
/// Neighbours less similar than this (cosine) are not matches: kNN always returns k rows,
/// however unrelated, and RRF would credit the 50th as much as a close one. all-MiniLM-L6-v2
/// puts unrelated sentences near 0.04 and paraphrases near 0.64 (docs/cognition.md §9.8).
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

/// The reliability multiplier: the assembly factor of docs/cognition.md §4.3 with its 0.3
/// floor, so an important contradicted memory still surfaces (flagged by its caller).
/// `None` for superseded rows, which recall excludes: they were true only in the past, and
/// answering from them in the present tense is the mistake reliability exists to prevent.
pub fn reliability_multiplier(state: &str) -> Option<f64> {
    let factor = match state {
        "reliable" => 1.0,
        "uncertain" => 0.6,
        "contradicted" => 0.4,
        "superseded" => return None,
        // An unknown state is treated as unconfirmed.
        _ => 0.6,
    };
    Some(f64::max(ASSEMBLY_RELIABILITY_FLOOR, factor))
}

/// docs/cognition.md §4.3: `max(0.3, reliability_factor)`.
pub const ASSEMBLY_RELIABILITY_FLOOR: f64 = 0.3;

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

fn row_of(r: RecallRow) -> Row {
    (r.id, r.text, r.at, r.reliability, r.importance)
}

/// Candidates keyed by (layer, id), in first-seen order.
#[derive(Default)]
struct Pool {
    items: Vec<Candidate>,
    index: HashMap<(&'static str, i64), usize>,
}

impl Pool {
    fn add(&mut self, layer: &'static str, row: Row, source: SourceRank) {
        if let Some(i) = self.entry(layer, row) {
            self.source_of(i, source);
        }
    }

    /// The candidate's place in the pool, added if new; `None` for a row recall never returns
    /// (a superseded one).
    fn entry(&mut self, layer: &'static str, row: Row) -> Option<usize> {
        let (id, text, at, reliability, importance) = row;
        reliability_multiplier(&reliability)?;
        Some(*self.index.entry((layer, id)).or_insert_with(|| {
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
        }))
    }

    fn source_of(&mut self, i: usize, source: SourceRank) {
        let c = &mut self.items[i];
        if source.source == "vector" {
            c.similarity = c.similarity.max(source.value);
        }
        if !c.sources.iter().any(|s| s.source == source.source) {
            c.sources.push(source);
        }
    }

    /// Add every candidate of `other`, in its order, with each of its sources: the pool ends
    /// as if `other`'s sources had added their rows here after this pool's.
    fn absorb(&mut self, other: Pool) {
        for c in other.items {
            let Some(i) = self.entry(c.layer, (c.id, c.text, c.at, c.reliability, c.importance)) else { continue };
            for source in c.sources {
                self.source_of(i, source);
            }
        }
    }
}

/// [`hybrid_recall`] with a layer filter.
pub fn recall_with(c: &Connection, req: &RecallRequest<'_>) -> Result<Vec<Hit>, StoreError> {
    start(c, req)?.finish(c)
}

/// A recall whose vector search is running on the vector search thread: the caller's
/// thread is free for other reads (the turn decides its topic meanwhile) until
/// [`StartedRecall::finish`], which reads the text sources while the search runs, then fuses.
pub struct StartedRecall<'a> {
    req: RecallRequest<'a>,
    /// The tables searched and their layers, with the search.
    vector: Option<(Vec<(VecTable, &'static str)>, StartedSearch)>,
}

/// The vector tables recall searches, with each one's layer and its name in a layer filter.
const VECTOR_TABLES: [(VecTable, &str, &str); 3] = [
    (VecTable::Episodes, "episode", "episodes"),
    (VecTable::Concepts, "concept", "concepts"),
    (VecTable::Traits, "trait", "traits"),
];

/// Begin [`recall_with`]: catch the wanted vector tables up with this connection's view and
/// hand their search to the vector search thread.
pub fn start<'a>(c: &Connection, req: &RecallRequest<'a>) -> Result<StartedRecall<'a>, StoreError> {
    let vector = match req.embedding {
        Some(e) if e.len() == embedding_dim(c)? => {
            let tables: Vec<(VecTable, &'static str)> = VECTOR_TABLES
                .iter()
                .filter(|(_, _, filter)| layer_wanted(req.layers, filter))
                .map(|&(table, layer, _)| (table, layer))
                .collect();
            let names: Vec<VecTable> = tables.iter().map(|t| t.0).collect();
            let search = VectorRepo(c).start_search(&names, e, KNN_K)?;
            Some((tables, search))
        }
        Some(e) => {
            tracing::warn!(dims = e.len(), "query embedding does not fit the vector tables; text recall only");
            None
        }
        None => None,
    };
    Ok(StartedRecall { req: *req, vector })
}

/// Whether a layer filter (`LAYERS` names; empty means all) takes layer `name`.
fn layer_wanted(layers: &[String], name: &str) -> bool {
    layers.is_empty() || layers.iter().any(|x| x == name)
}

impl StartedRecall<'_> {
    /// The text sources (while the vector search runs), then the vector source's rows, fused
    /// and ranked: [`recall_with`]'s answer.
    pub fn finish(self, c: &Connection) -> Result<Vec<Hit>, StoreError> {
        let req = self.req;
        let wants = |l: &str| layer_wanted(req.layers, l);
        let terms = query_terms(req.query);
        let mut pool = Pool::default();
        // The hundred or so reads share one snapshot. The vector source's candidates go into the
        // pool first, as they always have: the text sources' are gathered apart and added after.
        crate::store::in_read(c, || {
            let mut text = Pool::default();
            if wants("episodes") && !terms.is_empty() {
                fts_source(c, &terms, &mut text)?;
            }
            if !terms.is_empty() {
                keyword_source(c, req.query, &terms, req.now, &wants, &mut text)?;
            }
            if let Some((tables, search)) = self.vector {
                vector_rows(c, near(tables, search.finish(c)?), &mut pool)?;
            }
            pool.absorb(text);
            Ok(())
        })?;
        let mut scored: Vec<Scored> = pool.items.into_iter().map(|cand| score(cand, &terms, req.now)).collect();
        scored.sort_by(Scored::order);
        scored.truncate(req.limit);
        Ok(scored.into_iter().map(|s| s.into_hit(&terms)).collect())
    }
}

/// The vector source's neighbours, table by table: `(table, layer, id, distance)`.
type Near = Vec<(VecTable, &'static str, i64, f32)>;

/// The vector source's first half: each searched table's nearest neighbours, too far ones
/// dropped before their rows are read.
fn near(tables: Vec<(VecTable, &'static str)>, found: Vec<Vec<(i64, f32)>>) -> Near {
    let mut near = Vec::new();
    for ((table, layer), found) in tables.into_iter().zip(found) {
        for (id, distance) in found {
            if 1.0 - f64::from(distance) >= MIN_SIMILARITY {
                near.push((table, layer, id, distance));
            }
        }
    }
    near
}

/// The vector source's second half: the live rows of the neighbours, ranked by distance.
fn vector_rows(c: &Connection, near: Near, pool: &mut Pool) -> Result<(), StoreError> {
    let repo = RecallRepo(c);
    let mut found: Vec<(f32, &'static str, Row)> = Vec::new();
    // `near` comes table by table: each table's live rows in one read.
    for group in near.chunk_by(|a, b| a.0 == b.0) {
        let ids: Vec<i64> = group.iter().map(|n| n.2).collect();
        let mut rows = repo.embedded(group[0].0, &ids)?;
        for &(_, layer, id, distance) in group {
            if let Some(row) = rows.remove(&id) {
                found.push((distance, layer, row_of(row)));
            }
        }
    }
    found.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (i, (distance, layer, row)) in found.into_iter().enumerate() {
        let similarity = (1.0 - f64::from(distance)).clamp(0.0, 1.0);
        pool.add(layer, row, SourceRank { source: "vector", rank: i + 1, value: similarity });
    }
    Ok(())
}

/// A candidate with its score, its `why` not written yet: only the hits kept are described.
struct Scored {
    c: Candidate,
    confidence: f64,
    score: f64,
    parts: ScoreParts,
    /// The query's terms the text contains, by index.
    matched: Vec<usize>,
}

fn score(c: Candidate, terms: &[String], now: i64) -> Scored {
    let rrf: f64 = c.sources.iter().map(|s| 1.0 / (RRF_K + s.rank as f64)).sum();
    let normalized = normalize(&c.text);
    let matched: Vec<usize> = (0..terms.len()).filter(|&i| normalized.contains(terms[i].as_str())).collect();
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
    Scored { c, confidence, score, parts, matched }
}

impl Scored {
    /// Best first: score, then confidence, then the layer's rank, then the newest.
    fn order(&self, other: &Scored) -> std::cmp::Ordering {
        other
            .score
            .total_cmp(&self.score)
            .then(other.confidence.total_cmp(&self.confidence))
            .then(layer_rank(self.c.layer).cmp(&layer_rank(other.c.layer)))
            .then(other.c.at.cmp(&self.c.at))
    }

    /// The hit, with why it ranked in words.
    fn into_hit(self, terms: &[String]) -> Hit {
        let Scored { c, confidence, score, parts, matched } = self;
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
            let words: Vec<&str> = matched.iter().map(|&i| terms[i].as_str()).collect();
            why.push(format!("matches {}", words.join(", ")));
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
}

mod text;

pub use text::FTS_ROW_BUDGET;
use text::{fts_source, keyword_source};

#[cfg(test)]
mod tests;
