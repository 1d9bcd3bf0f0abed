-- chalie-tui schema v1: every store the seed documents name.
-- Times are unix seconds (INTEGER) unless a column says otherwise; JSON columns hold
-- TEXT validated by the writer. Short-lived layers carry expires_at and are swept lazily.

-- ---------------------------------------------------------------- conversation
CREATE TABLE threads (
    id              TEXT PRIMARY KEY,
    title           TEXT,
    created_at      INTEGER NOT NULL,
    last_active_at  INTEGER NOT NULL
);

CREATE TABLE chat_history (
    id          INTEGER PRIMARY KEY,
    thread_id   TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    exchange_id TEXT NOT NULL,
    role        TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system')),
    content     TEXT NOT NULL,
    mode        TEXT,
    topic       TEXT,
    created_at  INTEGER NOT NULL
);
CREATE INDEX idx_chat_history_thread ON chat_history(thread_id, id);

-- Working memory: the last turns per thread (24 h, refreshed on append).
CREATE TABLE working_memory (
    id          INTEGER PRIMARY KEY,
    thread_id   TEXT NOT NULL,
    role        TEXT NOT NULL,
    content     TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL
);
CREATE INDEX idx_working_memory_thread ON working_memory(thread_id, id);

CREATE TABLE topics (
    id             INTEGER PRIMARY KEY,
    name           TEXT NOT NULL,
    thread_id      TEXT,
    centroid       BLOB,               -- f32 little-endian, L2-normalised
    message_count  INTEGER NOT NULL DEFAULT 0,
    avg_salience   REAL NOT NULL DEFAULT 0.5,
    confidence     REAL NOT NULL DEFAULT 1.0,
    consolidated   INTEGER NOT NULL DEFAULT 0,
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL
);
CREATE INDEX idx_topics_thread ON topics(thread_id, updated_at);

-- Adaptive boundary detector state, one per thread (TTL 86 400 s).
CREATE TABLE boundary_state (
    thread_id   TEXT PRIMARY KEY,
    state       TEXT NOT NULL,         -- JSON
    updated_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL
);

-- ---------------------------------------------------------------- short-lived memory
CREATE TABLE gists (
    id            INTEGER PRIMARY KEY,
    topic         TEXT NOT NULL,
    thread_id     TEXT,
    gist_type     TEXT NOT NULL,       -- decision|intent|preference|uncertainty|fact|commitment|drift|cold_start
    content       TEXT NOT NULL,
    confidence    REAL NOT NULL,       -- 0-10
    is_cold_start INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL
);
CREATE INDEX idx_gists_topic ON gists(topic, created_at);

CREATE TABLE facts (
    id          INTEGER PRIMARY KEY,
    topic       TEXT NOT NULL,
    key         TEXT NOT NULL,
    value       TEXT NOT NULL,
    confidence  REAL NOT NULL,         -- 0-1
    source      TEXT NOT NULL DEFAULT 'conversation',
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    UNIQUE (topic, key)
);

CREATE TABLE world_state (
    key         TEXT PRIMARY KEY,
    value       TEXT NOT NULL,
    updated_at  INTEGER NOT NULL,
    expires_at  INTEGER
);

-- Feeling-of-knowing per topic (partial recall matches, 0-5; 300 s).
CREATE TABLE fok (
    topic       TEXT PRIMARY KEY,
    score       INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL
);

