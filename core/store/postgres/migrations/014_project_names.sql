-- Schema version 14 (as SQLite's 014_project_names.sql): names are unique per project (docs/lifecycle.md
-- "Project scope"); a global entity (project NULL) may share its name with project ones. A named MCP token
-- may be bound to a project.
ALTER TABLE entities DROP CONSTRAINT entities_name_key;
CREATE UNIQUE INDEX entities_project_name ON entities ((coalesce(project, '')), name);
CREATE INDEX entities_name ON entities (name);
ALTER TABLE mcp_tokens ADD COLUMN project text COLLATE "C";
