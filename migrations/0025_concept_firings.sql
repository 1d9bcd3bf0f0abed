-- How often and when a concept last fired move out of `semantic_concepts` into a narrow table
-- of their own, as its trace and potential did in migration 0021 (docs/architecture.md §9,
-- issue 22). Every turn's activation fires ~10 concepts; bumping the count on each one's wide
-- row, scattered over a table of ~1 GB at 1M memories, dirtied a page per concept, and the
-- turn's commit wrote each to the WAL. Here a row is ~20 bytes, so they share a few pages.
--
-- A row exists once its concept has fired; a missing row reads as never fired (count 0, no
-- time). It goes with its concept (ON DELETE CASCADE). A change here bumps no graph version:
-- the graph's triggers (migrations 0013, 0020) watch the concept row, and activation reads
-- neither value (only growth's confirmation of probationary nodes reads the count).
CREATE TABLE concept_firings (
    id            INTEGER PRIMARY KEY REFERENCES semantic_concepts(id) ON DELETE CASCADE,
    fired_count   INTEGER NOT NULL DEFAULT 0,
    last_fired_at INTEGER
);
INSERT INTO concept_firings (id, fired_count, last_fired_at)
    SELECT id, fired_count, last_fired_at FROM semantic_concepts
    WHERE fired_count <> 0 OR last_fired_at IS NOT NULL;
ALTER TABLE semantic_concepts DROP COLUMN fired_count;
ALTER TABLE semantic_concepts DROP COLUMN last_fired_at;
