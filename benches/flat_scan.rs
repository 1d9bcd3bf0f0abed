//! The flat scan of one big vector table (`store::vector_codes`): `VectorRepo::search` over a
//! table just under the graph's threshold, as the 1M turn's episodes (450k rows) and concepts
//! (250k) are searched, and how much of the exact top 10 it finds.
//!
//! The vectors are `benches/recall_1m.rs`'s (`support/minilm_real.rs`): real all-MiniLM-L6-v2
//! embeddings of the shared data's sentences, then mixtures of them, ~50 close variants of each
//! real sentence. The first `CHALIE_BENCH_FLAT_ROWS` (default 450,000) go into an in-memory
//! database (about a minute; nothing is cached).
//!
//! Figures:
//! - `vector/flat_450k`: `VectorRepo::search` with k = 50 (what recall's vector source asks,
//!   400 candidates re-scored), one thread, median and p99 of 400 calls after 20 warm-up calls,
//!   cycling over the held-out queries;
//! - recall@10 against the exact f32 top 10, printed for the even-numbered held-out queries
//!   (what the scan's constants were chosen on) and reported in the target for the odd-numbered
//!   ones (never looked at while choosing).
//!
//! `cargo bench --bench flat_scan`

use std::time::Instant;

use chalie::store::{VecTable, VectorRepo};

#[path = "support/benchfig.rs"]
mod benchfig;
#[path = "support/minilm_real.rs"]
mod minilm_real;
use minilm_real::{exact_top, generated, share_found};

/// Queries whose exact top 10 is computed per half (each is a pass over every vector).
const RECALL_QUERIES: usize = 100;

fn main() {
    let rows: usize = std::env::var("CHALIE_BENCH_FLAT_ROWS").ok().and_then(|v| v.parse().ok()).unwrap_or(450_000);
    let minilm_real::Split { real, queries, .. } = minilm_real::split();
    let conn = chalie::store::open_in_memory().expect("in-memory database");
    let started = Instant::now();
    let tx = conn.unchecked_transaction().expect("transaction");
    for i in 0..rows {
        let (v, _) = generated(&real, i);
        VectorRepo(&tx).upsert(VecTable::Episodes, i as i64 + 1, &v).expect("upsert");
    }
    tx.commit().expect("commit");
    eprintln!("stored {rows} vectors in {:.1} s", started.elapsed().as_secs_f64());
    let repo = VectorRepo(&conn);
    repo.search(VecTable::Episodes, &queries[0].1, 50).expect("first search");
    assert!(repo.index_settled(VecTable::Episodes).expect("index state"), "{rows} rows are searched through a graph");

    let mut q = 0usize;
    let timings = benchfig::samples(20, 400, || {
        q += 1;
        repo.search(VecTable::Episodes, &queries[q % queries.len()].1, 50).expect("search")
    });

    let half = |skip: usize| -> Vec<&Vec<f32>> {
        queries.iter().skip(skip).step_by(2).take(RECALL_QUERIES).map(|(_, v)| v).collect()
    };
    let recall = |picked: &[&Vec<f32>]| -> (f64, f64) {
        let exact = exact_top(&real, rows, picked, 10);
        (share_found(&repo, picked, &exact, 10), share_found(&repo, picked, &exact, 50))
    };
    let (even10, even50) = recall(&half(0));
    println!("recall@10 vs exact f32, even-numbered held-out queries (chosen on): k=10 {even10:.3}, k=50 {even50:.3}");
    let (r10, r50) = recall(&half(1));
    println!("recall@10 vs exact f32, odd-numbered held-out queries (reported): k=10 {r10:.3}, k=50 {r50:.3}");
    benchfig::print(
        &format!("vector/flat_{}k", rows / 1000),
        &timings,
        None,
        &format!("report,recall@10>=0.95(k10={r10:.3},k50={r50:.3})"),
    );
}
