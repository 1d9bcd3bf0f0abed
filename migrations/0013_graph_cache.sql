-- The concept graph's version (docs/cognition.md §9.4.7): a turn keeps the graph it loaded and
-- reloads only when this moved. Every write that changes what activation reads bumps it, whoever
-- makes it (the semantic worker, learning, growth, decay, drift, a forget): the triggers below.
-- A node's trace, potential and firing counts are left out: activation with reset on reads none
-- of them, and the turn writes them every time something fires.
INSERT INTO kv_state (namespace, key, value, updated_at) VALUES ('graph', 'version', '0', 0)
    ON CONFLICT (namespace, key) DO NOTHING;

CREATE TRIGGER IF NOT EXISTS graph_version_concept_insert AFTER INSERT ON semantic_concepts BEGIN
    UPDATE kv_state SET value = CAST(value AS INTEGER) + 1 WHERE namespace = 'graph' AND key = 'version';
END;
CREATE TRIGGER IF NOT EXISTS graph_version_concept_update AFTER UPDATE OF id, name, threshold, probation, deleted_at
    ON semantic_concepts BEGIN
    UPDATE kv_state SET value = CAST(value AS INTEGER) + 1 WHERE namespace = 'graph' AND key = 'version';
END;
CREATE TRIGGER IF NOT EXISTS graph_version_concept_delete AFTER DELETE ON semantic_concepts BEGIN
    UPDATE kv_state SET value = CAST(value AS INTEGER) + 1 WHERE namespace = 'graph' AND key = 'version';
END;
CREATE TRIGGER IF NOT EXISTS graph_version_edge_insert AFTER INSERT ON semantic_relationships BEGIN
    UPDATE kv_state SET value = CAST(value AS INTEGER) + 1 WHERE namespace = 'graph' AND key = 'version';
END;
CREATE TRIGGER IF NOT EXISTS graph_version_edge_update AFTER UPDATE OF id, source_id, target_id, weight, bidirectional
    ON semantic_relationships BEGIN
    UPDATE kv_state SET value = CAST(value AS INTEGER) + 1 WHERE namespace = 'graph' AND key = 'version';
END;
CREATE TRIGGER IF NOT EXISTS graph_version_edge_delete AFTER DELETE ON semantic_relationships BEGIN
    UPDATE kv_state SET value = CAST(value AS INTEGER) + 1 WHERE namespace = 'graph' AND key = 'version';
END;
