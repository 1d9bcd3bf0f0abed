-- The traits every turn's context reads (store::traits): the injected ones in their assembly
-- order, and the superseded values shown as past. Without these both walked every trait and
-- sorted them (0.7 ms a turn at 5k traits, docs/architecture.md §9). The first index's
-- expressions are the `for_context` query's ORDER BY, word for word, so the planner reads
-- it in order and stops at the limit; the second holds only superseded rows.
CREATE INDEX IF NOT EXISTS idx_traits_context
    ON user_traits(reliability = 'contradicted', (source = 'explicit') DESC, confidence DESC, updated_at DESC)
    WHERE reliability != 'superseded';
CREATE INDEX IF NOT EXISTS idx_traits_past ON user_traits(updated_at DESC, id DESC) WHERE reliability = 'superseded';
-- The adaptive layer's micro-preferences (`in_category`), read every turn: one category's rows.
CREATE INDEX IF NOT EXISTS idx_traits_category
    ON user_traits(category, confidence DESC, updated_at DESC, id DESC) WHERE reliability != 'superseded';
