-- Schema version 9: keyword evidence per observation (docs/scoring.md "Observation
-- evidence"). A full-text index of every observation (rowid = observation id) with its entity's name, as the
-- observation's vector embeds "<name>: <content>", so that a memory found by its name is found by each of its
-- observations too. Tokenizer of entity_fts. Contentless (the text lives in observations and entities) with
-- contentless_delete, so rows are deleted by rowid. Triggers keep it in step with every insert, delete (entity
-- deletes cascade), content change, move to another entity and entity rename, inside the writer's transaction.
-- Superseded and expired observations stay indexed; the search joins observations and keeps the live ones.
CREATE VIRTUAL TABLE observation_fts USING fts5(
    name, content,
    content = '', contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER observations_fts_insert AFTER INSERT ON observations BEGIN
    INSERT INTO observation_fts(rowid, name, content)
    VALUES (new.id, (SELECT name FROM entities WHERE id = new.entity_id), new.content);
END;

CREATE TRIGGER observations_fts_delete AFTER DELETE ON observations BEGIN
    DELETE FROM observation_fts WHERE rowid = old.id;
END;

CREATE TRIGGER observations_fts_update AFTER UPDATE OF content, entity_id ON observations BEGIN
    DELETE FROM observation_fts WHERE rowid = old.id;
    INSERT INTO observation_fts(rowid, name, content)
    VALUES (new.id, (SELECT name FROM entities WHERE id = new.entity_id), new.content);
END;

CREATE TRIGGER entities_observation_fts_rename AFTER UPDATE OF name ON entities BEGIN
    DELETE FROM observation_fts WHERE rowid IN (SELECT id FROM observations WHERE entity_id = new.id);
    INSERT INTO observation_fts(rowid, name, content)
    SELECT id, new.name, content FROM observations WHERE entity_id = new.id;
END;

INSERT INTO observation_fts(rowid, name, content)
SELECT o.id, e.name, o.content FROM observations o JOIN entities e ON e.id = o.entity_id;
INSERT INTO observation_fts(observation_fts) VALUES ('optimize');
