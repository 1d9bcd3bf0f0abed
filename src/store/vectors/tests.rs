use super::*;
use crate::SplitMix64;
use crate::store::{MIGRATIONS, open, open_in_memory};

fn unit(v: Vec<f32>) -> Vec<f32> {
    let n = norm(&v).max(f32::EPSILON);
    v.into_iter().map(|x| x / n).collect()
}

fn noise(rng: &mut SplitMix64, scale: f32) -> Vec<f32> {
    (0..EMBEDDING_DIM).map(|_| scale * (rng.next_f64() as f32 * 2.0 - 1.0)).collect()
}

fn add(a: &[f32], b: &[f32]) -> Vec<f32> {
    a.iter().zip(b).map(|(x, y)| x + y).collect()
}

/// Clustered unit vectors the way sentence embeddings cluster: topics, subtopics within
/// them, points around those (cosine to their subtopic ≈ 0.7, to another topic ≈ 0).
fn clustered(rng: &mut SplitMix64, topics: &[Vec<f32>]) -> Vec<f32> {
    let topic = &topics[rng.below(topics.len())];
    let sub = add(topic, &noise(rng, 0.05));
    unit(add(&unit(sub), &noise(rng, 0.04)))
}

/// f32 little-endian bytes: what the schema before migration 0016 stored.
fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn ids(v: &[(i64, f32)]) -> Vec<i64> {
    v.iter().map(|x| x.0).collect()
}

#[test]
fn prefilter_with_rescoring_recalls_the_exact_top_10() {
    let c = open_in_memory().unwrap();
    let repo = VectorRepo(&c);
    let mut rng = SplitMix64(2024);
    let topics: Vec<Vec<f32>> = (0..40).map(|_| unit(noise(&mut rng, 1.0))).collect();
    for id in 1..=6_000 {
        repo.upsert(VecTable::Episodes, id, &clustered(&mut rng, &topics)).unwrap();
    }
    let (mut found, mut total) = (0usize, 0usize);
    for _ in 0..40 {
        let q = clustered(&mut rng, &topics);
        let exact = ids(&repo.knn(VecTable::Episodes, &q, 10).unwrap());
        let fast = repo.search(VecTable::Episodes, &q, 10).unwrap();
        assert_eq!(fast.len(), 10);
        assert!(fast.windows(2).all(|w| w[0].1 <= w[1].1), "nearest first");
        found += fast.iter().filter(|f| exact.contains(&f.0)).count();
        total += exact.len();
    }
    let recall = found as f64 / total as f64;
    assert!(recall >= 0.95, "recall@10 = {recall:.3}");
    // Distances are cosine distances to the stored rows, as sqlite-vec computes them (it
    // compares a quantised query; the re-scoring keeps the query's f32 values).
    let q = clustered(&mut rng, &topics);
    let exact = repo.knn(VecTable::Episodes, &q, 1).unwrap();
    let fast = repo.search(VecTable::Episodes, &q, 1).unwrap();
    assert_eq!(exact[0].0, fast[0].0);
    assert!((exact[0].1 - fast[0].1).abs() < 2e-3, "{exact:?} vs {fast:?}");
}