-- ---------------------------------------------------------------- durable memory
CREATE TABLE episodes (
    id                            INTEGER PRIMARY KEY,
    intent                        TEXT,            -- JSON {type, direction}
    context                       TEXT,            -- JSON {situational, conversational, constraints}
    action                        TEXT,
    emotion                       TEXT,            -- JSON {type, valence, intensity, arc}
    outcome                       TEXT,
    gist                          TEXT NOT NULL,
    salience                      INTEGER NOT NULL DEFAULT 5 CHECK (salience BETWEEN 1 AND 10),
    freshness                     REAL NOT NULL DEFAULT 0.5,
    topic                         TEXT,
    thread_id                     TEXT,
    exchange_id                   TEXT,
    created_at                    INTEGER NOT NULL,
    updated_at                    INTEGER NOT NULL,
    last_accessed_at              INTEGER,
    access_count                  INTEGER NOT NULL DEFAULT 0,
    deleted_at                    INTEGER,
    activation_score              REAL NOT NULL DEFAULT 1.0,
    salience_factors              TEXT,            -- JSON
    open_loops                    TEXT,            -- JSON array
    semantic_consolidation_status TEXT NOT NULL DEFAULT 'pending',
    reliability                   TEXT NOT NULL DEFAULT 'reliable'
        CHECK (reliability IN ('reliable', 'uncertain', 'contradicted', 'superseded'))
);
CREATE INDEX idx_episodes_topic ON episodes(topic);
CREATE INDEX idx_episodes_created ON episodes(created_at);

CREATE VIRTUAL TABLE episodes_fts USING fts5(
    gist, action, content='episodes', content_rowid='id'
);
CREATE TRIGGER episodes_fts_ai AFTER INSERT ON episodes BEGIN
    INSERT INTO episodes_fts(rowid, gist, action) VALUES (new.id, new.gist, new.action);
END;
CREATE TRIGGER episodes_fts_ad AFTER DELETE ON episodes BEGIN
    INSERT INTO episodes_fts(episodes_fts, rowid, gist, action) VALUES ('delete', old.id, old.gist, old.action);
END;
CREATE TRIGGER episodes_fts_au AFTER UPDATE OF gist, action ON episodes BEGIN
    INSERT INTO episodes_fts(episodes_fts, rowid, gist, action) VALUES ('delete', old.id, old.gist, old.action);
    INSERT INTO episodes_fts(rowid, gist, action) VALUES (new.id, new.gist, new.action);
END;

-- Semantic memory: the concept graph that CrabPath activation runs on.
CREATE TABLE semantic_concepts (
    id                  INTEGER PRIMARY KEY,
    name                TEXT NOT NULL,
    concept_type        TEXT NOT NULL DEFAULT 'domain',
    definition          TEXT NOT NULL DEFAULT '',
    abstraction_level   INTEGER NOT NULL DEFAULT 3,
    domain              TEXT,
    strength            REAL NOT NULL DEFAULT 1.0,
    activation          REAL NOT NULL DEFAULT 1.0,
    confidence          REAL NOT NULL DEFAULT 0.5,
    utility             REAL NOT NULL DEFAULT 0.5,
    decay_resistance    REAL NOT NULL DEFAULT 0.5,
    consolidation_count INTEGER NOT NULL DEFAULT 0,
    access_count        INTEGER NOT NULL DEFAULT 0,
    source_episodes     TEXT NOT NULL DEFAULT '[]',   -- JSON array of episode ids
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL,
    last_accessed_at    INTEGER,
    last_reinforced_at  INTEGER,
    deleted_at          INTEGER,
    reliability         TEXT NOT NULL DEFAULT 'reliable'
        CHECK (reliability IN ('reliable', 'uncertain', 'contradicted', 'superseded')),
    UNIQUE (name, concept_type)
);

CREATE TABLE semantic_relationships (
    id                INTEGER PRIMARY KEY,
    source_id         INTEGER NOT NULL REFERENCES semantic_concepts(id) ON DELETE CASCADE,
    target_id         INTEGER NOT NULL REFERENCES semantic_concepts(id) ON DELETE CASCADE,
    rel_type          TEXT NOT NULL,     -- is-a|part-of|related-to|...|contradicts|temporal_evolution
    strength          REAL NOT NULL DEFAULT 0.5,
    weight            REAL NOT NULL DEFAULT 0.5 CHECK (weight BETWEEN -1.0 AND 1.0), -- signed graph edge
    confidence        REAL NOT NULL DEFAULT 0.5,
    bidirectional     INTEGER NOT NULL DEFAULT 0,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL,
    UNIQUE (source_id, target_id, rel_type)
);
CREATE INDEX idx_relationships_target ON semantic_relationships(target_id);

