-- Schema version 4: observations are the unit of semantic retrieval.
-- The vec0 table observation_embeddings (rowid = observation id, cosine) is created by the store next to
-- entity_embeddings once the embedding dimension is known. This table records, per stored observation
-- vector, the entity it belongs to, the model that made it and a hash of the embedded text, so that only
-- new or changed observations are embedded again. No foreign keys: vec0 rows have none either, and the
-- store deletes both together (core/store/indexing.py); a meta row must outlive its observation long
-- enough for that.
CREATE TABLE observation_embedding_meta (
    observation_id INTEGER PRIMARY KEY,
    entity_id      INTEGER NOT NULL,
    model          TEXT NOT NULL,
    text_hash      INTEGER NOT NULL,
    updated_at     REAL NOT NULL
);
CREATE INDEX observation_embedding_meta_entity ON observation_embedding_meta(entity_id);
CREATE INDEX observation_embedding_meta_model ON observation_embedding_meta(model);
