-- chalie-tui schema migration 12: the adaptive layer's directives applied to a turn
-- (docs/cognition.md §18), as JSON beside the decision that routed it, for the audit's detail.
-- NULL for turns before this migration and for turns that generated no reply.
ALTER TABLE routing_decisions ADD COLUMN adaptive TEXT;
