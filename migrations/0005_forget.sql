-- chalie-tui schema migration 5: forgetting leaves no bytes behind.
--
-- FTS5 keeps a deleted row's terms in older index segments until they are merged, so a
-- forgotten word stayed readable in the file. With the secure-delete option each delete
-- rewrites the index pages that held the row's terms at once; one optimize purges what
-- earlier deletes left.
INSERT INTO episodes_fts(episodes_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO user_traits_trgm(user_traits_trgm, rank) VALUES ('secure-delete', 1);
INSERT INTO facts_trgm(facts_trgm, rank) VALUES ('secure-delete', 1);
INSERT INTO gists_trgm(gists_trgm, rank) VALUES ('secure-delete', 1);
INSERT INTO concepts_trgm(concepts_trgm, rank) VALUES ('secure-delete', 1);
INSERT INTO chat_user_trgm(chat_user_trgm, rank) VALUES ('secure-delete', 1);
INSERT INTO episodes_fts(episodes_fts) VALUES ('optimize');
INSERT INTO user_traits_trgm(user_traits_trgm) VALUES ('optimize');
INSERT INTO facts_trgm(facts_trgm) VALUES ('optimize');
INSERT INTO gists_trgm(gists_trgm) VALUES ('optimize');
INSERT INTO concepts_trgm(concepts_trgm) VALUES ('optimize');
INSERT INTO chat_user_trgm(chat_user_trgm) VALUES ('optimize');

-- A forget's record holds no content: the snapshots older forgets kept go.
UPDATE memory_deletions SET detail = NULL WHERE reason = 'user';
