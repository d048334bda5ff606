-- Schema version 15: the log of applied decisions (docs/curation.md "Decisions and undo").
-- Every decision applied from the Review view, over MCP (resolve_conflict, merge_entities, execute_entity_split)
-- or from the command line (limbic gc --archive/--delete) is one row: who made it (the change log's origin),
-- when, what kind, a one-line description, the entity names it concerns, and the edit itself as JSON with the
-- rows its undo puts back (core/service/decision_log.py). Undoing it records when and by whom; the row stays.
CREATE TABLE decisions (
    id          INTEGER PRIMARY KEY,
    made_at     REAL NOT NULL,
    origin      TEXT NOT NULL,
    kind        TEXT NOT NULL,
    description TEXT NOT NULL,
    subjects    TEXT NOT NULL DEFAULT '[]',  -- JSON array of entity names
    edit        TEXT NOT NULL,               -- JSON: the applied edit and the rows its undo needs
    undone_at   REAL,
    undone_by   TEXT
);
CREATE INDEX decisions_origin ON decisions(origin, id);
