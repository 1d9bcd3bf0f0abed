-- Indexes for the reads every turn makes, so none of them walks a whole table at 100k+ memories
-- (docs/architecture.md §9). Partial indexes hold only the rows the turn looks for: after an
-- activation only the few nodes that fired carry a trace or a potential, and only grown nodes
-- are on probation, so each of these stays a handful of entries however large the graph is.
CREATE INDEX IF NOT EXISTS idx_concepts_traced ON semantic_concepts(id) WHERE trace <> 0;
CREATE INDEX IF NOT EXISTS idx_concepts_charged ON semantic_concepts(id) WHERE potential <> 0;
CREATE INDEX IF NOT EXISTS idx_concepts_probation ON semantic_concepts(id)
    WHERE probation = 1 AND deleted_at IS NULL;
CREATE INDEX IF NOT EXISTS idx_concepts_grown ON semantic_concepts(created_at) WHERE graph_key IS NOT NULL;
-- The self model's "latest ACT loop" (store::self_state).
CREATE INDEX IF NOT EXISTS idx_cortex_created ON cortex_iterations(created_at);
