-- Schema version 14: names are unique per project (docs/lifecycle.md "Project scope"). Two projects may each
-- hold an entity "Backend", and a global one (project NULL) may exist beside them; within one project (or among
-- the global entities) a name is still unique. The entities table is rebuilt without its UNIQUE(name), keeping
-- every id, so nothing that points at an entity changes. Foreign keys are off for this step (schema.migrate
-- reads the marker below and checks them all before committing).
-- limbic: rebuilds tables
CREATE TABLE entities_by_project (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL,
    entity_type TEXT NOT NULL DEFAULT 'Unknown',
    status      TEXT NOT NULL DEFAULT 'active'
                CHECK (status IN ('active', 'paused', 'completed', 'archived')),
    created_at  REAL NOT NULL,
    updated_at  REAL NOT NULL,
    project     TEXT,
    strength    REAL NOT NULL DEFAULT 1.0 CHECK (strength >= 0.0 AND strength <= 2.0),
    pinned_at   REAL
);
INSERT INTO entities_by_project(id, name, entity_type, status, created_at, updated_at, project, strength, pinned_at)
SELECT id, name, entity_type, status, created_at, updated_at, project, strength, pinned_at FROM entities;
DROP TABLE entities;
-- The triggers of observation_fts name "entities" in their bodies; the legacy rename does not re-check them
-- while the table is briefly missing (SQLite "ALTER TABLE", the 12-step rebuild).
PRAGMA legacy_alter_table = ON;
ALTER TABLE entities_by_project RENAME TO entities;
PRAGMA legacy_alter_table = OFF;

CREATE UNIQUE INDEX entities_project_name ON entities(coalesce(project, ''), name);
CREATE INDEX entities_name ON entities(name);
CREATE INDEX entities_name_nocase ON entities(name COLLATE NOCASE);
CREATE INDEX entities_type ON entities(entity_type);
CREATE INDEX entities_created ON entities(created_at, id);
CREATE INDEX entities_project ON entities(project) WHERE project IS NOT NULL;
CREATE TRIGGER entities_observation_fts_rename AFTER UPDATE OF name ON entities BEGIN
    DELETE FROM observation_fts WHERE rowid IN (SELECT id FROM observations WHERE entity_id = new.id);
    INSERT INTO observation_fts(rowid, name, content)
    SELECT id, new.name, content FROM observations WHERE entity_id = new.id;
END;

-- A named MCP token may be bound to a project: every call made with it is scoped to that project.
ALTER TABLE mcp_tokens ADD COLUMN project TEXT;