#[test]
fn deletions_and_re_upserts_stay_consistent_across_connections() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v.db");
    let a = open(&path).unwrap();
    let b = open(&path).unwrap();
    let mut rng = SplitMix64(9);
    let vectors: Vec<Vec<f32>> = (0..300).map(|_| unit(noise(&mut rng, 1.0))).collect();
    for (i, v) in vectors.iter().enumerate() {
        VectorRepo(&a).upsert(VecTable::Concepts, i as i64 + 1, v).unwrap();
    }
    let target = &vectors[41];
    // 20 candidates of 300 rows: small enough that the code cache answers, not the exact fallback.
    let nearest = |c: &Connection| ids(&VectorRepo(c).search_with(VecTable::Concepts, target, 5, 20).unwrap());
    assert_eq!(nearest(&a)[0], 42, "warms a's cache");
    assert_eq!(nearest(&b)[0], 42);
    // Deleted through the other connection: never returned again.
    VectorRepo(&b).delete(VecTable::Concepts, 42).unwrap();
    assert!(!nearest(&a).contains(&42));
    assert!(!nearest(&b).contains(&42));
    // Re-upserted elsewhere: found where it now is.
    let elsewhere = unit(noise(&mut rng, 1.0));
    VectorRepo(&b).upsert(VecTable::Concepts, 42, &elsewhere).unwrap();
    assert_eq!(ids(&VectorRepo(&a).search_with(VecTable::Concepts, &elsewhere, 1, 20).unwrap()), [42]);
    assert!(!nearest(&a).contains(&42));
    // A write rolled back leaves nothing behind, whether searched inside the transaction or after.
    let tx = a.unchecked_transaction().unwrap();
    VectorRepo(&tx).upsert(VecTable::Concepts, 999, target).unwrap();
    assert_eq!(nearest(&tx)[0], 999, "the transaction sees its own write");
    tx.rollback().unwrap();
    assert!(!nearest(&a).contains(&999));
    assert!(!nearest(&b).contains(&999));
    // Deleting a row that has no vector is harmless.
    VectorRepo(&a).delete(VecTable::Concepts, 12_345).unwrap();
    assert_eq!(VectorRepo(&b).search(VecTable::Concepts, target, 400).unwrap().len(), 300);
    // Searching while the caller still reads another statement leaves that read intact.
    let expected = nearest(&a);
    let mut pending = a.prepare("SELECT id FROM vector_codes WHERE tbl = 1 ORDER BY id").unwrap();
    let mut rows = pending.query([]).unwrap();
    let mut seen = 0;
    while let Some(_row) = rows.next().unwrap() {
        assert_eq!(nearest(&a), expected, "search inside a read");
        seen += 1;
    }
    assert!(seen > 300, "every row read: {seen}");
    // Other tables are untouched.
    assert!(VectorRepo(&a).search(VecTable::Traits, target, 5).unwrap().is_empty());
}

