-- Lookups of one exchange's rows, made every turn or every memory job. Without these each
-- walked a table that grows with the whole history, so a long session's turns slowed as it
-- went on (10k turns: 24 -> 50 ms a turn, issue 23):
--   * the commit's UPDATE of the user line's mode and topic (chat_history), and the triage
--     outcome the next message fills in (triage_calibration);
--   * the encode worker's "already stored?" check (episodes);
--   * "is this exchange's memory work done?", asked by headless `ask` after every turn (jobs);
--     the expression is `JobsRepo::exchange_state`'s, word for word, so the planner uses it;
--   * the concept graph's pruning of its day of fired-concept rows after every reply
--     (`KvStateRepo::delete_older` on one namespace), which walked the whole namespace.
CREATE INDEX IF NOT EXISTS idx_chat_history_exchange ON chat_history(exchange_id, role);
CREATE INDEX IF NOT EXISTS idx_triage_exchange ON triage_calibration(exchange_id);
CREATE INDEX IF NOT EXISTS idx_episodes_exchange ON episodes(exchange_id) WHERE exchange_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_jobs_exchange ON jobs(queue, json_extract(payload, '$.exchange_id'));
CREATE INDEX IF NOT EXISTS idx_kv_state_age ON kv_state(namespace, updated_at);
