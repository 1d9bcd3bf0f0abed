-- chalie-tui schema v4: semantic consolidation and the decay engine.
--
-- A concept at its strength floor is stamped like a trait, so the decay engine can forget an
-- unreliable concept after 7 days there (parameters §6.6, seed 002 natural decay).
ALTER TABLE semantic_concepts ADD COLUMN at_floor_since INTEGER;

-- The consolidation trigger counts pending episodes on every episode write.
CREATE INDEX idx_episodes_semantic_pending ON episodes(id)
    WHERE semantic_consolidation_status = 'pending' AND deleted_at IS NULL;
