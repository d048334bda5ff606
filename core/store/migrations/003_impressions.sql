-- Schema version 3: impressions are not accesses.
-- Being returned by a search is an impression: each logged search keeps its shown entities with their
-- rank in search_results, and entity_impressions keeps the running total per entity. Only a use
-- (open_nodes, get_entity, mark_used, the GUI opening an entity) counts as an access, an access day or
-- a co-occurrence. Access counts, days and co-occurrences stored before this version (when searches
-- still counted as accesses) are kept as they are: nothing of an existing database's history is lost.

CREATE TABLE entity_impressions (
    entity_id        INTEGER PRIMARY KEY REFERENCES entities(id) ON DELETE CASCADE,
    impression_count INTEGER NOT NULL DEFAULT 0,
    last_impression  REAL NOT NULL
);

INSERT INTO entity_impressions(entity_id, impression_count, last_impression)
SELECT r.entity_id, count(*), max(s.at)
FROM search_results r
JOIN search_events s ON s.id = r.event_id
JOIN entities e ON e.id = r.entity_id
GROUP BY r.entity_id;

-- A use looks up the searches that showed the entity shortly before (implicit feedback).
CREATE INDEX search_results_entity ON search_results(entity_id);
CREATE INDEX search_events_at ON search_events(at);
