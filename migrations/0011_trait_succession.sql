-- chalie-tui schema migration 11: a superseded trait names the row that replaced it
-- (seed 002's temporal_evolution between two values of one slot; docs/cognition.md §10.6).
-- NULL for a current row, and for a value the user only placed in the past ("I no longer
-- …") with nothing after it. Not a foreign key: forgetting the newer row leaves the link
-- dangling on purpose (the older value still ended then), and readers check the row exists.
ALTER TABLE user_traits ADD COLUMN superseded_by INTEGER;

-- Supersessions recorded before: the resolved records that name the old row and its successor.
UPDATE user_traits SET superseded_by = (
    SELECT CAST(u.memory_b_id AS INTEGER) FROM uncertainties u
    WHERE u.memory_a_type = 'trait' AND u.memory_a_id = CAST(user_traits.id AS TEXT)
      AND u.memory_b_type = 'trait' AND u.state = 'resolved'
      AND u.resolution_strategy IN ('temporal_supersede', 'confidence_dominance')
    ORDER BY u.resolved_at DESC LIMIT 1)
WHERE reliability = 'superseded';
