//! Versioned schema migrations from `migrations/*.sql`, tracked in `PRAGMA user_version`.

use super::StoreError;
use rusqlite::Connection;

pub struct Migration {
    pub version: u32,
    pub name: &'static str,
    pub sql: &'static str,
}

/// Every migration, in order. Append only: a shipped migration never changes.
pub const MIGRATIONS: &[Migration] = &[
    Migration { version: 1, name: "0001_init", sql: include_str!("../../migrations/0001_init.sql") },
    Migration { version: 2, name: "0002_vector_codes", sql: include_str!("../../migrations/0002_vector_codes.sql") },
    Migration {
        version: 3,
        name: "0003_semantic_decay",
        sql: include_str!("../../migrations/0003_semantic_decay.sql"),
    },
    Migration {
        version: 4,
        name: "0004_embedding_space",
        sql: include_str!("../../migrations/0004_embedding_space.sql"),
    },
    Migration { version: 5, name: "0005_forget", sql: include_str!("../../migrations/0005_forget.sql") },
    Migration { version: 6, name: "0006_uncertainty", sql: include_str!("../../migrations/0006_uncertainty.sql") },
    Migration { version: 7, name: "0007_regulator", sql: include_str!("../../migrations/0007_regulator.sql") },
    Migration { version: 8, name: "0008_graph", sql: include_str!("../../migrations/0008_graph.sql") },
    Migration { version: 9, name: "0009_drift", sql: include_str!("../../migrations/0009_drift.sql") },
    Migration { version: 10, name: "0010_fact_vectors", sql: include_str!("../../migrations/0010_fact_vectors.sql") },
    Migration {
        version: 11,
        name: "0011_trait_succession",
        sql: include_str!("../../migrations/0011_trait_succession.sql"),
    },
    Migration { version: 12, name: "0012_adaptive", sql: include_str!("../../migrations/0012_adaptive.sql") },
    Migration { version: 13, name: "0013_graph_cache", sql: include_str!("../../migrations/0013_graph_cache.sql") },
    Migration { version: 14, name: "0014_tasks", sql: include_str!("../../migrations/0014_tasks.sql") },
    Migration {
        version: 15,
        name: "0015_topics_regulator",
        sql: include_str!("../../migrations/0015_topics_regulator.sql"),
    },
    Migration {
        version: 16,
        name: "0016_one_vector_store",
        sql: include_str!("../../migrations/0016_one_vector_store.sql"),
    },
    Migration { version: 17, name: "0017_turn_indexes", sql: include_str!("../../migrations/0017_turn_indexes.sql") },
    Migration {
        version: 18,
        name: "0018_turn_trait_indexes",
        sql: include_str!("../../migrations/0018_turn_trait_indexes.sql"),
    },
    Migration {
        version: 19,
        name: "0019_exchange_lookups",
        sql: include_str!("../../migrations/0019_exchange_lookups.sql"),
    },
    Migration { version: 20, name: "0020_graph_changes", sql: include_str!("../../migrations/0020_graph_changes.sql") },
    Migration {
        version: 21,
        name: "0021_concept_traces",
        sql: include_str!("../../migrations/0021_concept_traces.sql"),
    },
    Migration {
        version: 22,
        name: "0022_recall_text_state",
        sql: include_str!("../../migrations/0022_recall_text_state.sql"),
    },
    Migration { version: 23, name: "0023_topic_stamps", sql: include_str!("../../migrations/0023_topic_stamps.sql") },
    Migration {
        version: 24,
        name: "0024_boundary_recent",
        sql: include_str!("../../migrations/0024_boundary_recent.sql"),
    },
    Migration {
        version: 25,
        name: "0025_concept_firings",
        sql: include_str!("../../migrations/0025_concept_firings.sql"),
    },
];

/// For a test that re-runs the migrations after an old version on a database of today's schema:
/// puts back what migration 0021 moved out of `semantic_concepts`, which migration 0017's
/// indexes name, takes out the columns migration 0024 adds (a column cannot be added twice), and
/// puts back what migration 0025 moved out of `semantic_concepts` too.
#[cfg(test)]
pub(crate) const BEFORE_RERUN: &str = "DROP TABLE concept_traces;
    DROP TABLE concept_firings;
    ALTER TABLE semantic_concepts ADD COLUMN fired_count INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE semantic_concepts ADD COLUMN last_fired_at INTEGER;
    ALTER TABLE boundary_state DROP COLUMN ewma_fast;
    ALTER TABLE boundary_state DROP COLUMN ewma_slow;
    ALTER TABLE boundary_state DROP COLUMN recent_seq;
    ALTER TABLE boundary_state DROP COLUMN recent_len;
    ALTER TABLE semantic_concepts ADD COLUMN potential REAL NOT NULL DEFAULT 0.0;
    ALTER TABLE semantic_concepts ADD COLUMN trace REAL NOT NULL DEFAULT 0.0;";

pub fn latest_version() -> u32 {
    MIGRATIONS.last().map_or(0, |m| m.version)
}

/// Apply every pending migration, each in its own transaction together with its
/// version bump, so a crash mid-migration leaves the previous version intact.
/// Returns the number applied.
pub fn migrate(conn: &mut Connection) -> Result<usize, StoreError> {
    let current: u32 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    let supported = latest_version();
    if current > supported {
        return Err(StoreError::TooNew { found: current, supported });
    }
    let mut applied = 0;
    for m in MIGRATIONS.iter().filter(|m| m.version > current) {
        let wrap = |source| StoreError::Migration { name: m.name, source };
        let tx = conn.transaction().map_err(wrap)?;
        tx.execute_batch(m.sql).map_err(wrap)?;
        tx.pragma_update(None, "user_version", m.version).map_err(wrap)?;
        tx.commit().map_err(wrap)?;
        tracing::info!(migration = m.name, "applied schema migration");
        applied += 1;
    }
    // A vector table's width is the recorded embedding space's, which a migration's SQL
    // cannot name: one added by a migration (0010's fact_vec) is created here.
    super::embedding_space::ensure_vec_tables(conn)?;
    // Migration 0016's data move, which SQL cannot do (see the migration's comment).
    super::vectors::finish_int8_move(conn)?;
    Ok(applied)
}
