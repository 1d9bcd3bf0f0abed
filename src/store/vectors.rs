//! Embedding storage and nearest-neighbour search in sqlite-vec `vec0` tables.

use super::StoreError;
use rusqlite::{Connection, params};

/// all-MiniLM-L6-v2's output size; the vec0 tables are declared with it.
pub const EMBEDDING_DIM: usize = 384;

/// The vector tables, each keyed by the id of the row it embeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VecTable {
    Episodes,
    Concepts,
    Traits,
}

impl VecTable {
    fn name(self) -> &'static str {
        match self {
            VecTable::Episodes => "episode_vec",
            VecTable::Concepts => "concept_vec",
            VecTable::Traits => "trait_vec",
        }
    }
}

/// f32 little-endian bytes: the blob format sqlite-vec reads.
fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub struct VectorRepo<'c>(pub &'c Connection);

impl VectorRepo<'_> {
    /// Store (or replace) the embedding of row `id`.
    pub fn upsert(&self, table: VecTable, id: i64, embedding: &[f32]) -> Result<(), StoreError> {
        check_dim(embedding)?;
        let t = table.name();
        // vec0 has no UPSERT; delete-then-insert keeps one row per id.
        self.0.execute(&format!("DELETE FROM {t} WHERE rowid = ?1"), params![id])?;
        self.0
            .execute(&format!("INSERT INTO {t} (rowid, embedding) VALUES (?1, ?2)"), params![id, to_blob(embedding)])?;
        Ok(())
    }

    pub fn delete(&self, table: VecTable, id: i64) -> Result<(), StoreError> {
        self.0.execute(&format!("DELETE FROM {} WHERE rowid = ?1", table.name()), params![id])?;
        Ok(())
    }

    /// The `k` nearest rows by cosine distance, nearest first: `(id, distance)`.
    pub fn knn(&self, table: VecTable, query: &[f32], k: usize) -> Result<Vec<(i64, f32)>, StoreError> {
        check_dim(query)?;
        let mut stmt = self.0.prepare_cached(&format!(
            "SELECT rowid, distance FROM {} WHERE embedding MATCH ?1 AND k = ?2 ORDER BY distance",
            table.name()
        ))?;
        let rows = stmt.query_map(params![to_blob(query), k as i64], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

fn check_dim(v: &[f32]) -> Result<(), StoreError> {
    if v.len() == EMBEDDING_DIM { Ok(()) } else { Err(StoreError::Dimension { expected: EMBEDDING_DIM, got: v.len() }) }
}
