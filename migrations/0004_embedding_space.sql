-- chalie-tui schema migration 4: the vector tables follow the configured embedding model.
--
-- One row: the model whose vectors episode_vec / concept_vec / trait_vec hold, and their
-- size. model is NULL on a database created before this was recorded (its tables are at
-- all-MiniLM-L6-v2's 384): the first model seen at that size is adopted without
-- re-embedding, any other model or size recreates the tables and re-embeds.
CREATE TABLE embedding_space (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    model       TEXT,
    dim         INTEGER NOT NULL CHECK (dim BETWEEN 1 AND 4096),
    updated_at  INTEGER NOT NULL
);
INSERT INTO embedding_space (id, model, dim, updated_at) VALUES (1, NULL, 384, CAST(strftime('%s', 'now') AS INTEGER));

-- The rows still waiting for a vector of the new model after a switch (tbl as in
-- vector_codes: 0 episodes, 1 concepts, 2 traits). The re-embed job removes each batch's
-- rows in the transaction that writes their vectors, so a crash resumes where it stopped.
CREATE TABLE reembed_pending (
    tbl  INTEGER NOT NULL,
    id   INTEGER NOT NULL,
    PRIMARY KEY (tbl, id)
) WITHOUT ROWID;
