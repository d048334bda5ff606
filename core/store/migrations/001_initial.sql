-- Schema version 1 (docs/architecture.md "Data model"). Timestamps are UTC unix seconds (REAL).
-- The vec0 table entity_embeddings is created by the store once the embedding dimension is known.

CREATE TABLE entities (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    entity_type TEXT NOT NULL DEFAULT 'Unknown',
    status      TEXT NOT NULL DEFAULT 'active'
                CHECK (status IN ('active', 'paused', 'completed', 'archived')),
    created_at  REAL NOT NULL,
    updated_at  REAL NOT NULL
);
CREATE INDEX entities_name_nocase ON entities(name COLLATE NOCASE);
CREATE INDEX entities_type ON entities(entity_type);

CREATE TABLE observations (
    id            INTEGER PRIMARY KEY,
    entity_id     INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    content       TEXT NOT NULL,
    kind          TEXT,
    supersedes    INTEGER REFERENCES observations(id) ON DELETE SET NULL,
    superseded_at REAL,
    expires_at    REAL,
    weight        REAL NOT NULL DEFAULT 1.0,
    created_at    REAL NOT NULL
);
CREATE INDEX observations_entity ON observations(entity_id);
CREATE UNIQUE INDEX observations_entity_content ON observations(entity_id, content);

CREATE TABLE relations (
    id            INTEGER PRIMARY KEY,
    from_id       INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    to_id         INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    relation_type TEXT NOT NULL,
    context       TEXT,
    active        INTEGER NOT NULL DEFAULT 1,
    ended_at      REAL,
    created_at    REAL NOT NULL
);
CREATE UNIQUE INDEX relations_active_unique ON relations(from_id, to_id, relation_type) WHERE active = 1;
CREATE INDEX relations_from ON relations(from_id);
CREATE INDEX relations_to ON relations(to_id);

CREATE TABLE entity_access (
    entity_id    INTEGER PRIMARY KEY REFERENCES entities(id) ON DELETE CASCADE,
    access_count INTEGER NOT NULL DEFAULT 0,
    last_access  REAL NOT NULL
);

CREATE TABLE entity_access_days (
    entity_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    day       TEXT NOT NULL,              -- UTC calendar day, YYYY-MM-DD
    count     INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (entity_id, day)
) WITHOUT ROWID;

CREATE TABLE co_occurrences (
    a_id     INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    b_id     INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    co_count INTEGER NOT NULL DEFAULT 1,
    last_co  REAL NOT NULL,
    PRIMARY KEY (a_id, b_id),
    CHECK (a_id < b_id)
) WITHOUT ROWID;
CREATE INDEX co_occurrences_b ON co_occurrences(b_id);

CREATE VIRTUAL TABLE entity_fts USING fts5(
    name, entity_type, obs_text,
    tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TABLE search_events (
    id          INTEGER PRIMARY KEY,
    at          REAL NOT NULL,
    query       TEXT NOT NULL,
    k_limit     INTEGER NOT NULL,
    mode        TEXT NOT NULL,           -- hybrid / semantic / fts_only
    strategy    TEXT NOT NULL,
    origin      TEXT NOT NULL,
    duration_ms REAL NOT NULL
);

CREATE TABLE search_results (
    event_id      INTEGER NOT NULL REFERENCES search_events(id) ON DELETE CASCADE,
    entity_id     INTEGER NOT NULL,
    rank          INTEGER NOT NULL,       -- 1-based rank with the limbic re-ranking
    baseline_rank INTEGER,                -- 1-based rank by base relevance alone (shadow A/B)
    limbic_score  REAL NOT NULL,
    final_score   REAL NOT NULL,
    cosine_sim    REAL,
    PRIMARY KEY (event_id, entity_id)
) WITHOUT ROWID;

CREATE TABLE implicit_feedback (
    id        INTEGER PRIMARY KEY,
    entity_id INTEGER NOT NULL,
    event_id  INTEGER REFERENCES search_events(id) ON DELETE SET NULL,
    at        REAL NOT NULL,
    source    TEXT NOT NULL               -- open_nodes / get_entity / gui_select
);

CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE changes (
    id         INTEGER PRIMARY KEY,
    at         REAL NOT NULL,
    origin     TEXT NOT NULL,
    op         TEXT NOT NULL,
    entity_ids TEXT NOT NULL DEFAULT '[]'  -- JSON array of entity ids
);
