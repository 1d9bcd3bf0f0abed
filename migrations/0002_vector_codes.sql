-- chalie-tui schema v2: what fast vector search reads instead of scanning episode_vec /
-- concept_vec / trait_vec (tbl 0 / 1 / 2 below). VectorRepo writes these rows in the same
-- transaction as the vec0 row, so they commit or roll back together.

-- The binary code of each vector: the sign of each of the 384 dimensions as 48 bytes, bit i of
-- byte i/8 set when dimension i is > 0 (the layout of sqlite-vec's vec_quantize_binary).
-- A deletion keeps the row with code NULL, so in-process code caches learn of it. seq is the
-- per-table change counter at the row's last write: a cache that has seen changes up to seq S
-- reads only rows with seq > S. epoch is random per database and table, so a cache never
-- mistakes one database for another.
CREATE TABLE vector_codes (
    tbl   INTEGER NOT NULL,
    id    INTEGER NOT NULL,
    code  BLOB,
    seq   INTEGER NOT NULL,
    PRIMARY KEY (tbl, id)
) WITHOUT ROWID;
CREATE INDEX idx_vector_codes_seq ON vector_codes(tbl, seq);

CREATE TABLE vector_code_state (
    tbl    INTEGER PRIMARY KEY,
    seq    INTEGER NOT NULL,
    epoch  INTEGER NOT NULL
);
INSERT INTO vector_code_state (tbl, seq, epoch) VALUES (0, 0, random()), (1, 0, random()), (2, 0, random());

-- The f32 vectors again, one row each, for exact re-scoring of the candidates the codes pick:
-- vec0 keeps 1024 vectors per 1.5 MB chunk blob, and reading one of them walks the blob's
-- overflow pages up to it (~60 µs at 100k rows), where a rowid lookup here is ~2 µs.
CREATE TABLE episode_vec_f32 (id INTEGER PRIMARY KEY, embedding BLOB NOT NULL);
CREATE TABLE concept_vec_f32 (id INTEGER PRIMARY KEY, embedding BLOB NOT NULL);
CREATE TABLE trait_vec_f32   (id INTEGER PRIMARY KEY, embedding BLOB NOT NULL);

-- Backfill the vectors stored before this migration.
INSERT INTO vector_codes (tbl, id, code, seq) SELECT 0, rowid, vec_quantize_binary(embedding), 0 FROM episode_vec;
INSERT INTO vector_codes (tbl, id, code, seq) SELECT 1, rowid, vec_quantize_binary(embedding), 0 FROM concept_vec;
INSERT INTO vector_codes (tbl, id, code, seq) SELECT 2, rowid, vec_quantize_binary(embedding), 0 FROM trait_vec;
INSERT INTO episode_vec_f32 (id, embedding) SELECT rowid, embedding FROM episode_vec;
INSERT INTO concept_vec_f32 (id, embedding) SELECT rowid, embedding FROM concept_vec;
INSERT INTO trait_vec_f32 (id, embedding) SELECT rowid, embedding FROM trait_vec;

-- Document frequencies of the episode full-text index's terms (no storage of its own): recall
-- reads them to decide whether a query word is searched as a prefix, before it runs bm25.
CREATE VIRTUAL TABLE episodes_fts_vocab USING fts5vocab(episodes_fts, row);

-- Trigram indexes for recall's keyword source, which finds the query's words as substrings
-- (LIKE '%word%') of traits, facts, gists, concepts and the user's chat lines: a trigram
-- MATCH of a quoted word of 3+ characters finds the same rows (case-insensitively) without
-- scanning the table. Recall still applies the LIKE to what the index returns, so the index
-- only ever narrows the scan. External content: the text stays in its table once.
CREATE VIRTUAL TABLE user_traits_trgm USING fts5(trait_key, trait_value, content='user_traits', content_rowid='id', tokenize='trigram');
CREATE TRIGGER user_traits_trgm_ai AFTER INSERT ON user_traits BEGIN
    INSERT INTO user_traits_trgm(rowid, trait_key, trait_value) VALUES (new.id, new.trait_key, new.trait_value);
END;
CREATE TRIGGER user_traits_trgm_ad AFTER DELETE ON user_traits BEGIN
    INSERT INTO user_traits_trgm(user_traits_trgm, rowid, trait_key, trait_value) VALUES ('delete', old.id, old.trait_key, old.trait_value);
END;
CREATE TRIGGER user_traits_trgm_au AFTER UPDATE OF trait_key, trait_value ON user_traits BEGIN
    INSERT INTO user_traits_trgm(user_traits_trgm, rowid, trait_key, trait_value) VALUES ('delete', old.id, old.trait_key, old.trait_value);
    INSERT INTO user_traits_trgm(rowid, trait_key, trait_value) VALUES (new.id, new.trait_key, new.trait_value);
END;
INSERT INTO user_traits_trgm(user_traits_trgm) VALUES ('rebuild');

CREATE VIRTUAL TABLE facts_trgm USING fts5(key, value, content='facts', content_rowid='id', tokenize='trigram');
CREATE TRIGGER facts_trgm_ai AFTER INSERT ON facts BEGIN
    INSERT INTO facts_trgm(rowid, key, value) VALUES (new.id, new.key, new.value);
END;
CREATE TRIGGER facts_trgm_ad AFTER DELETE ON facts BEGIN
    INSERT INTO facts_trgm(facts_trgm, rowid, key, value) VALUES ('delete', old.id, old.key, old.value);
END;
CREATE TRIGGER facts_trgm_au AFTER UPDATE OF key, value ON facts BEGIN
    INSERT INTO facts_trgm(facts_trgm, rowid, key, value) VALUES ('delete', old.id, old.key, old.value);
    INSERT INTO facts_trgm(rowid, key, value) VALUES (new.id, new.key, new.value);
END;
INSERT INTO facts_trgm(facts_trgm) VALUES ('rebuild');

CREATE VIRTUAL TABLE gists_trgm USING fts5(content, content='gists', content_rowid='id', tokenize='trigram');
CREATE TRIGGER gists_trgm_ai AFTER INSERT ON gists BEGIN
    INSERT INTO gists_trgm(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER gists_trgm_ad AFTER DELETE ON gists BEGIN
    INSERT INTO gists_trgm(gists_trgm, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER gists_trgm_au AFTER UPDATE OF content ON gists BEGIN
    INSERT INTO gists_trgm(gists_trgm, rowid, content) VALUES ('delete', old.id, old.content);
    INSERT INTO gists_trgm(rowid, content) VALUES (new.id, new.content);
END;
INSERT INTO gists_trgm(gists_trgm) VALUES ('rebuild');

CREATE VIRTUAL TABLE concepts_trgm USING fts5(name, definition, content='semantic_concepts', content_rowid='id', tokenize='trigram');
CREATE TRIGGER concepts_trgm_ai AFTER INSERT ON semantic_concepts BEGIN
    INSERT INTO concepts_trgm(rowid, name, definition) VALUES (new.id, new.name, new.definition);
END;
CREATE TRIGGER concepts_trgm_ad AFTER DELETE ON semantic_concepts BEGIN
    INSERT INTO concepts_trgm(concepts_trgm, rowid, name, definition) VALUES ('delete', old.id, old.name, old.definition);
END;
CREATE TRIGGER concepts_trgm_au AFTER UPDATE OF name, definition ON semantic_concepts BEGIN
    INSERT INTO concepts_trgm(concepts_trgm, rowid, name, definition) VALUES ('delete', old.id, old.name, old.definition);
    INSERT INTO concepts_trgm(rowid, name, definition) VALUES (new.id, new.name, new.definition);
END;
INSERT INTO concepts_trgm(concepts_trgm) VALUES ('rebuild');

-- Only the user's lines are searched, so only they are indexed (and never 'rebuild', which
-- would index every line).
CREATE VIRTUAL TABLE chat_user_trgm USING fts5(content, content='chat_history', content_rowid='id', tokenize='trigram');
CREATE TRIGGER chat_user_trgm_ai AFTER INSERT ON chat_history WHEN new.role = 'user' BEGIN
    INSERT INTO chat_user_trgm(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER chat_user_trgm_ad AFTER DELETE ON chat_history WHEN old.role = 'user' BEGIN
    INSERT INTO chat_user_trgm(chat_user_trgm, rowid, content) VALUES ('delete', old.id, old.content);
END;
-- One update trigger, so the old entry goes before the new one arrives (two triggers on one
-- event fire in no documented order).
CREATE TRIGGER chat_user_trgm_au AFTER UPDATE OF content, role ON chat_history BEGIN
    INSERT INTO chat_user_trgm(chat_user_trgm, rowid, content) SELECT 'delete', old.id, old.content WHERE old.role = 'user';
    INSERT INTO chat_user_trgm(rowid, content) SELECT new.id, new.content WHERE new.role = 'user';
END;
INSERT INTO chat_user_trgm(rowid, content) SELECT id, content FROM chat_history WHERE role = 'user';
