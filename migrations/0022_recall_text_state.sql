-- Where the rows recall's text sources search stand, for the in-process copies of what those
-- sources ask the full-text indexes every turn (`store::recall::cache`): each content word's
-- episode count, which plans the full-text MATCH, and each word's newest matching concepts,
-- the keyword source over `semantic_concepts`. Asking the index costs a seek in every one of
-- its segments per word (or per trigram of the word), ~0.25 ms of a turn at 100k memories.
--
-- A copy holds for a view of the table with the same `epoch`, `removals` and largest id:
-- rows are only ever appended between two such views, and a copy catches up on appends by
-- reading the rows past the largest id it has seen. Everything else that can change what a
-- copy holds bumps `removals` (a delete, a change of the searched text or of what makes a
-- concept searchable, an insert below the largest id), and a copy at another count starts
-- again. `epoch` is random per database, so a copy never mistakes one database for another.
CREATE TABLE IF NOT EXISTS recall_text_state (
    tbl      INTEGER PRIMARY KEY,  -- 0 episodes, 1 semantic_concepts
    epoch    INTEGER NOT NULL,
    removals INTEGER NOT NULL
);
INSERT OR IGNORE INTO recall_text_state (tbl, epoch, removals) VALUES (0, random(), 0), (1, random(), 0);

DROP TRIGGER IF EXISTS recall_text_episode_insert;
DROP TRIGGER IF EXISTS recall_text_episode_update;
DROP TRIGGER IF EXISTS recall_text_episode_delete;
DROP TRIGGER IF EXISTS recall_text_concept_insert;
DROP TRIGGER IF EXISTS recall_text_concept_update;
DROP TRIGGER IF EXISTS recall_text_concept_delete;

CREATE TRIGGER recall_text_episode_insert AFTER INSERT ON episodes
    WHEN NEW.id < (SELECT MAX(id) FROM episodes) BEGIN
    UPDATE recall_text_state SET removals = removals + 1 WHERE tbl = 0;
END;
CREATE TRIGGER recall_text_episode_update AFTER UPDATE OF id, gist, action ON episodes BEGIN
    UPDATE recall_text_state SET removals = removals + 1 WHERE tbl = 0;
END;
CREATE TRIGGER recall_text_episode_delete AFTER DELETE ON episodes BEGIN
    UPDATE recall_text_state SET removals = removals + 1 WHERE tbl = 0;
END;
CREATE TRIGGER recall_text_concept_insert AFTER INSERT ON semantic_concepts
    WHEN NEW.id < (SELECT MAX(id) FROM semantic_concepts) BEGIN
    UPDATE recall_text_state SET removals = removals + 1 WHERE tbl = 1;
END;
CREATE TRIGGER recall_text_concept_update AFTER UPDATE OF id, name, definition, deleted_at, probation
    ON semantic_concepts BEGIN
    UPDATE recall_text_state SET removals = removals + 1 WHERE tbl = 1;
END;
CREATE TRIGGER recall_text_concept_delete AFTER DELETE ON semantic_concepts BEGIN
    UPDATE recall_text_state SET removals = removals + 1 WHERE tbl = 1;
END;