#[test]
fn a_version_1_database_gets_its_codes_backfilled() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    let mut rng = SplitMix64(77);
    let vectors: Vec<Vec<f32>> = (0..50).map(|_| unit(noise(&mut rng, 1.0))).collect();
    {
        super::super::register_sqlite_vec();
        let c = Connection::open(&path).unwrap();
        c.execute_batch(MIGRATIONS[0].sql).unwrap();
        c.pragma_update(None, "user_version", 1).unwrap();
        for (i, v) in vectors.iter().enumerate() {
            c.execute("INSERT INTO trait_vec (rowid, embedding) VALUES (?1, ?2)", params![i as i64 + 1, to_blob(v)])
                .unwrap();
        }
    }
    let c = open(&path).unwrap();
    let codes: Vec<(i64, Vec<u8>)> = c
        .prepare("SELECT id, code FROM vector_codes WHERE tbl = 2 ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(codes.len(), vectors.len());
    for ((id, code), v) in codes.iter().zip(&vectors) {
        assert_eq!(code, &vector_codes::code_bytes(&binary_code(v)), "row {id}");
    }
    for (i, v) in vectors.iter().enumerate() {
        assert_eq!(VectorRepo(&c).search_with(VecTable::Traits, v, 1, 5).unwrap()[0].0, i as i64 + 1);
    }
    // Migration 0016 moved the f32 copy into the one int8 table and dropped the rest.
    let stored: Vec<(i64, Vec<u8>)> = c
        .prepare("SELECT id, embedding FROM trait_vec ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(stored, vectors.iter().enumerate().map(|(i, v)| (i as i64 + 1, quantize(v))).collect::<Vec<_>>());
    let leftovers: i64 = c
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE name LIKE '%vec_f32' OR sql LIKE '%USING vec0%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(leftovers, 0);
}

#[test]
fn a_version_14_database_keeps_every_vector_in_one_int8_copy() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v14.db");
    let mut rng = SplitMix64(31);
    let vectors: Vec<Vec<f32>> = (0..40).map(|_| unit(noise(&mut rng, 1.0))).collect();
    {
        super::super::register_sqlite_vec();
        let c = Connection::open(&path).unwrap();
        for m in MIGRATIONS.iter().filter(|m| m.version <= 14) {
            c.execute_batch(m.sql).unwrap();
        }
        c.pragma_update(None, "user_version", 14).unwrap();
        // Migration 0010's fact_vec, at the width store::migrate gave it then.
        c.execute_batch("CREATE VIRTUAL TABLE fact_vec USING vec0(embedding float[384] distance_metric=cosine)")
            .unwrap();
        // What VectorRepo wrote before 0016: the vec0 row, the f32 copy and the code.
        for (i, v) in vectors.iter().enumerate() {
            for t in ["episode_vec", "fact_vec"] {
                c.execute(
                    &format!("INSERT INTO {t} (rowid, embedding) VALUES (?1, ?2)"),
                    params![i as i64 + 1, to_blob(v)],
                )
                .unwrap();
                c.execute(
                    &format!("INSERT INTO {t}_f32 (id, embedding) VALUES (?1, ?2)"),
                    params![i as i64 + 1, to_blob(v)],
                )
                .unwrap();
            }
            for tbl in [0u8, 3] {
                vector_codes::record(&c, tbl, i as i64 + 1, Some(&binary_code(v))).unwrap();
            }
        }
    }
    let c = open(&path).unwrap();
    for table in [VecTable::Episodes, VecTable::Facts] {
        let repo = VectorRepo(&c);
        assert_eq!(repo.count(table).unwrap(), 40);
        for (i, v) in vectors.iter().enumerate() {
            let id = i as i64 + 1;
            assert_eq!(repo.knn(table, v, 1).unwrap()[0].0, id);
            assert_eq!(repo.search_with(table, v, 1, 5).unwrap()[0].0, id);
            let back = repo.get(table, id).unwrap().unwrap();
            let cos: f32 = back.iter().zip(v).map(|(a, b)| a * b).sum();
            assert!(cos > 0.999, "row {id}: cosine {cos}");
        }
    }
    let old: i64 = c
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE name LIKE '%vec_f32' OR sql LIKE '%USING vec0%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(old, 0, "no vec0 table and no f32 copy is left");
}

#[test]
fn quantised_rows_keep_the_direction() {
    let mut rng = SplitMix64(3);
    for _ in 0..50 {
        let v = unit(noise(&mut rng, 1.0));
        let q = quantize(&v);
        assert_eq!(q.len(), v.len());
        assert!(q.iter().any(|&b| b as i8 == 127 || b as i8 == -127), "the largest component is at full scale");
        let back = dequantize(&q);
        let cos: f32 = back.iter().zip(&v).map(|(a, b)| a * b).sum();
        assert!(cos > 0.9995, "cosine {cos}");
    }
    assert_eq!(quantize(&[0.0; 4]), [0; 4]);
    assert_eq!(dequantize(&[0; 4]), [0.0; 4]);
}

#[test]
fn is_empty_follows_inserts_and_deletes() {
    let c = open_in_memory().unwrap();
    let repo = VectorRepo(&c);
    assert!(repo.is_empty(VecTable::Concepts).unwrap());
    repo.upsert(VecTable::Concepts, 7, &unit(noise(&mut SplitMix64(1), 1.0))).unwrap();
    assert!(!repo.is_empty(VecTable::Concepts).unwrap());
    assert!(repo.is_empty(VecTable::Episodes).unwrap(), "another table stays empty");
    repo.delete(VecTable::Concepts, 7).unwrap();
    assert!(repo.is_empty(VecTable::Concepts).unwrap());
}

