-- Schema version 2: which model made each stored vector.
CREATE TABLE entity_embedding_meta (
    entity_id  INTEGER PRIMARY KEY REFERENCES entities(id) ON DELETE CASCADE,
    model      TEXT NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX entity_embedding_meta_model ON entity_embedding_meta(model);
