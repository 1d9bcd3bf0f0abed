-- What changed in the concept graph, row by row (docs/cognition.md §9.4.7). Migration 0013's
-- version says only that the graph moved, so a turn after any write reloaded the whole graph:
-- at 1M memories (250k concepts and edges) that read was ~280 ms, twice a turn, because
-- learning writes edge weights every turn. Each trigger now also logs the row it changed, so
-- the kept copy catches up by re-reading just those rows (memory::graph::cache).
--
-- One entry per version bump, in the same trigger, so a copy at version V with the log read up
-- to `seq` S is exactly up to date when the entries past S number the versions past V; any
-- other count (a pruned log, a version row reset by a forget) sends it back to a full load.
-- `old_a`/`old_b` are the row's state before the write: a concept's id, an edge's two ends,
-- so the copy can drop an edge from where it was. Only the newest 4096 entries are kept.
CREATE TABLE IF NOT EXISTS graph_changes (
    seq    INTEGER PRIMARY KEY,
    kind   INTEGER NOT NULL,  -- 0 a concept, 1 an edge
    row_id INTEGER NOT NULL,
    old_a  INTEGER,
    old_b  INTEGER
);

DROP TRIGGER IF EXISTS graph_version_concept_insert;
DROP TRIGGER IF EXISTS graph_version_concept_update;
DROP TRIGGER IF EXISTS graph_version_concept_delete;
DROP TRIGGER IF EXISTS graph_version_edge_insert;
DROP TRIGGER IF EXISTS graph_version_edge_update;
DROP TRIGGER IF EXISTS graph_version_edge_delete;

CREATE TRIGGER graph_version_concept_insert AFTER INSERT ON semantic_concepts BEGIN
    UPDATE kv_state SET value = CAST(value AS INTEGER) + 1 WHERE namespace = 'graph' AND key = 'version';
    INSERT INTO graph_changes (kind, row_id, old_a, old_b) VALUES (0, NEW.id, NULL, NULL);
    DELETE FROM graph_changes WHERE seq <= last_insert_rowid() - 4096;
END;
CREATE TRIGGER graph_version_concept_update AFTER UPDATE OF id, name, threshold, probation, deleted_at
    ON semantic_concepts BEGIN
    UPDATE kv_state SET value = CAST(value AS INTEGER) + 1 WHERE namespace = 'graph' AND key = 'version';
    INSERT INTO graph_changes (kind, row_id, old_a, old_b) VALUES (0, NEW.id, OLD.id, NULL);
    DELETE FROM graph_changes WHERE seq <= last_insert_rowid() - 4096;
END;
CREATE TRIGGER graph_version_concept_delete AFTER DELETE ON semantic_concepts BEGIN
    UPDATE kv_state SET value = CAST(value AS INTEGER) + 1 WHERE namespace = 'graph' AND key = 'version';
    INSERT INTO graph_changes (kind, row_id, old_a, old_b) VALUES (0, OLD.id, OLD.id, NULL);
    DELETE FROM graph_changes WHERE seq <= last_insert_rowid() - 4096;
END;
CREATE TRIGGER graph_version_edge_insert AFTER INSERT ON semantic_relationships BEGIN
    UPDATE kv_state SET value = CAST(value AS INTEGER) + 1 WHERE namespace = 'graph' AND key = 'version';
    INSERT INTO graph_changes (kind, row_id, old_a, old_b) VALUES (1, NEW.id, NULL, NULL);
    DELETE FROM graph_changes WHERE seq <= last_insert_rowid() - 4096;
END;
CREATE TRIGGER graph_version_edge_update AFTER UPDATE OF id, source_id, target_id, weight, bidirectional
    ON semantic_relationships BEGIN
    UPDATE kv_state SET value = CAST(value AS INTEGER) + 1 WHERE namespace = 'graph' AND key = 'version';
    INSERT INTO graph_changes (kind, row_id, old_a, old_b) VALUES (1, NEW.id, OLD.source_id, OLD.target_id);
    DELETE FROM graph_changes WHERE seq <= last_insert_rowid() - 4096;
END;
CREATE TRIGGER graph_version_edge_delete AFTER DELETE ON semantic_relationships BEGIN
    UPDATE kv_state SET value = CAST(value AS INTEGER) + 1 WHERE namespace = 'graph' AND key = 'version';
    INSERT INTO graph_changes (kind, row_id, old_a, old_b) VALUES (1, OLD.id, OLD.source_id, OLD.target_id);
    DELETE FROM graph_changes WHERE seq <= last_insert_rowid() - 4096;
END;
