-- A concept's activation state (trace, potential) moves out of `semantic_concepts` into a narrow
-- table of its own (docs/architecture.md §9, issue 22). Every turn's activation decays the trace
-- of every traced concept (~870 at 1M memories) and clears the potentials: in the wide concept
-- rows, scattered over the table by id, that dirtied a page per row, and the turn's commit
-- wrote them all to the WAL (~1.9 ms of a 9.5 ms turn at 1M). Here a row is ~30 bytes, so the
-- traced concepts share a few hot pages.
--
-- A row exists only while its trace or potential is non-zero (`ConceptsRepo::save_activation`
-- deletes it when both reach 0); a missing row reads as 0. It goes with its concept
-- (ON DELETE CASCADE), and a change here bumps no graph version: the graph's triggers
-- (migrations 0013, 0020) watch the concept row, and activation with reset on (every turn's)
-- reads neither value.
CREATE TABLE concept_traces (
    id        INTEGER PRIMARY KEY REFERENCES semantic_concepts(id) ON DELETE CASCADE,
    trace     REAL NOT NULL DEFAULT 0.0,
    potential REAL NOT NULL DEFAULT 0.0
);
INSERT INTO concept_traces (id, trace, potential)
    SELECT id, trace, potential FROM semantic_concepts WHERE trace <> 0 OR potential <> 0;
DROP INDEX IF EXISTS idx_concepts_traced;
DROP INDEX IF EXISTS idx_concepts_charged;
ALTER TABLE semantic_concepts DROP COLUMN trace;
ALTER TABLE semantic_concepts DROP COLUMN potential;

-- The turn's "when did this thread's user write before" (`ChatRepo::user_message_times_before`,
-- up to 200 rows) read each row through `idx_chat_history_thread` and then the wide row itself;
-- this partial index holds every column the read needs, for the user's lines only. It leaves
-- out `exchange_id` on purpose: with it, the planner took this index for the commit's UPDATE
-- of one exchange's line too, walking the thread's lines instead of `idx_chat_history_exchange`
-- (the read leaves its own exchange out by rowid instead). `role` is there so the index covers
-- the read's WHERE.
CREATE INDEX IF NOT EXISTS idx_chat_history_user_times ON chat_history(thread_id, id, created_at, role)
    WHERE role = 'user';
-- The turn's "last decision in this thread" (`RoutingRepo::latest_unjudged_in_thread`) walked
-- `idx_routing_created` backwards past every other thread's decisions.
CREATE INDEX IF NOT EXISTS idx_routing_thread ON routing_decisions(thread_id, created_at);
