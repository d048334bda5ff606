-- Schema version 17: the use log (docs/architecture.md "Data model", docs/mcp.md "Teams"). Every use of an
-- entity (open_nodes, get_entity, mark_used, the app's Mark as useful) is one row per entity: when, by whom
-- (the change log's origin: mcp:NAME for the MCP token NAME), what kind of use (source) and the entity, written
-- in the transaction that records the access. An agent's timeline reads its uses here, whether a search showed
-- the entity before or not; the search a use answered is its relevance label (implicit_feedback, same at,
-- entity and source). Looking (search results, the app's inspector) writes nothing. Bounded as the search log:
-- past the search log's retention (that many uses), the oldest rows are dropped (core/store/use_log.py).
-- No foreign key: a deleted entity's uses stay, shown by id. The uses already labelled, the only ones logged
-- per origin before this version, are copied in under the origin of the search they answered.
CREATE TABLE use_events (
    id        INTEGER PRIMARY KEY,
    at        REAL NOT NULL,
    origin    TEXT NOT NULL,
    source    TEXT NOT NULL,
    entity_id INTEGER NOT NULL
);
CREATE INDEX use_events_at ON use_events(at);
CREATE INDEX use_events_origin ON use_events(origin, at);
INSERT INTO use_events(at, origin, source, entity_id)
SELECT DISTINCT f.at, s.origin, f.source, f.entity_id FROM implicit_feedback f JOIN search_events s ON s.id = f.event_id
ORDER BY f.at, s.origin, f.source, f.entity_id;
