//! RECONCILE as a drift action: sample traits and concepts, hand them to the uncertainty
//! engine's sweep (`memory::uncertainty::reconcile`), write what it plans. The domain rotates
//! with the half-hour, the cadence of the action's cooldown.

use crate::memory::uncertainty::ingest::trait_sentence;
use crate::memory::uncertainty::reconcile::{self, Memory, SKIP_RECENT_S};
use crate::store::{DriftRepo, StoreError, UncertaintiesRepo};
use rusqlite::Connection;

/// One pass at `now`. Returns the number of records written.
pub fn sweep(c: &Connection, now: i64) -> Result<usize, StoreError> {
    let pool: Vec<Memory> = DriftRepo(c)
        .reconcile_pool(reconcile::SAMPLE)?
        .into_iter()
        .map(|(kind, id, a, b, category, confidence, reinforcement_count, created_at, embedding)| Memory {
            kind,
            id,
            text: if kind == "trait" { trait_sentence(&a, &b) } else { format!("{a}: {b}") },
            confidence,
            reinforcement_count,
            domain: reconcile::domain_of(if kind == "trait" { &a } else { &category }),
            created_at,
            embedding,
        })
        .collect();
    let domain = reconcile::domain_for_pass((now / 1800).max(0) as u64);
    let repo = UncertaintiesRepo(c);
    let recent = |a: (&str, i64), b: (&str, i64)| {
        repo.recent_between((a.0, &a.1.to_string()), (b.0, &b.1.to_string()), now - SKIP_RECENT_S).unwrap_or(true)
    };
    let planned = reconcile::plan(&pool, &pool, domain, recent, reconcile::MAX_NEW_RECORDS);
    Ok(reconcile::apply(c, &planned, now)?.len())
}
