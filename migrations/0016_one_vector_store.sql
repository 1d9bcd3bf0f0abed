-- chalie-tui schema migration 15: one stored copy of each vector.
--
-- Until now every vector was held twice: in sqlite-vec's vec0 table (which only the exact
-- reference search read) and as f32 in `{table}_f32` (which the re-scoring read), ~3 kB a
-- vector on disk. From here each vector is one row of an ordinary table, as int8 (one byte a
-- dimension, scaled per vector; see src/store/vectors.rs), beside its binary code in
-- vector_codes. The exact reference search still runs in sqlite-vec, through its scalar
-- vec_distance_cosine over these blobs.
--
-- The f32 rows cannot be quantised in SQL (sqlite-vec's vec_quantize_int8 only scales to the
-- unit range, which leaves a sentence embedding's components a handful of levels), so this
-- migration drops the vec0 tables and creates the new ones, and store::migrate then moves
-- each `{table}_f32` into its new table in Rust and drops it, in one transaction
-- (vectors::finish_int8_move); a crash in between leaves the f32 copies to be moved at the
-- next open.
DROP TABLE IF EXISTS episode_vec;
DROP TABLE IF EXISTS concept_vec;
DROP TABLE IF EXISTS trait_vec;
DROP TABLE IF EXISTS fact_vec;
CREATE TABLE episode_vec (id INTEGER PRIMARY KEY, embedding BLOB NOT NULL);
CREATE TABLE concept_vec (id INTEGER PRIMARY KEY, embedding BLOB NOT NULL);
CREATE TABLE trait_vec   (id INTEGER PRIMARY KEY, embedding BLOB NOT NULL);
CREATE TABLE fact_vec    (id INTEGER PRIMARY KEY, embedding BLOB NOT NULL);
