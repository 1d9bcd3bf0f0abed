//! Tests of hybrid recall: fusion, re-ranking, layers, and the indexes behind the sources.

use super::*;
use crate::SplitMix64;
use crate::store::fixtures::Fixture;
use crate::store::{EMBEDDING_DIM, KeywordLayer, TRIGRAM, open_in_memory};

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
    let freshness = salience as f64 / 10.0;
    let id = Fixture(c).insert(
        "episodes",
        &[
            ("gist", &gist),
            ("salience", &salience),
            ("freshness", &freshness),
            ("created_at", &at),
            ("updated_at", &at),
            ("reliability", &reliability),
        ],
    );
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
    let vec_only = episode(&c, "something about weekends", 5, NOW, "reliable", Some(&near(&target, &mut rng, 0.01)));
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
    crate::store::FactsRepo(&c)
        .upsert(
            "t",
            "sister_city",
            "my sister lives in Porto",
            0.9,
            NOW,
            NOW + DAY,
            crate::store::FactOrigin::Conversation,
        )
        .unwrap();
    let f = Fixture(&c);
    f.insert(
        "user_traits",
        &[
            ("trait_key", &"sister"),
            ("trait_value", &"lives in Porto"),
            ("confidence", &0.8),
            ("created_at", &NOW),
            ("updated_at", &NOW),
            ("reliability", &"superseded"),
        ],
    );
    let mut rng = SplitMix64(3);
    let tv = random_unit(&mut rng);
    let rust = f.insert(
        "semantic_concepts",
        &[("name", &"rust"), ("definition", &"a language"), ("created_at", &NOW), ("updated_at", &NOW)],
    );
    VectorRepo(&c).upsert(VecTable::Concepts, rust, &tv).unwrap();
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
fn a_word_commoner_than_the_budget_still_finds_its_newest_episodes() {
    let c = open_in_memory().unwrap();
    let n = FTS_ROW_BUDGET as usize + 20;
    let ids: Vec<i64> =
        (0..n).map(|i| episode(&c, &format!("walked the dog, note {i}"), 5, NOW, "reliable", None)).collect();
    let trip = episode(&c, "booked the trips to Porto", 5, NOW - DAY, "reliable", None);
    // "dog" is in more episodes than the budget ranks, and "dogs" in none: the zero-row plural
    // must not take the place of the word that matches.
    let hits = hybrid_recall(&c, "dog", None, 10, NOW).unwrap();
    assert_eq!(hits.len(), 10, "{hits:#?}");
    let newest = &ids[n - SOURCE_LIMIT..];
    for h in &hits {
        assert_eq!(h.sources[0].source, "fts");
        assert!(newest.contains(&h.id), "{} is not among the newest matches", h.id);
    }
    // A word within budget is ranked by bm25, and finds its plural.
    let hits = hybrid_recall(&c, "trip", None, 10, NOW).unwrap();
    assert_eq!(hits.iter().map(|h| h.id).collect::<Vec<_>>(), [trip]);
}

