-- Schema version 7: vectors are computed outside the write transaction.
-- A write commits its text, FTS rows and a pending mark in one transaction; the vectors of the entities
-- marked here are computed afterwards and written in their own short transaction, which removes the
-- mark only if no later write bumped its generation. The marks survive a crash: what was pending is
-- computed again on the next start.
CREATE TABLE pending_vectors (
    entity_id  INTEGER PRIMARY KEY REFERENCES entities(id) ON DELETE CASCADE,
    generation INTEGER NOT NULL DEFAULT 1,
    queued_at  REAL NOT NULL
);
-- The hash of the text an entity vector was made from, so that an unchanged passage is never embedded again
-- (NULL for vectors made before: they are replaced the next time their entity is written).
ALTER TABLE entity_embedding_meta ADD COLUMN text_hash INTEGER;
-- Entities whose vectors were never all made are pending from now on.
INSERT INTO pending_vectors(entity_id, queued_at)
SELECT e.id, unixepoch('subsec') FROM entities e
WHERE NOT EXISTS (SELECT 1 FROM entity_embedding_meta m WHERE m.entity_id = e.id)
   OR EXISTS (SELECT 1 FROM observations o
              WHERE o.entity_id = e.id AND o.superseded_at IS NULL
                AND NOT EXISTS (SELECT 1 FROM observation_embedding_meta om WHERE om.observation_id = o.id));
