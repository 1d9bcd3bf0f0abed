-- chalie-tui schema migration 6: the uncertainty engine (seed 002, docs/cognition.md §10).
--
-- 1. user_traits loses UNIQUE(trait_key): a superseded value ("used to live in Porto") stays
--    beside the current one, two contradicted rivals live side by side, and two values the
--    user said are both true stay both reliable. Ids are kept, so trait_vec, its codes and the uncertainties' memory ids still point right.
CREATE TABLE user_traits_v5 (
    id                  INTEGER PRIMARY KEY,
    trait_key           TEXT NOT NULL,
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
INSERT INTO user_traits_v5 SELECT id, trait_key, trait_value, category, confidence, source, is_literal,
    reinforcement_count, last_reinforced_at, last_conflict_at, at_floor_since, created_at, updated_at, reliability
    FROM user_traits;
DROP TABLE user_traits;
ALTER TABLE user_traits_v5 RENAME TO user_traits;
CREATE INDEX idx_user_traits_key ON user_traits(trait_key, reliability);

CREATE TRIGGER user_traits_trgm_ai AFTER INSERT ON user_traits BEGIN
    INSERT INTO user_traits_trgm(rowid, trait_key, trait_value) VALUES (new.id, new.trait_key, new.trait_value);
END;
CREATE TRIGGER user_traits_trgm_ad AFTER DELETE ON user_traits BEGIN
    INSERT INTO user_traits_trgm(user_traits_trgm, rowid, trait_key, trait_value) VALUES ('delete', old.id, old.trait_key, old.trait_value);
END;
CREATE TRIGGER user_traits_trgm_au AFTER UPDATE OF trait_key, trait_value ON user_traits BEGIN
    INSERT INTO user_traits_trgm(user_traits_trgm, rowid, trait_key, trait_value) VALUES ('delete', old.id, old.trait_key, old.trait_value);
    INSERT INTO user_traits_trgm(rowid, trait_key, trait_value) VALUES (new.id, new.trait_key, new.trait_value);
END;
INSERT INTO user_traits_trgm(user_traits_trgm) VALUES ('rebuild');

-- 2. Facts and gists carry user statements too: the same four states.
ALTER TABLE facts ADD COLUMN reliability TEXT NOT NULL DEFAULT 'reliable'
    CHECK (reliability IN ('reliable', 'uncertain', 'contradicted', 'superseded'));
ALTER TABLE gists ADD COLUMN reliability TEXT NOT NULL DEFAULT 'reliable'
    CHECK (reliability IN ('reliable', 'uncertain', 'contradicted', 'superseded'));

-- The check looks facts up by key across topics.
CREATE INDEX idx_facts_key ON facts(key);

-- 3. Records are looked up by the memory they name and by state on every turn.
CREATE INDEX IF NOT EXISTS idx_uncertainties_open_created ON uncertainties(state, created_at);

-- 4. Chalie's uncertainty tolerance (identity trait; docs/cognition.md §10.6).
INSERT OR IGNORE INTO identity_vectors (name, baseline, current, plasticity, inertia, min_value, max_value, updated_at)
    VALUES ('uncertainty_tolerance', 0.5, 0.5, 0.02, 0.20, 0.2, 0.8, 0);