CREATE TABLE user_traits (
    id                  INTEGER PRIMARY KEY,
    trait_key           TEXT NOT NULL UNIQUE,
    trait_value         TEXT NOT NULL,
    category            TEXT NOT NULL DEFAULT 'general',
    confidence          REAL NOT NULL DEFAULT 0.5,
    source              TEXT NOT NULL DEFAULT 'inferred' CHECK (source IN ('explicit', 'inferred')),
    is_literal          INTEGER NOT NULL DEFAULT 1,
    reinforcement_count INTEGER NOT NULL DEFAULT 1,
    last_reinforced_at  INTEGER,
    last_conflict_at    INTEGER,
    at_floor_since      INTEGER,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL,
    reliability         TEXT NOT NULL DEFAULT 'reliable'
        CHECK (reliability IN ('reliable', 'uncertain', 'contradicted', 'superseded'))
);

-- Identity vectors (baseline, plasticity, inertia, range) for the self-model.
CREATE TABLE identity_vectors (
    name        TEXT PRIMARY KEY,
    baseline    REAL NOT NULL,
    current     REAL NOT NULL,
    plasticity  REAL NOT NULL,
    inertia     REAL NOT NULL,
    min_value   REAL NOT NULL,
    max_value   REAL NOT NULL,
    updated_at  INTEGER NOT NULL
);

-- Every deletion the decay engine (or the user) makes, so forgetting is auditable.
CREATE TABLE memory_deletions (
    id          INTEGER PRIMARY KEY,
    layer       TEXT NOT NULL,
    row_id      TEXT NOT NULL,
    reason      TEXT NOT NULL,
    detail      TEXT,                  -- JSON snapshot of what was deleted
    created_at  INTEGER NOT NULL
);

-- Embeddings (all-MiniLM-L6-v2, 384-d, L2-normalised), keyed by the owning row's id.
CREATE VIRTUAL TABLE episode_vec USING vec0(embedding float[384] distance_metric=cosine);
CREATE VIRTUAL TABLE concept_vec USING vec0(embedding float[384] distance_metric=cosine);
CREATE VIRTUAL TABLE trait_vec   USING vec0(embedding float[384] distance_metric=cosine);

-- ---------------------------------------------------------------- uncertainty engine (seed 002)
CREATE TABLE uncertainties (
    id                  TEXT PRIMARY KEY,
    memory_a_type       TEXT NOT NULL,
    memory_a_id         TEXT NOT NULL,
    memory_b_type       TEXT,
    memory_b_id         TEXT,
    uncertainty_type    TEXT NOT NULL CHECK (uncertainty_type IN ('contradiction', 'unverified', 'stale', 'ambiguous')),
    severity            TEXT NOT NULL CHECK (severity IN ('low', 'medium', 'high', 'critical')),
    detection_context   TEXT NOT NULL CHECK (detection_context IN ('ingestion', 'drift', 'pre_action', 'consolidation')),
    reasoning           TEXT,
    temporal_signal     INTEGER NOT NULL DEFAULT 0,
    surface_context     TEXT,
    state               TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'surfaced', 'resolved', 'decayed')),
    resolution_strategy TEXT,
    resolution_detail   TEXT,
    resolved_at         INTEGER,
    surfaced_count      INTEGER NOT NULL DEFAULT 0,
    last_surfaced_at    INTEGER,
    created_at          INTEGER NOT NULL
);
CREATE INDEX idx_uncertainties_state ON uncertainties(state);
CREATE INDEX idx_uncertainties_memory_a ON uncertainties(memory_a_type, memory_a_id);
CREATE INDEX idx_uncertainties_memory_b ON uncertainties(memory_b_type, memory_b_id);
CREATE INDEX idx_uncertainties_severity ON uncertainties(severity, state);

