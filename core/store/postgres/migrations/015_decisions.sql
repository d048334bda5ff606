-- Schema version 15 (as SQLite's 015_decisions.sql): the log of applied decisions and the edit each undo
-- reverts (docs/curation.md "Decisions and undo"). An id left NULL gets max(id) + 1, as SQLite's rowid.
CREATE TABLE decisions (
    id          bigint PRIMARY KEY,
    made_at     double precision NOT NULL,
    origin      text COLLATE "C" NOT NULL,
    kind        text COLLATE "C" NOT NULL,
    description text COLLATE "C" NOT NULL,
    subjects    text COLLATE "C" NOT NULL DEFAULT '[]',
    edit        text COLLATE "C" NOT NULL,
    undone_at   double precision,
    undone_by   text COLLATE "C"
);
CREATE INDEX decisions_origin ON decisions(origin, id);
CREATE FUNCTION decisions_rowid() RETURNS trigger LANGUAGE plpgsql AS $b$
BEGIN
    IF NEW.id IS NULL THEN
        NEW.id := (SELECT coalesce(max(id), 0) + 1 FROM decisions);
    END IF;
    RETURN NEW;
END $b$;
CREATE TRIGGER decisions_rowid BEFORE INSERT ON decisions FOR EACH ROW EXECUTE FUNCTION decisions_rowid();
