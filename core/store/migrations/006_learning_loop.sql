-- Schema version 6: the learning loop (mcp-memory "Architecture", "A/B Testing: Shadow Mode"; mcp-memory "The Limbic System", "Auto-Tuning").

-- Which group a logged search belongs to (limbic = treatment, baseline = cosine-only), the preset whose
-- parameters ranked it (when they equal a named one) and those parameters (for exact replay).
ALTER TABLE search_events ADD COLUMN treatment TEXT NOT NULL DEFAULT 'limbic';
ALTER TABLE search_events ADD COLUMN preset TEXT;
ALTER TABLE search_events ADD COLUMN params_id INTEGER REFERENCES logged_params(id);

-- Each distinct ScoringParams JSON once.
CREATE TABLE logged_params (
    id     INTEGER PRIMARY KEY,
    params TEXT NOT NULL UNIQUE
);

-- BM25-only rank of each shown entity beside the cosine-only baseline_rank (NULL when absent).
ALTER TABLE search_results ADD COLUMN bm25_rank INTEGER;

-- The candidate arrays of a logged search (limbic.core.learning.codec), re-rankable with no SQL.
CREATE TABLE search_candidates (
    event_id INTEGER PRIMARY KEY REFERENCES search_events(id) ON DELETE CASCADE,
    data     BLOB NOT NULL
);

-- One relevance label per (search, entity); a later use of the same entity adds nothing.
DELETE FROM implicit_feedback WHERE event_id IS NULL;
CREATE UNIQUE INDEX implicit_feedback_event_entity ON implicit_feedback(event_id, entity_id);

-- Every application of tuned parameters: when, from what, to what, measured gain; undoable.
CREATE TABLE tuning_applications (
    id          INTEGER PRIMARY KEY,
    at          REAL NOT NULL,
    origin      TEXT NOT NULL,
    kind        TEXT NOT NULL,              -- tune / set / undo
    old_params  TEXT NOT NULL,
    new_params  TEXT NOT NULL,
    gain        REAL,                       -- NDCG@K of new minus old over the logged searches
    events      INTEGER NOT NULL DEFAULT 0, -- labelled searches the gain was measured on
    undone_at   REAL
);
