-- Schema version 12: curation (docs/curation.md).
-- What a person looked at in the review queue and chose to keep as it is ("keep both", "keep"), so that it
-- is not proposed again. The key names the decision's subjects by id: "observations:<a>:<b>" (two
-- observations, a < b, that are not duplicates), "entities:<a>:<b>" (two entities that are not the same
-- thing), "split:<entity id>", "orphan:<entity id>", "placeholder:<entity id>". No foreign keys, so that
-- undoing a deletion (which restores the old ids) finds them again; keys of rows deleted for good are
-- never matched.
CREATE TABLE curation_kept (
    key TEXT PRIMARY KEY,
    at  REAL NOT NULL
) WITHOUT ROWID;

-- Reflections: what a person or an agent thought about a memory, in prose (mcp-memory docs "Architecture",
-- "ReflectionsMixin"), about one entity, one relation (source, type, target), or the memory as a whole
-- (global). Authors are free text, moods an open list. Deleting an entity deletes the reflections about it
-- (and about its relations); merging entities moves them (core/store/writes.py).
CREATE TABLE reflections (
    id            INTEGER PRIMARY KEY,
    target_type   TEXT NOT NULL CHECK (target_type IN ('entity', 'relation', 'global')),
    entity_id     INTEGER REFERENCES entities(id) ON DELETE CASCADE,  -- the entity, or the relation's source
    other_id      INTEGER REFERENCES entities(id) ON DELETE CASCADE,  -- the relation's target
    relation_type TEXT,
    author        TEXT NOT NULL,
    content       TEXT NOT NULL,
    mood          TEXT,
    created_at    REAL NOT NULL,
    updated_at    REAL NOT NULL,
    CHECK ((target_type = 'global') = (entity_id IS NULL)),
    CHECK ((target_type = 'relation') = (other_id IS NOT NULL AND relation_type IS NOT NULL))
);
CREATE INDEX reflections_entity ON reflections(entity_id);
CREATE INDEX reflections_other ON reflections(other_id);

-- Keyword search over reflections (external content, kept in step by triggers).
CREATE VIRTUAL TABLE reflection_fts USING fts5(
    author, mood, content,
    content = 'reflections', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER reflections_fts_insert AFTER INSERT ON reflections BEGIN
    INSERT INTO reflection_fts(rowid, author, mood, content) VALUES (new.id, new.author, new.mood, new.content);
END;
CREATE TRIGGER reflections_fts_delete AFTER DELETE ON reflections BEGIN
    INSERT INTO reflection_fts(reflection_fts, rowid, author, mood, content)
    VALUES ('delete', old.id, old.author, old.mood, old.content);
END;
CREATE TRIGGER reflections_fts_update AFTER UPDATE OF author, mood, content ON reflections BEGIN
    INSERT INTO reflection_fts(reflection_fts, rowid, author, mood, content)
    VALUES ('delete', old.id, old.author, old.mood, old.content);
    INSERT INTO reflection_fts(rowid, author, mood, content) VALUES (new.id, new.author, new.mood, new.content);
END;

-- The vector of each reflection's text (float32 bytes of the model named beside it); made outside the write
-- lock and kept until the text changes. Vectors of another model are never compared.
CREATE TABLE reflection_vectors (
    reflection_id INTEGER PRIMARY KEY REFERENCES reflections(id) ON DELETE CASCADE,
    model         TEXT NOT NULL,
    vector        BLOB NOT NULL
);
