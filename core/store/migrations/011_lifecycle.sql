-- Schema version 11: how a memory ages (docs/lifecycle.md).

-- Expiry is checked at read time and swept later: the observations that expire are found by time.
CREATE INDEX observations_expiring ON observations(expires_at) WHERE expires_at IS NOT NULL;

-- Project scope (NULL = global), strength (0..2, the forget/promote score's multiplier) and the time an
-- entity was pinned (promoted; NULL = not pinned).
ALTER TABLE entities ADD COLUMN project TEXT;
ALTER TABLE entities ADD COLUMN strength REAL NOT NULL DEFAULT 1.0 CHECK (strength >= 0.0 AND strength <= 2.0);
ALTER TABLE entities ADD COLUMN pinned_at REAL;
CREATE INDEX entities_project ON entities(project) WHERE project IS NOT NULL;

-- Observations written while their vectors were not there yet: checked for contradictions when they land.
CREATE TABLE conflict_checks (
    observation_id INTEGER PRIMARY KEY REFERENCES observations(id) ON DELETE CASCADE,
    queued_at      REAL NOT NULL
);

-- Contradictions found when an observation was written: the new observation, the older one it contradicts,
-- their cosine similarity, the checkable difference (reason) and the detector's mode. Open until resolved
-- (resolution: keep_both / update_old / supersede / delete_old).
CREATE TABLE conflicts (
    id             INTEGER PRIMARY KEY,
    observation_id INTEGER NOT NULL REFERENCES observations(id) ON DELETE CASCADE,
    other_id       INTEGER NOT NULL REFERENCES observations(id) ON DELETE CASCADE,
    similarity     REAL NOT NULL,
    reason         TEXT NOT NULL,
    mode           TEXT NOT NULL,
    created_at     REAL NOT NULL,
    resolved_at    REAL,
    resolution     TEXT,
    UNIQUE (observation_id, other_id)
);
CREATE INDEX conflicts_other ON conflicts(other_id);
CREATE INDEX conflicts_open ON conflicts(created_at) WHERE resolved_at IS NULL;
