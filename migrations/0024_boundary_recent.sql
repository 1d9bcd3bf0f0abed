-- The boundary detector's state without its window of recent messages, and the window as rows
-- (`store/boundary.rs`): the state was ~25 KB of base64 JSON written whole every turn (six or
-- seven overflow pages in the WAL per commit) although a turn changes one message of the window.
--
-- `boundary_state` keeps the scalars as JSON and gains the two EWMAs as raw little-endian f32
-- (3 KB: the row fits one page) and where its window is: `recent_seq` is the first message's
-- sequence number, `recent_len` the number of messages. NULL `recent_len`: a state stored
-- before this migration, its vectors still in `state` (read as before, rewritten in the new
-- form on its next save).
--
-- `boundary_recent` holds one row per message of a window, numbered in the detector's order; a
-- turn rewrites the row of the message that left as the one that came in. Only the rows of the state's range are
-- read, so rows of an expired or replaced state are never taken for its window (the next save
-- deletes them). A rowid table, not WITHOUT ROWID: a 1.5 KB row would spill to an overflow
-- page there (its rows are index records, ~1 KB local at most).
--
-- Its writes move the `boundary_state` stamp (`topic_stamps.boundary`, migration 0023), as the
-- state's own do: the state kept in process answers for both tables together.
ALTER TABLE boundary_state ADD COLUMN ewma_fast BLOB;
ALTER TABLE boundary_state ADD COLUMN ewma_slow BLOB;
ALTER TABLE boundary_state ADD COLUMN recent_seq INTEGER;
ALTER TABLE boundary_state ADD COLUMN recent_len INTEGER;

CREATE TABLE IF NOT EXISTS boundary_recent (
    thread_id TEXT NOT NULL,
    seq       INTEGER NOT NULL,
    weight    REAL NOT NULL,
    embedding BLOB NOT NULL,
    PRIMARY KEY (thread_id, seq)
);

DROP TRIGGER IF EXISTS boundary_recent_stamps_insert;
DROP TRIGGER IF EXISTS boundary_recent_stamps_update;
DROP TRIGGER IF EXISTS boundary_recent_stamps_delete;
CREATE TRIGGER boundary_recent_stamps_insert AFTER INSERT ON boundary_recent BEGIN
    UPDATE topic_stamps SET boundary = random() WHERE id = 0;
END;
CREATE TRIGGER boundary_recent_stamps_update AFTER UPDATE ON boundary_recent BEGIN
    UPDATE topic_stamps SET boundary = random() WHERE id = 0;
END;
CREATE TRIGGER boundary_recent_stamps_delete AFTER DELETE ON boundary_recent BEGIN
    UPDATE topic_stamps SET boundary = random() WHERE id = 0;
END;
