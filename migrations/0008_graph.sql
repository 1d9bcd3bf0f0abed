-- chalie-tui schema v8: the concept graph becomes the activation graph (seed 004, parameters §12,
-- docs/cognition.md §9.4).
--
-- Edges: `weight` is the one signed owner of an edge's size (the old `strength` column said the
-- same thing twice and the two could disagree); the bound widens from ±1 to the learning rule's
-- ±10, which SQLite can only do by rebuilding the table. Symmetric edges stay stored once.
CREATE TABLE semantic_relationships_v7 (
    id                INTEGER PRIMARY KEY,
    source_id         INTEGER NOT NULL REFERENCES semantic_concepts(id) ON DELETE CASCADE,
    target_id         INTEGER NOT NULL REFERENCES semantic_concepts(id) ON DELETE CASCADE,
    rel_type          TEXT NOT NULL,     -- is-a|part-of|related-to|...|contradicts|temporal_evolution|co-fires
    weight            REAL NOT NULL DEFAULT 0.5 CHECK (weight BETWEEN -10.0 AND 10.0), -- signed: < 0 inhibits
    confidence        REAL NOT NULL DEFAULT 0.5,
    bidirectional     INTEGER NOT NULL DEFAULT 0,
    -- extracted: from consolidation; learned: a co-firing pair the learning rule created.
    origin            TEXT NOT NULL DEFAULT 'extracted' CHECK (origin IN ('extracted', 'learned', 'router')),
    fired_count       INTEGER NOT NULL DEFAULT 0,
    last_fired_at     INTEGER,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL,
    UNIQUE (source_id, target_id, rel_type)
);
INSERT INTO semantic_relationships_v7 (id, source_id, target_id, rel_type, weight, confidence, bidirectional,
                                       created_at, updated_at)
    SELECT id, source_id, target_id, rel_type,
           CASE WHEN weight < 0 THEN -abs(strength) ELSE abs(strength) END,
           confidence, bidirectional, created_at, updated_at
    FROM semantic_relationships;
DROP TABLE semantic_relationships;
ALTER TABLE semantic_relationships_v7 RENAME TO semantic_relationships;
CREATE INDEX idx_relationships_target ON semantic_relationships(target_id);
CREATE INDEX idx_relationships_source ON semantic_relationships(source_id);

-- Nodes: integrate-and-fire state. `potential` only outlives a call when activation runs with
-- reset off (neurogenesis); `trace` is the last firing energy, decayed per activation.
ALTER TABLE semantic_concepts ADD COLUMN threshold REAL NOT NULL DEFAULT 1.0;
ALTER TABLE semantic_concepts ADD COLUMN potential REAL NOT NULL DEFAULT 0.0;
ALTER TABLE semantic_concepts ADD COLUMN trace REAL NOT NULL DEFAULT 0.0;
ALTER TABLE semantic_concepts ADD COLUMN fired_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE semantic_concepts ADD COLUMN last_fired_at INTEGER;
-- A node grown from a message (neurogenesis) is probationary until confirmed, then durable.
ALTER TABLE semantic_concepts ADD COLUMN probation INTEGER NOT NULL DEFAULT 0;
-- Its deterministic id (`auto:` + 12 hex of SHA-256 of the normalised text) and how often
-- messages asked for it again.
ALTER TABLE semantic_concepts ADD COLUMN graph_key TEXT;
ALTER TABLE semantic_concepts ADD COLUMN seed_count INTEGER NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX idx_concepts_graph_key ON semantic_concepts(graph_key) WHERE graph_key IS NOT NULL;
