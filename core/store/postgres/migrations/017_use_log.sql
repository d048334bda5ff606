-- Schema version 17 (as SQLite's 017_use_log.sql): the use log, one row per entity of every use (open_nodes,
-- get_entity, mark_used, the app's Mark as useful) with its time, origin, kind and the search it named, read by
-- an agent's timeline; bounded as the search log (core/store/use_log.py). An id left NULL gets max(id) + 1, as
-- SQLite's rowid. The uses already labelled are copied in under the origin of the search they answered.
CREATE TABLE use_events (
    id        bigint PRIMARY KEY,
    at        double precision NOT NULL,
    origin    text COLLATE "C" NOT NULL,
    source    text COLLATE "C" NOT NULL,
    entity_id bigint NOT NULL,
    search_id bigint
);
CREATE INDEX use_events_at ON use_events(at);
CREATE INDEX use_events_origin ON use_events(origin, at);
CREATE FUNCTION use_events_rowid() RETURNS trigger LANGUAGE plpgsql AS $b$
BEGIN
    IF NEW.id IS NULL THEN
        NEW.id := (SELECT coalesce(max(id), 0) + 1 FROM use_events);
    END IF;
    RETURN NEW;
END $b$;
CREATE TRIGGER use_events_rowid BEFORE INSERT ON use_events FOR EACH ROW EXECUTE FUNCTION use_events_rowid();
INSERT INTO use_events(at, origin, source, entity_id, search_id)
SELECT f.at, s.origin, f.source, f.entity_id, min(f.event_id) FROM implicit_feedback f JOIN search_events s ON s.id = f.event_id
GROUP BY f.at, s.origin, f.source, f.entity_id ORDER BY f.at, s.origin, f.source, f.entity_id;