#[test]
fn a_started_search_answers_as_search_does_and_as_of_its_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v.db");
    let a = open(&path).unwrap();
    let b = open(&path).unwrap();
    let mut rng = SplitMix64(21);
    let vectors: Vec<Vec<f32>> = (0..600).map(|_| unit(noise(&mut rng, 1.0))).collect();
    for (i, v) in vectors.iter().enumerate() {
        let table = if i % 2 == 0 { VecTable::Episodes } else { VecTable::Concepts };
        VectorRepo(&a).upsert(table, i as i64 + 1, v).unwrap();
    }
    let tables = [VecTable::Episodes, VecTable::Concepts, VecTable::Traits];
    let query = &vectors[100];
    let each = |c: &Connection| -> Vec<Vec<(i64, f32)>> {
        tables.iter().map(|&t| VectorRepo(c).search(t, query, 5).unwrap()).collect()
    };
    let started = VectorRepo(&a).start_search(&tables, query, 5).unwrap();
    assert_eq!(started.finish(&a).unwrap(), each(&a));
    assert_eq!(each(&a)[0][0].0, 101, "the query's own row is its nearest");

    // Begun, then the table changes through another connection whose search moves the cached
    // copy on before this one finishes: the answer is still as of the start, when row 999 did
    // not exist (a search the thread could not answer is made again in the caller's view).
    let ids_of = |found: Vec<Vec<(i64, f32)>>| -> Vec<Vec<i64>> { found.into_iter().map(|t| ids(&t)).collect() };
    let before = ids_of(each(&a));
    for (t, table) in tables.iter().enumerate() {
        let exact = ids(&VectorRepo(&a).knn(*table, query, 5).unwrap());
        assert_eq!(exact.first(), before[t].first(), "the exact search agrees on the nearest");
    }
    let read = a.unchecked_transaction().unwrap();
    let started = VectorRepo(&read).start_search(&tables, query, 5);
    assert!(started.is_ok());
    VectorRepo(&b).upsert(VecTable::Episodes, 999, query).unwrap();
    assert_eq!(ids(&VectorRepo(&b).search(VecTable::Episodes, query, 2).unwrap()), [101, 999]);
    let during = ids_of(started.unwrap().finish(&read).unwrap());
    // Had the search thread not come to it in time, the table was searched exactly (sqlite-vec)
    // in the read's view, which may order near ties otherwise: the nearest and the absence of the
    // new row hold either way.
    assert!(during.iter().all(|t| !t.contains(&999)), "{during:?}");
    assert_eq!(
        during.iter().map(|t| (t.first(), t.len())).collect::<Vec<_>>(),
        before.iter().map(|t| (t.first(), t.len())).collect::<Vec<_>>()
    );
    drop(read);
    // After it, the new row (the query's own vector, tied with row 101) is found.
    assert_eq!(ids(&VectorRepo(&a).start_search(&tables, query, 2).unwrap().finish(&a).unwrap()[0]), [101, 999]);

    // A query of the wrong size is refused at the start, as search refuses it.
    assert!(VectorRepo(&a).start_search(&tables, &query[..10], 5).is_err());
}

#[test]
fn a_started_search_is_finished_by_the_caller_while_the_search_thread_is_busy() {
    let c = open_in_memory().unwrap();
    let mut rng = SplitMix64(33);
    let vectors: Vec<Vec<f32>> = (0..200).map(|_| unit(noise(&mut rng, 1.0))).collect();
    for (i, v) in vectors.iter().enumerate() {
        let table = if i % 2 == 0 { VecTable::Episodes } else { VecTable::Concepts };
        VectorRepo(&c).upsert(table, i as i64 + 1, v).unwrap();
    }
    let tables = [VecTable::Episodes, VecTable::Concepts];
    let query = &vectors[7];
    let expected: Vec<Vec<i64>> = tables.iter().map(|&t| ids(&VectorRepo(&c).search(t, query, 5).unwrap())).collect();
    // The thread is held up, so every table is searched by the caller's `finish`.
    let (hold, release) = std::sync::mpsc::channel::<()>();
    let busy = crate::store::vector_codes::aside::run(move || {
        let _ = release.recv_timeout(std::time::Duration::from_secs(30));
    });
    let started = VectorRepo(&c).start_search(&tables, query, 5).unwrap();
    let found: Vec<Vec<i64>> = started_ids(started, &c);
    hold.send(()).unwrap();
    assert_eq!(busy.wait(), Some(()));
    assert_eq!(found, expected);
    assert_eq!(found[1][0], 8, "the query's own row leads its table");
}

