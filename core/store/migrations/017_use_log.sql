-- Schema version 17: the use log (docs/architecture.md "Use log"). Every use of an entity (open_nodes,
-- get_entity, mark_used, the app's Mark as useful) is one row per entity: when, by whom (the change log's origin:
-- mcp:NAME for the MCP token NAME), what kind of use (source), the entity and the logged search it named
-- (mark_used's searchId), written in the transaction that records the access. An agent's timeline reads its uses
-- here, whether a search showed the entity before or not, each with the searches it answered (its relevance
-- labels, implicit_feedback). Looking (search results, the app's inspector) writes nothing. Bounded as the search
-- log: past the search log's retention (that many uses), the oldest rows are dropped (core/store/use_log.py).
-- No foreign key: a deleted entity's uses stay, shown by id; a search dropped from its log is no longer named.
-- The uses already labelled, the only ones logged per origin before this version, are copied in under the
-- origin of the search they answered, naming the first of the searches they labelled.
CREATE TABLE use_events (
    id        INTEGER PRIMARY KEY,
    at        REAL NOT NULL,
    origin    TEXT NOT NULL,
    source    TEXT NOT NULL,
    entity_id INTEGER NOT NULL,
    search_id INTEGER
);
CREATE INDEX use_events_at ON use_events(at);
CREATE INDEX use_events_origin ON use_events(origin, at);
INSERT INTO use_events(at, origin, source, entity_id, search_id)
SELECT f.at, s.origin, f.source, f.entity_id, min(f.event_id) FROM implicit_feedback f JOIN search_events s ON s.id = f.event_id
GROUP BY f.at, s.origin, f.source, f.entity_id ORDER BY f.at, s.origin, f.source, f.entity_id;
