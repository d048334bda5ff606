-- Schema version 8: entities in creation order, for the context of a search result (docs/scoring.md
-- "Context"): the memories written just before and after an entity are found through this index.
CREATE INDEX entities_created ON entities(created_at, id);