-- ---------------------------------------------------------------- routing (seed 000)
CREATE TABLE routing_decisions (
    id                    TEXT PRIMARY KEY,
    thread_id             TEXT,
    topic                 TEXT NOT NULL,
    exchange_id           TEXT,
    selected_mode         TEXT NOT NULL,   -- the mode actually delivered
    router_confidence     REAL,
    scores                TEXT NOT NULL,   -- JSON {mode: score}
    pre_routed            INTEGER NOT NULL DEFAULT 0,  -- social exit / forced mode: scores may be partial
    tiebreaker_used       INTEGER NOT NULL DEFAULT 0,
    tiebreaker_candidates TEXT,            -- JSON
    margin                REAL,
    effective_margin      REAL,
    signal_snapshot       TEXT NOT NULL,   -- JSON
    weight_snapshot       TEXT,            -- JSON
    weights_version       INTEGER,
    routing_time_ms       REAL,
    fallback              TEXT,            -- which fallback fired, if any
    reasoning             TEXT,
    feedback              TEXT,            -- JSON, after the next exchange
    reflection            TEXT,            -- JSON, at idle
    previous_mode         TEXT,
    created_at            INTEGER NOT NULL
);
CREATE INDEX idx_routing_created ON routing_decisions(created_at);
CREATE INDEX idx_routing_unreflected ON routing_decisions(created_at) WHERE reflection IS NULL;

-- Versioned router weights. The routing stability regulator is the only writer after v1.
CREATE TABLE router_weights (
    version     INTEGER PRIMARY KEY,
    weights     TEXT NOT NULL,         -- JSON
    author      TEXT NOT NULL,         -- 'default' | 'stability_regulator' | 'user'
    reason      TEXT,
    created_at  INTEGER NOT NULL
);

CREATE TABLE routing_adjustments (
    id          INTEGER PRIMARY KEY,
    parameter   TEXT NOT NULL,
    old_value   REAL NOT NULL,
    new_value   REAL NOT NULL,
    pressure    TEXT NOT NULL,
    metrics     TEXT,                  -- JSON before/after
    reverted_at INTEGER,
    created_at  INTEGER NOT NULL
);

CREATE TABLE triage_calibration (
    id                   INTEGER PRIMARY KEY,
    exchange_id          TEXT NOT NULL,
    source               TEXT NOT NULL CHECK (source IN ('llm', 'heuristic')),
    fallback_reason      TEXT,
    branch               TEXT,
    mode                 TEXT,
    skills               TEXT,           -- JSON array
    confidence_internal  REAL,
    confidence_tool_need REAL,
    freshness_risk       REAL,
    effort_estimate      TEXT,
    reasoning            TEXT,
    routed_mode          TEXT,
    outcome              TEXT,           -- JSON, filled from feedback
    latency_ms           REAL,
    created_at           INTEGER NOT NULL
);

CREATE TABLE cortex_iterations (
    id                  INTEGER PRIMARY KEY,
    exchange_id         TEXT NOT NULL,
    routing_decision_id TEXT,
    iteration_number    INTEGER NOT NULL,
    planner             TEXT NOT NULL,   -- 'model' | 'deterministic'
    actions_executed    TEXT NOT NULL,   -- JSON
    action_results      TEXT,            -- JSON
    execution_time_ms   REAL NOT NULL,
    fatigue             REAL NOT NULL,
    iteration_cost      REAL NOT NULL,
    mode                TEXT NOT NULL,
    termination_reason  TEXT,
    created_at          INTEGER NOT NULL
);
CREATE INDEX idx_cortex_exchange ON cortex_iterations(exchange_id, iteration_number);

CREATE TABLE interaction_log (
    id          INTEGER PRIMARY KEY,
    thread_id   TEXT,
    exchange_id TEXT,
    topic       TEXT,
    event_type  TEXT NOT NULL,
    payload     TEXT,                  -- JSON
    created_at  INTEGER NOT NULL
);
CREATE INDEX idx_interaction_exchange ON interaction_log(exchange_id);
CREATE INDEX idx_interaction_type ON interaction_log(event_type, created_at);

-- ---------------------------------------------------------------- skills' own stores
CREATE TABLE lists (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE COLLATE NOCASE,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);

CREATE TABLE list_items (
    id          INTEGER PRIMARY KEY,
    list_id     INTEGER NOT NULL REFERENCES lists(id) ON DELETE CASCADE,
    content     TEXT NOT NULL,
    checked     INTEGER NOT NULL DEFAULT 0,
    added_at    INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);
