-- chalie-tui schema v9: the drift engine (docs/cognition.md §14).
--
-- A stored thought knows who wrote it and where it stands: kept (stored only), deferred (a
-- COMMUNICATE waiting out quiet hours, dropped at expires_at), delivered (it reached the
-- chat) or expired. `cycle` is the cycle's report as JSON (the pane's detail view).
ALTER TABLE drift_thoughts ADD COLUMN author TEXT;
ALTER TABLE drift_thoughts ADD COLUMN state TEXT NOT NULL DEFAULT 'kept'
    CHECK (state IN ('kept', 'deferred', 'delivered', 'expired'));
ALTER TABLE drift_thoughts ADD COLUMN expires_at INTEGER;
ALTER TABLE drift_thoughts ADD COLUMN delivered_at INTEGER;
ALTER TABLE drift_thoughts ADD COLUMN cycle TEXT;
CREATE INDEX idx_drift_thoughts_state ON drift_thoughts(state, created_at);

-- Curiosity threads (SEED_THREAD): an open question the assistant brings back when its topic
-- returns.
CREATE TABLE curiosity_threads (
    id               INTEGER PRIMARY KEY,
    question         TEXT NOT NULL,
    seed_concept_id  INTEGER,
    topic            TEXT,
    drift_thought_id INTEGER,
    state            TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'surfaced', 'closed')),
    created_at       INTEGER NOT NULL,
    surfaced_at      INTEGER
);
CREATE INDEX idx_curiosity_threads_topic ON curiosity_threads(topic, state);