/// Every keyword layer returns the same rows through its trigram index as by scanning,
/// after inserts, updates and deletes, and in a database migrated from version 1.
#[test]
fn trigram_narrowing_finds_what_the_scan_finds() {
    const WORDS: [&str; 10] = ["Porto", "portal", "budget", "Café", "ÉCOLE", "trip", "Tripod", "naïve", "x1", "ok"];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    let mut rng = SplitMix64(31);
    let mut phrase = |n: usize| (0..n).map(|_| WORDS[rng.below(WORDS.len())]).collect::<Vec<_>>().join(" ");
    let fill = |c: &Connection, phrase: &mut dyn FnMut(usize) -> String, from: usize| {
        let f = Fixture(c);
        if f.count("threads", "id = 't'", []) == 0 {
            f.insert("threads", &[("id", &"t"), ("created_at", &0), ("last_active_at", &0)]);
        }
        for i in from..from + 60 {
            let role = if i % 3 == 0 { "assistant" } else { "user" };
            let columns: [(&str, &dyn rusqlite::ToSql); 5] = [
                ("thread_id", &"t"),
                ("exchange_id", &"x"),
                ("role", &role),
                ("content", &phrase(4)),
                ("created_at", &NOW),
            ];
            f.insert("chat_history", &columns);
            let (name, definition) = (format!("{} {i}", phrase(1)), phrase(5));
            f.insert(
                "semantic_concepts",
                &[("name", &name), ("definition", &definition), ("created_at", &NOW), ("updated_at", &NOW)],
            );
            let (key, value) = (format!("k{i}_{}", phrase(1)), phrase(4));
            f.insert(
                "facts",
                &[
                    ("topic", &"t"),
                    ("key", &key),
                    ("value", &value),
                    ("confidence", &0.8),
                    ("created_at", &NOW),
                    ("updated_at", &NOW),
                    ("expires_at", &(NOW + DAY)),
                ],
            );
            let content = phrase(6);
            f.insert(
                "gists",
                &[
                    ("topic", &"t"),
                    ("gist_type", &"fact"),
                    ("content", &content),
                    ("confidence", &7),
                    ("created_at", &NOW),
                    ("expires_at", &(NOW + DAY)),
                ],
            );
            let (key, value) = (format!("t{i}"), phrase(3));
            f.insert(
                "user_traits",
                &[("trait_key", &key), ("trait_value", &value), ("created_at", &NOW), ("updated_at", &NOW)],
            );
        }
    };
    {
        // A version-1 database with rows written before the indexes existed (opening an
        // in-memory store first registers sqlite-vec for this connection too).
        crate::store::open_in_memory().unwrap();
        let c = Connection::open(&path).unwrap();
        c.execute_batch(crate::store::MIGRATIONS[0].sql).unwrap();
        c.pragma_update(None, "user_version", 1).unwrap();
        fill(&c, &mut phrase, 0);
    }
    let c = crate::store::open(&path).unwrap();
    fill(&c, &mut phrase, 60);
    let f = Fixture(&c);
    f.set("semantic_concepts", "definition = 'now about budget Porto'", "id % 7 = 0", []);
    f.remove("semantic_concepts", "id % 11 = 0", []);
    f.set("chat_history", "role = 'assistant'", "id % 5 = 0", []);
    f.set("chat_history", "role = 'user', content = 'a naïve trip'", "id % 6 = 0", []);
    f.remove("chat_history", "id % 13 = 0", []);
    f.set("facts", "value = 'the école'", "id % 4 = 0", []);
    f.remove("gists", "id % 3 = 0", []);
    f.set("user_traits", "trait_key = 'portable' || id", "id % 9 = 0", []);
    let mut checked = 0;
    for term in ["porto", "port", "budget", "café", "école", "trip", "naïve", "k1", "able"] {
        for layer in KeywordLayer::ALL {
            let run = |indexed: bool| -> Vec<i64> {
                let rows = crate::store::RecallRepo(&c).keyword(layer, term, NOW, indexed).unwrap();
                let mut ids: Vec<i64> = rows.into_iter().map(|r| r.id).collect();
                ids.sort_unstable();
                ids
            };
            let scanned = run(false);
            if term.chars().count() >= TRIGRAM {
                assert_eq!(run(true), scanned, "{} / {term}", layer.layer());
            }
            checked += scanned.len();
        }
    }
    assert!(checked > 300, "the corpus has matches to compare: {checked}");
}

#[test]
fn recency_halves_every_thirty_days() {
    assert_eq!(recency(NOW, NOW), 1.0);
    assert!((recency(NOW - 30 * DAY, NOW) - 0.5).abs() < 1e-12);
    assert_eq!(recency(NOW + DAY, NOW), 1.0);
    assert_eq!(reliability_multiplier("superseded"), None);
    assert_eq!(reliability_multiplier("uncertain"), Some(0.6));
    assert_eq!(reliability_multiplier("contradicted"), Some(0.4));
    assert_eq!(reliability_multiplier("reliable"), Some(1.0));
}

