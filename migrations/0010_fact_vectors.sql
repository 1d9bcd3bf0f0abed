-- chalie-tui schema migration 10: facts get vectors, so the uncertainty check's pre-screen
-- (docs/cognition.md §10.4) sees them beside traits and concepts.
--
-- The same three parts as the other vector tables (migration 0002): the vec0 table, its
-- binary codes (vector_codes.tbl 3) and a plain f32 copy for exact re-scoring. The vec0
-- table itself is not created here: its width is the recorded embedding space's
-- (embedding_space.dim, 384 or whatever model the database moved to), which SQL cannot put
-- into a CREATE VIRTUAL TABLE. store::migrate creates it right after, at that width
-- (embedding_space::ensure_vec_tables); facts stored before have no vector, as a fact lives
-- a day and the next exchange writes the vectors of what it learns.
CREATE TABLE fact_vec_f32 (id INTEGER PRIMARY KEY, embedding BLOB NOT NULL);
INSERT INTO vector_code_state (tbl, seq, epoch) VALUES (3, 0, random());
