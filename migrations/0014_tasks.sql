-- chalie-tui schema migration 14: persistent tasks (docs/cognition.md §17).
-- 1. `persistent_tasks` gains the user-confirmation state and the thread a task was asked
--    for in (its progress messages go there). The plan (steps with their dependencies, state
--    and result) and the progress checkpoint stay JSON in the task's row, so one UPDATE
--    checkpoints a whole cycle. SQLite cannot change a CHECK in place: the table is rebuilt.
CREATE TABLE persistent_tasks_new (
    id            INTEGER PRIMARY KEY,
    goal          TEXT NOT NULL,
    scope         TEXT,
    state         TEXT NOT NULL DEFAULT 'pending'
        CHECK (state IN ('awaiting_confirmation', 'pending', 'running', 'completed', 'expired', 'paused', 'cancelled')),
    priority      INTEGER NOT NULL DEFAULT 5 CHECK (priority BETWEEN 1 AND 10),
    plan          TEXT,                -- JSON {steps: [{id, description, depends_on, tools_needed, state, result}], decomposition_confidence, source}
    progress      TEXT,                -- JSON checkpoint {last_summary, surfaced_coverage, checkpoints: [...]}
    coverage      REAL NOT NULL DEFAULT 0,
    cycles        INTEGER NOT NULL DEFAULT 0,
    iterations    INTEGER NOT NULL DEFAULT 0,
    fatigue       REAL NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL,
    last_run_at   INTEGER,
    next_run_at   INTEGER,
    thread_id     TEXT
);
INSERT INTO persistent_tasks_new (id, goal, scope, state, priority, plan, progress, coverage, cycles, iterations,
                                  fatigue, created_at, updated_at, expires_at, last_run_at, next_run_at)
    SELECT id, goal, scope, state, priority, plan, progress, coverage, cycles, iterations,
           fatigue, created_at, updated_at, expires_at, last_run_at, next_run_at FROM persistent_tasks;
DROP TABLE persistent_tasks;
ALTER TABLE persistent_tasks_new RENAME TO persistent_tasks;
CREATE INDEX idx_tasks_state ON persistent_tasks(state, priority, created_at);

-- 2. An ACT iteration is owned by an exchange or by a task's step: `exchange_id` may be NULL
--    when `task_id` (and `step_index`, the step's 0-based position in the task's plan) names the owner.
CREATE TABLE cortex_iterations_new (
    id                  INTEGER PRIMARY KEY,
    exchange_id         TEXT,
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
    created_at          INTEGER NOT NULL,
    task_id             INTEGER,
    step_index          INTEGER,
    CHECK (exchange_id IS NOT NULL OR task_id IS NOT NULL)
);
INSERT INTO cortex_iterations_new (id, exchange_id, routing_decision_id, iteration_number, planner, actions_executed,
                                   action_results, execution_time_ms, fatigue, iteration_cost, mode,
                                   termination_reason, created_at)
    SELECT id, exchange_id, routing_decision_id, iteration_number, planner, actions_executed,
           action_results, execution_time_ms, fatigue, iteration_cost, mode, termination_reason, created_at
    FROM cortex_iterations;
DROP TABLE cortex_iterations;
ALTER TABLE cortex_iterations_new RENAME TO cortex_iterations;
CREATE INDEX idx_cortex_exchange ON cortex_iterations(exchange_id, iteration_number);
CREATE INDEX idx_cortex_task ON cortex_iterations(task_id, step_index, iteration_number);