CREATE UNIQUE INDEX idx_list_items_unique ON list_items(list_id, content COLLATE NOCASE);

CREATE TABLE list_history (
    id          INTEGER PRIMARY KEY,
    list_id     INTEGER NOT NULL REFERENCES lists(id) ON DELETE CASCADE,
    action      TEXT NOT NULL,
    item        TEXT,
    created_at  INTEGER NOT NULL
);

CREATE TABLE reminders (
    id          INTEGER PRIMARY KEY,
    message     TEXT NOT NULL,
    due_at      TEXT NOT NULL,          -- ISO 8601 local time, as shown to the user
    due_ts      INTEGER NOT NULL,       -- unix seconds, for scheduling
    item_type   TEXT NOT NULL DEFAULT 'notification' CHECK (item_type IN ('notification', 'prompt')),
    recurrence  TEXT,                   -- daily|weekly|monthly|weekdays|hourly|interval:N
    state       TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'fired', 'cancelled')),
    fired_at    INTEGER,
    thread_id   TEXT,
    created_at  INTEGER NOT NULL
);
CREATE INDEX idx_reminders_due ON reminders(state, due_ts);

CREATE TABLE focus_sessions (
    id          INTEGER PRIMARY KEY,
    description TEXT NOT NULL,
    source      TEXT NOT NULL DEFAULT 'explicit' CHECK (source IN ('explicit', 'inferred')),
    embedding   BLOB,
    thread_id   TEXT,
    started_at  INTEGER NOT NULL,
    ends_at     INTEGER,
    cleared_at  INTEGER
);

CREATE TABLE persistent_tasks (
    id            INTEGER PRIMARY KEY,
    goal          TEXT NOT NULL,
    scope         TEXT,
    state         TEXT NOT NULL DEFAULT 'pending'
        CHECK (state IN ('pending', 'running', 'completed', 'expired', 'paused', 'cancelled')),
    priority      INTEGER NOT NULL DEFAULT 5 CHECK (priority BETWEEN 1 AND 10),
    plan          TEXT,                -- JSON DAG {steps, decomposition_confidence}
    progress      TEXT,                -- JSON checkpoint
    coverage      REAL NOT NULL DEFAULT 0,
    cycles        INTEGER NOT NULL DEFAULT 0,
    iterations    INTEGER NOT NULL DEFAULT 0,
    fatigue       REAL NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL,
    last_run_at   INTEGER,
    next_run_at   INTEGER
);

-- ---------------------------------------------------------------- background minds
CREATE TABLE drift_thoughts (
    id              INTEGER PRIMARY KEY,
    thought_type    TEXT NOT NULL,     -- reflection|question|hypothesis|insight
    content         TEXT NOT NULL,
    seed_concept_id INTEGER,
    seed_strategy   TEXT,
    energy          REAL,
    action          TEXT,              -- COMMUNICATE|REFLECT|...|NOTHING
    topic           TEXT,
    created_at      INTEGER NOT NULL
);

-- Noos regulator state per user (seed 003, JSON as in parameters §13.7).
CREATE TABLE regulator_state (
    user_id     TEXT PRIMARY KEY,
    state       TEXT NOT NULL,
    updated_at  INTEGER NOT NULL
);

-- Small named state blobs with optional expiry (drift state, cooldowns, autobiography cache).
CREATE TABLE kv_state (
    namespace   TEXT NOT NULL,
    key         TEXT NOT NULL,
    value       TEXT NOT NULL,         -- JSON
    updated_at  INTEGER NOT NULL,
    expires_at  INTEGER,
    PRIMARY KEY (namespace, key)
);

-- ---------------------------------------------------------------- durable work queue
-- A crash loses no queued memory work: 'running' jobs go back to 'queued' at start-up.
CREATE TABLE jobs (
    id           INTEGER PRIMARY KEY,
    queue        TEXT NOT NULL,
    payload      TEXT NOT NULL,        -- JSON
    state        TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'done', 'failed')),
    attempts     INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL DEFAULT 3,
    last_error   TEXT,
    run_after    INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
);
CREATE INDEX idx_jobs_ready ON jobs(queue, state, run_after);