fn started_ids(started: StartedSearch, c: &Connection) -> Vec<Vec<i64>> {
    started.finish(c).unwrap().iter().map(|t| ids(t)).collect()
}

#[test]
fn a_big_table_is_searched_in_parts_by_both_threads_as_search_does() {
    // Two databases with the same rows: each has its own cached copy (epochs are random), so
    // the one searched whole cannot answer from the other's remembered shortlist. The tests'
    // parts are 64 rows, so 1,000 rows are 16 parts.
    let (split, whole) = (open_in_memory().unwrap(), open_in_memory().unwrap());
    let mut rng = SplitMix64(34);
    let topics: Vec<Vec<f32>> = (0..20).map(|_| unit(noise(&mut rng, 1.0))).collect();
    for c in [&split, &whole] {
        c.execute_batch("BEGIN").unwrap();
    }
    for i in 0..1_300 {
        let (table, v) = if i < 1_000 {
            (VecTable::Episodes, clustered(&mut rng, &topics))
        } else {
            (VecTable::Concepts, clustered(&mut rng, &topics))
        };
        for c in [&split, &whole] {
            VectorRepo(c).upsert(table, i as i64 + 1, &v).unwrap();
        }
    }
    for c in [&split, &whole] {
        c.execute_batch("COMMIT").unwrap();
    }
    let tables = [VecTable::Episodes, VecTable::Concepts, VecTable::Traits];
    for q in 0..4 {
        let query = clustered(&mut rng, &topics);
        let expected: Vec<Vec<(i64, f32)>> =
            tables.iter().map(|&t| VectorRepo(&whole).search(t, &query, 50).unwrap()).collect();
        // Sometimes the search thread is held up, so the caller scans every part itself.
        let (hold, release) = std::sync::mpsc::channel::<()>();
        let busy = (q % 2 == 1).then(|| {
            crate::store::vector_codes::aside::run(move || {
                let _ = release.recv_timeout(std::time::Duration::from_secs(30));
            })
        });
        let found = VectorRepo(&split).start_search(&tables, &query, 50).unwrap().finish(&split).unwrap();
        let _ = hold.send(());
        if let Some(busy) = busy {
            assert_eq!(busy.wait(), Some(()));
        }
        assert_eq!(found, expected, "query {q}");
        assert_eq!(found[0].len(), 50);
    }
}

#[test]
fn a_warmed_table_is_loaded_before_its_first_search_and_answers_as_search_does() {
    let dir = tempfile::tempdir().unwrap();
    let c = open(&dir.path().join("w.db")).unwrap();
    let mut rng = SplitMix64(5);
    let vectors: Vec<Vec<f32>> = (0..300).map(|_| unit(noise(&mut rng, 1.0))).collect();
    for (i, v) in vectors.iter().enumerate() {
        VectorRepo(&c).upsert(VecTable::Facts, i as i64 + 1, v).unwrap();
    }
    let repo = VectorRepo(&c);
    assert!(!repo.index_settled(VecTable::Facts).unwrap(), "no copy before the first search");
    repo.warm(VecTable::Facts).unwrap();
    assert!(repo.index_settled(VecTable::Facts).unwrap(), "the copy is loaded");
    // A row written after the warm-up is found: the copy catches up at the search.
    let late = unit(noise(&mut rng, 1.0));
    repo.upsert(VecTable::Facts, 999, &late).unwrap();
    assert_eq!(repo.search(VecTable::Facts, &late, 1).unwrap()[0].0, 999);
    assert_eq!(repo.search(VecTable::Facts, &vectors[7], 1).unwrap()[0].0, 8);
    // Warming an empty table, or again, is harmless.
    repo.warm(VecTable::Traits).unwrap();
    repo.warm(VecTable::Facts).unwrap();
}