#[test]
fn a_common_words_newest_matches_skip_deleted_and_superseded_episodes() {
    let c = open_in_memory().unwrap();
    let n = FTS_ROW_BUDGET as usize + 100;
    let dead = 70;
    let ids: Vec<i64> = (0..n)
        .map(|i| {
            let reliability = if i >= n - dead && i % 2 == 0 { "superseded" } else { "reliable" };
            episode(&c, &format!("walked the dog, note {i}"), 5, NOW, reliability, None)
        })
        .collect();
    for (i, id) in ids.iter().enumerate().skip(n - dead).filter(|(i, _)| i % 2 == 1) {
        Fixture(&c).set("episodes", "deleted_at = ?2", "id = ?1", rusqlite::params![id, NOW - i as i64]);
    }
    // The newest matches are all gone: the walk goes on past them to the newest live ones.
    let hits = hybrid_recall(&c, "dog", None, SOURCE_LIMIT, NOW).unwrap();
    assert_eq!(hits.len(), SOURCE_LIMIT, "{hits:#?}");
    let live = &ids[n - dead - SOURCE_LIMIT..n - dead];
    for h in &hits {
        assert_eq!(h.sources[0].source, "fts");
        assert!(live.contains(&h.id), "{} is not among the newest live matches", h.id);
    }
}

/// The vector source reads each table's neighbours in one statement: a deleted episode and a
/// concept on probation near the query still never come back, and the live neighbours of both
/// tables are ranked together by distance, nearest first.
#[test]
fn the_vector_sources_rows_skip_deleted_episodes_and_concepts_on_probation() {
    let c = open_in_memory().unwrap();
    let mut rng = SplitMix64(11);
    let target = random_unit(&mut rng);
    let f = Fixture(&c);
    let mut episodes = Vec::new();
    for (i, eps) in [0.02f32, 0.04, 0.06].into_iter().enumerate() {
        let v = near(&target, &mut rng, eps);
        episodes.push(episode(&c, &format!("note {i}"), 5, NOW - DAY, "reliable", Some(&v)));
    }
    f.set("episodes", "deleted_at = ?1", "id = ?2", rusqlite::params![NOW, episodes[0]]);
    let mut concepts = Vec::new();
    for (i, eps) in [0.03f32, 0.05].into_iter().enumerate() {
        let name = format!("idea {i}");
        let id = f.insert(
            "semantic_concepts",
            &[("name", &name), ("definition", &"a thought"), ("created_at", &NOW), ("updated_at", &NOW)],
        );
        VectorRepo(&c).upsert(VecTable::Concepts, id, &near(&target, &mut rng, eps)).unwrap();
        concepts.push(id);
    }
    f.set("semantic_concepts", "probation = 1", "id = ?1", [concepts[0]]);
    let hits = hybrid_recall(&c, "zzz", Some(&target), 10, NOW).unwrap();
    let found: Vec<(&str, i64)> = hits.iter().map(|h| (h.layer, h.id)).collect();
    assert_eq!(found.len(), 3, "{hits:#?}");
    assert!(!found.contains(&("episode", episodes[0])) && !found.contains(&("concept", concepts[0])), "{found:?}");
    let ranks: Vec<usize> = hits.iter().map(|h| h.sources[0].rank).collect();
    let mut by_rank = hits.clone();
    by_rank.sort_by_key(|h| h.sources[0].rank);
    assert_eq!(ranks.iter().copied().collect::<std::collections::BTreeSet<_>>(), [1, 2, 3].into(), "{hits:#?}");
    assert!(
        by_rank.windows(2).all(|w| w[0].parts.matched >= w[1].parts.matched),
        "ranked by cosine, nearest first: {by_rank:#?}"
    );
}
