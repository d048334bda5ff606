-- Schema version 5: the full-text index stems English words (docs/scoring.md "Full-text
-- index"). FTS5 cannot change a tokenizer in place: the table is recreated and filled again from the
-- entities and their live observations, joined with " | " in creation order as core/store/indexing.py does.
DROP TABLE entity_fts;

CREATE VIRTUAL TABLE entity_fts USING fts5(
    name, entity_type, obs_text,
    tokenize = 'porter unicode61 remove_diacritics 2'
);

INSERT INTO entity_fts(rowid, name, entity_type, obs_text)
SELECT e.id, e.name, e.entity_type,
       COALESCE((SELECT group_concat(o.content, ' | ' ORDER BY o.id) FROM observations o
                 WHERE o.entity_id = e.id AND o.superseded_at IS NULL), '')
FROM entities e;

-- Merge the segments the bulk insert leaves into one b-tree (10k Debian entities: 1,317 pages → 891;
-- fewer segments to read per query).
INSERT INTO entity_fts(entity_fts) VALUES ('optimize');
