-- chalie-tui schema migration 15: the topic stability regulator (docs/cognition.md §5.6).
-- Every version of the regulated topic/boundary parameters, newest last (a JSON object of
-- parameter → value; the engine reads the newest each turn), and every change the regulator
-- made, with the pressure that drove it and, once re-checked, whether it was kept. IF NOT EXISTS:
-- tests that rewind a database to an older version run the later migrations again.
CREATE TABLE IF NOT EXISTS topic_params (
    version     INTEGER PRIMARY KEY,
    params      TEXT NOT NULL,
    author      TEXT NOT NULL,
    reason      TEXT,
    created_at  INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS topic_adjustments (
    id          INTEGER PRIMARY KEY,
    parameter   TEXT NOT NULL,
    old_value   REAL NOT NULL,
    new_value   REAL NOT NULL,
    pressure    TEXT NOT NULL,
    metrics     TEXT,
    reverted_at INTEGER,
    created_at  INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_topic_adjustments_created ON topic_adjustments(created_at);
