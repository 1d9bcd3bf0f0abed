-- Where the `topics` and `boundary_state` tables stand, for the in-process copies the topic
-- stage keeps of them (`store::topic_cache`, the boundary state kept in
-- `cognition::pipeline::phases`): every turn used to read the thread's 64 newest topics'
-- centroids (~96 KB) and its ~25 KB detector state only to find what the turn before wrote.
--
-- Every write to either table gives its stamp a new random value, so a stamp names one content
-- of the table: a copy taken with a stamp holds while the table has that stamp, whatever wrote
-- since (another process, a forget, a savepoint rolled back, which puts back the old stamp with
-- the old rows). Never a counter: a rolled-back write and a later one would share a number.
-- `topics_prev` is the stamp before the last write, so a process that made that write itself
-- can bring its copy forward instead of reading the rows again.
CREATE TABLE IF NOT EXISTS topic_stamps (
    id          INTEGER PRIMARY KEY CHECK (id = 0),
    topics      INTEGER NOT NULL,
    topics_prev INTEGER NOT NULL,
    boundary    INTEGER NOT NULL
);
INSERT OR IGNORE INTO topic_stamps (id, topics, topics_prev, boundary) VALUES (0, random(), random(), random());

DROP TRIGGER IF EXISTS topic_stamps_insert;
DROP TRIGGER IF EXISTS topic_stamps_update;
DROP TRIGGER IF EXISTS topic_stamps_delete;
DROP TRIGGER IF EXISTS boundary_stamps_insert;
DROP TRIGGER IF EXISTS boundary_stamps_update;
DROP TRIGGER IF EXISTS boundary_stamps_delete;

CREATE TRIGGER topic_stamps_insert AFTER INSERT ON topics BEGIN
    UPDATE topic_stamps SET topics_prev = topics, topics = random() WHERE id = 0;
END;
CREATE TRIGGER topic_stamps_update AFTER UPDATE ON topics BEGIN
    UPDATE topic_stamps SET topics_prev = topics, topics = random() WHERE id = 0;
END;
CREATE TRIGGER topic_stamps_delete AFTER DELETE ON topics BEGIN
    UPDATE topic_stamps SET topics_prev = topics, topics = random() WHERE id = 0;
END;
CREATE TRIGGER boundary_stamps_insert AFTER INSERT ON boundary_state BEGIN
    UPDATE topic_stamps SET boundary = random() WHERE id = 0;
END;
CREATE TRIGGER boundary_stamps_update AFTER UPDATE ON boundary_state BEGIN
    UPDATE topic_stamps SET boundary = random() WHERE id = 0;
END;
CREATE TRIGGER boundary_stamps_delete AFTER DELETE ON boundary_state BEGIN
    UPDATE topic_stamps SET boundary = random() WHERE id = 0;
END;
