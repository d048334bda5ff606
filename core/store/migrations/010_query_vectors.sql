-- Schema version 10: the query vector of each logged search (docs/scoring.md "Feedback from similar
-- queries"). A memory used after a search is a relevance label for that search (implicit_feedback); with
-- the search's query vector, a later query like it finds the memories that answered it. Dropped with its
-- search (retention, `limbic history clear`). The vector is float32 bytes of the model named beside it;
-- vectors of another model are never compared.
CREATE TABLE search_query_vectors (
    event_id INTEGER PRIMARY KEY REFERENCES search_events(id) ON DELETE CASCADE,
    model    TEXT NOT NULL,
    vector   BLOB NOT NULL
);

-- The labels of the candidates of a search are read by entity.
CREATE INDEX implicit_feedback_entity ON implicit_feedback(entity_id);
