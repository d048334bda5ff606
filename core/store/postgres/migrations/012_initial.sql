-- The PostgreSQL schema, equal to the SQLite schema at version 12 (core/store/migrations/001–012).
-- Differences, each for a reason: integer ids are bigint, times double precision, text is compared in code
-- point order (COLLATE "C", as SQLite's BINARY); an id left NULL gets max(id) + 1 from a trigger, as SQLite's
-- rowid does; an observation's text is unique per entity through its md5 (a B-tree entry cannot hold 40 kB);
-- the full-text index is core/store/postgres/full_text.py's, the vector tables pgvector's.

CREATE TABLE entities (
    id          bigint PRIMARY KEY,
    name        text COLLATE "C" NOT NULL UNIQUE,
    entity_type text COLLATE "C" NOT NULL DEFAULT 'Unknown',
    status      text COLLATE "C" NOT NULL DEFAULT 'active'
                CHECK (status IN ('active', 'paused', 'completed', 'archived')),
    created_at  double precision NOT NULL,
    updated_at  double precision NOT NULL,
    project     text COLLATE "C",
    strength    double precision NOT NULL DEFAULT 1.0 CHECK (strength >= 0.0 AND strength <= 2.0),
    pinned_at   double precision
);
CREATE INDEX entities_name_lower ON entities(lower(name));
CREATE INDEX entities_type ON entities(entity_type);
CREATE INDEX entities_created ON entities(created_at, id);
CREATE INDEX entities_project ON entities(project) WHERE project IS NOT NULL;

CREATE TABLE observations (
    id            bigint PRIMARY KEY,
    entity_id     bigint NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    content       text COLLATE "C" NOT NULL,
    kind          text COLLATE "C",
    supersedes    bigint REFERENCES observations(id) ON DELETE SET NULL,
    superseded_at double precision,
    expires_at    double precision,
    weight        double precision NOT NULL DEFAULT 1.0,
    created_at    double precision NOT NULL
);
CREATE INDEX observations_entity ON observations(entity_id);
CREATE UNIQUE INDEX observations_entity_content ON observations(entity_id, md5(content));
CREATE INDEX observations_expiring ON observations(expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE relations (
    id            bigint PRIMARY KEY,
    from_id       bigint NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    to_id         bigint NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    relation_type text COLLATE "C" NOT NULL,
    context       text COLLATE "C",
    active        integer NOT NULL DEFAULT 1,
    ended_at      double precision,
    created_at    double precision NOT NULL
);
CREATE UNIQUE INDEX relations_active_unique ON relations(from_id, to_id, relation_type) WHERE active = 1;
CREATE INDEX relations_from ON relations(from_id);
CREATE INDEX relations_to ON relations(to_id);

CREATE TABLE entity_access (
    entity_id    bigint PRIMARY KEY REFERENCES entities(id) ON DELETE CASCADE,
    access_count bigint NOT NULL DEFAULT 0,
    last_access  double precision NOT NULL
);

CREATE TABLE entity_access_days (
    entity_id bigint NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    day       text COLLATE "C" NOT NULL,
    count     bigint NOT NULL DEFAULT 1,
    PRIMARY KEY (entity_id, day)
);

CREATE TABLE co_occurrences (
    a_id     bigint NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    b_id     bigint NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    co_count bigint NOT NULL DEFAULT 1,
    last_co  double precision NOT NULL,
    PRIMARY KEY (a_id, b_id),
    CHECK (a_id < b_id)
);
CREATE INDEX co_occurrences_b ON co_occurrences(b_id);

CREATE TABLE logged_params (
    id     bigint PRIMARY KEY,
    params text COLLATE "C" NOT NULL UNIQUE
);

CREATE TABLE search_events (
    id          bigint PRIMARY KEY,
    at          double precision NOT NULL,
    query       text COLLATE "C" NOT NULL,
    k_limit     integer NOT NULL,
    mode        text COLLATE "C" NOT NULL,
    strategy    text COLLATE "C" NOT NULL,
    origin      text COLLATE "C" NOT NULL,
    duration_ms double precision NOT NULL,
    treatment   text COLLATE "C" NOT NULL DEFAULT 'limbic',
    preset      text COLLATE "C",
    params_id   bigint REFERENCES logged_params(id)
);
CREATE INDEX search_events_at ON search_events(at);

CREATE TABLE search_results (
    event_id      bigint NOT NULL REFERENCES search_events(id) ON DELETE CASCADE,
    entity_id     bigint NOT NULL,
    rank          integer NOT NULL,
    baseline_rank integer,
    limbic_score  double precision NOT NULL,
    final_score   double precision NOT NULL,
    cosine_sim    double precision,
    bm25_rank     integer,
    PRIMARY KEY (event_id, entity_id)
);
CREATE INDEX search_results_entity ON search_results(entity_id);

CREATE TABLE search_candidates (
    event_id bigint PRIMARY KEY REFERENCES search_events(id) ON DELETE CASCADE,
    data     bytea NOT NULL
);

CREATE TABLE search_query_vectors (
    event_id bigint PRIMARY KEY REFERENCES search_events(id) ON DELETE CASCADE,
    model    text COLLATE "C" NOT NULL,
    vector   bytea NOT NULL
);

CREATE TABLE implicit_feedback (
    id        bigint PRIMARY KEY,
    entity_id bigint NOT NULL,
    event_id  bigint REFERENCES search_events(id) ON DELETE SET NULL,
    at        double precision NOT NULL,
    source    text COLLATE "C" NOT NULL
);
CREATE UNIQUE INDEX implicit_feedback_event_entity ON implicit_feedback(event_id, entity_id);
CREATE INDEX implicit_feedback_entity ON implicit_feedback(entity_id);

CREATE TABLE settings (
    key   text COLLATE "C" PRIMARY KEY,
    value text COLLATE "C" NOT NULL
);

CREATE TABLE changes (
    id         bigint PRIMARY KEY,
    at         double precision NOT NULL,
    origin     text COLLATE "C" NOT NULL,
    op         text COLLATE "C" NOT NULL,
    entity_ids text COLLATE "C" NOT NULL DEFAULT '[]'
);

CREATE TABLE entity_embedding_meta (
    entity_id  bigint PRIMARY KEY REFERENCES entities(id) ON DELETE CASCADE,
    model      text COLLATE "C" NOT NULL,
    updated_at double precision NOT NULL,
    text_hash  bigint
);
CREATE INDEX entity_embedding_meta_model ON entity_embedding_meta(model);

CREATE TABLE observation_embedding_meta (
    observation_id bigint PRIMARY KEY,
    entity_id      bigint NOT NULL,
    model          text COLLATE "C" NOT NULL,
    text_hash      bigint NOT NULL,
    updated_at     double precision NOT NULL
);
CREATE INDEX observation_embedding_meta_entity ON observation_embedding_meta(entity_id);
CREATE INDEX observation_embedding_meta_model ON observation_embedding_meta(model);

CREATE TABLE entity_impressions (
    entity_id        bigint PRIMARY KEY REFERENCES entities(id) ON DELETE CASCADE,
    impression_count bigint NOT NULL DEFAULT 0,
    last_impression  double precision NOT NULL
);

CREATE TABLE tuning_applications (
    id          bigint PRIMARY KEY,
    at          double precision NOT NULL,
    origin      text COLLATE "C" NOT NULL,
    kind        text COLLATE "C" NOT NULL,
    old_params  text COLLATE "C" NOT NULL,
    new_params  text COLLATE "C" NOT NULL,
    gain        double precision,
    events      integer NOT NULL DEFAULT 0,
    undone_at   double precision
);

CREATE TABLE pending_vectors (
    entity_id  bigint PRIMARY KEY REFERENCES entities(id) ON DELETE CASCADE,
    generation bigint NOT NULL DEFAULT 1,
    queued_at  double precision NOT NULL
);

CREATE TABLE conflict_checks (
    observation_id bigint PRIMARY KEY REFERENCES observations(id) ON DELETE CASCADE,
    queued_at      double precision NOT NULL
);

CREATE TABLE conflicts (
    id             bigint PRIMARY KEY,
    observation_id bigint NOT NULL REFERENCES observations(id) ON DELETE CASCADE,
    other_id       bigint NOT NULL REFERENCES observations(id) ON DELETE CASCADE,
    similarity     double precision NOT NULL,
    reason         text COLLATE "C" NOT NULL,
    mode           text COLLATE "C" NOT NULL,
    created_at     double precision NOT NULL,
    resolved_at    double precision,
    resolution     text COLLATE "C",
    UNIQUE (observation_id, other_id)
);
CREATE INDEX conflicts_other ON conflicts(other_id);
CREATE INDEX conflicts_open ON conflicts(created_at) WHERE resolved_at IS NULL;

CREATE TABLE curation_kept (
    key text COLLATE "C" PRIMARY KEY,
    at  double precision NOT NULL
);

CREATE TABLE reflections (
    id            bigint PRIMARY KEY,
    target_type   text COLLATE "C" NOT NULL CHECK (target_type IN ('entity', 'relation', 'global')),
    entity_id     bigint REFERENCES entities(id) ON DELETE CASCADE,
    other_id      bigint REFERENCES entities(id) ON DELETE CASCADE,
    relation_type text COLLATE "C",
    author        text COLLATE "C" NOT NULL,
    content       text COLLATE "C" NOT NULL,
    mood          text COLLATE "C",
    created_at    double precision NOT NULL,
    updated_at    double precision NOT NULL,
    CHECK ((target_type = 'global') = (entity_id IS NULL)),
    CHECK ((target_type = 'relation') = (other_id IS NOT NULL AND relation_type IS NOT NULL))
);
CREATE INDEX reflections_entity ON reflections(entity_id);
CREATE INDEX reflections_other ON reflections(other_id);

CREATE TABLE reflection_vectors (
    reflection_id bigint PRIMARY KEY REFERENCES reflections(id) ON DELETE CASCADE,
    model         text COLLATE "C" NOT NULL,
    vector        bytea NOT NULL
);

-- SQLite's rowid: an id left NULL (or not given) becomes max(id) + 1. A row-level BEFORE trigger sees the
-- rows the same statement inserted before it, and writers take turns (core/store/postgres/database.py).
DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['entities', 'observations', 'relations', 'logged_params', 'search_events',
                             'implicit_feedback', 'changes', 'tuning_applications', 'conflicts', 'reflections']
    LOOP
        EXECUTE format($f$
            CREATE FUNCTION %1$I() RETURNS trigger LANGUAGE plpgsql AS $b$
            BEGIN
                IF NEW.id IS NULL THEN
                    NEW.id := (SELECT coalesce(max(id), 0) + 1 FROM %2$I);
                END IF;
                RETURN NEW;
            END $b$;
            CREATE TRIGGER %3$I BEFORE INSERT ON %2$I FOR EACH ROW EXECUTE FUNCTION %1$I();
        $f$, t || '_rowid', t, t || '_rowid');
    END LOOP;
END $$;

-- Full text: the postings are written by the application with FTS5's own tokenizer (full_text.py). Rows whose
-- text changed are queued here by triggers, as SQLite's FTS5 triggers keep observation_fts and
-- reflection_fts, and indexed before the transaction commits (text_index.py). ix: 2 observations,
-- 3 reflections (1, the entities' rows, is written by the store's reindex step).
CREATE TABLE fts_pending (
    ix  smallint NOT NULL,
    doc bigint NOT NULL,
    PRIMARY KEY (ix, doc)
);

-- the index of the changed row is the trigger's argument
CREATE FUNCTION fts_queue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO fts_pending(ix, doc) VALUES (TG_ARGV[0]::smallint, OLD.id) ON CONFLICT DO NOTHING;
        RETURN OLD;
    END IF;
    INSERT INTO fts_pending(ix, doc) VALUES (TG_ARGV[0]::smallint, NEW.id) ON CONFLICT DO NOTHING;
    RETURN NEW;
END $$;
CREATE TRIGGER observations_fts_insert AFTER INSERT ON observations
    FOR EACH ROW EXECUTE FUNCTION fts_queue(2);
CREATE TRIGGER observations_fts_delete AFTER DELETE ON observations
    FOR EACH ROW EXECUTE FUNCTION fts_queue(2);
CREATE TRIGGER observations_fts_update AFTER UPDATE OF content, entity_id ON observations
    FOR EACH ROW EXECUTE FUNCTION fts_queue(2);

CREATE FUNCTION entities_fts_rename() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO fts_pending(ix, doc) SELECT 2, id FROM observations WHERE entity_id = NEW.id ON CONFLICT DO NOTHING;
    RETURN NEW;
END $$;
CREATE TRIGGER entities_observation_fts_rename AFTER UPDATE OF name ON entities
    FOR EACH ROW WHEN (OLD.name IS DISTINCT FROM NEW.name) EXECUTE FUNCTION entities_fts_rename();

CREATE TRIGGER reflections_fts_insert AFTER INSERT ON reflections
    FOR EACH ROW EXECUTE FUNCTION fts_queue(3);
CREATE TRIGGER reflections_fts_delete AFTER DELETE ON reflections
    FOR EACH ROW EXECUTE FUNCTION fts_queue(3);
CREATE TRIGGER reflections_fts_update AFTER UPDATE OF author, mood, content ON reflections
    FOR EACH ROW EXECUTE FUNCTION fts_queue(3);
